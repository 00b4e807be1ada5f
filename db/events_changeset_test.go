package db_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// The events of a change set's moves: a draft that became ready, and
// each end, write their one system event in the move's own transaction;
// the other moves, and every refused one, none.

// secretLine is a line of a change set's body that looks like a secret:
// no event may hold it, nor what it rendered to.
const secretLine = "snmp-server community Sup3rS3cretCommunity RO"

// secretChangeSet is a draft change set on devices whose body holds
// secretLine.
func secretChangeSet(t *testing.T, s *db.Store, stopAfter int, devices ...int64) db.ChangeSet {
	t.Helper()
	n := db.NewChangeSet{Name: "snmp community", Body: secretLine + "\n", StopAfterFailures: stopAfter, Concurrency: 3,
		CreatedByName: "alice", CreatedBy: ptr(int64(7))}
	for _, d := range devices {
		n.Targets = append(n.Targets, db.NewTarget{DeviceID: d})
	}
	c, err := s.CreateChangeSet(context.Background(), n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// renderSecret renders every target of c to secretLine (or, with
// failing, one target to an error).
func renderSecret(t *testing.T, s *db.Store, c db.ChangeSet, failing bool) db.ChangeSet {
	t.Helper()
	targets, err := s.ChangeSetTargets(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var renders []db.TargetRender
	for i, tg := range targets {
		r := db.TargetRender{TargetID: tg.ID, Rendered: secretLine + "\n"}
		if failing && i == 0 {
			r = db.TargetRender{TargetID: tg.ID, Error: "platform junos cannot take a push"}
		}
		renders = append(renders, r)
	}
	if c, err = s.SetChangeSetRendered(context.Background(), c.ID, renders, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

// wantChangeSetEvent checks that evs is exactly one event of kind about
// change set c in state, a system event, and returns its change set part.
func wantChangeSetEvent(t *testing.T, evs []sentEvent, kind outbox.EventKind, c db.ChangeSet, state string) outbox.EventChangeSet {
	t.Helper()
	if len(evs) != 1 || evs[0].kind != kind {
		t.Fatalf("events %v; want one %s", kinds(evs), kind)
	}
	p := evs[0].payload
	ec := p.ChangeSet
	if ec == nil || ec.ID != c.ID || ec.Name != c.Name || ec.State != state || ec.CreatedBy != "alice" ||
		ec.Devices != c.Targets || ec.Path != "/change-sets/"+strconv.FormatInt(c.ID, 10) {
		t.Fatalf("%s: change set part %+v; want change set %d, %s", kind, ec, c.ID, state)
	}
	if p.Kind != kind || p.DeviceID != 0 || p.DeviceName != "" || p.Trigger != queue.TriggerPush || p.At.IsZero() || p.Restore != nil {
		t.Fatalf("%s: payload %+v; want a system event of trigger push", kind, p)
	}
	return *ec
}

// noSecretInOutbox fails when any stored event holds the change set's
// body or what it rendered.
func noSecretInOutbox(t *testing.T, s *db.Store) {
	t.Helper()
	rows, err := s.Reader().Query(`SELECT payload FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var payload string
		if err := rows.Scan(&payload); err != nil {
			t.Fatal(err)
		}
		n++
		if strings.Contains(payload, "Sup3rS3cret") || strings.Contains(payload, "snmp-server") {
			t.Errorf("an event holds the change set's body: %s", payload)
		}
	}
	if err := rows.Err(); err != nil || n == 0 {
		t.Fatalf("%d events, %v", n, err)
	}
}

// runTarget queues, claims, starts and ends one target as the push
// runner does.
func runTarget(t *testing.T, s *db.Store, target int64, state string) {
	t.Helper()
	ctx := context.Background()
	_, enq, err := s.QueueChangeSetTarget(ctx, target, time.Time{})
	if err != nil || enq.JobID == 0 {
		t.Fatal(enq, err)
	}
	claims, err := s.ClaimJobsOfKinds(ctx, "pusher", 1, []int64{enq.JobID}, []string{queue.KindPush})
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	if _, err := s.StartChangeSetTarget(ctx, target, claims[0]); err != nil {
		t.Fatal(err)
	}
	if state == db.TargetRunning {
		return
	}
	if _, err := s.FinishChangeSetTarget(ctx, target, db.TargetEnd{State: state, Error: "% Invalid input", Reason: "apply"}, &claims[0], nil); err != nil {
		t.Fatal(err)
	}
}

// A change set's life: nothing for the new draft and for a dry run that
// left it a draft; config.push_requested once when it became ready (not
// again for a second dry run of the ready set); nothing for approving
// and starting it; config.push_finished once when it stopped after too
// many failures, with its devices counted (the one not run skipped);
// nothing for the moves refused after. No event holds the body or what
// it rendered.
func TestChangeSetMovesRecordTheirEvents(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	// The push kinds only: a failed push's job is a failed attempt of its
	// device, with the device's own events.
	mkRule(t, s, db.NotificationRule{Name: "pushes", Events: []outbox.EventKind{outbox.EventPushRequested, outbox.EventPushFinished},
		ChannelIDs: []int64{ch}})
	d1, d2, d3 := retDevice(t, s, "d1"), retDevice(t, s, "d2"), retDevice(t, s, "d3")
	_, last := eventsAfter(t, s, 0)
	next := func() []sentEvent {
		t.Helper()
		var evs []sentEvent
		evs, last = eventsAfter(t, s, last)
		return evs
	}
	none := func(what string) {
		t.Helper()
		if evs := next(); len(evs) != 0 {
			t.Fatalf("%s recorded %v", what, kinds(evs))
		}
	}

	c := secretChangeSet(t, s, 1, d1, d2, d3)
	none("a new draft")
	if c = renderSecret(t, s, c, true); c.State != db.ChangeSetDraft {
		t.Fatalf("a dry run with an error left %s", c.State)
	}
	none("a dry run that left a draft")
	if c = renderSecret(t, s, c, false); c.State != db.ChangeSetReady {
		t.Fatalf("a good dry run left %s", c.State)
	}
	ec := wantChangeSetEvent(t, next(), outbox.EventPushRequested, c, db.ChangeSetReady)
	if ec.Counts != nil || ec.ApprovedBy != "" || ec.Reason != "" {
		t.Fatalf("requested: %+v; want no counts, no decision", ec)
	}
	renderSecret(t, s, c, false)
	none("a second dry run of the ready set")

	var err error
	if c, err = s.ApproveChangeSet(ctx, c.ID, db.Decision{UserID: ptr(int64(8)), Name: "bob", Note: "window CHG-9"}, time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if c, err = s.StartChangeSet(ctx, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	none("approving and starting")
	targets, err := s.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	runTarget(t, s, targets[0].ID, db.TargetSucceeded)
	runTarget(t, s, targets[1].ID, db.TargetFailed)
	none("the targets' moves")

	if c, err = s.FinishChangeSet(ctx, c.ID, db.ChangeSetStopped, "stopped after 1 failed devices", nil); err != nil {
		t.Fatal(err)
	}
	ec = wantChangeSetEvent(t, next(), outbox.EventPushFinished, c, db.ChangeSetStopped)
	want := outbox.EventChangeSetCounts{Succeeded: 1, Failed: 1, Skipped: 1}
	if ec.Counts == nil || *ec.Counts != want || ec.ApprovedBy != "bob" || ec.DecisionNote != "window CHG-9" ||
		ec.Reason != "stopped after 1 failed devices" || ec.RejectedBy != "" {
		t.Fatalf("stopped: %+v counts %+v; want %+v, approved by bob", ec, ec.Counts, want)
	}
	if _, err := s.FinishChangeSet(ctx, c.ID, db.ChangeSetDone, "", nil); err == nil {
		t.Fatal("a stopped set was finished again")
	}
	_, err = s.CancelChangeSet(ctx, c.ID, nil, "", nil)
	wantChangeSetState(t, err, db.ChangeSetStopped)
	none("a second end and a cancel, both refused")
	noSecretInOutbox(t, s)
}

// The other ends: a ready set rejected (cancelled with a decision)
// names who rejected it; a running set cancelled counts the device that
// still runs; the ready and approved sets whose time ran out expire,
// each told once, and a draft past its time is not.
func TestChangeSetEndsRecordFinished(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "ends", Events: []outbox.EventKind{outbox.EventPushFinished}, ChannelIDs: []int64{ch}})
	d1, d2 := retDevice(t, s, "d1"), retDevice(t, s, "d2")

	rejected := renderSecret(t, s, secretChangeSet(t, s, 0, d1, d2), false)
	_, last := eventsAfter(t, s, 0) // no rule wants config.push_requested
	if last != 0 {
		t.Fatalf("a rule of config.push_finished got delivery %d for a ready set", last)
	}
	c, err := s.CancelChangeSet(ctx, rejected.ID, &db.Decision{Name: "carol", Note: "not in the window"}, "rejected by carol", nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []sentEvent
	evs, last = eventsAfter(t, s, last)
	ec := wantChangeSetEvent(t, evs, outbox.EventPushFinished, c, db.ChangeSetCancelled)
	if ec.RejectedBy != "carol" || ec.ApprovedBy != "" || ec.DecisionNote != "not in the window" || ec.Reason != "rejected by carol" ||
		ec.Counts == nil || *ec.Counts != (outbox.EventChangeSetCounts{Skipped: 2}) {
		t.Fatalf("rejected: %+v counts %+v", ec, ec.Counts)
	}

	running := renderSecret(t, s, secretChangeSet(t, s, 0, d1, d2), false)
	if _, err := s.ApproveChangeSet(ctx, running.ID, db.Decision{Name: "bob"}, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartChangeSet(ctx, running.ID, nil); err != nil {
		t.Fatal(err)
	}
	targets, _ := s.ChangeSetTargets(ctx, running.ID)
	runTarget(t, s, targets[0].ID, db.TargetRunning)
	if c, err = s.CancelChangeSet(ctx, running.ID, nil, "wrong server", nil); err != nil {
		t.Fatal(err)
	}
	evs, last = eventsAfter(t, s, last)
	ec = wantChangeSetEvent(t, evs, outbox.EventPushFinished, c, db.ChangeSetCancelled)
	if ec.ApprovedBy != "bob" || ec.Reason != "wrong server" || *ec.Counts != (outbox.EventChangeSetCounts{Skipped: 1, Running: 1}) {
		t.Fatalf("cancelled while running: %+v counts %+v", ec, ec.Counts)
	}

	past := time.Now().Add(-time.Minute)
	draft := secretChangeSet(t, s, 0, d1)
	ready := renderSecret(t, s, secretChangeSet(t, s, 0, d1), false)
	approved := renderSecret(t, s, secretChangeSet(t, s, 0, d2), false)
	if _, err := s.ApproveChangeSet(ctx, approved.ID, db.Decision{Name: "bob"}, past, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{draft.ID, ready.ID} {
		if _, err := s.Writer().Exec(`UPDATE change_sets SET expires_at = ? WHERE id = ?`, past.UTC().Format(db.TimeFormat), id); err != nil {
			t.Fatal(err)
		}
	}
	moved, err := s.ExpireChangeSets(ctx, time.Now(), nil)
	if err != nil || len(moved) != 2 {
		t.Fatalf("ExpireChangeSets = %+v, %v", moved, err)
	}
	evs, last = eventsAfter(t, s, last)
	if len(evs) != 2 {
		t.Fatalf("expiry recorded %v; want two config.push_finished", kinds(evs))
	}
	for _, c := range moved {
		i := 0
		if evs[i].payload.ChangeSet.ID != c.ID {
			i = 1
		}
		ec := wantChangeSetEvent(t, evs[i:i+1], outbox.EventPushFinished, c, db.ChangeSetExpired)
		if *ec.Counts != (outbox.EventChangeSetCounts{Skipped: 1}) {
			t.Errorf("expired %d: counts %+v; want its device skipped", c.ID, ec.Counts)
		}
	}
	if again, err := s.ExpireChangeSets(ctx, time.Now(), nil); err != nil || len(again) != 0 {
		t.Fatalf("a second expiry = %+v, %v", again, err)
	}
	if evs, _ = eventsAfter(t, s, last); len(evs) != 0 {
		t.Fatalf("a second expiry recorded %v", kinds(evs))
	}
	noSecretInOutbox(t, s)
}

// Change set events are system events: a rule on the groups or the
// devices of the set's devices does not get them, a rule of scope all
// does, once per change set (not once per device).
func TestChangeSetEventsMatchRulesOfScopeAllOnly(t *testing.T) {
	s := openStore(t)
	site := createGroup(t, s, "site", nil)
	d1, d2 := insertDevice(t, s, "r1", &site.ID, nil, nil), insertDevice(t, s, "r2", &site.ID, nil, nil)
	chAll, chGroup, chDevice := dbtest.Channel(t, s, "all"), dbtest.Channel(t, s, "site"), dbtest.Channel(t, s, "r1")
	kinds := []outbox.EventKind{outbox.EventPushRequested}
	mkRule(t, s, db.NotificationRule{Name: "all", Events: kinds, ChannelIDs: []int64{chAll}})
	mkRule(t, s, db.NotificationRule{Name: "site", Events: kinds, Scope: db.RuleScopeGroups, GroupIDs: []int64{site.ID}, ChannelIDs: []int64{chGroup}})
	mkRule(t, s, db.NotificationRule{Name: "r1", Events: kinds, Scope: db.RuleScopeDevices, DeviceIDs: []int64{d1}, ChannelIDs: []int64{chDevice}})
	c := renderSecret(t, s, secretChangeSet(t, s, 0, d1, d2), false)
	evs, _ := eventsAfter(t, s, 0)
	wantChangeSetEvent(t, evs, outbox.EventPushRequested, c, db.ChangeSetReady)
	if evs[0].channel != chAll {
		t.Fatalf("delivered to channel %d; want only the rule of scope all's (%d)", evs[0].channel, chAll)
	}
}

// A change set's move and its event commit together: when the event
// cannot be written the set does not move, and when what follows it in
// the move's transaction (the audit entry) fails, the event is gone too.
func TestChangeSetEventCommitsWithItsMove(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	d1 := retDevice(t, s, "d1")
	c := renderSecret(t, s, secretChangeSet(t, s, 0, d1), false)
	if _, err := s.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob"}, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartChangeSet(ctx, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	before := countRows(t, s, "outbox")

	bad := &db.AuditEntry{Username: "bob", Interface: "api", Action: "changeset.finish", Details: map[string]any{"x": make(chan int)}}
	if _, err := s.FinishChangeSet(ctx, c.ID, db.ChangeSetDone, "", bad); err == nil {
		t.Fatal("an end with an audit entry that cannot be written went through")
	}
	if got, err := s.ChangeSet(ctx, c.ID); err != nil || got.State != db.ChangeSetRunning {
		t.Fatalf("after the failed end: %+v, %v", got, err)
	}
	if n := countRows(t, s, "outbox"); n != before {
		t.Fatalf("outbox %d events after a failed end; want %d", n, before)
	}

	failing, dropFailing := `CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`, `DROP TRIGGER fail_delivery`
	if s.Postgres() {
		failing = `CREATE FUNCTION fail_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
			CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION fail_delivery()`
		dropFailing = `DROP TRIGGER fail_delivery ON deliveries`
	}
	if _, err := s.Exec(ctx, failing); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishChangeSet(ctx, c.ID, db.ChangeSetDone, "", nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("an end whose event cannot be written: %v", err)
	}
	if got, err := s.ChangeSet(ctx, c.ID); err != nil || got.State != db.ChangeSetRunning {
		t.Fatalf("after the end whose event failed: %+v, %v", got, err)
	}
	if _, err := s.Exec(ctx, dropFailing); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishChangeSet(ctx, c.ID, db.ChangeSetDone, "", nil); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "outbox"); n != before+1 {
		t.Fatalf("outbox %d events; want %d", n, before+1)
	}
}
