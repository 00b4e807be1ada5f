package engine

import (
	"errors"
	"strings"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Retryable reports whether err is PostgreSQL aborting a transaction that
// may well succeed when run again from the start: it was chosen to break a
// deadlock (SQLSTATE 40P01), or it conflicted with a concurrent one under
// serializable or repeatable-read isolation (40001). InTx runs such a
// transaction again itself.
func Retryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// UniqueViolation reports whether err is a write refused by a column's
// UNIQUE constraint, and names the column, the same on both engines.
func UniqueViolation(err error) (column string, ok bool) {
	var pe *pq.Error
	var se *sqlite.Error
	switch {
	case errors.As(err, &pe) && pe.Code == "23505": // unique_violation
		// PostgreSQL names a column's UNIQUE constraint <table>_<column>_key.
		return strings.TrimSuffix(strings.TrimPrefix(pe.Constraint, pe.Table+"_"), "_key"), true
	case errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		// "UNIQUE constraint failed: devices.name (2067)"
		_, after, _ := strings.Cut(se.Error(), "UNIQUE constraint failed: ")
		after, _, _ = strings.Cut(after, " ")
		_, column, _ = strings.Cut(after, ".")
		return column, true
	}
	return "", false
}
