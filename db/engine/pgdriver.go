package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"
)

// The store's queries are written with ? placeholders, which is what
// SQLite reads; on PostgreSQL they pass through pgDriver, which wraps
// lib/pq and numbers them $1, $2, … (pgRebind) and changes nothing else.
// What the engines spell differently is composed where each query is
// written, through the store's dialect (dialect.go): the text a query
// site shows is the text each engine runs.
//
// A ? in code is therefore always a placeholder, on both engines: the
// queries use no PostgreSQL operator spelled with one (jsonb's ?, ?| and
// ?&; jsonb_exists, jsonb_exists_any and jsonb_exists_all say the same).
// A ? inside a string literal, a quoted identifier, a comment or a
// dollar-quoted body is text, and is left as it is.

// PostgresDriver is the database/sql name of the numbering PostgreSQL
// driver.
const PostgresDriver = "backupd-postgres"

func init() { sql.Register(PostgresDriver, pgDriver{}) }

type pgDriver struct{}

func (pgDriver) Open(name string) (driver.Conn, error) {
	return openPGConn(context.Background(), name, true)
}

// OpenConnector makes sql.Open dial with the pool's context.
func (pgDriver) OpenConnector(name string) (driver.Connector, error) {
	return pgConnector{dsn: name, numbered: true}, nil
}

var pgRebinds sync.Map // query → numbered query

// pgRebindCached is pgRebind, from a cache after the first time.
func pgRebindCached(query string) string {
	if v, ok := pgRebinds.Load(query); ok {
		return v.(string)
	}
	out := pgRebind(query)
	pgRebinds.Store(query, out)
	return out
}

// pgSegments cuts a query into code and the parts that are not: string
// literals ('…', and E'…' with its backslash escapes), quoted identifiers,
// dollar-quoted bodies ($$…$$, $tag$…$tag$), -- and /* */ comments. An
// unterminated one runs to the end (the server reports it). Placeholders
// are numbered in code only.
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
			// E'…' (not the end of a longer word) has backslash escapes.
			escapes := ch == '\'' && i > 0 && (query[i-1] == 'E' || query[i-1] == 'e') &&
				(i < 2 || !pgIdentChar(query[i-2]))
			j := i + 1
			for j < len(query) {
				if escapes && query[j] == '\\' {
					j += 2
					continue
				}
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
		case ch == '$' && (i == 0 || !pgIdentChar(query[i-1])):
			if tag := pgDollarTag(query[i:]); tag != "" {
				if j := strings.Index(query[i+len(tag):], tag); j >= 0 {
					end = i + len(tag) + j + len(tag)
				} else {
					end = len(query)
				}
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

// pgDollarTag is the dollar quote that s starts with ($$ or $tag$, a tag
// being an identifier without a $), or "" when s starts with none ($1 is
// a parameter, not a quote).
func pgDollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1]
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		case c >= '0' && c <= '9' && j > 1:
		default:
			return ""
		}
	}
	return ""
}

// pgIdentChar reports whether c may continue an identifier (PostgreSQL's
// may hold $ after the first character: a$b$ is a name, not a quote).
func pgIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// pgRebind numbers the ? placeholders outside string literals, quoted
// identifiers, dollar-quoted bodies and comments.
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

// Numbered is query as PostgreSQL receives it from the store: its ?
// placeholders numbered, nothing else changed.
func Numbered(query string) string { return pgRebind(query) }

// CodeSegments cuts query into the parts PostgreSQL reads as code and
// those it reads as text (string literals, quoted names, comments,
// dollar-quoted bodies): code[i] tells which segs[i] is.
func CodeSegments(query string) (segs []string, code []bool) { return pgSegments(query) }
