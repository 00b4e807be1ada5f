package engine

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// Querier is what both *sql.DB and *sql.Tx offer.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// QueryAll runs a query and scans every row with scan.
func QueryAll[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Page counts the rows a list query would return and fetches one page of
// them; listQuery ends where LIMIT ? OFFSET ? can follow.
func Page[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), countQuery, listQuery string, limit, offset int, args ...any) ([]T, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, countQuery, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	items, err := QueryAll(ctx, q, scan, listQuery+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return items, total, err
}

// Exists reports whether query returns any row.
func Exists(ctx context.Context, q Querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// EachRow runs query and hands every row to fn.
func EachRow(ctx context.Context, q Querier, query string, args []any, fn func(Scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// InsertID runs an INSERT and returns the id of the row it added (through
// RETURNING, which both engines have; PostgreSQL has no last insert id).
func InsertID(ctx context.Context, q Querier, query string, args ...any) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, query+` RETURNING id`, args...).Scan(&id)
	return id, err
}

// NullString turns a nil *string into SQL NULL.
func NullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// Placeholders is n ? placeholders, comma-separated, for an IN list.
func Placeholders(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}
