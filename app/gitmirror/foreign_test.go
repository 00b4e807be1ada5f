package gitmirror_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"backupd/app/gitmirror"
	"backupd/app/metrics"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/queue"
)

const handText = "notes kept by hand\n"

// handCommit commits files (path → content) to branch of the bare remote
// as a person would: a clone, a commit by Alice, a push. msg is the
// message; it returns the new commit.
func handCommit(t *testing.T, bare, branch string, files map[string]string, msg string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hand")
	git(t, bare, "clone", "-q", "-b", branch, bare, dir)
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", "--", p)
	}
	git(t, dir, "-c", "user.name=Alice Admin", "-c", "user.email=alice@example.com", "commit", "-q", "--cleanup=verbatim", "-m", msg)
	git(t, dir, "push", "-q", "origin", "HEAD:refs/heads/"+branch)
	return strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

// scrapeMetrics is what this process's metrics endpoint says.
func scrapeMetrics(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(metrics.Options{}, func(context.Context) (metrics.State, error) { return metrics.State{}, nil }).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// deliver runs the notification worker until nothing is left and returns
// what the hooks received.
func (e *env) deliver(hooks *pushHooks, path string) []notify.Event {
	e.t.Helper()
	w := notify.NewWorker(e.store, notify.Opener(e.sealer), notify.WorkerOptions{Window: time.Nanosecond,
		PublicURL: "https://backupd.example/"})
	for range 10 {
		n, err := w.Pass(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	return append([]notify.Event(nil), hooks.events[path]...)
}

// A commit someone pushed by hand to the mirror's branch is never built
// upon: the push is refused, naming the commit and what to do, nothing on
// the remote changes, the push status, the metric and one git.push_failed
// say so; once the branch is the mirror's again, pushes go on.
func TestForeignCommitOnRemoteIsRefused(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	remote := "file://" + bare
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: remote, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	hooks := &pushHooks{events: map[string][]notify.Event{}}
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	e.hookRule("all", srv.URL+"/all", db.RuleScopeAll, nil)

	e.run(queue.TriggerManual)
	first := e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	hand := handCommit(t, bare, "main", map[string]string{"README.hand": handText}, "add README.hand\n\nKept by hand.")

	e.sims[r1].Mutate(21)
	e.run(queue.TriggerSchedule)
	if res := e.sync(); res.Commit == "" {
		t.Fatal("no local commit of the change")
	}
	for streak := 1; streak <= 2; streak++ {
		err := e.mirror.Push(e.ctx)
		var fe *gitmirror.ForeignCommitError
		if !errors.As(err, &fe) {
			t.Fatalf("push onto a hand-made commit: %v", err)
		}
		msg := err.Error()
		for _, want := range []string{gitmirror.Short(hand), "Alice Admin <alice@example.com>", `"add README.hand"`,
			"did not write", "never builds on, rewrites or deletes", "--force-with-lease=main:" + hand,
			gitmirror.Short(first.Commit), "another branch or remote"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal lacks %q: %s", want, msg)
			}
		}
		// Nothing on the remote changed.
		if tip := strings.TrimSpace(git(t, bare, "rev-parse", "main")); tip != hand {
			t.Fatalf("remote main is %s, want the hand-made %s", tip, hand)
		}
		if got := git(t, bare, "show", "main:README.hand"); got != handText {
			t.Fatalf("README.hand on the remote: %q", got)
		}
		st, err := e.mirror.PushStatus(e.ctx)
		if err != nil || st.OK || st.Foreign == nil || st.Foreign.Where != "remote" || st.Foreign.Commit != gitmirror.Short(hand) ||
			st.Foreign.Author != "Alice Admin <alice@example.com>" || st.Foreign.Subject != "add README.hand" ||
			st.Foreign.Base != gitmirror.Short(first.Commit) || st.ConsecutiveFailures != streak {
			t.Fatalf("push status: %+v %+v %v", st, st.Foreign, err)
		}
	}
	if strings.Contains(e.log.String(), "git mirror: push failed") {
		t.Fatal("a refusal was tried again: nothing changes until someone acts")
	}
	if out := scrapeMetrics(t); !strings.Contains(out, "\nbackupd_git_foreign_commit 1\n") {
		t.Fatalf("metrics while refused:\n%s", out)
	}

	// The operator keeps the work on a branch and puts main back, as the
	// message says; the next push goes through.
	dir := filepath.Join(t.TempDir(), "fix")
	git(t, bare, "clone", "-q", bare, dir)
	git(t, dir, "push", "-q", "origin", hand+":refs/heads/hand")
	git(t, dir, "push", "-q", "--force-with-lease=main:"+hand, "origin", first.Commit+":refs/heads/main")
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if git(t, bare, "show", "main:r1") != e.latestText(r1) || git(t, bare, "show", "hand:README.hand") != handText {
		t.Fatal("after the fix: the remote's r1 is not the latest, or the kept work is gone")
	}
	if out := scrapeMetrics(t); !strings.Contains(out, "\nbackupd_git_foreign_commit 0\n") {
		t.Fatalf("metrics after the fix:\n%s", out)
	}

	got := e.deliver(hooks, "/all")
	if len(got) != 2 || got[0].Kind != "git.push_failed" || got[1].Kind != "git.push_recovered" {
		t.Fatalf("events %+v, want one git.push_failed then git.push_recovered", got)
	}
	if r := got[0].Failure.Reason; !strings.Contains(r, gitmirror.Short(hand)) || !strings.Contains(r, "did not write") {
		t.Fatalf("git.push_failed reason: %s", r)
	}
}

// A commit another node's mirror wrote is the mirror's own, even when no
// record of its push is left: its trailer says so. A hand-made commit
// that copies such a commit's message (trailer included) but adds a file
// is not.
func TestAnotherNodesCommitIsAcceptedACopiedMessageIsNot(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	nodeB := gitmirror.New(e.store, e.sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	nodeB.PushBackoff = 10 * time.Millisecond
	forget := func() { // as if no push had been recorded
		t.Helper()
		if err := e.store.PutSetting(e.ctx, db.SettingGitPush, db.GitPushStatus{}); err != nil {
			t.Fatal(err)
		}
	}
	step := func(m *gitmirror.Mirror, seed int64) error {
		t.Helper()
		e.sims[r1].Mutate(seed)
		e.run(queue.TriggerSchedule)
		if _, err := m.Sync(e.ctx); err != nil {
			t.Fatal(err)
		}
		return m.Push(e.ctx)
	}
	if err := step(e.mirror, 1); err != nil {
		t.Fatal(err)
	}
	forget()
	if err := step(nodeB, 2); err != nil {
		t.Fatal(err)
	}
	byB := strings.TrimSpace(git(t, bare, "rev-parse", "main"))
	forget()
	if err := step(e.mirror, 3); err != nil {
		t.Fatalf("node A refused node B's commit: %v", err)
	}
	if parent := strings.TrimSpace(git(t, bare, "rev-parse", "main^")); parent != byB {
		t.Fatalf("node A's commit is on %s, want node B's %s", parent, byB)
	}
	if body := git(t, bare, "log", "-1", "--format=%B", "main"); !strings.Contains(body, "\n\nBackupd-Mirror: ") {
		t.Fatalf("no trailer: %s", body)
	}

	copied := git(t, bare, "log", "-1", "--format=%B", "main")
	forged := handCommit(t, bare, "main", map[string]string{"README.hand": handText}, copied)
	forget()
	err := step(nodeB, 4)
	var fe *gitmirror.ForeignCommitError
	if !errors.As(err, &fe) || fe.Commit != forged {
		t.Fatalf("a commit with a copied message was taken: %v", err)
	}
	if git(t, bare, "show", "main:README.hand") != handText {
		t.Fatal("README.hand is gone from the remote")
	}
}

// History the mirror wrote before its commits had the trailer is taken as
// its own below the last commit a push sent, as recorded before the
// record named it apart (the commit of a good push).
func TestHistoryBelowTheLastPushIsTheMirrors(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
	e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	// An older backupd on another node pushed this: no trailer.
	old := handCommit(t, bare, "main", map[string]string{"r1": "hostname r1\n"}, "backupd: r1\n\n- r1: changed (trigger: schedule)\n")
	if err := e.store.PutSetting(e.ctx, db.SettingGitPush, db.GitPushStatus{At: time.Now(), OK: true, Commit: old}); err != nil {
		t.Fatal(err)
	}
	e.sims[r1].Mutate(5)
	e.run(queue.TriggerSchedule)
	e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatalf("history below the recorded push was refused: %v", err)
	}
	if git(t, bare, "show", "main:r1") != e.latestText(r1) {
		t.Fatal("the remote's r1 is not the latest")
	}
	st, _ := e.mirror.PushStatus(e.ctx)
	if head := strings.TrimSpace(git(t, bare, "rev-parse", "main")); st.LastPushed != head {
		t.Fatalf("last pushed %q, want %s", st.LastPushed, head)
	}
}

// A commit made by hand in the clone (DATA/git/mirror) stops the mirror
// there too: no commit on top of it, its file kept, nothing pushed, and
// the push status says why; undone as the message says, the mirror goes
// on.
func TestForeignCommitInCloneIsRefused(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
	first := e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	dir := e.mirror.Dir()
	if err := os.WriteFile(filepath.Join(dir, "README.hand"), []byte(handText), 0o600); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.hand")
	git(t, dir, "-c", "user.name=Alice Admin", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "notes")
	hand := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))

	e.sims[r1].Mutate(9)
	e.run(queue.TriggerSchedule)
	_, err := e.mirror.Sync(e.ctx)
	var fe *gitmirror.ForeignCommitError
	if !errors.As(err, &fe) || fe.Where != "clone" || fe.Commit != hand ||
		!strings.Contains(err.Error(), "reset --hard "+gitmirror.Short(first.Commit)) {
		t.Fatalf("sync on a hand-made commit: %v", err)
	}
	if head := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")); head != hand {
		t.Fatalf("HEAD %s, want the hand-made %s left alone", head, hand)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README.hand")); err != nil || string(b) != handText {
		t.Fatalf("README.hand: %q %v", b, err)
	}
	if err := e.mirror.Push(e.ctx); !errors.As(err, &fe) {
		t.Fatalf("push of a hand-made commit: %v", err)
	}
	if tip := strings.TrimSpace(git(t, bare, "rev-parse", "main")); tip != first.Commit {
		t.Fatalf("remote main moved to %s", tip)
	}
	if st, _ := e.mirror.PushStatus(e.ctx); st.OK || st.Foreign == nil || st.Foreign.Where != "clone" {
		t.Fatalf("push status: %+v", st)
	}

	git(t, dir, "branch", "keep", hand)
	git(t, dir, "reset", "-q", "--hard", first.Commit)
	if res := e.sync(); res.Commit == "" {
		t.Fatal("no commit after the clone was put back")
	}
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if git(t, bare, "show", "main:r1") != e.latestText(r1) || git(t, dir, "show", "keep:README.hand") != handText {
		t.Fatal("after the fix")
	}
}

