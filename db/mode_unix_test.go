//go:build unix

package db_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"backupd/db"
)

// withUmask runs the rest of the test with the process umask set to mask.
// The tests of this package do not run in parallel, so nothing else sees it.
func withUmask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// modes maps every path under dir (dir included) to its permission bits.
func modes(t *testing.T, dir string) map[string]fs.FileMode {
	t.Helper()
	out := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fi.Mode().Perm()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expectPrivate fails for every file under dir that is not 0600 and every
// directory that is not 0700.
func expectPrivate(t *testing.T, dir string, got map[string]fs.FileMode) {
	t.Helper()
	for p, m := range got {
		want := fs.FileMode(0o600)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			want = 0o700
		}
		if m != want {
			t.Errorf("%s: mode %04o, want %04o", p, m, want)
		}
	}
}

// With umask 0000 the database, its -wal and -shm files, the migration
// lock and a VACUUM INTO copy are still readable by their owner only:
// SQLite alone would create the database and the copy 0644.
func TestStoreFilesArePrivateWhateverTheUmask(t *testing.T) {
	withUmask(t, 0)
	data := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	s, err := db.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateGroup(ctx, "core", nil); err != nil {
		t.Fatal(err)
	}
	got := modes(t, data)
	for _, name := range []string{db.FileName, db.FileName + "-wal", db.FileName + "-shm", db.FileName + ".migrate-lock"} {
		if _, ok := got[filepath.Join(data, name)]; !ok {
			t.Errorf("%s is missing while the store is open; found %v", name, got)
		}
	}
	expectPrivate(t, data, got)

	copyDir := t.TempDir()
	dst := filepath.Join(copyDir, "copy.db")
	if err := s.BackupTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	expectPrivate(t, copyDir, map[string]fs.FileMode{dst: modes(t, dst)[dst]})
	if err := s.BackupTo(ctx, dst); err == nil {
		t.Error("a second copy to the same file succeeded; it must never overwrite")
	}
	if fi, err := os.Stat(dst); err != nil || fi.Size() == 0 {
		t.Errorf("the first copy is gone or empty after the refused second one: %v", err)
	}
}
