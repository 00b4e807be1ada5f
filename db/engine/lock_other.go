//go:build !unix

package engine

// lockFile is a no-op where flock is unavailable; backupd targets Linux.
func lockFile(string) (func(), error) { return func() {}, nil }
