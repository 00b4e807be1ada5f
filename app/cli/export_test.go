package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backupd/app/devsim"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// backupd export git, --history, and backup run committing to an enabled
// mirror, checked with the real git program against the stored text.
func TestExportGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	data := storeDir(t)
	store, ids, sims := simFleetDevices(t, data, 2, devsim.Options{})
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	sims[0].Mutate(3)
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)

	// --history on an empty mirror: one commit per version, in order.
	r := mustRun(t, call{}, "export", "git", "--history", "--data", data)
	if !strings.Contains(r.stdout, "wrote 2 commit(s)") { // two runs
		t.Fatalf("export git --history:\n%s", r)
	}
	repo := filepath.Join(data, "git", "mirror")
	if n := len(strings.Fields(gitOut(t, repo, "log", "--format=%H", "--", "sw-00"))); n != 2 {
		t.Fatalf("sw-00 has %d commits, want 2", n)
	}
	vs, err := store.MirrorVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := secret.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		text, err := store.SnapshotText(ctx, v.SnapshotHash)
		if err != nil {
			t.Fatal(err)
		}
		// Secrets masked, as the default setting asks.
		if gitOut(t, repo, "show", "HEAD:"+v.Name) != redact.NewKeyring(sealer).Device(v.DeviceID, v.Platform).Text(text) {
			t.Fatalf("%s in git differs from the stored text, masked", v.Name)
		}
	}
	mustFail(t, call{}, []string{"already has commits"}, "export", "git", "--history", "--data", data)
	r = mustRun(t, call{}, "export", "git", "--data", data)
	if !strings.Contains(r.stdout, "nothing changed") {
		t.Fatalf("export git with nothing new:\n%s", r)
	}

	// With the mirror on, a backup run is one commit, pushed to the remote.
	bare := filepath.Join(t.TempDir(), "net.git")
	gitOut(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	if err := store.PutSetting(ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	sims[1].Mutate(4)
	r = mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	if !strings.Contains(r.stderr, "git mirror: committed") {
		t.Fatalf("backup run with the mirror on:\n%s", r)
	}
	if got := strings.TrimSpace(gitOut(t, bare, "log", "-1", "--format=%s", "main")); got != "backupd: sw-01" {
		t.Fatalf("pushed commit: %q", got)
	}
	if n := len(strings.Fields(gitOut(t, bare, "log", "--format=%H", "main"))); n != 3 {
		t.Fatalf("remote has %d commits, want 3", n)
	}
	_ = ids

	// --rewrite warns and asks for --yes; with it, the history is written
	// anew (the old clone kept aside) and force-pushed.
	r = mustFail(t, call{}, []string{"WARNING: --rewrite replaces", "add --yes"}, "export", "git", "--history", "--rewrite", "--data", data)
	if n := len(strings.Fields(gitOut(t, bare, "log", "--format=%H", "main"))); n != 3 {
		t.Fatalf("without --yes the remote changed: %d commits", n)
	}
	r = mustRun(t, call{}, "export", "git", "--history", "--rewrite", "--yes", "--data", data)
	if !strings.Contains(r.stdout, "moved the old clone to "+repo+".replaced-") || !strings.Contains(r.stdout, "force-pushed the new history") {
		t.Fatalf("export git --history --rewrite --yes:\n%s", r)
	}
	if got, want := strings.TrimSpace(gitOut(t, bare, "rev-parse", "main")), strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD")); got != want {
		t.Fatalf("the remote's main %s is not the rewritten %s", got, want)
	}

	// Without git: a clear error, and backups still run.
	noGit := call{env: []string{"PATH=" + t.TempDir()}}
	mustFail(t, noGit, []string{"git mirror: the git program is not installed: apt install git"}, "export", "git", "--data", data)
	r = mustRun(t, noGit, "backup", "run", "--all", "--data", data)
	if !strings.Contains(r.stderr, "the git program is not installed") {
		t.Fatalf("backup run without git:\n%s", r)
	}
}

