package insync_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"backupd/app/insync"
	"backupd/db"
	"backupd/internal/dbtest"
)

// schedFixture is a store with inventory sources, a fake clock and a
// Sync that records its calls and ends each sync as a real one does:
// the sources named in fail record a failure, those in silent return
// an error without recording anything, the others apply.
type schedFixture struct {
	s      *db.Store
	now    time.Time
	calls  []string
	names  map[int64]string
	fail   map[string]bool
	silent map[string]bool
	sched  *insync.Scheduler
}

func newSchedFixture(t *testing.T) *schedFixture {
	f := &schedFixture{s: dbtest.Open(t), now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), names: map[int64]string{},
		fail: map[string]bool{}, silent: map[string]bool{}}
	f.sched = &insync.Scheduler{Store: f.s, Now: func() time.Time { return f.now }, Sync: func(ctx context.Context, id int64) error {
		name := f.names[id]
		f.calls = append(f.calls, name)
		switch {
		case f.silent[name]:
			return errors.New("the sync could not start")
		case f.fail[name]:
			return f.s.RecordInventorySyncFailure(ctx, id, f.now, "NetBox answered HTTP 503")
		}
		_, err := f.s.ApplyInventorySync(ctx, id, db.InventorySync{At: f.now, By: db.AuditEntry{Username: "inventory", Interface: "schedule"}})
		return err
	}}
	return f
}

func (f *schedFixture) source(t *testing.T, name string, interval int, enabled bool) int64 {
	t.Helper()
	src, err := f.s.CreateInventorySource(context.Background(), db.InventorySource{Name: name, Kind: db.InventoryNetBox,
		Config: json.RawMessage(`{}`), Enabled: enabled, IntervalMinutes: interval}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.names[src.ID] = name
	return src.ID
}

// tick runs one Tick at f.now+offset and checks the sources it synced.
func (f *schedFixture) tick(t *testing.T, at time.Duration, want ...string) {
	t.Helper()
	f.now = f.now.Add(at)
	f.calls = nil
	n, err := f.sched.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, want) || n != len(want) {
		t.Fatalf("tick at %s synced %v (%d); want %v", f.now.Format("15:04"), f.calls, n, want)
	}
	f.now = f.now.Add(-at)
}

// Which sources a tick syncs: a never synced one at once; one synced
// less than its interval ago not yet; one whose interval is 0 or that is
// disabled never; one whose sync failed (recorded, or not even that)
// again only an interval later, not at every tick.
func TestSchedulerSyncsWhatIsDue(t *testing.T) {
	f := newSchedFixture(t)
	f.source(t, "never", 60, true)
	recent := f.source(t, "recent", 60, true)
	f.source(t, "on-demand", 0, true)
	f.source(t, "disabled", 60, false)
	f.source(t, "failing", 60, true)
	f.source(t, "silent", 60, true)
	f.fail["failing"], f.silent["silent"] = true, true
	if _, err := f.s.ApplyInventorySync(context.Background(), recent, db.InventorySync{At: f.now.Add(-30 * time.Minute)}); err != nil {
		t.Fatal(err)
	}

	f.tick(t, 0, "never", "failing", "silent")
	f.tick(t, 0)
	f.tick(t, 29*time.Minute)
	f.tick(t, 30*time.Minute, "recent")
	f.now = f.now.Add(30 * time.Minute) // recent synced at 10:30
	f.tick(t, 29*time.Minute)
	f.tick(t, 30*time.Minute, "never", "failing", "silent")
	f.tick(t, 59*time.Minute)
	f.tick(t, 60*time.Minute, "recent")
	f.tick(t, 90*time.Minute, "never", "failing", "silent")
	src, err := f.s.InventorySource(context.Background(), recent)
	if err != nil || src.LastSyncAt == nil || *src.LastSyncAt != "2026-03-01T11:30:00" {
		t.Fatalf("recent: %v, %v", *src.LastSyncAt, err)
	}
}

// A tick syncs at most PerTick sources; the rest, still due, go at the
// next tick.
func TestSchedulerTickIsBounded(t *testing.T) {
	f := newSchedFixture(t)
	f.sched.PerTick = 2
	for _, n := range []string{"a", "b", "c"} {
		f.source(t, n, 60, true)
	}
	f.tick(t, 0, "a", "b")
	f.tick(t, 0, "c")
	f.tick(t, 0)
}

// Run ticks until its context ends.
func TestSchedulerRunStops(t *testing.T) {
	f := newSchedFixture(t)
	f.source(t, "a", 60, true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.sched.Run(ctx, time.Second) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		src, err := f.s.InventorySource(context.Background(), 1)
		if err == nil && src.LastSyncAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not sync the due source")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}
