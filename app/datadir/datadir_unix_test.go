//go:build unix

package datadir_test

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"backupd/app/datadir"
)

func prepare(t *testing.T, dir string) string {
	t.Helper()
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	var log bytes.Buffer
	if err := datadir.Prepare(dir, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatalf("Prepare(%s): %v", dir, err)
	}
	if got := syscall.Umask(0); got != datadir.Umask {
		t.Errorf("umask after Prepare %04o, want %04o", got, datadir.Umask)
	}
	return log.String()
}

func write(t *testing.T, path string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Only backupd's own files are tightened: not a user's file kept beside
// them, not the target of a symbolic link.
func TestPrepareTightensOnlyBackupdsFiles(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "shared.txt")
	write(t, outside, 0o644)
	write(t, filepath.Join(dir, "backupd.db"), 0o644)
	write(t, filepath.Join(dir, "backupd.db-wal"), 0o664)
	write(t, filepath.Join(dir, "run", "engine-x.lock"), 0o644)
	write(t, filepath.Join(dir, "notes.txt"), 0o644)
	if err := os.Chmod(filepath.Join(dir, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	log := prepare(t, dir)
	for p, want := range map[string]fs.FileMode{
		dir:                                        0o700,
		filepath.Join(dir, "backupd.db"):           0o600,
		filepath.Join(dir, "backupd.db-wal"):       0o600,
		filepath.Join(dir, "run"):                  0o700,
		filepath.Join(dir, "run", "engine-x.lock"): 0o600,
		filepath.Join(dir, "notes.txt"):            0o644,
		outside:                                    0o644,
	} {
		if got := mode(t, p); got != want {
			t.Errorf("%s: mode %04o, want %04o", p, got, want)
		}
	}
	if strings.Count(log, "removed group and other permissions") != 1 || !strings.Contains(log, "backupd.db-wal (was 0664)") {
		t.Errorf("Prepare did not log once what it changed:\n%s", log)
	}
	if log := prepare(t, dir); log != "" {
		t.Errorf("a second Prepare logged %q; nothing was left to change", log)
	}
}

// A shared folder with the sticky bit (/tmp given as --data) keeps its mode,
// and a directory that does not exist yet is left to be created 0700.
func TestPrepareLeavesStickyAndMissingDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, fs.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "backupd.db"), 0o644)
	prepare(t, dir)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("sticky folder mode changed to %v", fi.Mode())
	}
	if got := mode(t, filepath.Join(dir, "backupd.db")); got != 0o600 {
		t.Errorf("backupd.db in a sticky folder: mode %04o, want 0600", got)
	}
	if err := datadir.Prepare(" ", slog.New(slog.DiscardHandler)); err == nil {
		t.Error("Prepare accepted an empty --data")
	}
	missing := filepath.Join(t.TempDir(), "new", "data")
	prepare(t, missing)
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("Prepare created %s (%v); creating it is the store's job", missing, err)
	}
}

// CheckOwner lets the data directory's owner through and refuses anyone
// else, naming both users.
func TestCheckOwner(t *testing.T) {
	dir := t.TempDir()
	if err := datadir.CheckOwner(dir); err != nil {
		t.Fatalf("the owner is refused: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("giving the folder to another user needs root")
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err := datadir.CheckOwner(dir)
	if err == nil || !strings.Contains(err.Error(), "only the owner of the data directory") {
		t.Fatalf("another user's data directory: %v", err)
	}
}
