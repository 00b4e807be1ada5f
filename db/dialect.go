package db

// dialect is what SQLite and PostgreSQL spell differently in the store's
// queries. A query is written where it runs, in the SQL both engines read
// alike, with these fragments where they differ: each engine runs exactly
// the text so composed (on PostgreSQL after the ? placeholders are
// numbered, pgRebind), and nothing rewrites it on the way. The Store
// holds its engine's dialect (Store.d).
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
type dialect interface {
	// insertOrIgnore is an INSERT into target (a table and its column list)
	// of rows (VALUES … or a SELECT with a WHERE clause) that skips the
	// rows a uniqueness constraint refuses. Nothing may follow it.
	insertOrIgnore(target, rows string) string
	// same and differ compare a and b with NULL an ordinary value: NULL
	// is the same as NULL and differs from anything else.
	same(a, b string) string
	differ(a, b string) string
	// foldedOrder orders by expr with ASCII letters folded to lower case,
	// then in byte order: the order of a name column (COLLATE NOCASE on
	// SQLite, citext on PostgreSQL).
	foldedOrder(expr string) string
	// equalFold compares a name column, expr, with a ? parameter as the
	// column compares its values: ASCII case folded.
	equalFold(expr string) string
	// jsonEach is a table of the elements of a ? parameter holding a JSON
	// array of numbers or strings, in a column named value: read it
	// through a CAST (SQLite's are numbers or text, PostgreSQL's text).
	jsonEach() string
	// jsonIntPairs is a table of the pairs of a ? parameter holding a JSON
	// array of two-integer arrays ([[1, 2], [3, 4]]), in columns a and b.
	jsonIntPairs() string
	// joined is the aggregate of expr's values (text) joined by sep (a
	// string literal), NULLs skipped, in no particular order; NULL when
	// there are none.
	joined(expr, sep string) string
	// joinedDistinct is joined of expr's distinct values, by commas.
	joinedDistinct(expr string) string
	// position is where needle first occurs in haystack, counted from 1,
	// or 0 when it does not.
	position(haystack, needle string) string
	// greater and lesser are the greater and the lesser of two values,
	// neither of which may be NULL (the engines differ on NULL).
	greater(a, b string) string
	lesser(a, b string) string
	// sumIf is the aggregate counting the rows where cond holds: NULL
	// when there are no rows, as SUM is.
	sumIf(cond string) string
	// millisBetween is the milliseconds from one stored time (TimeFormat
	// or BackupTimeFormat text, UTC) to another, as an integer.
	millisBetween(from, to string) string
	// skipLocked ends a SELECT of the rows this transaction is about to
	// change: on PostgreSQL, where several nodes pick at once, it locks
	// the picked rows and skips those another transaction holds. SQLite
	// has one writer, whose transactions never overlap: it needs nothing.
	skipLocked() string
	// inLockedPick follows a column in an UPDATE's condition: the column
	// is among the values pick (a SELECT of them ending in its LIMIT)
	// chooses, picked as skipLocked picks. On PostgreSQL the pick runs
	// once, as an array: as an IN list it may run again per row, each run
	// skipping the rows the last one locked, and take more than its LIMIT.
	inLockedPick(pick string) string
	// deviceSearch is the condition on devices d of those whose name or
	// host holds q (ASCII case ignored), through the engine's substring
	// index, with its arguments.
	deviceSearch(q string) (string, []any)
	// pick is sqlite's text on SQLite and postgres' on PostgreSQL: two
	// whole statements for the same answer, where the engines want
	// different SQL (PostgreSQL has no bare columns beside an aggregate,
	// SQLite no DISTINCT ON).
	pick(sqlite, postgres string) string
}

// dialectOf is PostgreSQL's dialect when pg is set, else SQLite's.
func dialectOf(pg bool) dialect {
	if pg {
		return postgresDialect{}
	}
	return sqliteDialect{}
}

// sqliteDialect is SQLite's spelling.
type sqliteDialect struct{}

// postgresDialect is PostgreSQL's spelling. Its schema (migration 00017)
// keeps SQLite's column types: timestamps are text, flags integers, names
// citext.
type postgresDialect struct{}

var (
	_ dialect = sqliteDialect{}
	_ dialect = postgresDialect{}
)

