package gitmirror_test

import (
	"strings"
	"testing"

	"backupd/db"
	"backupd/db/queue"
)

// Turning folders per group on for a flat mirror (and off again) is one
// commit that only moves files, which git shows as renames; a device
// whose configuration changed in the same run is committed after it,
// labelled changed, and nothing is called removed.
func TestLayoutChangeMovesFiles(t *testing.T) {
	e := newEnv(t)
	core, err := e.store.CreateGroup(e.ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	dc1, err := e.store.CreateGroup(e.ctx, "dc1", &core.ID)
	if err != nil {
		t.Fatal(err)
	}
	r1 := e.sim("r1", "cisco_ios", 1, &dc1.ID)
	e.sim("r2", "cisco_ios", 2, &core.ID)
	r3 := e.sim("r3", "cisco_ios", 3, nil)
	setGroups := func(on bool) {
		t.Helper()
		if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, Groups: on}); err != nil {
			t.Fatal(err)
		}
	}
	setGroups(false)
	e.run(queue.TriggerManual)
	e.sync()
	repo := e.mirror.Dir()

	setGroups(true)
	e.sims[r1].Mutate(7)
	e.run(queue.TriggerSchedule)
	res := e.sync()
	if res.LayoutCommit == "" || len(res.Moved) != 2 || res.Commit == res.LayoutCommit ||
		len(res.Changes) != 1 || res.Changes[0].Path != "core/dc1/r1" || res.Changes[0].New || res.Changes[0].Added {
		t.Fatalf("sync after turning folders on: %+v", res)
	}
	moves := git(t, repo, "show", "--name-status", "-M", "--format=", res.LayoutCommit)
	if want := "R100\tr1\tcore/dc1/r1\nR100\tr2\tcore/r2\n"; moves != want {
		t.Fatalf("layout commit's files:\n%s\nwant\n%s", moves, want)
	}
	body := git(t, repo, "log", "-1", "--format=%B", res.LayoutCommit)
	if !strings.HasPrefix(body, "backupd: layout changed: a folder per group\n") || !strings.Contains(body, "- core/dc1/r1: moved from r1\n") {
		t.Fatalf("layout commit's message:\n%s", body)
	}
	if got := git(t, repo, "show", "--name-status", "-M", "--format=", res.Commit); got != "M\tcore/dc1/r1\n" {
		t.Fatalf("the change after it: %q", got)
	}
	if body := git(t, repo, "log", "-1", "--format=%B", res.Commit); !strings.Contains(body, "- r1: changed (trigger: schedule)") {
		t.Fatalf("the change's message:\n%s", body)
	}
	if log := git(t, repo, "log", "--format=%B"); strings.Contains(log, "removed") || strings.Contains(log, "added") {
		t.Fatalf("history calls a device removed or added:\n%s", log)
	}
	if n := len(strings.Fields(git(t, repo, "log", "--follow", "--format=%H", "--", "core/dc1/r1"))); n != 3 {
		t.Fatalf("git log --follow core/dc1/r1: %d commits, want 3", n)
	}
	if files := strings.Join(strings.Fields(git(t, repo, "ls-files")), " "); files != "core/dc1/r1 core/r2 r3" {
		t.Fatalf("files: %s", files)
	}
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the clone is not clean:\n%s", st)
	}
	if git(t, repo, "show", "HEAD:core/dc1/r1") != e.latestText(r1) || git(t, repo, "show", "HEAD:r3") != e.latestText(r3) {
		t.Fatal("a file differs from its stored text")
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("a second sync committed: %+v", res)
	}

	// And back: one commit of moves, nothing else changed.
	setGroups(false)
	res = e.sync()
	if res.LayoutCommit == "" || res.Commit != res.LayoutCommit || len(res.Changes) != 0 {
		t.Fatalf("sync after turning folders off: %+v", res)
	}
	if got := git(t, repo, "show", "--name-status", "-M", "--format=", "HEAD"); got != "R100\tcore/dc1/r1\tr1\nR100\tcore/r2\tr2\n" {
		t.Fatalf("layout commit's files:\n%s", got)
	}
	if subject := strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s")); subject != "backupd: layout changed: no folders per group" {
		t.Fatalf("subject %q", subject)
	}
	if st := git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("the clone is not clean:\n%s", st)
	}
	if n := len(strings.Fields(git(t, repo, "log", "--follow", "--format=%H", "--", "r1"))); n != 4 {
		t.Fatalf("git log --follow r1: %d commits, want 4", n)
	}
}

// A clone from before the layout was recorded: turning folders on is
// still seen as a change of layout; with folders on already, a device put
// into a group is not.
func TestLayoutChangeInAnOlderClone(t *testing.T) {
	e := newEnv(t)
	core, err := e.store.CreateGroup(e.ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.sim("r1", "cisco_ios", 1, &core.ID)
	r2 := e.sim("r2", "cisco_ios", 2, nil)
	e.run(queue.TriggerManual)
	e.sync()
	repo := e.mirror.Dir()
	forget := func() { git(t, repo, "config", "--local", "--unset", "backupd.layout") }
	forget()
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, Groups: true}); err != nil {
		t.Fatal(err)
	}
	if res := e.sync(); res.LayoutCommit == "" || len(res.Moved) != 1 || res.Moved[0].From != "r1" {
		t.Fatalf("folders on in an older clone: %+v", res)
	}
	forget()
	if _, err := e.store.UpdateDevice(e.ctx, r2, func(d *db.Device) error { d.GroupID = &core.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	res := e.sync()
	if res.LayoutCommit != "" || len(res.Changes) != 2 {
		t.Fatalf("a device put into a group: %+v", res)
	}
	if subject := strings.TrimSpace(git(t, repo, "log", "-1", "--format=%s")); strings.Contains(subject, "layout") {
		t.Fatalf("subject %q", subject)
	}
}
