package db_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// The events of a restore's moves: each move that is told writes its one
// event in its own transaction, the others and every refused move none.

// restoreEvents returns the events recorded after delivery since (one
// channel, so one delivery each) and the last delivery's id.
func restoreEvents(t *testing.T, s *db.Store, since int64) ([]sentEvent, int64) {
	t.Helper()
	evs, last := eventsAfter(t, s, since)
	for _, e := range evs {
		if e.kind != e.payload.Kind {
			t.Errorf("outbox kind %s, payload kind %s", e.kind, e.payload.Kind)
		}
	}
	return evs, last
}

// wantRestoreEvent checks that evs is exactly one event of kind about
// restore r (of device dev) in state, and returns its restore part.
func wantRestoreEvent(t *testing.T, evs []sentEvent, kind outbox.EventKind, r db.Restore, dev int64, state string) outbox.EventRestore {
	t.Helper()
	if len(evs) != 1 || evs[0].kind != kind {
		t.Fatalf("events %v; want one %s", kinds(evs), kind)
	}
	p := evs[0].payload
	er := p.Restore
	if er == nil || er.ID != r.ID || er.State != state || er.VersionID != r.TargetBackupID || er.Path != "/restores/"+strconv.FormatInt(r.ID, 10) ||
		er.RequestedBy != r.RequestedByName {
		t.Fatalf("%s: restore part %+v; want restore %d, %s, version %s", kind, er, r.ID, state, r.TargetBackupID)
	}
	if p.DeviceID != dev || p.DeviceName == "" || p.Trigger != queue.TriggerRestore || p.At.IsZero() {
		t.Fatalf("%s: payload %+v", kind, p)
	}
	return *er
}

