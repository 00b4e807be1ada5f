package engine

// Dialect is what SQLite and PostgreSQL spell differently in the store's
// queries. A query is written where it runs, in the SQL both engines read
// alike, with these fragments where they differ: each engine runs exactly
// the text so composed (on PostgreSQL after the ? placeholders are
// numbered, pgRebind), and nothing rewrites it on the way. A DB holds
// its engine's dialect (DB.Dialect).
//
// A fragment that takes a value from the caller does so through a ?
// placeholder, where its doc says; arguments named a, b, expr, cond and
// the like are SQL text, which the fragment places as it is. Fragments
// are constant compositions of their arguments: the same query always
// composes to the same text, so that prepared statements (keyed by their
// text) are found again.
//
// What both engines spell alike is written once at the query site, among
// it upserts (INSERT … ON CONFLICT (…) DO UPDATE SET … = excluded.…),
// RETURNING, COALESCE and NULLIF, substr, length and lower, ||, CAST(… AS
// BIGINT), and CAST(… AS citext), which SQLite reads as a TEXT cast.
//
// New spellings go here, with both engines' text side by side; the tests
// check that no statement the store sends PostgreSQL carries a SQLite one
// (pgspelling_test.go).
type Dialect interface {
	// InsertOrIgnore is an INSERT into target (a table and its column list)
	// of rows (VALUES … or a SELECT with a WHERE clause) that skips the
	// rows a uniqueness constraint refuses. Nothing may follow it.
	InsertOrIgnore(target, rows string) string
	// Same and Differ compare a and b with NULL an ordinary value: NULL
	// is the same as NULL and differs from anything else.
	Same(a, b string) string
	Differ(a, b string) string
	// FoldedOrder orders by expr with ASCII letters folded to lower case,
	// then in byte order: the order of a name column (COLLATE NOCASE on
	// SQLite, citext on PostgreSQL).
	FoldedOrder(expr string) string
	// EqualFold compares a name column, expr, with a ? parameter as the
	// column compares its values: ASCII case folded.
	EqualFold(expr string) string
	// JSONEach is a table of the elements of a ? parameter holding a JSON
	// array of numbers or strings, in a column named value: read it
	// through a CAST (SQLite's are numbers or text, PostgreSQL's text).
	JSONEach() string
	// JSONIntPairs is a table of the pairs of a ? parameter holding a JSON
	// array of two-integer arrays ([[1, 2], [3, 4]]), in columns a and b.
	JSONIntPairs() string
	// Joined is the aggregate of expr's values (text) joined by sep (a
	// string literal), NULLs skipped, in no particular order; NULL when
	// there are none.
	Joined(expr, sep string) string
	// JoinedDistinct is Joined of expr's distinct values, by commas.
	JoinedDistinct(expr string) string
	// Position is where needle first occurs in haystack, counted from 1,
	// or 0 when it does not.
	Position(haystack, needle string) string
	// Greater and lesser are the greater and the lesser of two values,
	// neither of which may be NULL (the engines differ on NULL).
	Greater(a, b string) string
	Lesser(a, b string) string
	// SumIf is the aggregate counting the rows where cond holds: NULL
	// when there are no rows, as SUM is.
	SumIf(cond string) string
	// MillisBetween is the milliseconds from one stored time (TimeFormat
	// or BackupTimeFormat text, UTC) to another, as an integer.
	MillisBetween(from, to string) string
	// SkipLocked ends a SELECT of the rows this transaction is about to
	// change: on PostgreSQL, where several nodes pick at once, it locks
	// the picked rows and skips those another transaction holds. SQLite
	// has one writer, whose transactions never overlap: it needs nothing.
	SkipLocked() string
	// InLockedPick follows a column in an UPDATE's condition: the column
	// is among the values pick (a SELECT of them ending in its LIMIT)
	// chooses, picked as SkipLocked picks. On PostgreSQL the pick runs
	// once, as an array: as an IN list it may run again per row, each run
	// skipping the rows the last one locked, and take more than its LIMIT.
	InLockedPick(pick string) string
	// Pick is sqlite's text on SQLite and postgres' on PostgreSQL: two
	// whole statements for the same answer, where the engines want
	// different SQL (PostgreSQL has no bare columns beside an aggregate,
	// SQLite no DISTINCT ON).
	Pick(sqlite, postgres string) string
}

// DialectOf is PostgreSQL's dialect when pg is set, else SQLite's.
func DialectOf(pg bool) Dialect {
	if pg {
		return Postgres{}
	}
	return SQLite{}
}

