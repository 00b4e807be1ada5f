package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// Without an event policy the store refuses to record what would cause
// events, rather than record it without them; nothing of it is kept.
func TestNoEventPolicyFailsLoudly(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	s.SetEventPolicy(nil)

	jobs := enqueueNow(t, s, queue.TriggerSchedule, dev)
	claims, err := s.ClaimJobs(ctx, "w", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	o := queue.Outcome{Success: true, First: true, Text: "hostname r1\n", FinishedAt: time.Now()}
	if err := s.FinishJob(ctx, claims[0], o); !errors.Is(err, db.ErrNoEventPolicy) {
		t.Fatalf("FinishJob without a policy: %v, want ErrNoEventPolicy", err)
	}
	if b, err := s.GetBackup(ctx, claims[0].BackupID); err != nil || b.FinishedAt != nil {
		t.Fatalf("the attempt was recorded without its events: %+v, %v", b, err)
	}
	if err := s.RecordReachability(ctx, dev, false, time.Now()); !errors.Is(err, db.ErrNoEventPolicy) {
		t.Fatalf("RecordReachability without a policy: %v", err)
	}
	if _, err := s.RecordGitPush(ctx, db.GitPushStatus{At: time.Now(), Error: "refused"}, "ssh://git.example.net/c.git", 1); !errors.Is(err, db.ErrNoEventPolicy) {
		t.Fatalf("RecordGitPush without a policy: %v", err)
	}
	if _, err := s.RecordStaleEvents(ctx, time.Now().Add(100*time.Hour), time.Hour); !errors.Is(err, db.ErrNoEventPolicy) {
		t.Fatalf("RecordStaleEvents without a policy: %v", err)
	}
	if n := countRows(t, s, "outbox"); n != 0 {
		t.Fatalf("outbox holds %d events", n)
	}
}

// The store writes what the policy decides, and nothing of its own: the
// kind, the payload, the threshold test against each rule, and the state
// the policy is handed the next time.
func TestStoreRecordsWhatThePolicyDecides(t *testing.T) {
	s := openStore(t)
	c2, c3 := dbtest.Channel(t, s, "two"), dbtest.Channel(t, s, "three")
	mkRule(t, s, db.NotificationRule{Name: "at two", Events: []outbox.EventKind{outbox.EventBackupStale}, ChannelIDs: []int64{c2}, FailureThreshold: 2})
	mkRule(t, s, db.NotificationRule{Name: "at three", Events: []outbox.EventKind{outbox.EventBackupStale}, ChannelIDs: []int64{c3}, FailureThreshold: 3})
	dev := insertDevice(t, s, "r1", nil, nil, nil)

	var seen []db.EventState
	s.SetEventPolicy(func(in db.EventInput) (db.EventDecision, error) {
		seen = append(seen, in.Prev)
		if in.Attempt == nil || in.Device.ID != dev || in.Device.Name != "r1" {
			t.Errorf("policy asked about %+v", in)
		}
		p := outbox.EventPayload{Kind: outbox.EventBackupStale, At: in.At, Trigger: "policy's own", DeviceID: in.Device.ID,
			BackupID: in.Attempt.BackupID}
		return db.EventDecision{
			Events: []db.DecidedEvent{{Payload: p, Threshold: db.ThresholdReached, Count: 2, WithPreviousGood: true}},
			Next:   db.EventState{ConsecutiveFailures: in.Prev.ConsecutiveFailures + 40, Unreachable: 1},
		}, nil
	})
	first := runAttempt(t, s, dev, queue.Outcome{Success: true, First: true, Text: "v1\n"})
	second := runAttempt(t, s, dev, queue.Outcome{Success: true, Text: "v1\n"})
	if len(seen) != 2 || seen[0] != (db.EventState{}) || seen[1] != (db.EventState{ConsecutiveFailures: 40, Unreachable: 1}) {
		t.Fatalf("states handed to the policy: %+v", seen)
	}
	evs, _ := eventsAfter(t, s, 0)
	if len(evs) != 2 {
		t.Fatalf("%d deliveries, want one per attempt, to the rule whose threshold is 2", len(evs))
	}
	for i, e := range evs {
		if e.kind != outbox.EventBackupStale || e.channel != c2 || e.payload.Trigger != "policy's own" {
			t.Fatalf("delivery %d: %+v", i, e)
		}
	}
	if evs[0].payload.PreviousBackupID != "" || evs[1].payload.PreviousBackupID != first.BackupID || evs[1].payload.BackupID != second.BackupID {
		t.Fatalf("previous versions named: %q, %q (want none, then %s)", evs[0].payload.PreviousBackupID, evs[1].payload.PreviousBackupID, first.BackupID)
	}
}
