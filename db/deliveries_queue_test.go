package db_test

import (
	"context"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// The queue's state follows its deliveries: new ones, leased ones, and
// a failing one's retry; sent ones leave it.
func TestDeliveryQueueState(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	q, err := s.DeliveryQueueState(ctx)
	if err != nil || q.Waiting != 0 || q.OldestPending != nil || q.NextRetry != nil || q.LeaseEnds != nil || q.OldestWaiting != nil {
		t.Fatalf("empty queue: %+v, %v", q, err)
	}
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}})
	recordEvents(t, s, dev, 2) // a first backup and two changes
	q, _ = s.DeliveryQueueState(ctx)
	if q.Waiting != 3 || q.OldestPending == nil || q.OldestWaiting == nil || q.NextRetry != nil || q.LeaseEnds != nil {
		t.Fatalf("three new: %+v", q)
	}
	now := time.Now()
	got, err := s.ClaimDeliveries(ctx, now, 3, "w")
	if err != nil || len(got) != 3 {
		t.Fatal(len(got), err)
	}
	q, _ = s.DeliveryQueueState(ctx)
	if q.Waiting != 3 || q.OldestPending != nil || q.LeaseEnds == nil || q.OldestWaiting == nil {
		t.Fatalf("all leased: %+v", q)
	}
	retry := now.Add(time.Minute)
	if _, err := s.MarkFailed(ctx, "w", []int64{got[0].ID}, outbox.DeliveryFailure{Status: "500", At: now, RetryAt: retry}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDelivered(ctx, []int64{got[1].ID, got[2].ID}, "200", now); err != nil {
		t.Fatal(err)
	}
	q, _ = s.DeliveryQueueState(ctx)
	if q.Waiting != 1 || q.LeaseEnds != nil || q.NextRetry == nil || !q.NextRetry.Equal(retry.UTC().Truncate(time.Millisecond)) {
		t.Fatalf("one failing: %+v", q)
	}
}