// Files in the clone that the mirror did not write survive every commit
// and stay out of git; a deleted device's file still goes.
func TestFilesTheMirrorDidNotWriteSurvive(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	r2 := e.sim("r2", "cisco_ios", 2, nil)
	e.run(queue.TriggerManual)
	e.sync()
	dir := e.mirror.Dir()
	extra := map[string]string{"README.hand": handText, "notes/plan.txt": "plan\n"}
	for p, text := range extra {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.sims[r1].Mutate(3)
	e.run(queue.TriggerSchedule)
	if err := e.store.DeleteDevice(e.ctx, r2); err != nil {
		t.Fatal(err)
	}
	res := e.sync()
	if res.Commit == "" || len(res.Changes) != 2 {
		t.Fatalf("sync: %+v", res)
	}
	for _, c := range res.Changes {
		if c.Path != "r1" && !(c.Path == "r2" && c.Removed) {
			t.Fatalf("change %+v", c)
		}
	}
	for p, text := range extra {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != text {
			t.Fatalf("%s: %q %v", p, b, err)
		}
	}
	if files := strings.Fields(git(t, dir, "ls-files")); strings.Join(files, " ") != "r1" {
		t.Fatalf("files in git: %q", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "r2")); !os.IsNotExist(err) {
		t.Fatalf("the deleted device's file: %v", err)
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("a second sync committed: %+v", res)
	}
}

// The commits a backfill writes carry the trailer too: another node with
// a clone of its own takes them as the mirror's with no push recorded.
func TestBackfilledCommitsAreTheMirrors(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	e.sim("r2", "cisco_ios", 2, nil)
	e.run(queue.TriggerManual)
	e.sims[r1].Mutate(4)
	e.run(queue.TriggerSchedule)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.mirror.Backfill(e.ctx); err != nil || n != 2 {
		t.Fatalf("backfill: %d %v", n, err)
	}
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutSetting(e.ctx, db.SettingGitPush, db.GitPushStatus{}); err != nil {
		t.Fatal(err)
	}
	nodeB := gitmirror.New(e.store, e.sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	e.sims[r1].Mutate(5)
	e.run(queue.TriggerSchedule)
	if _, err := nodeB.Sync(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := nodeB.Push(e.ctx); err != nil {
		t.Fatalf("node B refused the backfilled history: %v", err)
	}
	if n := len(strings.Fields(git(t, bare, "rev-list", "main"))); n != 3 {
		t.Fatalf("remote has %d commits, want the 2 backfilled and node B's", n)
	}
}

// The server's loop: a commit made by hand in the clone stops its commits,
// and its push records why (the settings page, the metric and
// git.push_failed read that record).
func TestRunReportsAForeignCommitInTheClone(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.mirror.Run(ctx, gitmirror.LoopOptions{Poll: 20 * time.Millisecond}) }()
	defer func() { cancel(); <-done }()
	waitStatus := func(ok func(db.GitPushStatus) bool) db.GitPushStatus {
		t.Helper()
		var st db.GitPushStatus
		for range 500 { // bounded: 10 s
			if st, _ = e.mirror.PushStatus(e.ctx); ok(st) {
				return st
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("push status: %+v", st)
		return st
	}
	e.run(queue.TriggerManual)
	pushed := waitStatus(func(st db.GitPushStatus) bool { return st.OK && st.Commit != "" }).Commit

	dir := e.mirror.Dir()
	if err := os.WriteFile(filepath.Join(dir, "README.hand"), []byte(handText), 0o600); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.hand")
	git(t, dir, "-c", "user.name=Alice Admin", "-c", "user.email=alice@example.com", "commit", "-q", "-m", "notes")
	e.sims[r1].Mutate(6)
	e.run(queue.TriggerSchedule)
	st := waitStatus(func(st db.GitPushStatus) bool { return st.Foreign != nil })
	if st.OK || st.Foreign.Where != "clone" || st.Foreign.Subject != "notes" {
		t.Fatalf("push status: %+v", st)
	}
	if tip := strings.TrimSpace(git(t, bare, "rev-parse", "main")); tip != pushed {
		t.Fatalf("remote main moved to %s", tip)
	}
}
