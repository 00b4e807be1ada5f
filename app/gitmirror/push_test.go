package gitmirror_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/app/gitmirror"
	"backupd/db"
)

func bareRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mirror.git")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "--bare", "-b", "main")
	return dir
}

func TestPushToFileRemote(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	res := e.pushRun(db.GitMirror{Enabled: true, RemoteURL: "file://" + bare,
		AuthorName: "Net Team", AuthorEmail: "net@example.com"}, bare, r1, "r1", "over file://")
	if who := strings.TrimSpace(git(t, bare, "log", "-1", "--format=%an <%ae> / %cn <%ce>", "main")); who != "Net Team <net@example.com> / Net Team <net@example.com>" {
		t.Fatalf("author/committer: %s", who)
	}
	st, err := e.mirror.PushStatus(e.ctx)
	if err != nil || !st.OK || st.Commit != res.Commit || st.LastSuccess == nil {
		t.Fatalf("push status: %+v %v", st, err)
	}
}

func TestPushRefusedIsReportedAndBackupsGoOn(t *testing.T) {
	e := newEnv(t)
	e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	// The remote refuses every push.
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare}); err != nil {
		t.Fatal(err)
	}
	e.run(db.TriggerManual)
	first := e.sync()
	err := e.mirror.Push(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "refused by policy") {
		t.Fatalf("push to a refusing remote: %v", err)
	}
	st, _ := e.mirror.PushStatus(e.ctx)
	if st.OK || !strings.Contains(st.Error, "refused by policy") || st.LastSuccess != nil {
		t.Fatalf("push status: %+v", st)
	}
	if n := strings.Count(e.log.String(), "git mirror: push failed"); n != 3 {
		t.Fatalf("%d push attempts logged, want 3", n)
	}
	// Backups and local commits go on.
	for id, d := range e.sims {
		d.Mutate(5)
		_ = id
	}
	e.run(db.TriggerSchedule)
	if res := e.sync(); res.Commit == "" || res.Commit == first.Commit {
		t.Fatalf("no local commit while the remote refuses: %+v", res)
	}
	// Once the remote accepts again, everything goes.
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(git(t, bare, "log", "--format=%H", "main"))); n != 2 {
		t.Fatalf("remote has %d commits, want 2", n)
	}
}

func TestRemoteURLs(t *testing.T) {
	for u, want := range map[string]string{
		"":                                 "",
		"ssh://git@127.0.0.1:2222/net.git": "ssh",
		"git@github.com:team/net.git":      "ssh",
		"https://git.example.com/net.git":  "https",
		"file:///srv/net.git":              "file",
		"/srv/net.git":                     "file",
	} {
		if got, err := gitmirror.RemoteKind(u); err != nil || got != want {
			t.Errorf("RemoteKind(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
	for _, u := range []string{"https://user:tok3n@git.example.com/x.git", "-oProxyCommand=x", "ftp://x/y", "a b:c", "net.git"} {
		if _, err := gitmirror.RemoteKind(u); err == nil {
			t.Errorf("RemoteKind(%q) accepted", u)
		}
	}
}
