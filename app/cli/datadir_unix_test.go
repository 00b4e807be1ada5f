//go:build unix

package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"backupd/db"
)

// fileInfo is what the tests check of each path in a data directory.
type fileInfo struct {
	mode fs.FileMode // permission bits
	dir  bool
	uid  int
}

// listData maps every path under dir (dir included) to its mode and owner.
func listData(t *testing.T, dir string) map[string]fileInfo {
	t.Helper()
	out := map[string]fileInfo{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fileInfo{mode: fi.Mode().Perm(), dir: fi.IsDir(), uid: int(fi.Sys().(*syscall.Stat_t).Uid)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expectPrivate fails for every file that is not 0600 and every directory
// that is not 0700; when says which moment of the test it is.
func expectPrivate(t *testing.T, when string, got map[string]fileInfo) {
	t.Helper()
	for p, fi := range got {
		want := fs.FileMode(0o600)
		if fi.dir {
			want = 0o700
		}
		if fi.mode != want {
			t.Errorf("%s: %s has mode %04o, want %04o", when, p, fi.mode, want)
		}
	}
}

// expectFiles fails unless each name exists in dir.
func expectFiles(t *testing.T, when, dir string, got map[string]fileInfo, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := got[filepath.Join(dir, n)]; !ok {
			t.Errorf("%s: %s is missing from %s; found %v", when, n, dir, got)
		}
	}
}

// A user whose umask is 0000 still gets a private data directory from
// every command that writes it: key create, serve (while it runs, with its
// -wal, -shm and engine lock, and after it stops), db backup into and out
// of the directory. A directory left readable by others is tightened at
// the next start, which says so once.
func TestDataDirIsPrivateWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0) // inherited by every backupd the test starts
	t.Cleanup(func() { syscall.Umask(old) })

	data := filepath.Join(t.TempDir(), "data")
	createKey(t, data, "--name", "modes")
	got := listData(t, data)
	expectFiles(t, "after key create", data, got, db.FileName, "secret.key")
	expectPrivate(t, "after key create", got)

	srv := startServe(t, data)
	got = listData(t, data)
	expectFiles(t, "while serving", data, got, db.FileName+"-wal", db.FileName+"-shm", "run")
	expectPrivate(t, "while serving", got)
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
	expectPrivate(t, "after serve stopped", listData(t, data))

	inside := filepath.Join(data, "copy.db")
	mustRun(t, call{}, "db", "backup", "--data", data, "--out", inside)
	outDir := t.TempDir()
	outside := filepath.Join(outDir, "copy.db")
	mustRun(t, call{}, "db", "backup", "--data", data, "--out", outside)
	got = listData(t, data)
	expectFiles(t, "after db backup", data, got, "copy.db")
	expectPrivate(t, "after db backup", got)
	expectPrivate(t, "the copy outside the data directory", map[string]fileInfo{outside: listData(t, outside)[outside]})

	// A directory from an older backupd, or loosened by hand.
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{db.FileName, "secret.key"} {
		if err := os.Chmod(filepath.Join(data, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := mustRun(t, call{}, "key", "list", "--data", data)
	expectPrivate(t, "after key list on a loosened directory", listData(t, data))
	if n := strings.Count(r.stderr, "removed group and other permissions"); n != 1 {
		t.Errorf("key list said %d times that it tightened the directory, want once:\n%s", n, r.stderr)
	}
	for _, p := range []string{data + " (was 0755)", filepath.Join(data, db.FileName) + " (was 0644)", filepath.Join(data, "secret.key") + " (was 0644)"} {
		if !strings.Contains(r.stderr, p) {
			t.Errorf("the notice does not name %s:\n%s", p, r.stderr)
		}
	}
	r = mustRun(t, call{}, "key", "list", "--data", data)
	if strings.Contains(r.stderr, "removed group and other permissions") {
		t.Errorf("a private directory was reported as tightened again:\n%s", r.stderr)
	}
}
