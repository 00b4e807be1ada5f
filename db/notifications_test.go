package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/db/seed"
	"backupd/internal/dbtest"
)

func mkRule(t testing.TB, s *db.Store, r db.NotificationRule) db.NotificationRule {
	t.Helper()
	r.Enabled = true
	if r.Scope == "" {
		r.Scope = db.RuleScopeAll
	}
	out, err := s.CreateNotificationRule(context.Background(), r)
	if err != nil {
		t.Fatalf("CreateNotificationRule(%q): %v", r.Name, err)
	}
	return out
}

// runAttempt runs one backup attempt of a device through the store's job
// API as the engine does: queue, claim, finish with o.
func runAttempt(t testing.TB, s *db.Store, deviceID int64, o queue.Outcome) queue.Claim {
	t.Helper()
	ctx := context.Background()
	jobs, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: deviceID, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(-time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimJobs(ctx, "worker", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimJobs = %d, %v", len(claims), err)
	}
	if o.FinishedAt.IsZero() {
		o.FinishedAt = time.Now()
	}
	if err := s.FinishJob(ctx, claims[0], o); err != nil {
		t.Fatalf("FinishJob: %v", err)
	}
	return claims[0]
}

type sentEvent struct {
	kind    outbox.EventKind
	channel int64
	payload outbox.EventPayload
	diff    bool
}

// eventsAfter returns the deliveries recorded after delivery id since, in
// order, and the last id.
func eventsAfter(t testing.TB, s *db.Store, since int64) ([]sentEvent, int64) {
	t.Helper()
	rows, err := s.Reader().Query(`SELECT dl.id, o.kind, dl.channel_id, dl.include_diff, o.payload
		FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id WHERE dl.id > ? ORDER BY dl.id`, since)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sentEvent
	last := since
	for rows.Next() {
		var e sentEvent
		var kind, payload string
		if err := rows.Scan(&last, &kind, &e.channel, &e.diff, &payload); err != nil {
			t.Fatal(err)
		}
		e.kind = outbox.EventKind(kind)
		if err := json.Unmarshal([]byte(payload), &e.payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, last
}

func kinds(evs []sentEvent) []outbox.EventKind {
	out := make([]outbox.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.kind
	}
	return out
}

func countRows(t testing.TB, s *db.Store, table string) int {
	t.Helper()
	var n int
	if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNotificationChannelsAndRulesAreValidated(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "ops hook")
	if _, err := s.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "OPS HOOK", Type: db.ChannelSlack}); !errors.Is(err, db.ErrNameExists) {
		t.Fatalf("duplicate channel name (other case): %v, want ErrNameExists", err)
	}
	for _, bad := range []struct {
		c     db.NotificationChannel
		field string
	}{
		{db.NotificationChannel{Name: "", Type: db.ChannelEmail}, "name"},
		{db.NotificationChannel{Name: " x", Type: db.ChannelEmail}, "name"},
		{db.NotificationChannel{Name: "a\nb", Type: db.ChannelEmail}, "name"},
		{db.NotificationChannel{Name: "x", Type: "pager"}, "type"},
		{db.NotificationChannel{Name: "x", Type: db.ChannelEmail, Language: "fr"}, "language"},
		{db.NotificationChannel{Name: "x", Type: db.ChannelEmail, Config: json.RawMessage(`[1]`)}, "config"},
		{db.NotificationChannel{Name: "x", Type: db.ChannelEmail, Config: json.RawMessage(`{`)}, "config"},
		{db.NotificationChannel{Name: "x", Type: db.ChannelEmail, Secret: make([]byte, db.MaxChannelSecretBytes+1)}, "secret"},
	} {
		_, err := s.CreateNotificationChannel(ctx, bad.c)
		var inv *db.ErrInvalidField
		if !errors.As(err, &inv) || inv.Field != bad.field {
			t.Errorf("CreateNotificationChannel(%+v) = %v, want an invalid %s", bad.c, err, bad.field)
		}
	}
	// A patch that leaves the secret alone keeps the sealed bytes.
	got, err := s.UpdateNotificationChannel(ctx, ch, func(c *db.NotificationChannel) error {
		c.Language = "zh"
		return nil
	})
	if err != nil || string(got.Secret) != "sealed-bytes" || got.Language != "zh" {
		t.Fatalf("UpdateNotificationChannel = %+v, %v", got, err)
	}

	g := createGroup(t, s, "core", nil)
	r := mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged, outbox.EventConfigChanged, outbox.EventBackupFailed},
		Scope: db.RuleScopeGroups, GroupIDs: []int64{g.ID}, ChannelIDs: []int64{ch}, IncludeDiff: true})
	if !slices.Equal(r.Events, []outbox.EventKind{outbox.EventBackupFailed, outbox.EventConfigChanged}) || r.FailureThreshold != 1 ||
		!slices.Equal(r.GroupIDs, []int64{g.ID}) || !slices.Equal(r.ChannelIDs, []int64{ch}) {
		t.Fatalf("created rule = %+v", r)
	}
	for _, bad := range []struct {
		r     db.NotificationRule
		field string
	}{
		{db.NotificationRule{Name: "x", Scope: db.RuleScopeAll, ChannelIDs: []int64{ch}}, "events"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{"config.exploded"}, Scope: db.RuleScopeAll, ChannelIDs: []int64{ch}}, "events"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: "everything", ChannelIDs: []int64{ch}}, "scope"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeGroups, ChannelIDs: []int64{ch}}, "group_ids"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeDevices, ChannelIDs: []int64{ch}}, "device_ids"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeAll}, "channel_ids"},
		{db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeAll, ChannelIDs: []int64{ch}, FailureThreshold: -1}, "failure_threshold"},
	} {
		_, err := s.CreateNotificationRule(ctx, bad.r)
		var inv *db.ErrInvalidField
		if !errors.As(err, &inv) || inv.Field != bad.field {
			t.Errorf("CreateNotificationRule(%+v) = %v, want an invalid %s", bad.r, err, bad.field)
		}
	}
	_, err = s.CreateNotificationRule(ctx, db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeAll, ChannelIDs: []int64{ch, 999}})
	var ref *db.ErrReference
	if !errors.As(err, &ref) || ref.Field != "channel_ids" {
		t.Fatalf("rule naming a missing channel: %v, want an ErrReference on channel_ids", err)
	}
	_, err = s.CreateNotificationRule(ctx, db.NotificationRule{Name: "x", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeDevices, DeviceIDs: []int64{77}, ChannelIDs: []int64{ch}})
	if !errors.As(err, &ref) || ref.Field != "device_ids" {
		t.Fatalf("rule naming a missing device: %v, want an ErrReference on device_ids", err)
	}
	if _, err := s.CreateNotificationRule(ctx, db.NotificationRule{Name: "Changes", Events: []outbox.EventKind{outbox.EventBackupStale}, Scope: db.RuleScopeAll, ChannelIDs: []int64{ch}}); !errors.Is(err, db.ErrNameExists) {
		t.Fatalf("duplicate rule name: %v", err)
	}
	up, err := s.UpdateNotificationRule(ctx, r.ID, func(r *db.NotificationRule) error {
		r.Scope, r.GroupIDs, r.FailureThreshold = db.RuleScopeAll, nil, 3
		return nil
	})
	if err != nil || up.Scope != db.RuleScopeAll || len(up.GroupIDs) != 0 || up.FailureThreshold != 3 {
		t.Fatalf("UpdateNotificationRule = %+v, %v", up, err)
	}
	if err := s.DeleteNotificationChannel(ctx, ch); !errors.Is(err, db.ErrChannelInUse) {
		t.Fatalf("deleting a channel a rule uses: %v, want ErrChannelInUse", err)
	}
	if err := s.DeleteNotificationRule(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNotificationRule(ctx, r.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("deleting a deleted rule: %v", err)
	}
	if err := s.DeleteNotificationChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if all, err := s.NotificationChannels(ctx); err != nil || len(all) != 0 {
		t.Fatalf("channels after delete = %v, %v", all, err)
	}
}

