package gitmirror_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
)

var tagged = regexp.MustCompile(`<secret:([0-9a-f]{6})>`)

// leaks names the device's secrets (as the simulator generated them)
// that text holds, in any case.
func (e *env) leaks(id int64, text string) []string {
	var out []string
	lower := strings.ToLower(text)
	for _, s := range e.sims[id].Secrets() {
		if strings.Contains(lower, strings.ToLower(s)) {
			out = append(out, s)
		}
	}
	return out
}

// The mirror's files have their secrets masked; a rotated community is
// one commit whose only change that is not noise is the community's line,
// its tag changed.
func TestMirrorMasksSecretsAndRotation(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("core-r1", "cisco_ios", 11, nil)
	e.run(queue.TriggerManual)
	e.sync()
	repo := e.mirror.Dir()
	file := git(t, repo, "show", "HEAD:core-r1")
	if l := e.leaks(r1, file); len(l) > 0 {
		t.Fatalf("the mirror holds secrets %q", l)
	}
	if n := len(tagged.FindAllString(file, -1)); n < 4 {
		t.Fatalf("%d markers in the mirrored file:\n%s", n, file)
	}

	e.sims[r1].RotateSecret("snmp")
	e.run(queue.TriggerSchedule)
	if res := e.sync(); res.Commit == "" {
		t.Fatal("the rotation was not committed")
	}
	filter, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	var removed, added []string
	for _, l := range strings.Split(git(t, repo, "show", "--format=", "HEAD", "--", "core-r1"), "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-") && !filter.IsNoise(l[1:]):
			removed = append(removed, l[1:])
		case strings.HasPrefix(l, "+") && !filter.IsNoise(l[1:]):
			added = append(added, l[1:])
		}
	}
	if len(removed) != 1 || len(added) != 1 || !strings.HasPrefix(removed[0], "snmp-server community <secret:") ||
		!strings.HasPrefix(added[0], "snmp-server community <secret:") || removed[0] == added[0] {
		t.Fatalf("the rotation's commit changes %q into %q; want one masked community line with a new tag", removed, added)
	}
	if l := e.leaks(r1, git(t, repo, "log", "-p", "--all")); len(l) > 0 {
		t.Fatalf("the history holds secrets %q", l)
	}
}

// Turning masking on rewrites every file in one commit that says so;
// the history written before still holds the secrets until the operator
// rewrites it, which replaces the remote's history too.
func TestMirrorMaskingOnAndRewrite(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 21, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingSecretMasking, db.SecretMasking{Views: true}); err != nil {
		t.Fatal(err)
	}
	e.pushRun(db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}, bare, r1, "r1", "in clear text")
	if l := e.leaks(r1, git(t, bare, "show", "main:r1")); len(l) == 0 {
		t.Fatal("masking off, yet the remote's file holds no secret")
	}

	if err := e.store.PutSetting(e.ctx, db.SettingSecretMasking, db.DefaultSecretMasking); err != nil {
		t.Fatal(err)
	}
	res := e.sync()
	if res.Commit == "" || commits(t, e.mirror.Dir())[0] != "backupd: secrets masked in every configuration" {
		t.Fatalf("turning masking on: %+v, commits %q", res, commits(t, e.mirror.Dir()))
	}
	if l := e.leaks(r1, git(t, e.mirror.Dir(), "show", "HEAD:r1")); len(l) > 0 {
		t.Fatalf("masking on, the file still holds %q", l)
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("a second sync committed again: %+v", res)
	}
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if l := e.leaks(r1, git(t, bare, "log", "-p", "main")); len(l) == 0 {
		t.Fatal("the remote's history should still hold the old clear text before a rewrite")
	}

	moved, n, err := e.mirror.RewriteHistory(e.ctx)
	if err != nil || n < 1 || moved == "" {
		t.Fatalf("rewrite: moved %q, %d commits, %v", moved, n, err)
	}
	if _, err := os.Stat(moved); err != nil {
		t.Fatalf("the old clone was not kept: %v", err)
	}
	if l := e.leaks(r1, git(t, e.mirror.Dir(), "log", "-p", "--all")); len(l) > 0 {
		t.Fatalf("the rewritten history holds %q", l)
	}
	// The next push, the server's own as much as the command's forced
	// one, replaces the remote's history instead of building on it.
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if l := e.leaks(r1, git(t, bare, "log", "-p", "main")); len(l) > 0 {
		t.Fatalf("after the rewrite's push the remote's history holds %q", l)
	}
	if got, want := strings.TrimSpace(git(t, bare, "rev-parse", "main")), strings.TrimSpace(git(t, e.mirror.Dir(), "rev-parse", "HEAD")); got != want {
		t.Fatalf("remote main %s, clone %s", got, want)
	}
}

// After a rewrite has been pushed, pushes build on the remote again: a
// commit another node pushed is followed, not overwritten.
func TestMirrorPushAfterRewriteIsPlain(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 31, nil)
	bare := bareRepo(t)
	e.pushRun(db.GitMirror{Enabled: true, RemoteURL: "file://" + bare, AllowLocalRemote: true}, bare, r1, "r1", "masked")
	if _, _, err := e.mirror.RewriteHistory(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.mirror.ForcePush(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, e.mirror.Dir(), "config", "--local", "--default", "none", "--get", "backupd.rewritten")); got != "none" {
		t.Fatalf("the clone is still marked rewritten: %q", got)
	}
}
