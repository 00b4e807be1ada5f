package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/notify"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// The config.restore_* events from the store's moves to a real webhook
// receiver and a real SMTP server: which ones each rule gets, what they
// say, and what they never hold.

// version records a good backup of dev holding text, through the job
// queue as the engine does, and returns its ID.
func (f *fleetStore) version(t *testing.T, dev int64, text string, first bool) string {
	t.Helper()
	ctx := context.Background()
	jobs, err := f.s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(-time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := f.s.ClaimJobs(ctx, "engine", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimJobs = %d, %v", len(claims), err)
	}
	if err := f.s.FinishJob(ctx, claims[0], queue.Outcome{Success: true, First: first, Changed: !first, Text: text, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return claims[0].BackupID
}

// groupDevice adds a cisco_ios device in group g.
func (f *fleetStore) groupDevice(t *testing.T, name, host string, g int64) int64 {
	t.Helper()
	var id int64
	if err := dbtest.Poke(t, f.s).QueryRowContext(context.Background(), `INSERT INTO devices (name, host, port, platform, login_method, group_id,
		created_at, updated_at) VALUES (?, ?, 22, 'cisco_ios', 'ssh', ?, ?, ?) RETURNING id`, name, host, g, db.Now(), db.Now()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// addRule adds a channel and one rule sending kinds of scope (groups
// when groups are given) to it.
func (f *fleetStore) addRule(t *testing.T, ch notify.Channel, kinds []outbox.EventKind, includeDiff bool, groups ...int64) {
	t.Helper()
	ctx := context.Background()
	cfg, sealed, err := notify.ChannelToStore(ch, notify.Sealer(f.sealer))
	if err != nil {
		t.Fatal(err)
	}
	row, err := f.s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: ch.Name, Type: ch.Type, Enabled: true,
		Config: cfg, Secret: sealed, Language: ch.Language})
	if err != nil {
		t.Fatal(err)
	}
	scope := db.RuleScopeAll
	if len(groups) > 0 {
		scope = db.RuleScopeGroups
	}
	if _, err := f.s.CreateNotificationRule(ctx, db.NotificationRule{Name: "rule " + ch.Name, Enabled: true, Events: kinds,
		Scope: scope, GroupIDs: groups, ChannelIDs: []int64{row.ID}, IncludeDiff: includeDiff}); err != nil {
		t.Fatal(err)
	}
}

// restoreRun takes a restore of dev to target through its preview (the
// version preview, holding previewText), approval and run to end, as
// app/restore moves it. With end.State "" it stops while running.
func (f *fleetStore) restoreRun(t *testing.T, dev int64, target, preview, previewText string, end db.RestoreEnd) db.Restore {
	t.Helper()
	ctx := context.Background()
	s := f.s
	alice, bob := int64(7), int64(8)
	r, err := s.CreateRestore(ctx, db.NewRestore{DeviceID: dev, TargetBackupID: target, Method: "ios_configure_replace",
		Reason: "undo ticket CHG-4711", RequestedBy: &alice, RequestedByName: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.GetBackup(ctx, preview)
	if err != nil || b.SnapshotHash == nil {
		t.Fatalf("preview %s: %+v, %v", preview, b, err)
	}
	expires := time.Now().Add(time.Hour)
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: *b.SnapshotHash, ExpiresAt: expires}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{UserID: &bob, Name: "bob"}, *b.SnapshotHash, expires, nil); err != nil {
		t.Fatal(err)
	}
	r, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimJobsOfKinds(ctx, "restorer", 1, []int64{enq.JobID}, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	c := claims[0]
	if _, err := s.StartRestore(ctx, r.ID, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, c, queue.Outcome{Success: true, Text: previewText, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRestoreStage(ctx, r.ID, "verify"); err != nil {
		t.Fatal(err)
	}
	if end.State == "" {
		return r
	}
	if r, err = s.FinishRestore(ctx, r.ID, end, &c, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// A rule for config.restore_failed on all devices delivers by e-mail the
// three ends that leave people something to do, each in its own words:
// rolled back (and verified), rollback failed and interrupted (state
// unknown). A webhook rule scoped to one group gets that group's
// device's events only: the request (with the masked diff of what the
// restore would change, never a secret of the configuration), its
// failure, its interruption, each linking to the restore's page and
// conforming to the published schema.
func TestRestoreFailedReachesRealChannels(t *testing.T) {
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "core-r1", Username: "netops", Password: "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	show := func() string {
		text, ok := sim.Show("show running-config")
		if !ok {
			t.Fatal("no running-config")
		}
		return text
	}
	f := newFleetStore(t, 0)
	ctx := context.Background()
	core, err := f.s.CreateGroup(ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	edge, err := f.s.CreateGroup(ctx, "edge", nil)
	if err != nil {
		t.Fatal(err)
	}
	coreDev := f.groupDevice(t, "core-r1", "10.1.0.1", core.ID)
	edgeDev := f.groupDevice(t, "edge-r1", "10.2.0.1", edge.ID)

	hook := &bodyHook{}
	srv := newServer(t, hook)
	f.addRule(t, hookChannel("core hook", srv.URL+"/hook", "hook-s3cret"),
		[]outbox.EventKind{outbox.EventRestoreRequested, outbox.EventRestoreFailed}, true, core.ID)
	cert, pool := selfSigned(t)
	mb := startMailbox(t, notify.SecuritySTARTTLS, cert)
	f.addRule(t, emailChannel(mb, notify.SecuritySTARTTLS, "en"), []outbox.EventKind{outbox.EventRestoreFailed}, false)

	// core-r1: yesterday's version, then a password rotated; the restore
	// of yesterday's version did not verify and was rolled back.
	coreTarget := f.version(t, coreDev, show(), true)
	sim.RotateSecret("user")
	coreNow := show()
	corePreview := f.version(t, coreDev, coreNow, false)
	rolledBack := f.restoreRun(t, coreDev, coreTarget, corePreview, coreNow, db.RestoreEnd{State: db.RestoreRolledBack,
		Error: "3 lines differ from the version", Reason: "verify_mismatch"})
	// edge-r1: its rollback failed too.
	edgeNow := "hostname edge-r1\nntp server 10.9.9.9\n"
	edgeTarget := f.version(t, edgeDev, "hostname edge-r1\n", true)
	edgePreview := f.version(t, edgeDev, edgeNow, false)
	f.restoreRun(t, edgeDev, edgeTarget, edgePreview, edgeNow, db.RestoreEnd{State: db.RestoreRollbackFailed,
		Error: "rollback: the session was lost", Reason: "rollback"})
	// core-r1 again: its process stopped while it ran.
	interrupted := f.restoreRun(t, coreDev, coreTarget, corePreview, coreNow, db.RestoreEnd{})
	if res, err := f.s.InterruptJobs(ctx, "restorer", 10); err != nil || len(res.Work) != 1 {
		t.Fatalf("InterruptJobs = %+v, %v", res, err)
	}

	if n := pass(t, f.worker(notify.WorkerOptions{PublicURL: "https://backupd.example", RootCAs: pool})); n != 7 {
		t.Fatalf("claimed %d deliveries; want 7 (webhook: 2 requests, 2 failures of core-r1; mail: 3 failures)", n)
	}

	// The e-mail: one digest of the three failures, each in its words.
	m := parseMessage(t, mb.last(t).data)
	for _, want := range []string{
		"core-r1 (10.1.0.1): configuration restore failed: the device was rolled back and verified",
		"edge-r1 (10.2.0.1): configuration restore failed and so did its rollback: the device's state is unknown",
		"core-r1 (10.1.0.1): configuration restore interrupted: the device's state is unknown",
		fmt.Sprintf("restore #%d to version ", rolledBack.ID),
		"requested by alice: undo ticket CHG-4711",
		"approved by bob",
		"at verify: 3 lines differ from the version",
		"rollback: the session was lost",
		"at verify: " + queue.ErrorInterruptedUnknown,
		"https://backupd.example/restores/" + strconv.FormatInt(interrupted.ID, 10),
	} {
		if !strings.Contains(m.text, want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, m.text)
		}
	}
	if !strings.Contains(m.subject, "3 events on 2 devices") {
		t.Errorf("subject %q", m.subject)
	}

	// The webhook: core-r1's events only.
	hook.mu.Lock()
	bodies := append([]string(nil), hook.bodies...)
	hook.mu.Unlock()
	schema := loadSchema(t)
	var events []notify.Event
	for _, body := range bodies {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if err := schema.check(schema, v, "body"); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var env notify.Envelope
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		events = append(events, env.Events...)
		lower, mail := strings.ToLower(body), strings.ToLower(m.text+html.UnescapeString(m.html))
		for _, secret := range sim.Secrets() {
			if strings.Contains(lower, strings.ToLower(secret)) || strings.Contains(mail, strings.ToLower(secret)) {
				t.Errorf("a message holds the device's secret %q", secret)
			}
		}
	}
	var got []string
	for _, ev := range events {
		if ev.Device == nil || ev.Device.ID != coreDev || ev.Restore == nil {
			t.Fatalf("the core group's webhook got %+v", ev)
		}
		got = append(got, ev.Kind+"/"+ev.Restore.State)
		if want := "https://backupd.example/restores/" + strconv.FormatInt(ev.Restore.ID, 10); ev.URL != want || ev.Restore.Path != "/restores/"+strconv.FormatInt(ev.Restore.ID, 10) {
			t.Errorf("%s: url %q, path %q", ev.Kind, ev.URL, ev.Restore.Path)
		}
		if ev.Restore.VersionID != coreTarget || ev.Restore.VersionAt == nil || ev.Restore.RequestedBy != "alice" || ev.Trigger != "restore" {
			t.Errorf("%s: restore %+v", ev.Kind, ev.Restore)
		}
		switch ev.Kind {
		case "config.restore_requested":
			if ev.Backup == nil || ev.Backup.ID != coreTarget || ev.Backup.PreviousID != corePreview || ev.Diff == nil ||
				!strings.Contains(ev.Diff.Unified, "<secret:") || ev.Backup.LinesAdded == 0 {
				t.Errorf("requested: backup %+v diff %+v", ev.Backup, ev.Diff)
			}
		case "config.restore_failed":
			if ev.Backup != nil || ev.Diff != nil || ev.Restore.DecidedBy != "bob" || ev.Restore.Stage != "verify" {
				t.Errorf("failed: %+v", ev)
			}
		}
	}
	slices.Sort(got)
	if want := "config.restore_failed/interrupted config.restore_failed/rolled_back config.restore_requested/pending config.restore_requested/pending"; strings.Join(got, " ") != want {
		t.Fatalf("the core group's webhook got %v; want %s", got, want)
	}
}

// Every restore state an event names renders in both languages without a
// catalog key showing through, and the ends of config.restore_failed
// read differently: nothing changed, rolled back, or state unknown.
func TestRestoreEventsRender(t *testing.T) {
	en := readCatalog(t, "en")
	vat := at.Add(-48 * time.Hour)
	base := notify.Event{ID: "9", At: at, Trigger: "restore",
		Device: &notify.Device{ID: 3, Name: "core-r1", Host: "10.1.0.1", Platform: "cisco_ios", GroupPath: []string{}}}
	cases := []struct {
		kind, state string
		want        map[string]string // language → text the message must hold
	}{
		{"config.restore_requested", db.RestorePending, map[string]string{"en": "waits for approval", "zh": "配置还原等待审批"}},
		{"config.restore_approved", db.RestoreApproved, map[string]string{"en": "approved by bob: after hours", "zh": "由 bob 批准：after hours"}},
		{"config.restore_succeeded", db.RestoreSucceeded, map[string]string{"en": "restored and verified", "zh": "配置已还原并通过验证"}},
		{"config.restore_failed", db.RestoreFailed, map[string]string{"en": "failed before the device was changed", "zh": "设备未被改动"}},
		{"config.restore_failed", db.RestoreRolledBack, map[string]string{"en": "the device was rolled back and verified", "zh": "设备已回滚并通过验证"}},
		{"config.restore_failed", db.RestoreRollbackFailed, map[string]string{"en": "so did its rollback: the device's state is unknown", "zh": "回滚也失败：设备状态未知"}},
		{"config.restore_failed", db.RestoreInterrupted, map[string]string{"en": "interrupted: the device's state is unknown", "zh": "配置还原中断：设备状态未知"}},
		{"config.restore_rejected", db.RestoreRejected, map[string]string{"en": "rejected by bob: after hours", "zh": "由 bob 拒绝：after hours"}},
		{"config.restore_expired", db.RestoreExpired, map[string]string{"en": "expired before it ran", "zh": "配置还原请求在执行前已过期"}},
	}
	seen := map[string]string{}
	for _, c := range cases {
		for lang, want := range c.want {
			ev := base
			ev.Kind = c.kind
			ev.Restore = &notify.Restore{ID: 12, State: c.state, VersionID: "b-1", VersionAt: &vat, RequestedBy: "alice",
				Reason: "undo\nCHG-1", Path: "/restores/12"}
			if c.state != db.RestorePending {
				ev.Restore.DecidedBy, ev.Restore.DecisionNote = "bob", "after hours"
			}
			if c.kind == "config.restore_failed" {
				ev.Restore.Stage, ev.Restore.Error = "apply", "apply: refused\r\nby the device"
			}
			body, err := notify.ChatBody(notify.TypeChat, lang, []notify.Event{ev})
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Text string }
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(p.Text, want) {
				t.Errorf("%s/%s/%s: %q lacks %q", c.kind, c.state, lang, p.Text, want)
			}
			for k := range en {
				if strings.Contains(p.Text, k) && !strings.HasPrefix(k, "trigger.") {
					t.Errorf("%s/%s/%s: key %q shows: %q", c.kind, c.state, lang, k, p.Text)
				}
			}
			if strings.Contains(p.Text, "\r") || strings.Contains(p.Text, "undo\n") {
				t.Errorf("%s/%s/%s: a typed line break reached the message: %q", c.kind, c.state, lang, p.Text)
			}
			if lang == "en" {
				if !strings.Contains(p.Text, "restore #12 to version 2026-11-23 13:40 UTC") || !strings.Contains(p.Text, "requested by alice: undo CHG-1") {
					t.Errorf("%s/%s: %q", c.kind, c.state, p.Text)
				}
				if c.kind == "config.restore_failed" && !strings.Contains(p.Text, "at apply: apply: refused by the device") {
					t.Errorf("%s/%s: no error in %q", c.kind, c.state, p.Text)
				}
				headline, _, _ := strings.Cut(p.Text, "\n")
				if other, dup := seen[headline]; dup {
					t.Errorf("%s and %s read the same: %q", other, c.state, headline)
				}
				seen[headline] = c.state
			}
		}
	}
}
