package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

// syncBenchDevices is the size of the source the issue asks to sync in
// at most 10 s.
const syncBenchDevices = 20000

// syncBenchCreates are the creates of a source of n devices in 40 sites
// of 5 regions.
func syncBenchCreates(n int) []db.InventoryChange {
	out := make([]db.InventoryChange, n)
	for i := range out {
		out[i] = db.InventoryChange{Kind: db.InventoryCreate, Key: fmt.Sprint(i + 1), Device: db.InventoryDevice{
			Name: fmt.Sprintf("sw-%05d", i), Host: fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255), Port: 22,
			Platform: "cisco_ios", LoginMethod: "ssh",
			GroupPath: []string{fmt.Sprintf("region-%d", i%5), fmt.Sprintf("site-%d-%d", i%5, i%40)}}}
	}
	return out
}

// BenchmarkInventorySyncCreate applies a first sync of a 20,000-device
// source: every device created, with its groups and audit entries, in
// one transaction.
func BenchmarkInventorySyncCreate(b *testing.B) {
	ctx := context.Background()
	changes := syncBenchCreates(syncBenchDevices)
	for b.Loop() {
		b.StopTimer()
		s := dbtest.Open(b)
		src := newInventorySource(b, s, "NetBox")
		b.StartTimer()
		res, err := s.ApplyInventorySync(ctx, src.ID, db.InventorySync{Changes: changes, At: time.Now(), By: syncBy})
		if err != nil {
			b.Fatal(err)
		}
		if res.Created != syncBenchDevices {
			b.Fatalf("created %d", res.Created)
		}
	}
}

// BenchmarkInventorySyncUnchanged is the store's part of a second sync
// of the same source that finds nothing changed: reading the devices the
// source owns and an apply with no change. It checks that the apply
// wrote no device and no audit entry.
func BenchmarkInventorySyncUnchanged(b *testing.B) {
	ctx := context.Background()
	s := dbtest.Open(b)
	src := newInventorySource(b, s, "NetBox")
	if _, err := s.ApplyInventorySync(ctx, src.ID, db.InventorySync{Changes: syncBenchCreates(syncBenchDevices), At: time.Now(), By: syncBy}); err != nil {
		b.Fatal(err)
	}
	fingerprint := func() string {
		var n, audit int
		var latest string
		if err := s.Reader().QueryRow(`SELECT COUNT(*), MAX(updated_at) FROM devices`).Scan(&n, &latest); err != nil {
			b.Fatal(err)
		}
		if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM audit_log`).Scan(&audit); err != nil {
			b.Fatal(err)
		}
		return fmt.Sprint(n, latest, audit)
	}
	before := fingerprint()
	b.ResetTimer()
	for b.Loop() {
		synced, err := s.SyncedDevices(ctx, src.ID)
		if err != nil || len(synced) != syncBenchDevices {
			b.Fatalf("synced %d, %v", len(synced), err)
		}
		res, err := s.ApplyInventorySync(ctx, src.ID, db.InventorySync{At: time.Now().Add(time.Hour), By: syncBy})
		if err != nil {
			b.Fatal(err)
		}
		if res.Counts()["created"]+res.Updated+res.Disabled+res.Enabled+res.Claimed+len(res.Skipped) != 0 {
			b.Fatalf("an unchanged sync did %+v", res)
		}
	}
	b.StopTimer()
	if after := fingerprint(); after != before {
		b.Fatalf("an unchanged sync wrote: %s, was %s", after, before)
	}
}