// Every event a backup's end causes, with its hysteresis, through the
// completion path the engine uses.
func TestEventsOfBackupResults(t *testing.T) {
	s := openStore(t)
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}, IncludeDiff: true})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	yes, no := true, false
	var last int64
	step := func(what string, o queue.Outcome, want ...outbox.EventKind) []sentEvent {
		t.Helper()
		runAttempt(t, s, dev, o)
		var evs []sentEvent
		evs, last = eventsAfter(t, s, last)
		if got := kinds(evs); !slices.Equal(got, want) {
			t.Fatalf("%s: events %v, want %v", what, got, want)
		}
		return evs
	}
	first := step("first backup", queue.Outcome{Success: true, First: true, Changed: true, Text: "v1\n", Reachable: &yes}, outbox.EventFirstBackup)
	if p := first[0].payload; p.DeviceName != "r1" || p.DeviceID != dev || p.Trigger != queue.TriggerSchedule || p.BackupID == "" || !first[0].diff {
		t.Fatalf("first backup event = %+v", first[0])
	}
	step("noise only", queue.Outcome{Success: true, Text: "v1 noise\n", Reachable: &yes})
	changed := step("changed", queue.Outcome{Success: true, Changed: true, Text: "v2\n", Reachable: &yes}, outbox.EventConfigChanged)
	if p := changed[0].payload; p.PreviousBackupID == "" || p.PreviousBackupID == p.BackupID {
		t.Fatalf("change event names versions %q and %q", p.PreviousBackupID, p.BackupID)
	}
	if prev, err := s.GetBackup(context.Background(), changed[0].payload.PreviousBackupID); err != nil || !prev.Success || prev.SnapshotHash == nil {
		t.Fatalf("the previous version a change names is not a stored version: %v", err)
	}
	// Due at once, so that the next step's queue request joins it.
	retry := time.Now().Add(-time.Second)
	step("failed attempt with a retry ahead", queue.Outcome{Error: "connection refused", Reason: "connect", RetryAt: &retry, Reachable: &yes})
	failed := step("failed", queue.Outcome{Error: "authentication failed", Reason: "auth", Reachable: &yes}, outbox.EventBackupFailed)
	if f := failed[0].payload.Failure; f == nil || f.Stage != "auth" || f.Reason != "authentication failed" || f.Consecutive != 1 {
		t.Fatalf("failure event = %+v", failed[0].payload.Failure)
	}
	step("failed again: quiet", queue.Outcome{Error: "authentication failed", Reason: "auth", Reachable: &yes})
	step("cancelled: no event", queue.Outcome{Error: queue.ErrorCancelled, Reason: "cancelled", Cancelled: true})
	rec := step("recovered", queue.Outcome{Success: true, Text: "v2\n", Reachable: &yes}, outbox.EventBackupRecovered)
	if rec[0].payload.Failure.Consecutive != 2 {
		t.Fatalf("recovered after %d failures, want 2", rec[0].payload.Failure.Consecutive)
	}
	step("recovered only once", queue.Outcome{Success: true, Text: "v2\n", Reachable: &yes})

	step("unreachable", queue.Outcome{Error: "dial tcp: connection refused", Reason: "connect", Reachable: &no},
		outbox.EventBackupFailed, outbox.EventDeviceUnreachable)
	step("unreachable again: quiet", queue.Outcome{Error: "dial tcp: connection refused", Reason: "connect", Reachable: &no})
	step("reachable and recovered", queue.Outcome{Success: true, Text: "v2\n", Reachable: &yes},
		outbox.EventBackupRecovered, outbox.EventDeviceReachable)

	step("host key changed", queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("key-2"), Reachable: &yes},
		outbox.EventBackupFailed, outbox.EventHostKeyChanged)
	step("same changed key again: quiet", queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("key-2"), Reachable: &yes})
	step("yet another key", queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("key-3"), Reachable: &yes},
		outbox.EventHostKeyChanged)

	// The checker's reachability results follow the same hysteresis.
	ctx := context.Background()
	check := func(what string, ok bool, want ...outbox.EventKind) {
		t.Helper()
		if err := s.SetReachability(ctx, dev, ok); err != nil {
			t.Fatal(err)
		}
		var evs []sentEvent
		evs, last = eventsAfter(t, s, last)
		if got := kinds(evs); !slices.Equal(got, want) {
			t.Fatalf("%s: events %v, want %v", what, got, want)
		}
		for _, e := range evs {
			if e.payload.Trigger != db.TriggerCheck {
				t.Fatalf("%s: trigger %q, want check", what, e.payload.Trigger)
			}
		}
	}
	check("check: down", false, outbox.EventDeviceUnreachable)
	check("check: still down", false)
	check("check: up", true, outbox.EventDeviceReachable)
	check("check: still up", true)
	if d, err := s.GetDevice(ctx, dev); err != nil || d.Status != db.StatusReachable {
		t.Fatalf("device status after the checks = %q, %v", d.Status, err)
	}
}

