//go:build !unix

package cli

// busyRunFile cannot tell without flock; backupd targets Linux.
func busyRunFile(string) (string, bool) { return "", false }
