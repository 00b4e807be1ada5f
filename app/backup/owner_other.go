//go:build !unix

package backup

// Without flock an engine cannot tell a crashed engine from a live one;
// only its own jobs are recovered (at shutdown). backupd targets Linux.

func holdOwnerLock(string, string) (func(), error) { return func() {}, nil }

func claimDeadOwner(string, string) (func(), bool) { return nil, false }