// A rule's threshold: backup.failed when the failures in a row reach it,
// backup.recovered only after a streak that reached it.
func TestFailureThresholdPerRule(t *testing.T) {
	s := openStore(t)
	c1, c3 := dbtest.Channel(t, s, "first failure"), dbtest.Channel(t, s, "third failure")
	ev := []outbox.EventKind{outbox.EventBackupFailed, outbox.EventBackupRecovered}
	mkRule(t, s, db.NotificationRule{Name: "at once", Events: ev, ChannelIDs: []int64{c1}})
	mkRule(t, s, db.NotificationRule{Name: "after three", Events: ev, ChannelIDs: []int64{c3}, FailureThreshold: 3})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	fail := queue.Outcome{Error: "timeout", Reason: "timeout"}
	ok := queue.Outcome{Success: true, Text: "x\n", First: true}
	var last int64
	run := func(o queue.Outcome) []sentEvent {
		runAttempt(t, s, dev, o)
		var evs []sentEvent
		evs, last = eventsAfter(t, s, last)
		return evs
	}
	run(ok)
	var got []string
	for range 4 {
		for _, e := range run(fail) {
			got = append(got, fmt.Sprintf("%s#%d->%d", e.kind, e.payload.Failure.Consecutive, e.channel))
		}
	}
	for _, e := range run(ok) {
		got = append(got, fmt.Sprintf("%s#%d->%d", e.kind, e.payload.Failure.Consecutive, e.channel))
	}
	want := []string{
		fmt.Sprintf("backup.failed#1->%d", c1), fmt.Sprintf("backup.failed#3->%d", c3),
		fmt.Sprintf("backup.recovered#4->%d", c1), fmt.Sprintf("backup.recovered#4->%d", c3),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events over 4 failures and a success:\n got  %v\n want %v", got, want)
	}
	// A short streak: only the rule whose threshold it reached hears of
	// the recovery.
	run(fail)
	run(fail)
	evs := run(ok)
	if len(evs) != 1 || evs[0].kind != outbox.EventBackupRecovered || evs[0].channel != c1 {
		t.Fatalf("recovery after 2 failures went to %+v, want only the first-failure channel", evs)
	}
}

