package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/db"
)

// nobody is the unprivileged user that owns the data directory in the
// tests run as root.
const nobody = 65534

// asUser runs backupd as uid/gid (root: 0) from dir and returns its result.
func asUser(t *testing.T, bin, dir string, uid uint32, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = cleanEnv()
	cmd.Dir = dir
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if exitErr, ok := err.(*exec.ExitError); ok {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("backupd %s as uid %d: %v", strings.Join(args, " "), uid, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("backupd %s did not finish within 60 s", strings.Join(args, " "))
	}
	return r
}

// sharedBase is a temporary folder that another user may enter, holding a
// copy of the binary that user may run.
func sharedBase(t *testing.T) (base, bin string) {
	t.Helper()
	base = t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	for d := filepath.Dir(filepath.Dir(base)); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("uid %d cannot enter %s, above the test's temporary folder (set TMPDIR elsewhere)", nobody, d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	bin = filepath.Join(base, "backupd")
	raw, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	return base, bin
}

// mkdirOwned creates dir 0700 owned by uid.
func mkdirOwned(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// expectOwner fails for every path not owned by uid.
func expectOwner(t *testing.T, when string, got map[string]fileInfo, uid int) {
	t.Helper()
	for p, fi := range got {
		if fi.uid != uid {
			t.Errorf("%s: %s belongs to uid %d, want %d", when, p, fi.uid, uid)
		}
	}
}

// `sudo backupd key create --data D`, and every other command run as root
// on a data directory that belongs to the service's user, runs as that
// user: every file it leaves belongs to that user, and the user can then
// open the directory. The commands say whom they run as.
func TestRootRunsAsTheDataDirectoryOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching from root to the data directory's owner needs root; this test runs as uid", os.Geteuid())
	}
	base, bin := sharedBase(t)
	data := filepath.Join(base, "data")
	mkdirOwned(t, data, nobody)

	r := asUser(t, bin, base, 0, "key", "create", "--data", data, "--name", "root-made")
	if r.code != 0 {
		t.Fatalf("key create as root failed:\n%s", r)
	}
	if !strings.Contains(r.stderr, "running as the data directory's owner") || !strings.Contains(r.stderr, "uid=65534") {
		t.Errorf("key create does not say which user it runs as:\n%s", r.stderr)
	}
	got := listData(t, data)
	expectFiles(t, "after key create as root", data, got, db.FileName, "secret.key")
	expectOwner(t, "after key create as root", got, nobody)
	expectPrivate(t, "after key create as root", got)

	// serve as root: its -wal, -shm and engine lock belong to the owner too.
	srv := startServe(t, data)
	got = listData(t, data)
	expectFiles(t, "while serving as root", data, got, db.FileName+"-wal", db.FileName+"-shm", "run")
	expectOwner(t, "while serving as root", got, nobody)
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}

	for _, args := range [][]string{
		{"migrate", "status", "--data", data},
		{"user", "create", "ops", "--data", data},
		{"backup", "run", "--all", "--data", data},
		{"db", "check", "--data", data},
		{"db", "backup", "--data", data, "--out", filepath.Join(data, "copy.db")},
	} {
		if r := asUser(t, bin, base, 0, args...); r.code != 0 {
			t.Errorf("backupd %s as root failed:\n%s", strings.Join(args, " "), r)
		}
	}
	got = listData(t, data)
	expectOwner(t, "after the other commands as root", got, nobody)
	expectPrivate(t, "after the other commands as root", got)

	// A copy goes where the owner may write; elsewhere the refusal says why.
	rootOnly := filepath.Join(base, "root-only")
	if err := os.Mkdir(rootOnly, 0o700); err != nil {
		t.Fatal(err)
	}
	r = asUser(t, bin, base, 0, "db", "backup", "--data", data, "--out", filepath.Join(rootOnly, "copy.db"))
	if r.code == 0 || !strings.Contains(r.stderr, "permission denied; this command runs as user nobody, who owns the data directory") {
		t.Errorf("db backup as root into a folder only root may write:\n%s", r)
	}

	// The owner opens what root's commands left.
	r = asUser(t, bin, base, nobody, "key", "list", "--data", data)
	if r.code != 0 || !strings.Contains(r.stdout, "root-made") {
		t.Fatalf("key list as uid %d after root's commands:\n%s", nobody, r)
	}

	// A fresh data directory in a folder of the owner's is created as
	// the owner.
	parent := filepath.Join(base, "srv")
	mkdirOwned(t, parent, nobody)
	fresh := filepath.Join(parent, "data")
	if r := asUser(t, bin, base, 0, "migrate", "--data", fresh); r.code != 0 {
		t.Fatalf("migrate as root on a new directory:\n%s", r)
	}
	got = listData(t, parent)
	expectOwner(t, "after migrate as root on a new directory", got, nobody)

	// A root-owned leftover of an older backupd is named, with the fix.
	if err := os.Chown(filepath.Join(data, "secret.key"), 0, 0); err != nil {
		t.Fatal(err)
	}
	r = asUser(t, bin, base, 0, "key", "list", "--data", data)
	if r.code == 0 {
		t.Fatalf("key list succeeded on a directory holding a root-owned secret.key:\n%s", r)
	}
	for _, w := range []string{filepath.Join(data, "secret.key") + " (owned by root)", "sudo chown -R nobody: " + data} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("the refusal lacks %q:\n%s", w, r.stderr)
		}
	}

	// Root on a directory of its own stays root.
	own := filepath.Join(base, "own")
	r = asUser(t, bin, base, 0, "key", "create", "--data", own, "--name", "root")
	if r.code != 0 || strings.Contains(r.stderr, "running as the data directory's owner") {
		t.Fatalf("key create as root on root's directory:\n%s", r)
	}
	expectOwner(t, "root's own directory", listData(t, own), 0)
}
