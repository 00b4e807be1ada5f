package policy_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
)

// Every rule of the event policy, without a database: what happened and
// the state before in, the events and the state after out.
func TestDecide(t *testing.T) {
	// A time in another zone: events carry it in UTC.
	at := time.Date(2026, 3, 1, 14, 30, 0, 0, time.FixedZone("CET", 3600))
	group := int64(4)
	dev := db.EventDevice{ID: 7, Name: "core-1", Host: "10.0.0.1", Platform: "cisco_ios", GroupID: &group,
		PendingHostKey: []byte("key-2")}
	yes, no := true, false
	retry := at.Add(time.Minute)
	lastGood := at.Add(-72 * time.Hour)

	// ev is the payload of an event of dev, as the policy makes it.
	ev := func(kind outbox.EventKind, trigger, backup string) outbox.EventPayload {
		return outbox.EventPayload{Kind: kind, At: at.UTC(), Trigger: trigger, DeviceID: 7, DeviceName: "core-1",
			DeviceHost: "10.0.0.1", DevicePlatform: "cisco_ios", GroupID: &group, BackupID: backup}
	}
	failure := func(p outbox.EventPayload, stage, reason string, n int) outbox.EventPayload {
		p.Failure = &outbox.EventFailure{Stage: stage, Reason: reason, Consecutive: n}
		return p
	}
	plain := func(p outbox.EventPayload) db.DecidedEvent { return db.DecidedEvent{Payload: p} }
	reached := func(p outbox.EventPayload, n int) db.DecidedEvent {
		return db.DecidedEvent{Payload: p, Threshold: db.ThresholdReached, Count: n}
	}
	wasReached := func(p outbox.EventPayload, n int) db.DecidedEvent {
		return db.DecidedEvent{Payload: p, Threshold: db.ThresholdWasReached, Count: n}
	}
	attempt := func(prev db.EventState, o queue.Outcome) db.EventInput {
		return db.EventInput{At: at, Trigger: queue.TriggerSchedule, Device: dev, Prev: prev,
			Attempt: &db.AttemptEnd{BackupID: "b2", Outcome: o}}
	}
	check := func(prev db.EventState, reachable bool) db.EventInput {
		return db.EventInput{At: at, Trigger: db.TriggerCheck, Device: dev, Prev: prev,
			Check: &db.ReachabilityCheck{Reachable: reachable}}
	}
	stale := func(prev db.EventState, c db.StaleCheck) db.EventInput {
		c.Threshold = 48 * time.Hour
		return db.EventInput{At: at, Trigger: db.TriggerCheck, Device: dev, Prev: prev, Stale: &c}
	}
	push := func(prev db.EventState, g db.GitPushEnd) db.EventInput {
		g.Remote, g.Attempts = "ssh://git.example.net/configs.git", 3
		return db.EventInput{At: at, Trigger: db.TriggerGitPush, Prev: prev, GitPush: &g}
	}
	pushEvent := func(kind outbox.EventKind, reason string, n int) outbox.EventPayload {
		return outbox.EventPayload{Kind: kind, At: at.UTC(), Trigger: db.TriggerGitPush,
			Failure: &outbox.EventFailure{Stage: "push", Reason: reason, Consecutive: n},
			Git:     &outbox.EventGit{Remote: "ssh://git.example.net/configs.git", Attempts: 3}}
	}
	changed := plain(ev(outbox.EventConfigChanged, queue.TriggerSchedule, "b2"))
	changed.WithPreviousGood = true
	staleEvent := func(last *time.Time) db.DecidedEvent {
		p := ev(outbox.EventBackupStale, db.TriggerCheck, "")
		p.Stale = &outbox.EventStale{LastGoodAt: last, ThresholdSeconds: 48 * 3600}
		return plain(p)
	}
	streak := db.EventState{ConsecutiveFailures: 2, Unreachable: 3, StaleNotifiedFor: "p"}

	// A restore of dev, as the store hands it over after a move.
	restore := func(r db.Restore) db.EventInput {
		return db.EventInput{At: at, Trigger: queue.TriggerRestore, Device: dev, Prev: streak, Restore: &r}
	}
	moved := func(state string) db.Restore {
		return db.Restore{ID: 12, DeviceID: 7, TargetBackupID: "b-old", TargetHash: "h-old", State: state, Stage: "verify",
			PreviewBackupID: new("b-now"), RequestedByName: "alice", Reason: "undo CHG-1", DecidedByName: new("bob"),
			DecisionNote: "ok", Outcome: new(`{"differences":2}`), Error: new("verify: 2 lines differ"), ErrorReason: new("verify_mismatch")}
	}
	restoreEvent := func(kind outbox.EventKind, state string, failed bool) outbox.EventPayload {
		p := ev(kind, queue.TriggerRestore, "")
		p.Restore = &outbox.EventRestore{ID: 12, State: state, VersionID: "b-old", RequestedBy: "alice", Reason: "undo CHG-1",
			DecidedBy: "bob", DecisionNote: "ok", Path: "/restores/12"}
		if failed {
			p.Restore.Stage, p.Restore.Error, p.Restore.ErrorReason = "verify", "verify: 2 lines differ", "verify_mismatch"
		}
		return p
	}
	pending := moved(db.RestorePending)
	pending.DecidedByName, pending.DecisionNote = nil, ""
	requested := restoreEvent(outbox.EventRestoreRequested, db.RestorePending, false)
	requested.Restore.DecidedBy, requested.Restore.DecisionNote = "", ""
	requested.BackupID, requested.PreviousBackupID = "b-old", "b-now"

	for _, tc := range []struct {
		name string
		in   db.EventInput
		want []db.DecidedEvent
		next db.EventState
	}{
		// Backups that worked.
		{"first backup", attempt(db.EventState{}, queue.Outcome{Success: true, First: true, Changed: true}),
			[]db.DecidedEvent{plain(ev(outbox.EventFirstBackup, queue.TriggerSchedule, "b2"))}, db.EventState{}},
		{"a change names the version before", attempt(db.EventState{}, queue.Outcome{Success: true, Changed: true}),
			[]db.DecidedEvent{changed}, db.EventState{}},
		{"noise only: nothing", attempt(db.EventState{}, queue.Outcome{Success: true}), nil, db.EventState{}},
		{"success after failures: recovered, to the rules the streak reached",
			attempt(db.EventState{ConsecutiveFailures: 4}, queue.Outcome{Success: true}),
			[]db.DecidedEvent{wasReached(failure(ev(outbox.EventBackupRecovered, queue.TriggerSchedule, "b2"), "", "", 4), 4)},
			db.EventState{}},
		{"a change after failures: changed, then recovered",
			attempt(db.EventState{ConsecutiveFailures: 1}, queue.Outcome{Success: true, Changed: true}),
			[]db.DecidedEvent{changed, wasReached(failure(ev(outbox.EventBackupRecovered, queue.TriggerSchedule, "b2"), "", "", 1), 1)},
			db.EventState{}},

		// Backups that failed.
		{"failure: to the rules whose threshold the streak just reached",
			attempt(db.EventState{ConsecutiveFailures: 2}, queue.Outcome{Error: "authentication failed", Reason: "auth"}),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "auth", "authentication failed", 3), 3)},
			db.EventState{ConsecutiveFailures: 3}},
		{"failure with a retry ahead: nothing yet",
			attempt(db.EventState{ConsecutiveFailures: 2}, queue.Outcome{Error: "refused", Reason: "connect", RetryAt: &retry}),
			nil, db.EventState{ConsecutiveFailures: 2}},
		{"cancelled: nothing", attempt(db.EventState{ConsecutiveFailures: 2}, queue.Outcome{Error: queue.ErrorCancelled, Cancelled: true}),
			nil, db.EventState{ConsecutiveFailures: 2}},
		{"a job given up after interruptions is a failure",
			attempt(db.EventState{}, queue.Outcome{Error: queue.ErrorInterruptedTooOften, Reason: "interrupted"}),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "interrupted", queue.ErrorInterruptedTooOften, 1), 1)},
			db.EventState{ConsecutiveFailures: 1}},

		// Whether the device answered, learnt by an attempt.
		{"attempt finds it unreachable: failed, then unreachable (no backup named)",
			attempt(db.EventState{}, queue.Outcome{Error: "dial tcp: refused", Reason: "connect", Reachable: &no}),
			[]db.DecidedEvent{
				reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "connect", "dial tcp: refused", 1), 1),
				reached(failure(ev(outbox.EventDeviceUnreachable, queue.TriggerSchedule, ""), "connect", "dial tcp: refused", 1), 1)},
			db.EventState{ConsecutiveFailures: 1, Unreachable: 1}},
		{"attempt reaches it again: recovered, then reachable",
			attempt(streak, queue.Outcome{Success: true, Reachable: &yes}),
			[]db.DecidedEvent{
				wasReached(failure(ev(outbox.EventBackupRecovered, queue.TriggerSchedule, "b2"), "", "", 2), 2),
				wasReached(failure(ev(outbox.EventDeviceReachable, queue.TriggerSchedule, ""), "", "", 3), 3)},
			db.EventState{StaleNotifiedFor: "p"}},
		{"reachable as before: nothing", attempt(db.EventState{}, queue.Outcome{Success: true, Reachable: &yes}), nil, db.EventState{}},
		{"an attempt that never got to the port leaves the unreachable streak",
			attempt(db.EventState{Unreachable: 2}, queue.Outcome{Error: "no credential", Reason: "config"}),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "config", "no credential", 1), 1)},
			db.EventState{ConsecutiveFailures: 1, Unreachable: 2}},

		// Host keys.
		{"a host key not recorded yet: failed, then hostkey.changed",
			attempt(db.EventState{}, queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("key-3")}),
			[]db.DecidedEvent{
				reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "host_key_changed", "host key changed", 1), 1),
				plain(ev(outbox.EventHostKeyChanged, queue.TriggerSchedule, "b2"))},
			db.EventState{ConsecutiveFailures: 1}},
		{"the changed key already recorded: no second hostkey.changed",
			attempt(db.EventState{ConsecutiveFailures: 1}, queue.Outcome{Error: "host key changed", Reason: "host_key_changed", PendingHostKey: []byte("key-2")}),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventBackupFailed, queue.TriggerSchedule, "b2"), "host_key_changed", "host key changed", 2), 2)},
			db.EventState{ConsecutiveFailures: 2}},

		// The reachability check.
		{"check: down", check(db.EventState{ConsecutiveFailures: 1}, false),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventDeviceUnreachable, db.TriggerCheck, ""), "connect", "the device did not answer on its port", 1), 1)},
			db.EventState{ConsecutiveFailures: 1, Unreachable: 1}},
		{"check: still down, to the rules whose threshold it reaches now", check(db.EventState{Unreachable: 2}, false),
			[]db.DecidedEvent{reached(failure(ev(outbox.EventDeviceUnreachable, db.TriggerCheck, ""), "connect", "the device did not answer on its port", 3), 3)},
			db.EventState{Unreachable: 3}},
		{"check: up after a streak", check(streak, true),
			[]db.DecidedEvent{wasReached(failure(ev(outbox.EventDeviceReachable, db.TriggerCheck, ""), "", "", 3), 3)},
			db.EventState{ConsecutiveFailures: 2, StaleNotifiedFor: "p"}},
		{"check: still up", check(db.EventState{}, true), nil, db.EventState{}},

		// The stale check.
		{"stale, never backed up", stale(db.EventState{}, db.StaleCheck{CreatedAt: at.Add(-49 * time.Hour), Period: "created"}),
			[]db.DecidedEvent{staleEvent(nil)}, db.EventState{StaleNotifiedFor: "created"}},
		{"stale since its last good backup", stale(db.EventState{StaleNotifiedFor: "older"},
			db.StaleCheck{CreatedAt: at.Add(-900 * time.Hour), LastGoodAt: &lastGood, Period: "good"}),
			[]db.DecidedEvent{staleEvent(&lastGood)}, db.EventState{StaleNotifiedFor: "good"}},
		{"stale period already told", stale(db.EventState{StaleNotifiedFor: "good"},
			db.StaleCheck{CreatedAt: at.Add(-900 * time.Hour), LastGoodAt: &lastGood, Period: "good"}),
			nil, db.EventState{StaleNotifiedFor: "good"}},
		{"not stale yet", stale(db.EventState{}, db.StaleCheck{CreatedAt: at.Add(-47 * time.Hour), Period: "created"}),
			nil, db.EventState{}},
		{"a recent good backup of an old device is not stale", stale(db.EventState{},
			db.StaleCheck{CreatedAt: at.Add(-900 * time.Hour), LastGoodAt: new(at.Add(-time.Hour)), Period: "good"}),
			nil, db.EventState{}},

		// The git mirror's pushes.
		{"push failed", push(db.EventState{ConsecutiveFailures: 1}, db.GitPushEnd{Error: "remote: refused"}),
			[]db.DecidedEvent{reached(pushEvent(outbox.EventGitPushFailed, "remote: refused", 2), 2)},
			db.EventState{ConsecutiveFailures: 2}},
		{"push recovered", push(db.EventState{ConsecutiveFailures: 3}, db.GitPushEnd{OK: true}),
			[]db.DecidedEvent{wasReached(pushEvent(outbox.EventGitPushRecovered, "", 3), 3)}, db.EventState{}},
		{"push worked as before", push(db.EventState{}, db.GitPushEnd{OK: true}), nil, db.EventState{}},

		// A restore's moves: told or not by the state it moved to; the
		// device's streaks are left as they were.
		{"restore requested", restore(pending), []db.DecidedEvent{plain(requested)}, streak},
		{"restore approved", restore(moved(db.RestoreApproved)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreApproved, db.RestoreApproved, false))}, streak},
		{"restore succeeded", restore(moved(db.RestoreSucceeded)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreSucceeded, db.RestoreSucceeded, false))}, streak},
		{"restore failed", restore(moved(db.RestoreFailed)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreFailed, db.RestoreFailed, true))}, streak},
		{"restore rolled back", restore(moved(db.RestoreRolledBack)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreFailed, db.RestoreRolledBack, true))}, streak},
		{"restore's rollback failed", restore(moved(db.RestoreRollbackFailed)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreFailed, db.RestoreRollbackFailed, true))}, streak},
		{"restore interrupted", restore(moved(db.RestoreInterrupted)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreFailed, db.RestoreInterrupted, true))}, streak},
		{"restore rejected", restore(moved(db.RestoreRejected)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreRejected, db.RestoreRejected, false))}, streak},
		{"restore expired", restore(moved(db.RestoreExpired)), []db.DecidedEvent{plain(restoreEvent(outbox.EventRestoreExpired, db.RestoreExpired, false))}, streak},
		{"restore previewing", restore(moved(db.RestorePreviewing)), nil, streak},
		{"restore queued", restore(moved(db.RestoreQueued)), nil, streak},
		{"restore running", restore(moved(db.RestoreRunning)), nil, streak},
		{"restore cancelled", restore(moved(db.RestoreCancelled)), nil, streak},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.Decide(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Events, tc.want) {
				t.Errorf("events\n got  %s\n want %s", show(got.Events), show(tc.want))
			}
			if got.Next != tc.next {
				t.Errorf("next state %+v, want %+v", got.Next, tc.next)
			}
		})
	}
}