// Scopes: groups with their subgroups, listed devices, all; disabled rules
// and channels send nothing; a channel two rules reach gets one delivery,
// with the diff when either rule allows it.
func TestRuleScopes(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	root := createGroup(t, s, "dc", nil)
	child := createGroup(t, s, "dc-core", &root.ID)
	grand := createGroup(t, s, "dc-core-a", &child.ID)
	other := createGroup(t, s, "branch", nil)
	inGrand := insertDevice(t, s, "grand", &grand.ID, nil, nil)
	inChild := insertDevice(t, s, "child", &child.ID, nil, nil)
	inRoot := insertDevice(t, s, "root", &root.ID, nil, nil)
	inOther := insertDevice(t, s, "other", &other.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)

	cg, cd, cx := dbtest.Channel(t, s, "groups"), dbtest.Channel(t, s, "devices"), dbtest.Channel(t, s, "disabled channel")
	ev := []outbox.EventKind{outbox.EventFirstBackup}
	mkRule(t, s, db.NotificationRule{Name: "core and below", Events: ev, Scope: db.RuleScopeGroups, GroupIDs: []int64{child.ID}, ChannelIDs: []int64{cg}})
	mkRule(t, s, db.NotificationRule{Name: "two devices", Events: ev, Scope: db.RuleScopeDevices, DeviceIDs: []int64{loose, inChild}, ChannelIDs: []int64{cd, cg}, IncludeDiff: true})
	mkRule(t, s, db.NotificationRule{Name: "to a disabled channel", Events: ev, ChannelIDs: []int64{cx}})
	if _, err := s.UpdateNotificationChannel(ctx, cx, func(c *db.NotificationChannel) error { c.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	off := mkRule(t, s, db.NotificationRule{Name: "disabled rule", Events: ev, ChannelIDs: []int64{cd}})
	if _, err := s.UpdateNotificationRule(ctx, off.ID, func(r *db.NotificationRule) error { r.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}

	var last int64
	for _, tc := range []struct {
		dev  int64
		want string
	}{
		{inGrand, fmt.Sprintf("[%d]", cg)}, // through its grandparent
		{inChild, fmt.Sprintf("[%d+diff %d+diff]", cg, cd)},
		{inRoot, "[]"},
		{inOther, "[]"},
		{loose, fmt.Sprintf("[%d+diff %d+diff]", cg, cd)},
	} {
		runAttempt(t, s, tc.dev, queue.Outcome{Success: true, First: true, Text: "x\n"})
		var evs []sentEvent
		evs, last = eventsAfter(t, s, last)
		got := []string{}
		for _, e := range evs {
			v := fmt.Sprint(e.channel)
			if e.diff {
				v += "+diff"
			}
			got = append(got, v)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("device %d: deliveries to %v, want %s", tc.dev, got, tc.want)
		}
	}
	evs, _ := eventsAfter(t, s, 0)
	if p := evs[0].payload; p.DeviceID != inGrand || !slices.Equal(p.GroupPath, []string{"dc", "dc-core", "dc-core-a"}) {
		t.Fatalf("event of device %d names group path %q", p.DeviceID, p.GroupPath)
	}
	if n := countRows(t, s, "outbox"); n != 3 {
		t.Fatalf("outbox holds %d events, want 3 (none for devices no rule covers)", n)
	}
}

// A job given up after too many interruptions of the process is a failed
// backup of its device, notified in the same transaction; plain
// interruptions (queued again) are not.
func TestGivenUpInterruptedJobIsAFailure(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "failures", Events: []outbox.EventKind{outbox.EventBackupFailed}, ChannelIDs: []int64{ch}})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	enqueueNow(t, s, queue.TriggerSchedule, dev)
	for i := range 2 {
		claims, err := s.ClaimJobs(ctx, "dead", 1, nil)
		if err != nil || len(claims) != 1 {
			t.Fatal(claims, err)
		}
		res, err := s.InterruptJobs(ctx, "dead", 2)
		if err != nil || res.Attempts != 1 {
			t.Fatal(res, err)
		}
		evs, _ := eventsAfter(t, s, 0)
		if want := i; len(evs) != want {
			t.Fatalf("after interruption %d: %d events, want %d", i+1, len(evs), want)
		}
		if i == 1 {
			f := evs[0].payload.Failure
			if evs[0].kind != outbox.EventBackupFailed || f == nil || f.Stage != "interrupted" || f.Reason != queue.ErrorInterruptedTooOften ||
				f.Consecutive != 1 || evs[0].payload.BackupID != claims[0].BackupID {
				t.Fatalf("given-up event = %+v %+v", evs[0], f)
			}
		}
	}
}

// With no rule wanting them, events leave no rows.
func TestNoMatchingRuleRecordsNothing(t *testing.T) {
	s := openStore(t)
	ch := dbtest.Channel(t, s, "hook")
	g := createGroup(t, s, "elsewhere", nil)
	mkRule(t, s, db.NotificationRule{Name: "other group", Events: outbox.EventKinds, Scope: db.RuleScopeGroups, GroupIDs: []int64{g.ID}, ChannelIDs: []int64{ch}})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	no := false
	runAttempt(t, s, dev, queue.Outcome{Success: true, First: true, Text: "a\n"})
	runAttempt(t, s, dev, queue.Outcome{Success: true, Changed: true, Text: "b\n"})
	runAttempt(t, s, dev, queue.Outcome{Error: "x", Reason: "connect", Reachable: &no, PendingHostKey: []byte("k")})
	runAttempt(t, s, dev, queue.Outcome{Success: true, Text: "b\n"})
	if n, m := countRows(t, s, "outbox"), countRows(t, s, "deliveries"); n != 0 || m != 0 {
		t.Fatalf("outbox %d, deliveries %d; want none", n, m)
	}
}

// The event and the backup result commit together or not at all.
func TestEventCommitsWithTheBackupResult(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	// A failure after the event is written: inserting its delivery.
	failing, dropFailing := `CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`, `DROP TRIGGER fail_delivery`
	if s.Postgres() {
		failing = `CREATE FUNCTION fail_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
			CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION fail_delivery()`
		dropFailing = `DROP TRIGGER fail_delivery ON deliveries`
	}
	if _, err := s.Exec(ctx, failing); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimJobs(ctx, "w", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	o := queue.Outcome{Success: true, First: true, Text: "hostname r1\n", FinishedAt: time.Now()}
	if err := s.FinishJob(ctx, claims[0], o); err == nil {
		t.Fatal("FinishJob succeeded although its event could not be recorded")
	}
	b, err := s.GetBackup(ctx, claims[0].BackupID)
	if err != nil {
		t.Fatal(err)
	}
	if b.FinishedAt != nil || b.Success || countRows(t, s, "outbox") != 0 || countRows(t, s, "snapshots") != 0 {
		t.Fatalf("after the rollback: backup %+v, outbox %d, snapshots %d; want nothing recorded",
			b, countRows(t, s, "outbox"), countRows(t, s, "snapshots"))
	}
	if _, err := s.Exec(ctx, dropFailing); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishJob(ctx, claims[0], o); err != nil {
		t.Fatal(err)
	}
	b, _ = s.GetBackup(ctx, claims[0].BackupID)
	if !b.Success || countRows(t, s, "outbox") != 1 || countRows(t, s, "deliveries") != 1 {
		t.Fatalf("after the retry: backup success %v, outbox %d, deliveries %d", b.Success, countRows(t, s, "outbox"), countRows(t, s, "deliveries"))
	}
}

func deliveryIDs(ds []outbox.Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// recordEvents gives a device n changes' worth of config.changed events.
func recordEvents(t testing.TB, s *db.Store, dev int64, n int) {
	t.Helper()
	runAttempt(t, s, dev, queue.Outcome{Success: true, First: true, Text: "v0\n"})
	for i := range n {
		runAttempt(t, s, dev, queue.Outcome{Success: true, Changed: true, Text: fmt.Sprintf("v%d\n", i+1)})
	}
}

func TestClaimDeliveries(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged}, ChannelIDs: []int64{ch}})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	recordEvents(t, s, dev, 3)
	now := time.Now()

	a, err := s.ClaimDeliveries(ctx, now, 2, "A")
	if err != nil || len(a) != 2 {
		t.Fatalf("claim 2 = %d, %v", len(a), err)
	}
	if a[0].Event.Kind != outbox.EventConfigChanged || a[0].Event.Payload.DeviceName != "r1" || a[0].Attempts != 1 || a[0].State != outbox.DeliverySending {
		t.Fatalf("claimed delivery = %+v", a[0])
	}
	b, err := s.ClaimDeliveries(ctx, now, 10, "B")
	if err != nil || len(b) != 1 || slices.Contains(deliveryIDs(a), b[0].ID) {
		t.Fatalf("second worker claimed %v, %v; want the one left", deliveryIDs(b), err)
	}
	// A delivered: never claimed again, not even after its lease would
	// have run out.
	if err := s.MarkDelivered(ctx, []int64{a[0].ID}, "200", now); err != nil {
		t.Fatal(err)
	}
	// B failed: retried after its time.
	gaveUp, err := s.MarkFailed(ctx, "B", []int64{b[0].ID}, outbox.DeliveryFailure{Status: "503", Error: "service unavailable", At: now, RetryAt: now.Add(time.Minute)})
	if err != nil || len(gaveUp) != 0 {
		t.Fatalf("MarkFailed = %v, %v", gaveUp, err)
	}
	if got, _ := s.ClaimDeliveries(ctx, now, 10, "C"); len(got) != 0 {
		t.Fatalf("claimed %v before any is due", deliveryIDs(got))
	}
	// A's process died holding a[1]: once its lease runs out, C takes it
	// with B's retry; a[0] stays sent.
	later := now.Add(outbox.DeliveryLease + time.Second)
	c, err := s.ClaimDeliveries(ctx, later, 10, "C")
	if err != nil || !slices.Equal(deliveryIDs(c), []int64{a[1].ID, b[0].ID}) {
		t.Fatalf("after the lease: claimed %v, %v; want %v", deliveryIDs(c), err, []int64{a[1].ID, b[0].ID})
	}
	if c[1].Attempts != 2 || c[1].LastStatus == nil || *c[1].LastStatus != "503" {
		t.Fatalf("retried delivery = %+v", c[1])
	}
	// A, late, cannot settle what C now holds.
	if _, err := s.MarkFailed(ctx, "A", []int64{a[1].ID}, outbox.DeliveryFailure{Error: "x", At: later, RetryAt: later}); !errors.Is(err, outbox.ErrNotLeased) {
		t.Fatalf("stale worker's MarkFailed: %v, want ErrNotLeased", err)
	}
	// A retry due past a day after the event gives up.
	gaveUp, err = s.MarkFailed(ctx, "C", deliveryIDs(c), outbox.DeliveryFailure{Error: "refused", At: later, RetryAt: now.Add(outbox.DeliveryMaxAge + time.Hour)})
	if err != nil || !slices.Equal(gaveUp, deliveryIDs(c)) {
		t.Fatalf("MarkFailed past the deadline gave up %v, %v; want %v", gaveUp, err, deliveryIDs(c))
	}
	if got, _ := s.ClaimDeliveries(ctx, now.Add(72*time.Hour), 10, "D"); len(got) != 0 {
		t.Fatalf("claimed %v among sent and given-up deliveries", deliveryIDs(got))
	}
	// A sent delivery stays sent whatever comes late.
	if err := s.MarkDelivered(ctx, []int64{a[0].ID}, "200 again", later); err != nil {
		t.Fatal(err)
	}
	log, err := s.DeliveryLog(ctx, ch, 10)
	if err != nil || len(log) != 3 {
		t.Fatalf("DeliveryLog = %d, %v", len(log), err)
	}
	states := map[int64]string{}
	for _, d := range log {
		states[d.ID] = d.State
	}
	if states[a[0].ID] != outbox.DeliverySent || states[a[1].ID] != outbox.DeliveryGaveUp || log[0].ID < log[2].ID {
		t.Fatalf("log = %v, newest first expected", states)
	}
	if sent := log[len(log)-1]; sent.ID == a[0].ID && (sent.SentAt == nil || *sent.LastStatus != "200") {
		t.Fatalf("sent delivery kept status %v at %v", *sent.LastStatus, sent.SentAt)
	}
}

