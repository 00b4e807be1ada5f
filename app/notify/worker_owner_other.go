//go:build !unix

package notify

func holdWorkerLock(string, string) (func(), error) { return func() {}, nil }

// claimDeadWorker cannot tell without flock: leases run out instead.
func claimDeadWorker(string, string) (func(), bool) { return nil, false }
