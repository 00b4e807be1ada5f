package db

import "errors"

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