// The event and read queries run prepared: none failed to compile at
// open (the job queue's are checked in package queue).
func TestEventQueriesArePrepared(t *testing.T) {
	s := openStore(t)
	for q, err := range db.UnpreparedQueries(s) {
		t.Errorf("not prepared: %v\n%s", err, q)
	}
	if got, want := db.PreparedEventQueries(s); got != want {
		t.Fatalf("%d of %d event queries prepared", got, want)
	}
	if got, want := db.PreparedReadQueries(s); got != want {
		t.Fatalf("%d of %d read queries prepared", got, want)
	}
}

// A starting worker releases what a dead process held at once, without
// counting the interrupted attempt.
func TestReleaseDeliveriesOfDeadOwner(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged}, ChannelIDs: []int64{ch}})
	recordEvents(t, s, insertDevice(t, s, "r1", nil, nil, nil), 2)
	now := time.Now()
	if got, err := s.ClaimDeliveries(ctx, now, 10, "dead"); err != nil || len(got) != 2 {
		t.Fatal(len(got), err)
	}
	if owners, err := s.DeliveryOwners(ctx); err != nil || !slices.Equal(owners, []string{"dead"}) {
		t.Fatalf("DeliveryOwners = %v, %v", owners, err)
	}
	if n, err := s.ReleaseDeliveries(ctx, "dead"); err != nil || n != 2 {
		t.Fatalf("ReleaseDeliveries = %d, %v", n, err)
	}
	got, err := s.ClaimDeliveries(ctx, time.Now(), 10, "alive")
	if err != nil || len(got) != 2 || got[0].Attempts != 1 {
		t.Fatalf("after release: %d claimed (%v), attempts %d", len(got), err, got[0].Attempts)
	}
}