// A change set's moves: a draft that became ready asks for approval, a
// ready set rendered again does not ask again, each end is told with
// its counts (targets never started count as skipped), the steps in
// between are not told; the events name no device and never the body.
func TestDecideChangeSets(t *testing.T) {
	at := time.Date(2026, 3, 1, 14, 30, 0, 0, time.FixedZone("CET", 3600))
	bob := "bob"
	stop := "stopped after 2 failed devices"
	set := func(state string) db.ChangeSet {
		return db.ChangeSet{ID: 9, Name: "ntp", Body: "ntp server 192.0.2.1 key S3cret\n", State: state, CreatedByName: "alice",
			DecidedByName: &bob, DecisionNote: "ok", Error: &stop, Targets: 10}
	}
	counts := map[string]int{db.TargetSucceeded: 5, db.TargetFailed: 2, db.TargetSkipped: 1, db.TargetPending: 1,
		db.TargetInterrupted: 0, db.TargetRunning: 1}
	ev := func(kind outbox.EventKind, state string, n *outbox.EventChangeSetCounts, rejected bool) []db.DecidedEvent {
		ec := &outbox.EventChangeSet{ID: 9, Name: "ntp", State: state, CreatedBy: "alice", DecisionNote: "ok", Devices: 10,
			Counts: n, Path: "/change-sets/9"}
		if rejected {
			ec.RejectedBy = "bob"
		} else {
			ec.ApprovedBy = "bob"
		}
		if n != nil {
			ec.Reason = stop
		}
		return []db.DecidedEvent{{Payload: outbox.EventPayload{Kind: kind, At: at.UTC(), Trigger: queue.TriggerPush, ChangeSet: ec}}}
	}
	ended := &outbox.EventChangeSetCounts{Succeeded: 5, Failed: 2, Skipped: 2, Running: 1}
	for _, tc := range []struct {
		name     string
		from, to string
		rejected bool
		want     []db.DecidedEvent
	}{
		{"ready", db.ChangeSetDraft, db.ChangeSetReady, false, ev(outbox.EventPushRequested, db.ChangeSetReady, nil, false)},
		{"rendered again", db.ChangeSetReady, db.ChangeSetReady, false, nil},
		{"render failed", db.ChangeSetDraft, db.ChangeSetDraft, false, nil},
		{"approved", db.ChangeSetReady, db.ChangeSetApproved, false, nil},
		{"running", db.ChangeSetApproved, db.ChangeSetRunning, false, nil},
		{"done", db.ChangeSetRunning, db.ChangeSetDone, false, ev(outbox.EventPushFinished, db.ChangeSetDone, ended, false)},
		{"stopped", db.ChangeSetRunning, db.ChangeSetStopped, false, ev(outbox.EventPushFinished, db.ChangeSetStopped, ended, false)},
		{"cancelled", db.ChangeSetRunning, db.ChangeSetCancelled, false, ev(outbox.EventPushFinished, db.ChangeSetCancelled, ended, false)},
		{"rejected", db.ChangeSetReady, db.ChangeSetCancelled, true, ev(outbox.EventPushFinished, db.ChangeSetCancelled, ended, true)},
		{"expired", "", db.ChangeSetExpired, false, ev(outbox.EventPushFinished, db.ChangeSetExpired, ended, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.Decide(db.EventInput{At: at, Trigger: queue.TriggerPush, Prev: db.EventState{ConsecutiveFailures: 2},
				ChangeSet: &db.ChangeSetMove{Set: set(tc.to), From: tc.from, Rejected: tc.rejected, Counts: counts}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Events, tc.want) {
				t.Errorf("events\n got  %s\n want %s", show(got.Events), show(tc.want))
			}
			if strings.Contains(show(got.Events), "S3cret") {
				t.Errorf("an event holds the body: %s", show(got.Events))
			}
			if got.Next != (db.EventState{ConsecutiveFailures: 2}) {
				t.Errorf("next state %+v; want it as it was", got.Next)
			}
		})
	}
}

// An input that is not exactly one happening is refused, not guessed at.
func TestDecideRefusesAmbiguousInput(t *testing.T) {
	for name, in := range map[string]db.EventInput{
		"nothing":             {At: time.Now()},
		"two":                 {Check: &db.ReachabilityCheck{}, GitPush: &db.GitPushEnd{}},
		"restore and attempt": {Restore: &db.Restore{State: db.RestoreFailed}, Attempt: &db.AttemptEnd{}},
		"change set and push": {ChangeSet: &db.ChangeSetMove{Set: db.ChangeSet{State: db.ChangeSetDone}}, GitPush: &db.GitPushEnd{}},
	} {
		if _, err := policy.Decide(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func show(evs []db.DecidedEvent) string {
	b, _ := json.Marshal(evs)
	return string(b)
}
