// Package datadir readies the process and the data directory before any
// command opens a file in it: everything backupd creates there is readable
// by its owner only (files 0600, directories 0700) whatever the umask, and
// a command run as root on a directory that belongs to the service's user
// runs as that user, so that it never leaves root-owned files behind that
// the service cannot open.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Umask is the file mode creation mask every command that opens a data
// directory runs with: new files are 0600 and new directories 0700 at
// most, whatever umask the shell or the service manager handed down.
const Umask = 0o077

// ours reports whether name, an entry at the top of a data directory, is
// one that backupd creates: the database and its companions (-wal, -shm,
// -journal, .migrate-lock), the secret key and the run/ folder of engine
// locks. Only these are tightened, never whatever else a user keeps there.
func ours(name string) bool {
	return strings.HasPrefix(name, "backupd.db") || name == "secret.key" || name == "run"
}

// maxEntries bounds the walk over the data directory's own files.
const maxEntries = 10000

// Prepare is called once per process, before anything in dataDir is
// opened. It sets the process umask to Umask; when the process runs as
// root and dataDir (or, while it does not exist yet, its nearest existing
// parent) belongs to another user, it switches the whole process to that
// user, or refuses where that is not supported; then it takes group and
// other permissions away from the data directory and backupd's files in
// it, logging once what it changed.
func Prepare(dataDir string, log *slog.Logger) error {
	if strings.TrimSpace(dataDir) == "" {
		// Not the current folder, whose owner root would switch to.
		return errors.New("--data must name a directory")
	}
	setUmask()
	if err := becomeOwner(dataDir, log); err != nil {
		return err
	}
	return tighten(dataDir, log)
}

// runningAs is the user Prepare switched to, empty when it did not.
var runningAs string

// RunningAs names the data directory's owner when Prepare switched the
// process from root to that user, and is empty otherwise.
func RunningAs() string { return runningAs }

// ownerOf returns the nearest existing path at or above dir and its
// FileInfo: the data directory itself, or the folder it will be created in.
func ownerOf(dir string) (string, fs.FileInfo, error) {
	p, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, err
	}
	for range 256 {
		fi, err := os.Stat(p)
		if err == nil {
			return p, fi, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, err
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	return "", nil, fmt.Errorf("no existing folder above %s", dir)
}

// entries lists backupd's own files and folders in dataDir (top-level
// names that ours accepts, and everything below the folders among them),
// without following symbolic links, at most maxEntries of them.
func entries(dataDir string) ([]string, error) {
	top, err := os.ReadDir(dataDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range top {
		if !ours(e.Name()) {
			continue
		}
		root := filepath.Join(dataDir, e.Name())
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if len(out) >= maxEntries {
				return fmt.Errorf("more than %d files under %s", maxEntries, dataDir)
			}
			out = append(out, path)
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// tighten removes group and other permissions from the data directory and
// backupd's files in it. A directory with the sticky bit (/tmp given as
// --data by mistake) is left alone: it is shared by design.
func tighten(dataDir string, log *slog.Logger) error {
	fi, err := os.Stat(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created 0700 when first opened
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("--data %s is not a directory", dataDir)
	}
	list, err := entries(dataDir)
	if err != nil {
		return fmt.Errorf("read data directory: %w", err)
	}
	if err := checkOwners(dataDir, list); err != nil {
		return err
	}
	var changed []string
	if fi.Mode()&fs.ModeSticky == 0 && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dataDir, fi.Mode().Perm()&^0o077); err != nil {
			return fmt.Errorf("make %s private: %w", dataDir, err)
		}
		changed = append(changed, fmt.Sprintf("%s (was %04o)", dataDir, fi.Mode().Perm()))
	}
	for _, p := range list {
		li, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a lock file released meanwhile
		}
		if err != nil {
			return err
		}
		if !li.Mode().IsRegular() && !li.IsDir() {
			continue // symbolic links are not followed
		}
		if li.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, li.Mode().Perm()&^0o077); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make %s private: %w", p, err)
		}
		changed = append(changed, fmt.Sprintf("%s (was %04o)", p, li.Mode().Perm()))
	}
	if len(changed) > 0 {
		log.Warn("removed group and other permissions in the data directory; only its owner may read it",
			"data", dataDir, "changed", strings.Join(changed, ", "))
	}
	return nil
}
