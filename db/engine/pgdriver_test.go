package engine

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
	"testing"

	"backupd/embed"
)

func TestPgRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b IN (?, ?)`, `SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)`},
		// Inside string literals, quoted identifiers and comments a ? is text.
		{`SELECT '?', ? FROM t`, `SELECT '?', $1 FROM t`},
		{`SELECT 'it''s ?', ? FROM t`, `SELECT 'it''s ?', $1 FROM t`},
		{`SELECT "odd?name" FROM t WHERE x = ?`, `SELECT "odd?name" FROM t WHERE x = $1`},
		{"SELECT a -- why? because\nFROM t WHERE b = ?", "SELECT a -- why? because\nFROM t WHERE b = $1"},
		{`SELECT ? || '-- not a comment ?' || ?`, `SELECT $1 || '-- not a comment ?' || $2`},
		// An unterminated literal is copied as it is (the server reports it).
		{`SELECT ?, 'open ?`, `SELECT $1, 'open ?`},
		{`SELECT ?, -- end`, `SELECT $1, -- end`},
		{`SELECT /* a ? here */ ? /* and ? */`, `SELECT /* a ? here */ $1 /* and ? */`},
		{`SELECT ? /* open ?`, `SELECT $1 /* open ?`},
		{`SELECT ?-?`, `SELECT $1-$2`},
		// Dollar-quoted bodies are text, whatever their tag; $1 and a
		// name holding a $ open none.
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT CASE WHEN '?' = ? THEN 1 END $$; SELECT ?",
			"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT CASE WHEN '?' = ? THEN 1 END $$; SELECT $1"},
		{`SELECT $body$ it's ? $$ ? $body$, ?`, `SELECT $body$ it's ? $$ ? $body$, $1`},
		{`SELECT $a1$?$a1$ || ?`, `SELECT $a1$?$a1$ || $1`},
		{`SELECT a$b$ + ? FROM t WHERE c = ?`, `SELECT a$b$ + $1 FROM t WHERE c = $2`},
		{`SELECT $1$ ?`, `SELECT $1$ $1`},
		{`SELECT ?, $$ open ?`, `SELECT $1, $$ open ?`},
		// E'…' escapes a quote with a backslash; a plain literal does not.
		{`SELECT E'it\'s ?', ?`, `SELECT E'it\'s ?', $1`},
		{`SELECT 'a\', ?`, `SELECT 'a\', $1`},
		{`SELECT name'?', ?`, `SELECT name'?', $1`},
	} {
		if got := pgRebind(c.in); got != c.want {
			t.Errorf("pgRebind(%q)\n= %q\nwant %q", c.in, got, c.want)
		}
	}
	// Ten and more placeholders number on.
	if got := pgRebind(strings.Repeat("?,", 11) + "?"); !strings.HasSuffix(got, "$11,$12") {
		t.Errorf("twelve placeholders: %q", got)
	}
}

// migrationVersions maps each migration's number in dir to its file.
func migrationVersions(t *testing.T, dir string) map[int64]string {
	t.Helper()
	files, err := fs.Glob(embed.Migrations, dir+"/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, f := range files {
		num, _, _ := strings.Cut(path.Base(f), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			t.Fatalf("migration %s: no version number", f)
		}
		out[v] = f
	}
	return out
}

// Every SQLite migration after 00017 has a PostgreSQL twin of the same
// number (and PostgreSQL has none SQLite lacks), and the schema version a
// PostgreSQL store reaches is the one LatestSchemaVersion expects.
func TestPostgresMigrationsTwinSQLite(t *testing.T) {
	sqlite := migrationVersions(t, "migrations")
	pg := migrationVersions(t, "migrations/postgres")
	if _, ok := pg[pgFirstVersion]; !ok {
		t.Fatalf("no PostgreSQL migration %05d (the whole schema)", pgFirstVersion)
	}
	for v, f := range sqlite {
		if _, ok := pg[v]; v > pgFirstVersion && !ok {
			t.Errorf("%s has no PostgreSQL twin migrations/postgres/%05d_….sql", f, v)
		}
	}
	var newestPG int64
	for v, f := range pg {
		if _, ok := sqlite[v]; !ok {
			t.Errorf("%s has no SQLite twin of the same number", f)
		}
		if v < pgFirstVersion {
			t.Errorf("%s is older than %05d, where a PostgreSQL store starts", f, pgFirstVersion)
		}
		newestPG = max(newestPG, v)
	}
	latest, err := LatestSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	if latest != newestPG {
		t.Errorf("LatestSchemaVersion = %d, newest PostgreSQL migration %d: a PostgreSQL store would never be Ready", latest, newestPG)
	}
}
