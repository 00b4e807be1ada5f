//go:build unix

package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Each running engine holds an exclusive flock on its own file in the data
// directory's run/ folder for as long as it lives. The kernel drops the
// lock when the process dies, however it dies, so another process can
// tell a crashed engine's jobs from a live one's at once and exactly.

func ownerLockPath(dir, owner string) string { return filepath.Join(dir, "engine-"+owner+".lock") }

// holdOwnerLock takes the engine's liveness lock.
func holdOwnerLock(dir, owner string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := ownerLockPath(dir, owner)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create engine lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, nil
}

// claimDeadOwner reports whether the engine owner is gone. When it is, the
// caller holds its lock until release, so two processes never recover the
// same jobs at once.
func claimDeadOwner(dir, owner string) (release func(), dead bool) {
	path := ownerLockPath(dir, owner)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Never started here or already cleaned up: nobody holds it.
		return func() {}, true
	}
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() {
		os.Remove(path)
		f.Close()
	}, true
}