// Recorded deliveries outlive the process: closed and reopened, the store
// hands them out.
func TestDeliveriesSurviveReopening(t *testing.T) {
	loc := dbtest.Location(t)
	ctx := context.Background()
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged}, ChannelIDs: []int64{ch}})
	recordEvents(t, s, insertDevice(t, s, "r1", nil, nil, nil), 1)
	if got, err := s.ClaimDeliveries(ctx, time.Now(), 10, "before"); err != nil || len(got) != 1 {
		t.Fatal(len(got), err)
	}
	s.Close()
	s, err = dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.ReleaseDeliveries(ctx, "before"); err != nil || n != 1 {
		t.Fatalf("release after reopening = %d, %v", n, err)
	}
	got, err := s.ClaimDeliveries(ctx, time.Now(), 10, "after")
	if err != nil || len(got) != 1 || got[0].Event.Kind != outbox.EventConfigChanged {
		t.Fatalf("after reopening claimed %+v, %v", got, err)
	}
}

func TestStaleEventsOncePerPeriod(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	never := insertDevice(t, s, "r2", nil, nil, nil)
	now := time.Now()
	// No rule wants backup.stale: nothing read, nothing written.
	if n, err := s.RecordStaleEvents(ctx, now.Add(49*time.Hour), 48*time.Hour); err != nil || n != 0 || countRows(t, s, "notification_device_state") != 0 {
		t.Fatalf("without a rule: %d, %v", n, err)
	}
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "stale", Events: []outbox.EventKind{outbox.EventBackupStale}, ChannelIDs: []int64{ch}})
	runAttempt(t, s, dev, queue.Outcome{Success: true, First: true, Text: "x\n"})
	if n, err := s.RecordStaleEvents(ctx, now.Add(47*time.Hour), 48*time.Hour); err != nil || n != 0 {
		t.Fatalf("before the threshold: %d events, %v", n, err)
	}
	if n, err := s.RecordStaleEvents(ctx, now.Add(49*time.Hour), 48*time.Hour); err != nil || n != 2 {
		t.Fatalf("past the threshold: %d events, %v; want 2", n, err)
	}
	evs, last := eventsAfter(t, s, 0)
	for _, e := range evs {
		st := e.payload.Stale
		if st == nil || st.ThresholdSeconds != 48*3600 || (e.payload.DeviceID == dev) != (st.LastGoodAt != nil) {
			t.Fatalf("stale event = %+v", e.payload)
		}
	}
	if n, err := s.RecordStaleEvents(ctx, now.Add(60*time.Hour), 48*time.Hour); err != nil || n != 0 {
		t.Fatalf("the same stale period again: %d events, %v", n, err)
	}
	// A new good backup starts a new period.
	runAttempt(t, s, dev, queue.Outcome{Success: true, Text: "x\n"})
	if n, err := s.RecordStaleEvents(ctx, now.Add(60*time.Hour), 48*time.Hour); err != nil || n != 1 {
		t.Fatalf("a new stale period: %d events, %v", n, err)
	}
	if evs, _ := eventsAfter(t, s, last); len(evs) != 1 || evs[0].payload.DeviceID != dev {
		t.Fatalf("new period's events = %+v", evs)
	}
	_ = never
}

