package db

import (
	"errors"
	"slices"
	"strings"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Business-rule errors; the API layer turns them into resource-specific
// codes.
var (
	ErrNameExists    = errors.New("name already exists")
	ErrHasChildren   = errors.New("has child groups")
	ErrInUse         = errors.New("in use by devices")
	ErrInvalidParent = errors.New("invalid parent group")
)

// Refusals of the administration changes.
var (
	// ErrLastAdmin refuses a change that would leave no active user
	// holding every permission: nobody could manage the system any more.
	ErrLastAdmin = errors.New("would leave no active administrator")
	// ErrBuiltinRole refuses changing or deleting a built-in role: each
	// start brings them back in step with the release.
	ErrBuiltinRole = errors.New("built-in roles cannot be changed")
	// ErrRoleInUse refuses deleting a role some user still holds.
	ErrRoleInUse = errors.New("role is held by users")
	// ErrTooManyRoles refuses a role beyond MaxRoles.
	ErrTooManyRoles = errors.New("too many roles")
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

// uniqueNameColumns are the columns whose UNIQUE constraint is a name's:
// a duplicate there is ErrNameExists whichever check let it through.
var uniqueNameColumns = []string{"name", "username", "platform_id"}

// nameConflict turns a write refused for a duplicate name into
// ErrNameExists, the same answer on both engines. The stores check names
// before writing, but on PostgreSQL another node may write the same name
// between the check and the insert; the constraint then decides, and the
// caller must hear "name taken" rather than a database error. Other
// errors are returned as they are.
func nameConflict(err error) error {
	if err == nil {
		return nil
	}
	var column string
	var pe *pq.Error
	var se *sqlite.Error
	switch {
	case errors.As(err, &pe) && pe.Code == "23505": // unique_violation
		// PostgreSQL names a column's UNIQUE constraint <table>_<column>_key.
		column = strings.TrimSuffix(strings.TrimPrefix(pe.Constraint, pe.Table+"_"), "_key")
	case errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		// "UNIQUE constraint failed: devices.name (2067)"
		_, after, _ := strings.Cut(se.Error(), "UNIQUE constraint failed: ")
		after, _, _ = strings.Cut(after, " ")
		_, column, _ = strings.Cut(after, ".")
	default:
		return err
	}
	if slices.Contains(uniqueNameColumns, column) {
		return ErrNameExists
	}
	return err
}
