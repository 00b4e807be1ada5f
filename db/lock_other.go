//go:build !unix

package db

// lockFile is a no-op where flock is unavailable; backupd targets Linux.
func lockFile(string) (func(), error) { return func() {}, nil }
