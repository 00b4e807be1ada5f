//go:build unix

package notify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Each running delivery worker holds an exclusive flock on its own file in
// the data directory's run/ folder while it lives (as the backup engine
// does): the kernel drops it when the process dies, however it dies, so a
// starting worker tells a dead process's leases from a live one's.

func workerLockPath(dir, owner string) string { return filepath.Join(dir, owner+".lock") }

func holdWorkerLock(dir, owner string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := workerLockPath(dir, owner)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create delivery worker lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { os.Remove(path); f.Close() }, nil
}

// claimDeadWorker reports whether owner's process is gone; the caller then
// holds its lock until release.
func claimDeadWorker(dir, owner string) (func(), bool) {
	path := workerLockPath(dir, owner)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, true
	}
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { os.Remove(path); f.Close() }, true
}
