package gitmirror_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/gitmirror"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
)

// pushHooks receives webhook deliveries per path and keeps their events.
type pushHooks struct {
	mu     sync.Mutex
	events map[string][]notify.Event
}

func (h *pushHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var env notify.Envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.events[r.URL.Path] = append(h.events[r.URL.Path], env.Events...)
	h.mu.Unlock()
}

// hookRule adds a webhook channel to url and a rule sending the git push
// events of scope (with the devices listed) to it.
func (e *env) hookRule(name, url, scope string, devices []int64) {
	e.t.Helper()
	cfg, sealed, err := notify.ChannelToStore(notify.Channel{Type: notify.TypeWebhook, Name: name, Language: "en",
		Secret: []byte("s3cret"), Webhook: &notify.WebhookConfig{URL: url}}, notify.Sealer(e.sealer))
	if err != nil {
		e.t.Fatal(err)
	}
	ch, err := e.store.CreateNotificationChannel(e.ctx, db.NotificationChannel{Name: name, Type: notify.TypeWebhook,
		Enabled: true, Config: cfg, Secret: sealed, Language: "en"})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.CreateNotificationRule(e.ctx, db.NotificationRule{Name: name, Enabled: true, Scope: scope,
		Events:    []outbox.EventKind{outbox.EventGitPushFailed, outbox.EventGitPushRecovered, outbox.EventBackupFailed},
		DeviceIDs: devices, ChannelIDs: []int64{ch.ID}, FailureThreshold: 1}); err != nil {
		e.t.Fatal(err)
	}
}

// A refused push is told once per failing streak (git.push_failed), the
// first good push after it once (git.push_recovered), to a rule for all
// devices only: a device-scoped rule never gets these system events.
func TestPushFailureNotifiesOncePerStreak(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	bare := bareRepo(t)
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	remote := "file://" + bare
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: remote, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	hooks := &pushHooks{events: map[string][]notify.Event{}}
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	e.hookRule("all", srv.URL+"/all", db.RuleScopeAll, nil)
	e.hookRule("device", srv.URL+"/device", db.RuleScopeDevices, []int64{r1})

	e.run(queue.TriggerManual)
	e.sync()
	for range 2 { // one streak of two failed pushes
		if err := e.mirror.Push(e.ctx); err == nil {
			t.Fatal("push to a refusing remote succeeded")
		}
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	for range 2 { // recovered, then simply good
		if err := e.mirror.Push(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	st, err := e.mirror.PushStatus(e.ctx)
	if err != nil || !st.OK || st.ConsecutiveFailures != 0 || st.LastSuccess == nil {
		t.Fatalf("push status: %+v %v", st, err)
	}
	// The recovery is logged, once: the push after it was simply good.
	if n := strings.Count(e.log.String(), `msg="git mirror: push succeeded again"`); n != 1 ||
		!strings.Contains(e.log.String(), "failed_pushes_before=2 attempts=1") {
		t.Fatalf("%d recovery log lines, want 1 naming the 2 failed pushes:\n%s", n, e.log.String())
	}

	w := notify.NewWorker(e.store, notify.Opener(e.sealer), notify.WorkerOptions{Window: time.Nanosecond,
		PublicURL: "https://backupd.example/"})
	for range 10 {
		n, err := w.Pass(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if got := hooks.events["/device"]; len(got) != 0 {
		t.Fatalf("a device-scoped rule got %d events: %+v", len(got), got)
	}
	got := hooks.events["/all"]
	if len(got) != 2 {
		t.Fatalf("%d events to the rule for all, want git.push_failed then git.push_recovered: %+v", len(got), got)
	}
	failed, recovered := got[0], got[1]
	if failed.Kind == "git.push_recovered" {
		failed, recovered = recovered, failed
	}
	for _, ev := range got {
		if ev.Device != nil || ev.Git == nil || ev.Git.Remote != remote || ev.URL != "https://backupd.example/settings#git" ||
			ev.Trigger != db.TriggerGitPush || ev.Failure == nil {
			t.Fatalf("event %+v (git %+v)", ev, ev.Git)
		}
	}
	if failed.Kind != "git.push_failed" || failed.Git.Attempts != 3 || failed.Failure.Consecutive != 1 ||
		!strings.Contains(failed.Failure.Reason, "refused by policy") {
		t.Fatalf("failed event %+v %+v %+v", failed, failed.Git, failed.Failure)
	}
	if recovered.Kind != "git.push_recovered" || recovered.Git.Attempts != 1 || recovered.Failure.Consecutive != 2 {
		t.Fatalf("recovered event %+v %+v %+v", recovered, recovered.Git, recovered.Failure)
	}
}

// The remote an event or the UI shows holds no password or token.
func TestPublicRemoteHasNoCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:tok3n@git.example.com/net.git": "https://git.example.com/net.git",
		"https://tok3n@git.example.com/net.git":      "https://git.example.com/net.git",
		"ssh://git@127.0.0.1:2222/net.git":           "ssh://git@127.0.0.1:2222/net.git",
		"ssh://git:pw@127.0.0.1/net.git":             "ssh://git@127.0.0.1/net.git",
		"git@github.com:team/net.git":                "git@github.com:team/net.git",
		"file:///srv/tok3n.git":                      "file:///srv/[redacted].git",
	} {
		if got := gitmirror.PublicRemote(in, []string{"tok3n"}); got != want {
			t.Errorf("PublicRemote(%q) = %q, want %q", in, got, want)
		}
	}
}
