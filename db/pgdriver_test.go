package db

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

func TestPgTranslate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// INSERT OR IGNORE: ON CONFLICT DO NOTHING, before RETURNING.
		{`INSERT OR IGNORE INTO t (a) VALUES ($1)`, `INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING`},
		{"INSERT OR IGNORE INTO t (a) VALUES ($1);\n", `INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING`},
		{`INSERT OR IGNORE INTO t (a) VALUES ($1) RETURNING id`, `INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id`},
		{`INSERT OR IGNORE INTO t (a) SELECT x FROM u RETURNING id, a`, `INSERT INTO t (a) SELECT x FROM u ON CONFLICT DO NOTHING RETURNING id, a`},
		// IS ?, IS NOT ?: NULL-safe comparisons; IS NULL and the like stay.
		{`WHERE parent_id IS $1`, `WHERE parent_id IS NOT DISTINCT FROM $1`},
		{`WHERE parent_id IS NOT $2`, `WHERE parent_id IS DISTINCT FROM $2`},
		{`WHERE a IS NOT COALESCE(b, c)`, `WHERE a IS DISTINCT FROM COALESCE(b, c)`},
		{"WHERE a IS NOT\n\t(SELECT b FROM u)", `WHERE a IS DISTINCT FROM (SELECT b FROM u)`},
		{`WHERE a IS (SELECT b FROM u)`, `WHERE a IS NOT DISTINCT FROM (SELECT b FROM u)`},
		{`WHERE a IS NULL AND b IS NOT NULL AND c IS TRUE`, `WHERE a IS NULL AND b IS NOT NULL AND c IS TRUE`},
		{`WHERE EXISTS (SELECT 1)`, `WHERE EXISTS (SELECT 1)`},
		// Literals and comments are not code.
		{`WHERE note = 'LIKE json_each( IS $1' AND a IS $2`, `WHERE note = 'LIKE json_each( IS $1' AND a IS NOT DISTINCT FROM $2`},
		{"WHERE a LIKE $1 -- LIKE that\n", "WHERE a ILIKE $1 -- LIKE that\n"},
		{`SELECT "name COLLATE NOCASE" /* x IS NOT $1 */`, `SELECT "name COLLATE NOCASE" /* x IS NOT $1 */`},
		// COLLATE NOCASE: a column orders by its lower-cased bytes, a
		// parameter compares as citext.
		{`ORDER BY name COLLATE NOCASE, id`, `ORDER BY lower(name) COLLATE "C", id`},
		{`ORDER BY d.name COLLATE NOCASE`, `ORDER BY lower(d.name) COLLATE "C"`},
		{`WHERE username = $1 COLLATE NOCASE`, `WHERE username = CAST($1 AS citext)`},
		// LIKE ignores ASCII case on SQLite.
		{`WHERE name LIKE $1 ESCAPE '\'`, `WHERE name ILIKE $1 ESCAPE '\'`},
		{`WHERE name ILIKE $1`, `WHERE name ILIKE $1`},
		// json_each of an array, and its elements of pairs.
		{`SELECT value FROM json_each($1)`, `SELECT value FROM bd_json_each($1)`},
		{`SELECT value ->> 0, value ->> 1 FROM json_each($1)`,
			`SELECT CAST(CAST(value AS jsonb) ->> 0 AS BIGINT), CAST(CAST(value AS jsonb) ->> 1 AS BIGINT) FROM bd_json_each($1)`},
	} {
		if got := pgTranslate(c.in); got != c.want {
			t.Errorf("pgTranslate(%q)\n= %q\nwant %q", c.in, got, c.want)
		}
	}
}

// pgRewrite numbers first, then translates, and leaves what is inside
// literals alone.
func TestPgRewrite(t *testing.T) {
	got := pgRewrite(`SELECT id FROM device_groups WHERE parent_id IS ? AND name = ? COLLATE NOCASE AND note <> '?'`)
	want := `SELECT id FROM device_groups WHERE parent_id IS NOT DISTINCT FROM $1 AND name = CAST($2 AS citext) AND note <> '?'`
	if got != want {
		t.Errorf("pgRewrite\n= %q\nwant %q", got, want)
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