func TestPruneNotifications(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged}, ChannelIDs: []int64{ch}})
	recordEvents(t, s, insertDevice(t, s, "r1", nil, nil, nil), 3)
	now := time.Now()
	got, err := s.ClaimDeliveries(ctx, now, 2, "w")
	if err != nil || len(got) != 2 {
		t.Fatal(err)
	}
	if err := s.MarkDelivered(ctx, []int64{got[0].ID}, "200", now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkFailed(ctx, "w", []int64{got[1].ID}, outbox.DeliveryFailure{Error: "x", At: now, Permanent: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneNotifications(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("prune before the rows' time: %d, %v", n, err)
	}
	if n, err := s.PruneNotifications(ctx, now.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("prune = %d, %v; want the sent and the given-up delivery", n, err)
	}
	if d, o := countRows(t, s, "deliveries"), countRows(t, s, "outbox"); d != 1 || o != 1 {
		t.Fatalf("left %d deliveries and %d events; want the pending one and its event", d, o)
	}
}

// 00015 applies on a 00014 database with rows, and rolls back to exactly
// the 00014 schema.
func TestNotificationsMigrationUpAndDown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, db.FileName)
	if err := db.MigrateTo(ctx, path, 14); err != nil {
		t.Fatal(err)
	}
	if err := db.SeedFile(ctx, path, seed.Options{Devices: 5, BackupsPerDevice: 2, RootGroups: 1, ChildGroups: 1, Snapshots: 2, RandomSeed: 1}); err != nil {
		t.Fatal(err)
	}
	conn := rawDB(t, path)
	before := schemaOf(t, conn)
	conn.Close()

	s, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.SetEventPolicy(policy.Decide)
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	runAttempt(t, s, 1, queue.Outcome{Success: true, Changed: true, Text: "new\n"})
	if n := countRows(t, s, "deliveries"); n != 1 {
		t.Fatalf("deliveries after a change on the upgraded database = %d", n)
	}
	s.Close()
	checkStore(t, dir)

	if err := db.MigrateDownTo(ctx, path, 14); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	diffSchema(t, "after rolling 00015 back", schemaOf(t, conn), before)
	if err := db.MigrateTo(ctx, path, 15); err != nil {
		t.Fatalf("up again after down: %v", err)
	}
}

