//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// busyRunFile reports whether a backupd process works on dataDir: every
// running backup engine and notification worker holds an exclusive flock
// on its own file in DATA/run for as long as it lives (the kernel drops it
// when the process dies). It names the first such file.
func busyRunFile(dataDir string) (string, bool) {
	dir := filepath.Join(dataDir, "run")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for i, e := range entries {
		if i >= 10000 {
			break
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		// A shared lock, released at once: it fails only while a live
		// process holds the exclusive one, and keeps no one waiting.
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		f.Close()
		if err != nil {
			return path, true
		}
	}
	return "", false
}