// backupd export git refuses a remote branch with a hand-made commit: it
// exits non-zero naming the commit, and the remote keeps it.
func TestExportGitRefusesAForeignCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	data := storeDir(t)
	store, _, sims := simFleetDevices(t, data, 1, devsim.Options{})
	bare := filepath.Join(t.TempDir(), "net.git")
	gitOut(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", bare)
	if err := store.PutSetting(ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	first := strings.TrimSpace(gitOut(t, bare, "rev-parse", "main"))

	hand := filepath.Join(t.TempDir(), "hand")
	gitOut(t, bare, "clone", "-q", bare, hand)
	if err := os.WriteFile(filepath.Join(hand, "README.hand"), []byte("by hand\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitOut(t, hand, "add", "README.hand")
	gitOut(t, hand, "-c", "user.name=Alice Admin", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "add README.hand")
	gitOut(t, hand, "push", "-q", "origin", "HEAD:main")
	tip := strings.TrimSpace(gitOut(t, hand, "rev-parse", "HEAD"))

	sims[0].Mutate(8)
	r := mustRun(t, call{}, "backup", "run", "--all", "--data", data)
	if !strings.Contains(r.stderr, "did not write") {
		t.Fatalf("backup run with a foreign commit on the remote:\n%s", r)
	}
	mustFail(t, call{}, []string{"did not write", tip[:12], "Alice Admin <alice@example.com>", `"add README.hand"`,
		"--force-with-lease=main:" + tip, first[:12]}, "export", "git", "--data", data)
	if got := strings.TrimSpace(gitOut(t, bare, "rev-parse", "main")); got != tip {
		t.Fatalf("remote main moved to %s", got)
	}
	if gitOut(t, bare, "show", "main:README.hand") != "by hand\n" {
		t.Fatal("README.hand is gone from the remote")
	}
}

// serve's --git-* flags (and BACKUPD_GIT_* variables) are saved to the
// mirror's settings at start, the deploy key sealed; flags that make no
// valid mirror stop serve with a clear message.
func TestServeSavesGitFlags(t *testing.T) {
	ctx := context.Background()
	data := storeDir(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "deploy_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Skipf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(hosts, []byte("git.example.com "+string(pub)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, call{}, "serve", "--data", data, "--listen", "127.0.0.1:0", "--git-mirror", "--git-remote", "git@git.example.com:net.git")
	if r.code == 0 || !strings.Contains(r.stderr, "git mirror flags") || !strings.Contains(r.stderr, "host key") {
		t.Fatalf("serve with an SSH remote but no pinned key:\n%s", r)
	}
	s := startServe(t, data, "--git-mirror", "--git-groups", "--git-remote", "git@git.example.com:net.git",
		"--git-known-hosts-file", hosts, "--git-ssh-key-file", key, "--git-author-name", "Net Team")
	s.stop(t)
	store := openStore(t, data)
	gm, err := store.GitMirrorSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !gm.Enabled || !gm.Groups || gm.RemoteURL != "git@git.example.com:net.git" || gm.AuthorName != "Net Team" ||
		!strings.HasPrefix(gm.KnownHosts, "git.example.com ssh-ed25519 ") || len(gm.SSHKey) == 0 {
		t.Fatalf("saved settings: %+v", gm)
	}
	if strings.Contains(string(gm.SSHKey), "PRIVATE KEY") || strings.Contains(s.stderr.String(), "PRIVATE KEY") {
		t.Fatal("the deploy key is stored or logged in the clear")
	}

	// The same settings from the environment are saved as well.
	s = startServeEnv(t, data, []string{"BACKUPD_GIT_AUTHOR_NAME=Env Team", "BACKUPD_GIT_BRANCH=configs"})
	s.stop(t)
	if gm, err = store.GitMirrorSettings(ctx); err != nil {
		t.Fatal(err)
	}
	if gm.AuthorName != "Env Team" || gm.Branch != "configs" || gm.RemoteURL != "git@git.example.com:net.git" {
		t.Fatalf("settings after BACKUPD_GIT_* at start: %+v", gm)
	}
}
