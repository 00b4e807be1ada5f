package gitmirror_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/gitmirror"
	"backupd/db"
	"backupd/db/queue"
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
	res := e.pushRun(db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true,
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
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
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
	e.run(queue.TriggerSchedule)
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

// Only the leader runs the mirror, and each node keeps its own clone: after
// a leader change the new leader's clone lacks the commits the old one
// pushed. Two nodes (two data directories, one store) take turns; every
// push goes through without force and the remote keeps every commit of
// both, in order, in a linear history.
func TestPushesFollowTheRemoteAcrossLeaderChanges(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	nodeB := gitmirror.New(e.store, e.sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	nodeB.PushBackoff = 10 * time.Millisecond
	var pushed []string
	for turn, m := range []*gitmirror.Mirror{e.mirror, nodeB, e.mirror, nodeB} {
		if turn > 0 {
			e.sims[r1].Mutate(int64(10 + turn))
		}
		e.run(queue.TriggerSchedule)
		res, err := m.Sync(e.ctx)
		if err != nil || res.Commit == "" {
			t.Fatalf("turn %d: sync: %+v %v", turn, res, err)
		}
		if err := m.Push(e.ctx); err != nil {
			t.Fatalf("turn %d: push: %v", turn, err)
		}
		if git(t, bare, "show", "main:r1") != e.latestText(r1) {
			t.Fatalf("turn %d: the remote's r1 is not the latest stored text", turn)
		}
		pushed = append(pushed, strings.TrimSpace(git(t, bare, "rev-parse", "main")))
	}
	if got := strings.Fields(git(t, bare, "rev-list", "--reverse", "main")); !slices.Equal(got, pushed) {
		t.Fatalf("remote history %v, want each push's commit in order %v", got, pushed)
	}
	if merges := strings.TrimSpace(git(t, bare, "rev-list", "--merges", "main")); merges != "" {
		t.Fatalf("merge commits on the remote: %s", merges)
	}
	for i, s := range commits(t, bare) {
		if s != "backupd: r1" {
			t.Fatalf("commit %d: subject %q", i, s)
		}
	}
}

// Without a remote, pushing is nothing and the clone's history is its own.
func TestNoRemoteNoFetch(t *testing.T) {
	e := newEnv(t)
	e.sim("r1", "cisco_ios", 1, nil)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
	res := e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(git(t, e.mirror.Dir(), "rev-parse", "HEAD")); head != res.Commit {
		t.Fatalf("HEAD %s after a push without remote, want %s", head, res.Commit)
	}
}
