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
