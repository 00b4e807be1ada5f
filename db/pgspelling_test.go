package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"backupd/db/engine"

	"github.com/lib/pq"
)

// The store's statements must reach PostgreSQL in PostgreSQL's own
// spelling: nothing rewrites them on the way any more (pgdriver.go). When
// the suite runs on PostgreSQL, TestMain records every statement the
// store's own code sends (tests' own SQL aside) and, once the tests are
// done, fails the run if one still carries a SQLite-only spelling
// (sqliteOnly), or if PostgreSQL cannot parse one without the SQLite
// look-alike functions its schema once defined for the rewritten queries
// (sqliteLookalikes).

// pgSent is what the store sent during the run: statement → a test that
// sent it.
var pgSent struct {
	sync.Mutex
	m map[string]string
}

func TestMain(m *testing.M) {
	postgres := os.Getenv("BACKUPD_TEST_POSTGRES") != ""
	if postgres {
		pgSent.m = map[string]string{}
		engine.SetStatementHook(recordStoreStatement)
	}
	code := m.Run()
	if postgres && code == 0 {
		if err := checkSentStatements(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: statements the store sent to PostgreSQL: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// recordStoreStatement records query when the store's code sent it: the
// innermost caller in package db outside the driver and the generic
// query helpers is no test file.
func recordStoreStatement(query string) {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	decided, test := false, ""
	for {
		f, more := frames.Next()
		if !decided && isStoreFrame(f) {
			if strings.HasSuffix(f.File, "_test.go") {
				return // a test's own SQL
			}
			decided = true
		}
		if strings.HasSuffix(f.File, "_test.go") {
			test = f.Function // the outermost: the test itself
		}
		if !more {
			break
		}
	}
	pgSent.Lock()
	defer pgSent.Unlock()
	if _, ok := pgSent.m[query]; !ok {
		pgSent.m[query] = test
	}
}

// isStoreFrame reports whether f is code of package db (or its tests)
// that wrote the statement: not the driver, not a helper that passes its
// caller's statement on.
func isStoreFrame(f runtime.Frame) bool {
	if !strings.HasPrefix(f.Function, "backupd/db.") && !strings.HasPrefix(f.Function, "backupd/db_test.") {
		return false
	}
	switch base := f.File[strings.LastIndexByte(f.File, '/')+1:]; base {
	case "pgconn.go", "pgdriver.go", "prepared.go", "store.go", "pgspelling_test.go":
		return false
	}
	return true
}

// checkSentStatements checks every recorded statement.
func checkSentStatements() error {
	pgSent.Lock()
	defer pgSent.Unlock()
	if len(pgSent.m) == 0 {
		return nil // no test of this run reached PostgreSQL's store
	}
	queries := make([]string, 0, len(pgSent.m))
	for q := range pgSent.m {
		queries = append(queries, q)
	}
	sort.Strings(queries)
	var problems []string
	for _, q := range queries {
		for _, p := range sqliteOnly(q) {
			problems = append(problems, fmt.Sprintf("%s (sent by %s):\n\t%s", p, pgSent.m[q], q))
		}
	}
	if len(problems) == 0 {
		var err error
		problems, err = parseWithoutLookalikes(queries)
		if err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	fmt.Fprintf(os.Stderr, "the store sent %d distinct statements to PostgreSQL, all in its own spelling\n", len(queries))
	return nil
}

// sqliteSpellings are spellings PostgreSQL does not read as SQLite does:
// a syntax or function it lacks, or one that means something else there.
var sqliteSpellings = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bINSERT\s+OR\s+(IGNORE|REPLACE|ABORT|FAIL|ROLLBACK)\b`), "INSERT OR …"},
	{regexp.MustCompile(`(?i)\bCOLLATE\s+NOCASE\b`), "COLLATE NOCASE"},
	// x IS y compares values on SQLite; on PostgreSQL IS takes only NULL,
	// TRUE, FALSE, UNKNOWN, DISTINCT FROM and a few predicates.
	{regexp.MustCompile(`(?i)\bIS\s+(NOT\s+)?([^\sNTFUDJ]|N[^UO]|T[^R]|F[^A]|U[^N]|D[^IO]|J[^S])`), "IS between values"},
	// SQLite's LIKE ignores ASCII case, PostgreSQL's does not: ILIKE, or
	// a comparison that says it means case.
	{regexp.MustCompile(`(?i)(^|[^I\w])LIKE\b`), "LIKE"},
	{regexp.MustCompile(`(?i)\b(json_each|json_extract|json_group_array|instr|group_concat|julianday|strftime|datetime|unixepoch|ifnull|iif|printf|bd_json_each)\s*\(`), "a SQLite function"},
	{regexp.MustCompile(`(?i)\b(PRAGMA|GLOB|rowid|sqlite_\w+)\b`), "a SQLite word"},
}

// sqliteOnly lists the SQLite-only spellings in query's code: its
// literals, quoted names and comments are read as blanks.
func sqliteOnly(query string) []string {
	var b strings.Builder
	segs, code := engine.CodeSegments(query)
	for k, seg := range segs {
		if code[k] {
			b.WriteString(seg)
		} else {
			b.WriteString(" '' ")
		}
	}
	masked := b.String()
	var out []string
	for _, s := range sqliteSpellings {
		if m := s.re.FindString(masked); m != "" {
			out = append(out, fmt.Sprintf("%s %q", s.why, strings.TrimSpace(m)))
		}
	}
	return append(out, sqliteCalls(masked)...)
}

var aggregateCall = regexp.MustCompile(`(?i)\b(sum|max|min)\s*\(`)

// sqliteCalls finds SQLite's two-argument max and min (PostgreSQL's are
// GREATEST and LEAST) and sums of a comparison (PostgreSQL sums no
// booleans) in code.
func sqliteCalls(code string) []string {
	var out []string
	for _, loc := range aggregateCall.FindAllStringIndex(code, -1) {
		name := strings.ToLower(strings.TrimRight(code[loc[0]:loc[1]-1], " \t\n"))
		depth, commas, end := 1, 0, len(code)
		for i := loc[1]; i < len(code); i++ {
			switch code[i] {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 1 {
					commas++
				}
			}
			if depth == 0 {
				end = i
				break
			}
		}
		arg := code[loc[1]:end]
		switch {
		case (name == "max" || name == "min") && commas > 0:
			out = append(out, fmt.Sprintf("two-argument %s(%s)", name, arg))
		case name == "sum" && sumOfComparison(arg):
			out = append(out, fmt.Sprintf("sum of a comparison SUM(%s)", arg))
		}
	}
	return out
}

var comparison = regexp.MustCompile(`(?i)(=|<|>|\bIS\b|\bIN\b|\bAND\b|\bOR\b|\bNOT\b|\bLIKE\b|\bBETWEEN\b)`)

// sumOfComparison reports whether a SUM's argument is a comparison
// (outside any parentheses and not a CASE).
func sumOfComparison(arg string) bool {
	arg = strings.TrimSpace(arg)
	if len(arg) >= 4 && strings.EqualFold(arg[:4], "CASE") {
		return false
	}
	depth := 0
	var top strings.Builder
	for i := 0; i < len(arg); i++ {
		switch arg[i] {
		case '(':
			depth++
		case ')':
			depth--
		default:
			if depth == 0 {
				top.WriteByte(arg[i])
			}
		}
	}
	return comparison.MatchString(top.String())
}

// sqliteLookalikes are the functions and aggregates the PostgreSQL schema
// (migration 00017) defined for queries rewritten from SQLite's spelling.
// The store's statements use none of them; they stay in the schema for
// nodes of an older release sharing the database during an upgrade.
var sqliteLookalikes = []string{
	"FUNCTION bd_json_each(text)", "FUNCTION instr(text, text)",
	"AGGREGATE group_concat(text)", "AGGREGATE group_concat(text, text)", "AGGREGATE sum(boolean)",
	"FUNCTION max(anycompatible, anycompatible)", "FUNCTION min(anycompatible, anycompatible)",
	"FUNCTION julianday(text)",
}

// parseWithoutLookalikes has PostgreSQL parse and plan each of queries
// (prepare, never run) in a fresh database without sqliteLookalikes, and
// lists those it refuses for a function, operator, type or collation it
// does not know, or for their syntax.
func parseWithoutLookalikes(queries []string) ([]string, error) {
	ctx := context.Background()
	server := os.Getenv("BACKUPD_TEST_POSTGRES")
	admin, err := sql.Open("postgres", server)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "backupd_spelling_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		return nil, err
	}
	defer admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	if err := engine.MigratePostgres(ctx, u.String(), engine.MigrateUp, nil); err != nil {
		return nil, err
	}
	conn, err := sql.Open("postgres", u.String())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for _, l := range sqliteLookalikes {
		if _, err := conn.ExecContext(ctx, `DROP `+l); err != nil {
			return nil, fmt.Errorf("drop %s: %w", l, err)
		}
	}
	var problems []string
	for _, q := range queries {
		st, err := conn.PrepareContext(ctx, q)
		if err == nil {
			st.Close()
			continue
		}
		var pe *pq.Error
		if errors.As(err, &pe) && slices.Contains([]pq.ErrorCode{"42883", "42601", "42704", "42846", "42804"}, pe.Code) {
			problems = append(problems, fmt.Sprintf("%v (sent by %s):\n\t%s", err, pgSent.m[q], q))
		}
	}
	return problems, nil
}

// The checker finds SQLite's spellings in code, and none in PostgreSQL's
// or in literals and comments.
func TestSQLiteOnlySpellings(t *testing.T) {
	for _, q := range []string{
		`INSERT OR IGNORE INTO t (a) VALUES ($1)`,
		`SELECT a FROM t ORDER BY name COLLATE NOCASE`,
		`SELECT a FROM t WHERE parent_id IS $1`,
		`SELECT a FROM t WHERE a IS NOT COALESCE(b, c)`,
		`SELECT a FROM t WHERE a IS (SELECT 1)`,
		`SELECT a FROM t WHERE name LIKE $1`,
		`SELECT a FROM t WHERE name NOT LIKE 'x%'`,
		`SELECT CAST(value AS BIGINT) FROM json_each($1)`,
		`SELECT instr(a, $1) FROM t`,
		`SELECT group_concat(DISTINCT e) FROM t`,
		`SELECT julianday($1) - julianday(started_at) FROM t`,
		`SELECT COALESCE(SUM(state = 'queued'), 0) FROM jobs`,
		`SELECT SUM(a IS NULL AND (b < $1)) FROM t`,
		`UPDATE t SET n = MAX(n - 1, 0)`,
		`SELECT min(COALESCE((SELECT MIN(a) FROM t), '9'), '9')`,
	} {
		if got := sqliteOnly(q); len(got) == 0 {
			t.Errorf("sqliteOnly(%q) found nothing", q)
		}
	}
	for _, q := range []string{
		`INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING`,
		`SELECT a FROM t ORDER BY lower(name) COLLATE "C"`,
		`SELECT a FROM t WHERE parent_id IS NOT DISTINCT FROM $1 AND b IS NULL AND c IS NOT NULL AND d IS TRUE`,
		`SELECT a FROM t WHERE name ILIKE $1 ESCAPE '\'`,
		`SELECT a FROM t WHERE note = 'LIKE json_each( IS $1' -- COLLATE NOCASE`,
		`SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST($1 AS jsonb))`,
		`SELECT SUM(CASE WHEN state = 'queued' THEN 1 ELSE 0 END), SUM(size), MAX(a), MIN(b) FROM t`,
		`SELECT COUNT(*) FILTER (WHERE a = 1), MAX(started_at) FILTER (WHERE success = 1) FROM t`,
		`UPDATE t SET n = GREATEST(n - 1, 0)`,
	} {
		if got := sqliteOnly(q); len(got) > 0 {
			t.Errorf("sqliteOnly(%q) = %q, want nothing", q, got)
		}
	}
}

// Every fragment of PostgreSQL's dialect, and every statement the store
// prepares on PostgreSQL, is in PostgreSQL's spelling (checked on either
// engine; on PostgreSQL TestMain checks all the statements sent too).
func TestPostgresDialectSpelling(t *testing.T) {
	d := engine.Postgres{}
	search, _ := deviceSearch(d, "abc")
	fragments := []string{
		d.InsertOrIgnore("t (a, b)", "VALUES (?, ?)"), d.Same("a", "?"), d.Differ("a", "COALESCE(b, c)"),
		d.FoldedOrder("name"), d.EqualFold("username"), "SELECT value FROM " + d.JSONEach(), "SELECT a, b FROM " + d.JSONIntPairs(),
		d.Joined("name", "'/'"), d.JoinedDistinct("event"), d.Position("lower(a)", "lower(?)"),
		d.Greater("attempt - 1", "0"), d.Lesser("a", "b"), d.SumIf("state = 'queued'"), d.MillisBetween("started_at", "?"),
		"SELECT id FROM t LIMIT ?" + d.SkipLocked(), "UPDATE t SET a = 1 WHERE id " + d.InLockedPick("SELECT id FROM t LIMIT ?"),
		search, d.Pick("SELECT rowid FROM t", "SELECT id FROM t"),
	}
	for _, q := range slices.Concat(fragments, writeQueries(d), readQueries(d)) {
		if got := sqliteOnly(engine.Numbered(q)); len(got) > 0 {
			t.Errorf("PostgreSQL's %q has SQLite's %q", q, got)
		}
	}
	// SQLite's own are what the checker knows as SQLite's.
	s := engine.SQLite{}
	for _, q := range []string{s.InsertOrIgnore("t (a)", "VALUES (?)"), s.Same("a", "?"), s.FoldedOrder("name"), s.JSONEach(),
		s.Joined("a", "','"), s.Position("a", "b"), s.Greater("a", "b"), s.SumIf("a = 1"), s.MillisBetween("a", "b")} {
		if len(sqliteOnly(q)) == 0 {
			t.Errorf("SQLite's %q is not found as SQLite's", q)
		}
	}
}