// BenchmarkFinishJobNotifications measures the completion path (FinishJob
// of a changed version) with no rule, with a rule that does not cover the
// device, and with a matching rule (one event and one delivery each time).
func BenchmarkFinishJobNotifications(b *testing.B) {
	for _, mode := range []string{"no_rule", "other_scope", "matching_rule"} {
		b.Run(mode, func(b *testing.B) {
			s, err := db.Open(context.Background(), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			s.SetEventPolicy(policy.Decide)
			defer s.Close()
			ctx := context.Background()
			g, err := s.CreateGroup(ctx, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			devs := make([]int64, 100)
			for i := range devs {
				devs[i], err = s.InsertID(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
					VALUES (?, '127.0.0.1', 22, 'cisco_ios', 'ssh', ?, ?)`, fmt.Sprintf("d%d", i), db.Now(), db.Now())
				if err != nil {
					b.Fatal(err)
				}
				runAttempt(b, s, devs[i], queue.Outcome{Success: true, First: true, Text: fmt.Sprintf("hostname d%d\n", i)})
			}
			switch mode {
			case "other_scope":
				ch := dbtest.Channel(b, s, "hook")
				mkRule(b, s, db.NotificationRule{Name: "other", Events: outbox.EventKinds, Scope: db.RuleScopeGroups, GroupIDs: []int64{g.ID}, ChannelIDs: []int64{ch}})
			case "matching_rule":
				ch := dbtest.Channel(b, s, "hook")
				mkRule(b, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				dev := devs[i%len(devs)]
				jobs, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(-time.Second)}})
				if err != nil {
					b.Fatal(err)
				}
				claims, err := s.ClaimJobs(ctx, "bench", 1, jobs)
				if err != nil || len(claims) != 1 {
					b.Fatal(len(claims), err)
				}
				text := fmt.Sprintf("hostname d%d\ninterface x\n description change %d\n", dev, i)
				b.StartTimer()
				if err := s.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Changed: true, Text: text, FinishedAt: time.Now()}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			want := 0
			if mode == "matching_rule" {
				want = b.N
			}
			if n := countRows(b, s, "deliveries"); n != want {
				b.Fatalf("%d deliveries, want %d", n, want)
			}
		})
	}
}
