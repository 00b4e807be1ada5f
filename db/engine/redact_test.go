package engine_test

import (
	"strings"
	"testing"

	"backupd/db/engine"
)

// RedactURL hides the password wherever lib/pq would read it: before the
// @ and in a password= parameter, keeping the other parameters.
func TestRedactURLHidesPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://backupd:s3cr3t-pw@db.example:5432/backupd?sslmode=disable",
		"postgres://backupd@db.example/backupd?password=s3cr3t-pw&sslmode=disable",
		"postgresql://db.example/backupd?sslmode=disable&PASSWORD=x&password=s3cr3t-pw",
		"postgres://backupd:other@db.example/backupd?password=s3cr3t-pw&sslmode=disable",
	} {
		got := engine.RedactURL(raw)
		if strings.Contains(got, "s3cr3t-pw") {
			t.Errorf("RedactURL(%q) = %q: the password shows", raw, got)
		}
		if !strings.Contains(got, "xxxxx") || !strings.Contains(got, "sslmode=disable") || !strings.Contains(got, "db.example") {
			t.Errorf("RedactURL(%q) = %q: want the password as xxxxx and the rest kept", raw, got)
		}
	}
}
