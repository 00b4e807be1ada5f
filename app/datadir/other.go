//go:build !unix

package datadir

import "log/slog"

// Without Unix owners and modes there is nothing to switch or check.

func setUmask() {}

func becomeOwner(string, *slog.Logger) error { return nil }

func checkOwners(string, []string) error { return nil }

// CheckOwner has no owner to check without Unix owners.
func CheckOwner(string) error { return nil }
