package platforms_test

import (
	"errors"
	"testing"

	"backupd/app/platforms"
)

// A definition whose only fault is its ID still runs, under a
// placeholder, the fault said; any other fault stops it.
func TestTestPlatformNeedsNoID(t *testing.T) {
	def := valid()
	def.ID = "Not An ID"
	p, warnings, err := platforms.TestPlatform(def)
	if err != nil || len(warnings) != 1 || warnings[0].Field != "id" || p.ID == "" {
		t.Fatalf("bad ID: platform %q, warnings %v, %v", p.ID, warnings, err)
	}
	def.Prompt = "(("
	var errs platforms.Errors
	if _, _, err := platforms.TestPlatform(def); !errors.As(err, &errs) {
		t.Fatalf("a bad prompt and ID: %v, want the definition's errors", err)
	}
}
