package agentapi

import (
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
)

// A collector gets a custom platform's definition without its restore
// declaration (it never restores, and one older than restores refuses
// the field), and everything else as stored.
func TestCollectorDefinitionLeavesRestoreOut(t *testing.T) {
	p, ok := driver.Lookup("frr")
	if !ok || !p.CanRestore() {
		t.Fatal("frr should restore")
	}
	full := platforms.FromPlatform(p)
	if full.Restore == nil {
		t.Fatal("the export has no restore")
	}
	stored := string(platforms.Marshal(full))
	got := collectorDefinition(stored)
	if strings.Contains(got, `"restore"`) {
		t.Fatalf("the collector's definition keeps restore:\n%s", got)
	}
	d, err := platforms.Parse([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	full.Restore = nil
	if string(platforms.Marshal(d)) != string(platforms.Marshal(full)) {
		t.Errorf("more than restore changed:\n%s\nwant\n%s", platforms.Marshal(d), platforms.Marshal(full))
	}
	if _, err := d.Platform(); err != nil {
		t.Errorf("the collector's definition does not load: %v", err)
	}
	// Without restore, or unreadable: as stored.
	for _, doc := range []string{got, "{not json"} {
		if collectorDefinition(doc) != doc {
			t.Errorf("%q changed", doc)
		}
	}
}
