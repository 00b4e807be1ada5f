package db

import (
	"context"
	"database/sql"
	"strings"
)

// InsertID runs an INSERT on the writing connection and returns the new
// row's id (RETURNING id: PostgreSQL has no LastInsertId).
func (s *Store) InsertID(ctx context.Context, query string, args ...any) (int64, error) {
	return insertID(ctx, s.writer, query, args...)
}

// Writer is the writing connection, for tests that interleave two nodes'
// transactions statement by statement.
func (s *Store) Writer() *sql.DB { return s.writer }

// EqualFold is the store's spelling of a name column compared with a ?
// parameter, ASCII case folded, for tests that plan its queries.
func (s *Store) EqualFold(expr string) string { return s.d.equalFold(expr) }

// SentToPostgres reports whether the store sent a statement holding
// fragment to PostgreSQL during this run (TestMain records them).
func SentToPostgres(fragment string) bool {
	pgSent.Lock()
	defer pgSent.Unlock()
	for q := range pgSent.m {
		if strings.Contains(q, fragment) {
			return true
		}
	}
	return false
}
