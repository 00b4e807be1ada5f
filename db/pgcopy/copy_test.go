package pgcopy_test

import (
	"bytes"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/pgcopy"
)

// unreachable is a PostgreSQL URL nothing listens on: a copy that got as
// far as the target would fail there, with another error.
const unreachable = "postgres://backupd@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"

// A source that is not a store at this release's schema is refused, as
// any command reading it refuses it, before the target is looked at; and
// the source is left as it was (read, never upgraded).
func TestCopyRefusesASourceNotAtThisSchema(t *testing.T) {
	latest, err := engine.LatestSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	older := t.TempDir()
	path := filepath.Join(older, db.FileName)
	conn, err := sql.Open("sqlite", engine.DSN(path, false))
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.SQLiteMigrations(conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), latest-1); err != nil {
		t.Fatal(err)
	}
	before, err := p.GetDBVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, from, want string
	}{
		{"no database", t.TempDir(), "no database in"},
		{"older schema", older, "run `backupd migrate`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, progress bytes.Buffer
			res, err := pgcopy.Run(t.Context(), pgcopy.Copy{From: tc.from, To: unreachable, KeyFingerprint: "fp",
				Out: &out, Progress: &progress})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want a refusal saying %q", err, tc.want)
			}
			if res != (pgcopy.Result{}) || out.Len() != 0 || progress.Len() != 0 {
				t.Errorf("a refused copy did something: %+v, out %q, progress %q", res, out.String(), progress.String())
			}
		})
	}
	after, err := p.GetDBVersion(t.Context())
	if err != nil || after != before {
		t.Errorf("the source went from version %d to %d (%v); the copy must only read it", before, after, err)
	}
	conn.Close()
}
