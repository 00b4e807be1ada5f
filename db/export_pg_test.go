package db

import "context"

// InsertID runs an INSERT on the writing connection and returns the new
// row's id (RETURNING id: PostgreSQL has no LastInsertId).
func (s *Store) InsertID(ctx context.Context, query string, args ...any) (int64, error) {
	return insertID(ctx, s.writer, query, args...)
}