func (sqliteDialect) insertOrIgnore(target, rows string) string {
	return "INSERT OR IGNORE INTO " + target + " " + rows
}

func (postgresDialect) insertOrIgnore(target, rows string) string {
	return "INSERT INTO " + target + " " + rows + " ON CONFLICT DO NOTHING"
}

func (sqliteDialect) same(a, b string) string     { return a + " IS " + b }
func (postgresDialect) same(a, b string) string   { return a + " IS NOT DISTINCT FROM " + b }
func (sqliteDialect) differ(a, b string) string   { return a + " IS NOT " + b }
func (postgresDialect) differ(a, b string) string { return a + " IS DISTINCT FROM " + b }

func (sqliteDialect) foldedOrder(expr string) string { return expr + " COLLATE NOCASE" }

// The lower-cased text in byte order: citext's own order (lower() in the
// database's collation) would not be SQLite's.
func (postgresDialect) foldedOrder(expr string) string { return "lower(" + expr + `) COLLATE "C"` }

func (sqliteDialect) equalFold(expr string) string   { return expr + " = ? COLLATE NOCASE" }
func (postgresDialect) equalFold(expr string) string { return expr + " = CAST(? AS citext)" }

func (sqliteDialect) jsonEach() string   { return "json_each(?)" }
func (postgresDialect) jsonEach() string { return "jsonb_array_elements_text(CAST(? AS jsonb))" }

func (sqliteDialect) jsonIntPairs() string {
	return "(SELECT value ->> 0 AS a, value ->> 1 AS b FROM json_each(?))"
}

func (postgresDialect) jsonIntPairs() string {
	return "(SELECT CAST(value ->> 0 AS BIGINT) AS a, CAST(value ->> 1 AS BIGINT) AS b FROM jsonb_array_elements(CAST(? AS jsonb)))"
}

func (sqliteDialect) joined(expr, sep string) string {
	return "group_concat(" + expr + ", " + sep + ")"
}
func (postgresDialect) joined(expr, sep string) string {
	return "string_agg(" + expr + ", " + sep + ")"
}

func (sqliteDialect) joinedDistinct(expr string) string { return "group_concat(DISTINCT " + expr + ")" }
func (postgresDialect) joinedDistinct(expr string) string {
	return "string_agg(DISTINCT " + expr + ", ',')"
}

func (sqliteDialect) position(haystack, needle string) string {
	return "instr(" + haystack + ", " + needle + ")"
}

func (postgresDialect) position(haystack, needle string) string {
	return "strpos(" + haystack + ", " + needle + ")"
}

func (sqliteDialect) greater(a, b string) string   { return "MAX(" + a + ", " + b + ")" }
func (postgresDialect) greater(a, b string) string { return "GREATEST(" + a + ", " + b + ")" }
func (sqliteDialect) lesser(a, b string) string    { return "MIN(" + a + ", " + b + ")" }
func (postgresDialect) lesser(a, b string) string  { return "LEAST(" + a + ", " + b + ")" }

func (sqliteDialect) sumIf(cond string) string { return "SUM(" + cond + ")" }

// A CASE sum: PostgreSQL sums no booleans.
func (postgresDialect) sumIf(cond string) string {
	return "SUM(CASE WHEN " + cond + " THEN 1 ELSE 0 END)"
}

func (sqliteDialect) millisBetween(from, to string) string {
	return "CAST((julianday(" + to + ") - julianday(" + from + ")) * 86400000 AS INTEGER)"
}

func (postgresDialect) millisBetween(from, to string) string {
	return "CAST(EXTRACT(EPOCH FROM CAST(" + to + " AS timestamp) - CAST(" + from + " AS timestamp)) * 1000 AS BIGINT)"
}

func (sqliteDialect) skipLocked() string   { return "" }
func (postgresDialect) skipLocked() string { return " FOR UPDATE SKIP LOCKED" }

func (sqliteDialect) inLockedPick(pick string) string { return "IN (" + pick + ")" }
func (postgresDialect) inLockedPick(pick string) string {
	return "= ANY(ARRAY(" + pick + " FOR UPDATE SKIP LOCKED))"
}

func (sqliteDialect) pick(sqlite, _ string) string     { return sqlite }
func (postgresDialect) pick(_, postgres string) string { return postgres }