// SQLite is SQLite's spelling.
type SQLite struct{}

// Postgres is PostgreSQL's spelling. Its schema (migration 00017)
// keeps SQLite's column types: timestamps are text, flags integers, names
// citext.
type Postgres struct{}

var (
	_ Dialect = SQLite{}
	_ Dialect = Postgres{}
)

func (SQLite) InsertOrIgnore(target, rows string) string {
	return "INSERT OR IGNORE INTO " + target + " " + rows
}

func (Postgres) InsertOrIgnore(target, rows string) string {
	return "INSERT INTO " + target + " " + rows + " ON CONFLICT DO NOTHING"
}

func (SQLite) Same(a, b string) string     { return a + " IS " + b }
func (Postgres) Same(a, b string) string   { return a + " IS NOT DISTINCT FROM " + b }
func (SQLite) Differ(a, b string) string   { return a + " IS NOT " + b }
func (Postgres) Differ(a, b string) string { return a + " IS DISTINCT FROM " + b }

func (SQLite) FoldedOrder(expr string) string { return expr + " COLLATE NOCASE" }

// The lower-cased text in byte order: citext's own order (lower() in the
// database's collation) would not be SQLite's.
func (Postgres) FoldedOrder(expr string) string { return "lower(" + expr + `) COLLATE "C"` }

func (SQLite) EqualFold(expr string) string   { return expr + " = ? COLLATE NOCASE" }
func (Postgres) EqualFold(expr string) string { return expr + " = CAST(? AS citext)" }

func (SQLite) JSONEach() string   { return "json_each(?)" }
func (Postgres) JSONEach() string { return "jsonb_array_elements_text(CAST(? AS jsonb))" }

func (SQLite) JSONIntPairs() string {
	return "(SELECT value ->> 0 AS a, value ->> 1 AS b FROM json_each(?))"
}

func (Postgres) JSONIntPairs() string {
	return "(SELECT CAST(value ->> 0 AS BIGINT) AS a, CAST(value ->> 1 AS BIGINT) AS b FROM jsonb_array_elements(CAST(? AS jsonb)))"
}

func (SQLite) Joined(expr, sep string) string {
	return "group_concat(" + expr + ", " + sep + ")"
}
func (Postgres) Joined(expr, sep string) string {
	return "string_agg(" + expr + ", " + sep + ")"
}

func (SQLite) JoinedDistinct(expr string) string { return "group_concat(DISTINCT " + expr + ")" }
func (Postgres) JoinedDistinct(expr string) string {
	return "string_agg(DISTINCT " + expr + ", ',')"
}

func (SQLite) Position(haystack, needle string) string {
	return "instr(" + haystack + ", " + needle + ")"
}

func (Postgres) Position(haystack, needle string) string {
	return "strpos(" + haystack + ", " + needle + ")"
}

func (SQLite) Greater(a, b string) string   { return "MAX(" + a + ", " + b + ")" }
func (Postgres) Greater(a, b string) string { return "GREATEST(" + a + ", " + b + ")" }
func (SQLite) Lesser(a, b string) string    { return "MIN(" + a + ", " + b + ")" }
func (Postgres) Lesser(a, b string) string  { return "LEAST(" + a + ", " + b + ")" }

func (SQLite) SumIf(cond string) string { return "SUM(" + cond + ")" }

// A CASE sum: PostgreSQL sums no booleans.
func (Postgres) SumIf(cond string) string {
	return "SUM(CASE WHEN " + cond + " THEN 1 ELSE 0 END)"
}

func (SQLite) MillisBetween(from, to string) string {
	return "CAST((julianday(" + to + ") - julianday(" + from + ")) * 86400000 AS INTEGER)"
}

func (Postgres) MillisBetween(from, to string) string {
	return "CAST(EXTRACT(EPOCH FROM CAST(" + to + " AS timestamp) - CAST(" + from + " AS timestamp)) * 1000 AS BIGINT)"
}

func (SQLite) SkipLocked() string   { return "" }
func (Postgres) SkipLocked() string { return " FOR UPDATE SKIP LOCKED" }

func (SQLite) InLockedPick(pick string) string { return "IN (" + pick + ")" }
func (Postgres) InLockedPick(pick string) string {
	return "= ANY(ARRAY(" + pick + " FOR UPDATE SKIP LOCKED))"
}

func (SQLite) Pick(sqlite, _ string) string     { return sqlite }
func (Postgres) Pick(_, postgres string) string { return postgres }
