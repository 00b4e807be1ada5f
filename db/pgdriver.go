package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The store's queries are written once, in the SQL both engines speak, with
// SQLite's ? placeholders. On PostgreSQL they pass through pgDriver, which
// wraps lib/pq and rewrites each query once (then from a cache):
// placeholders become $1, $2, …, and the few SQLite spellings that have a
// direct PostgreSQL equivalent are translated. Functions PostgreSQL lacks
// (instr, group_concat, SUM of a comparison) are defined by its schema
// (embed/migrations/postgres). Queries that differ in more than spelling
// branch on Store.pg where they are built.

// pgDriverName is the database/sql name of the rewriting PostgreSQL driver.
const pgDriverName = "backupd-postgres"

func init() { sql.Register(pgDriverName, pgDriver{}) }

type pgDriver struct{}

func (pgDriver) Open(name string) (driver.Conn, error) { return openPGConn(context.Background(), name) }

// OpenConnector makes sql.Open dial with the pool's context.
func (pgDriver) OpenConnector(name string) (driver.Connector, error) {
	return pgConnector{dsn: name}, nil
}

var pgRewrites sync.Map // query → rewritten query

// pgRewrite turns a query written for SQLite into PostgreSQL's spelling.
func pgRewrite(query string) string {
	if v, ok := pgRewrites.Load(query); ok {
		return v.(string)
	}
	out := pgTranslate(pgRebind(query))
	pgRewrites.Store(query, out)
	return out
}

// pgSegments cuts a query into code and the parts that are not: string
// literals, quoted identifiers, -- and /* */ comments. An unterminated
// one runs to the end (the server reports it). Placeholders are numbered
// and spellings translated in code only.
func pgSegments(query string) (segs []string, code []bool) {
	start := 0
	emit := func(end int, isCode bool) {
		if end > start {
			segs = append(segs, query[start:end])
			code = append(code, isCode)
		}
		start = end
	}
	for i := 0; i < len(query); i++ {
		ch := query[i]
		end := -1
		switch {
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(query) {
				if query[j] == ch {
					if j+1 < len(query) && query[j+1] == ch { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			end = min(j+1, len(query))
		case ch == '-' && i+1 < len(query) && query[i+1] == '-':
			if j := strings.IndexByte(query[i:], '\n'); j >= 0 {
				end = i + j + 1
			} else {
				end = len(query)
			}
		case ch == '/' && i+1 < len(query) && query[i+1] == '*':
			if j := strings.Index(query[i+2:], "*/"); j >= 0 {
				end = i + 2 + j + 2
			} else {
				end = len(query)
			}
		}
		if end >= 0 {
			emit(i, true)
			emit(end, false)
			i = end - 1
		}
	}
	emit(len(query), true)
	return segs, code
}

// pgRebind numbers the ? placeholders outside string literals, quoted
// identifiers and comments.
func pgRebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	segs, code := pgSegments(query)
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for k, seg := range segs {
		if !code[k] {
			b.WriteString(seg)
			continue
		}
		for i := 0; i < len(seg); i++ {
			if seg[i] == '?' {
				n++
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			} else {
				b.WriteByte(seg[i])
			}
		}
	}
	return b.String()
}

// pgTranslations are SQLite spellings with a PostgreSQL equivalent of the
// same meaning.
var pgTranslations = []struct {
	re   *regexp.Regexp
	repl string
}{
	// SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
	{regexp.MustCompile(`\bLIKE\b`), "ILIKE"},
	// x IS ?, x IS COALESCE(…) and x IS (SELECT …) compare values, NULL
	// included (IS NULL, IS TRUE and the like are left as they are).
	{regexp.MustCompile(`\bIS NOT\s+(\$\d+|COALESCE\(|\()`), "IS DISTINCT FROM $1"},
	{regexp.MustCompile(`\bIS\s+(\$\d+|COALESCE\(|\()`), "IS NOT DISTINCT FROM $1"},
	// NOCASE orders by the ASCII-lowercased text, in byte order.
	{regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*) COLLATE NOCASE`), `lower($1) COLLATE "C"`},
	// A parameter compared without case: as citext.
	{regexp.MustCompile(`(\$\d+) COLLATE NOCASE`), "CAST($1 AS citext)"},
	// An element of an array in a JSON array (json_each of [[a, b], …]), as
	// the integer it is.
	{regexp.MustCompile(`\bvalue ->> (\d+)`), "CAST(CAST(value AS jsonb) ->> $1 AS BIGINT)"},
	// json_each of an array: its elements as text.
	{regexp.MustCompile(`\bjson_each\(`), "bd_json_each("},
}

func pgTranslate(query string) string {
	// INSERT OR IGNORE: ON CONFLICT DO NOTHING, before any RETURNING.
	if strings.Contains(query, "INSERT OR IGNORE INTO") {
		query = strings.Replace(query, "INSERT OR IGNORE INTO", "INSERT INTO", 1)
		query = strings.TrimRight(query, " \t\n;")
		if i := strings.LastIndex(query, " RETURNING "); i >= 0 {
			query = query[:i] + " ON CONFLICT DO NOTHING" + query[i:]
		} else {
			query += " ON CONFLICT DO NOTHING"
		}
	}
	segs, code := pgSegments(query)
	for k := range segs {
		if code[k] {
			for _, t := range pgTranslations {
				segs[k] = t.re.ReplaceAllString(segs[k], t.repl)
			}
		}
	}
	return strings.Join(segs, "")
}
