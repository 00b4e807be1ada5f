package queue_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A collector that renews its lease after ExpireLeases listed it as run
// out, but before the lease is ended, keeps its job: the statement that
// ends the lease checks again that it ran out. The two steps of
// ExpireLeases are called apart so that the renewal falls between them.
func TestExpireLeaseSparesARenewedLease(t *testing.T) {
	s := dbtest.Open(t)
	q := ownQueue(t, s, queue.Hooks{})
	ctx := context.Background()
	site, err := s.CreateZone(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	dev := device(t, s, "renewed-1", site.ID)
	enqueueNow(t, q, queue.TriggerManual, dev)
	c := dbtest.Collector(t, s, site.ID, "renewer")
	leased, err := q.LeaseJobs(ctx, c.ID, c.ZoneID, 1, time.Now().Add(-time.Second))
	if err != nil || len(leased) != 1 || leased[0].Owner == nil {
		t.Fatalf("LeaseJobs = %+v, %v", leased, err)
	}
	now := time.Now()
	owners, err := q.ExpiredLeaseOwners(ctx, now)
	if err != nil || !slices.Equal(owners, []string{*leased[0].Owner}) {
		t.Fatalf("expired lease owners = %v, %v; want the lease that ran out", owners, err)
	}
	// The collector's poll renews the lease now.
	if rep, err := q.ExtendLeases(ctx, c.ID, []int64{leased[0].ID}, time.Now().Add(time.Minute)); err != nil || len(rep.Lost) != 0 {
		t.Fatalf("ExtendLeases = %+v, %v", rep, err)
	}
	res, err := q.ExpireLease(ctx, owners[0], now, queue.DefaultMaxInterruptions)
	if err != nil || res.Attempts != 0 {
		t.Fatalf("ExpireLease of a renewed lease = %+v, %v; want nothing ended", res, err)
	}
	js, err := q.GetJobs(ctx, []int64{leased[0].ID})
	if err != nil || len(js) != 1 || js[0].State != queue.JobRunning || js[0].Interruptions != 0 {
		t.Fatalf("job = %+v, %v; want still running, not interrupted", js, err)
	}
	if _, err := q.LeasedClaim(ctx, c.ID, leased[0].ID, leased[0].BackupID); err != nil {
		t.Fatalf("the collector lost its renewed lease: %v", err)
	}
	if b, err := s.GetBackup(ctx, leased[0].BackupID); err != nil || b.FinishedAt != nil {
		t.Fatalf("the attempt = %+v, %v; want still running", b, err)
	}

	// Once the renewed lease runs out in turn, it is ended.
	later := time.Now().Add(2 * time.Minute)
	if res, err := q.ExpireLease(ctx, owners[0], later, queue.DefaultMaxInterruptions); err != nil || res.Attempts != 1 {
		t.Fatalf("ExpireLease after the renewal ran out = %+v, %v; want the attempt ended", res, err)
	}
	if rep, err := q.ExtendLeases(ctx, c.ID, []int64{leased[0].ID}, time.Now().Add(time.Minute)); err != nil || !slices.Equal(rep.Lost, []int64{leased[0].ID}) {
		t.Fatalf("a renewal after the lease ended = %+v, %v; want the job lost", rep, err)
	}
}
