package db

import (
	"errors"
	"slices"

	"backupd/db/engine"
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
	column, ok := engine.UniqueViolation(err)
	if !ok {
		return err
	}
	if slices.Contains(uniqueNameColumns, column) {
		return ErrNameExists
	}
	return err
}