// startRestore queues approved restore r, claims its job and starts it,
// and records the backup before the change, as its runner does.
func startRestore(t *testing.T, s *db.Store, r db.Restore) (db.Restore, queue.Claim) {
	t.Helper()
	ctx := context.Background()
	r, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.ClaimJobsOfKinds(ctx, "restorer", 1, []int64{enq.JobID}, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	c := claims[0]
	if r, err = s.StartRestore(ctx, r.ID, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, c, queue.Outcome{Success: true, Text: "hostname drifted\n", FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return r, c
}

// Every move of a restore, through to each of its ends, and the one
// event each writes: requested (with the preview and the version the
// message's diff is drawn from), approved, failed with the end it was,
// succeeded, rejected, expired; nothing for the steps in between and for
// a cancel; nothing for a move its compare-and-set refused.
func TestRestoreMovesRecordTheirEvents(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	dev, target := restoreDevice(t, s, "r1")
	expires := time.Now().Add(time.Hour)
	_, last := restoreEvents(t, s, 0)
	none := func(what string) {
		t.Helper()
		var evs []sentEvent
		if evs, last = restoreEvents(t, s, last); len(evs) != 0 {
			t.Fatalf("%s recorded %v", what, kinds(evs))
		}
	}
	next := func() []sentEvent {
		t.Helper()
		var evs []sentEvent
		evs, last = restoreEvents(t, s, last)
		return evs
	}

	r := newRestore(t, s, dev, target, nil)
	none("a new restore, previewing")
	preview, hash := goodVersion(t, s, dev, time.Minute, "hostname drifted\n")
	_, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, expires, nil)
	wantRestoreState(t, err, db.RestorePreviewing)
	none("an approval refused before the preview")
	if r, err = s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash, ExpiresAt: expires}, nil); err != nil {
		t.Fatal(err)
	}
	evs := next()
	er := wantRestoreEvent(t, evs, outbox.EventRestoreRequested, r, dev, db.RestorePending)
	if p := evs[0].payload; p.BackupID != target || p.PreviousBackupID != preview || er.Reason != "undo the bad change" ||
		er.DecidedBy != "" || er.Error != "" {
		t.Fatalf("requested: %+v %+v; want the version against the preview", p, er)
	}
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash}, nil); err == nil {
		t.Fatal("a second preview was taken")
	}
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, "stale", expires, nil); !errors.Is(err, db.ErrPreviewStale) {
		t.Fatal(err)
	}
	none("a second preview and a stale approval, both refused")

	if r, err = s.ApproveRestore(ctx, r.ID, db.Decision{UserID: ptr(int64(8)), Name: "bob", Note: "go ahead"}, hash, expires, nil); err != nil {
		t.Fatal(err)
	}
	er = wantRestoreEvent(t, next(), outbox.EventRestoreApproved, r, dev, db.RestoreApproved)
	if er.DecidedBy != "bob" || er.DecisionNote != "go ahead" {
		t.Fatalf("approved: %+v", er)
	}
	_, err = s.ApproveRestore(ctx, r.ID, db.Decision{Name: "carol"}, hash, expires, nil)
	wantRestoreState(t, err, db.RestoreApproved)
	none("a second approval")

	r, c := startRestore(t, s, r)
	if err := s.SetRestoreStage(ctx, r.ID, "verify"); err != nil {
		t.Fatal(err)
	}
	none("queue, start and stage")
	end := db.RestoreEnd{State: db.RestoreRolledBack, Error: "verify: 2 lines differ from the version", Reason: "verify_mismatch"}
	if r, err = s.FinishRestore(ctx, r.ID, end, &c, nil); err != nil {
		t.Fatal(err)
	}
	er = wantRestoreEvent(t, next(), outbox.EventRestoreFailed, r, dev, db.RestoreRolledBack)
	if er.Stage != "verify" || er.Error != end.Error || er.ErrorReason != "verify_mismatch" || er.DecidedBy != "bob" {
		t.Fatalf("rolled back: %+v", er)
	}
	_, err = s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreSucceeded}, nil, nil)
	wantRestoreState(t, err, db.RestoreRolledBack)
	none("a second end")

	// The other ends of a run, each its own restore of the device.
	for _, end := range []db.RestoreEnd{
		{State: db.RestoreSucceeded},
		{State: db.RestoreRollbackFailed, Error: "rollback: session lost", Reason: "rollback"},
		{State: db.RestoreFailed, Error: "transfer refused", Reason: "transfer"},
	} {
		r := approvedRestore(t, s, dev, target, expires)
		next() // requested, approved
		r, c := startRestore(t, s, r)
		if r, err = s.FinishRestore(ctx, r.ID, end, &c, nil); err != nil {
			t.Fatal(err)
		}
		kind := outbox.EventRestoreFailed
		if end.State == db.RestoreSucceeded {
			kind = outbox.EventRestoreSucceeded
		}
		er := wantRestoreEvent(t, next(), kind, r, dev, end.State)
		if er.Error != end.Error || er.ErrorReason != end.Reason {
			t.Fatalf("%s: %+v", end.State, er)
		}
	}

	// A preview that failed ends the request as failed.
	r = newRestore(t, s, dev, target, nil)
	if r, err = s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreFailed, Error: "preview backup: connect refused", Reason: "connect"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	wantRestoreEvent(t, next(), outbox.EventRestoreFailed, r, dev, db.RestoreFailed)

	// Rejected, with who and why; then nothing for a reject refused.
	r = approvedRestore(t, s, dev, target, expires)
	next()
	if r, err = s.RejectRestore(ctx, r.ID, db.Decision{Name: "carol", Note: "not during business hours"}, nil); err != nil {
		t.Fatal(err)
	}
	er = wantRestoreEvent(t, next(), outbox.EventRestoreRejected, r, dev, db.RestoreRejected)
	if er.DecidedBy != "carol" || er.DecisionNote != "not during business hours" {
		t.Fatalf("rejected: %+v", er)
	}
	_, err = s.RejectRestore(ctx, r.ID, db.Decision{Name: "carol"}, nil)
	wantRestoreState(t, err, db.RestoreRejected)
	none("a second reject")

	// Cancelled by its requester, pending or queued: not told.
	r = newRestore(t, s, dev, target, nil)
	if _, err := s.CancelRestore(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	none("a cancel of a previewing restore")
	r = approvedRestore(t, s, dev, target, expires)
	next()
	if _, _, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelRestore(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	none("a cancel of a queued restore")

	// Expired: one event per restore the sweep ended, none on a sweep
	// that ends nothing.
	dev2, target2 := restoreDevice(t, s, "r2")
	pending := newRestore(t, s, dev, target, nil)
	p2, h2 := goodVersion(t, s, dev, time.Minute, "x\n")
	if _, err := s.SetRestorePreview(ctx, pending.ID, db.RestorePreview{BackupID: p2, Hash: h2, ExpiresAt: time.Now().Add(-time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	approved := approvedRestore(t, s, dev2, target2, time.Now().Add(30*time.Second))
	next()
	moved, err := s.ExpireRestores(ctx, time.Now().Add(time.Minute), nil)
	if err != nil || len(moved) != 2 {
		t.Fatalf("ExpireRestores = %+v, %v", moved, err)
	}
	evs = next()
	if len(evs) != 2 {
		t.Fatalf("expiry recorded %v; want two", kinds(evs))
	}
	slices.SortFunc(evs, func(a, b sentEvent) int { return int(a.payload.Restore.ID - b.payload.Restore.ID) })
	wantRestoreEvent(t, evs[:1], outbox.EventRestoreExpired, moved[0], dev, db.RestoreExpired)
	if er := wantRestoreEvent(t, evs[1:], outbox.EventRestoreExpired, moved[1], dev2, db.RestoreExpired); er.DecidedBy != "bob" ||
		moved[1].ID != approved.ID {
		t.Fatalf("expired after approval: %+v", er)
	}
	if again, err := s.ExpireRestores(ctx, time.Now().Add(time.Hour), nil); err != nil || len(again) != 0 {
		t.Fatal(again, err)
	}
	none("a sweep that ended nothing")
}

// A restore's job interrupted (its process stopped) ends the restore as
// interrupted with config.restore_failed saying the device's state is
// unknown; its job cancelled while queued tells nothing.
func TestInterruptedRestoreRecordsFailed(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "restores", Events: []outbox.EventKind{outbox.EventRestoreFailed}, ChannelIDs: []int64{ch}})
	r, c := runningRestore(t, s, "r1", "engine-a")
	if err := s.SetRestoreStage(ctx, r.ID, "apply"); err != nil {
		t.Fatal(err)
	}
	_, last := restoreEvents(t, s, 0)
	if res, err := s.InterruptJobs(ctx, "engine-a", 10); err != nil || len(res.Work) != 1 {
		t.Fatalf("InterruptJobs = %+v, %v", res, err)
	}
	evs, last := restoreEvents(t, s, last)
	r, err := s.Restore(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	er := wantRestoreEvent(t, evs, outbox.EventRestoreFailed, r, c.DeviceID, db.RestoreInterrupted)
	if er.Error != queue.ErrorInterruptedUnknown || er.ErrorReason != queue.ReasonInterrupted || er.Stage != "apply" {
		t.Fatalf("interrupted: %+v", er)
	}
	if res, err := s.InterruptJobs(ctx, "engine-a", 10); err != nil || len(res.Work) != 0 {
		t.Fatalf("second InterruptJobs = %+v, %v", res, err)
	}
	if evs, _ = restoreEvents(t, s, last); len(evs) != 0 {
		t.Fatalf("a second interruption recorded %v", kinds(evs))
	}

	// One attempt given back by its engine is the same end.
	r2, c2 := runningRestore(t, s, "r2", "engine-b")
	if _, err := s.InterruptJob(ctx, c2, 10); err != nil {
		t.Fatal(err)
	}
	evs, last = restoreEvents(t, s, last)
	if r2, err = s.Restore(ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	wantRestoreEvent(t, evs, outbox.EventRestoreFailed, r2, c2.DeviceID, db.RestoreInterrupted)

	dev, target := restoreDevice(t, s, "r3")
	r3 := approvedRestore(t, s, dev, target, time.Now().Add(time.Hour))
	_, enq, err := s.QueueRestore(ctx, r3.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.CancelJob(ctx, enq.JobID); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got, err := s.Restore(ctx, r3.ID); err != nil || got.State != db.RestoreCancelled {
		t.Fatalf("%+v, %v", got, err)
	}
	if evs, _ = restoreEvents(t, s, last); len(evs) != 0 {
		t.Fatalf("a cancelled job recorded %v", kinds(evs))
	}
}

// Restore events are device events: a rule on a group matches the
// restores of its devices (subgroups included), a rule on devices those
// devices', and each only wants the kinds it names.
func TestRestoreEventsFollowTheRuleScope(t *testing.T) {
	s := openStore(t)
	sites := createGroup(t, s, "sites", nil)
	berlin := createGroup(t, s, "berlin", &sites.ID)
	lab := createGroup(t, s, "lab", nil)
	chGroup, chDevice, chOther := dbtest.Channel(t, s, "sites"), dbtest.Channel(t, s, "one device"), dbtest.Channel(t, s, "approvals")
	// Devices before them, so that no restore's id is its device's.
	for _, name := range []string{"spare-1", "spare-2", "spare-3"} {
		insertDevice(t, s, name, nil, nil, nil)
	}
	inBerlin := insertDevice(t, s, "ber-r1", &berlin.ID, nil, nil)
	inLab := insertDevice(t, s, "lab-r1", &lab.ID, nil, nil)
	mkRule(t, s, db.NotificationRule{Name: "sites", Events: []outbox.EventKind{outbox.EventRestoreApproved},
		Scope: db.RuleScopeGroups, GroupIDs: []int64{sites.ID}, ChannelIDs: []int64{chGroup}})
	mkRule(t, s, db.NotificationRule{Name: "lab device", Events: []outbox.EventKind{outbox.EventRestoreApproved},
		Scope: db.RuleScopeDevices, DeviceIDs: []int64{inLab}, ChannelIDs: []int64{chDevice}})
	mkRule(t, s, db.NotificationRule{Name: "other kind", Events: []outbox.EventKind{outbox.EventRestoreSucceeded},
		ChannelIDs: []int64{chOther}})
	for _, dev := range []int64{inBerlin, inLab} {
		target, _ := goodVersion(t, s, dev, 48*time.Hour, "hostname x\n")
		approvedRestore(t, s, dev, target, time.Now().Add(time.Hour))
	}
	evs, _ := restoreEvents(t, s, 0)
	got := map[int64]int64{}
	for _, e := range evs {
		if e.kind != outbox.EventRestoreApproved {
			t.Errorf("recorded %s", e.kind)
		}
		got[e.channel] = e.payload.DeviceID
		if e.channel == chGroup && strings.Join(e.payload.GroupPath, "/") != "sites/berlin" {
			t.Errorf("group path of the Berlin restore: %v", e.payload.GroupPath)
		}
	}
	if len(evs) != 2 || got[chGroup] != inBerlin || got[chDevice] != inLab {
		t.Fatalf("deliveries %v (channel → device); want sites → %d, lab device → %d", got, inBerlin, inLab)
	}
}

// A move and its event commit together: when the event cannot be
// written the move does not happen, and when what follows the event in
// the move's transaction fails (its audit entry) the event is gone too.
func TestRestoreEventCommitsWithItsMove(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	dev, target := restoreDevice(t, s, "r1")
	r := newRestore(t, s, dev, target, nil)
	preview, hash := goodVersion(t, s, dev, time.Minute, "hostname drifted\n")
	expires := time.Now().Add(time.Hour)
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash, ExpiresAt: expires}, nil); err != nil {
		t.Fatal(err)
	}
	before := countRows(t, s, "outbox")

	// An audit entry that cannot be written, after the event was.
	bad := &db.AuditEntry{Username: "bob", Interface: "api", Action: "restore.approve", Details: map[string]any{"x": make(chan int)}}
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, expires, bad); err == nil {
		t.Fatal("an approval with an audit entry that cannot be written went through")
	}
	if got, err := s.Restore(ctx, r.ID); err != nil || got.State != db.RestorePending {
		t.Fatalf("after the failed approval: %+v, %v", got, err)
	}
	if n := countRows(t, s, "outbox"); n != before {
		t.Fatalf("outbox %d events after a failed approval; want %d", n, before)
	}

	// An event that cannot be written (its delivery).
	failing, dropFailing := `CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`, `DROP TRIGGER fail_delivery`
	if s.Postgres() {
		failing = `CREATE FUNCTION fail_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
			CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION fail_delivery()`
		dropFailing = `DROP TRIGGER fail_delivery ON deliveries`
	}
	if _, err := s.Exec(ctx, failing); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, expires, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("approval whose event cannot be written: %v", err)
	}
	if got, err := s.Restore(ctx, r.ID); err != nil || got.State != db.RestorePending {
		t.Fatalf("after the approval whose event failed: %+v, %v", got, err)
	}
	if _, err := s.Exec(ctx, dropFailing); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, expires, nil); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "outbox"); n != before+1 {
		t.Fatalf("outbox %d events; want %d", n, before+1)
	}
}
