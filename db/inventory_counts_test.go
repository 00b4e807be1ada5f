package db_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"backupd/db"
)

// The inventory sources are counted by state, every state named; the
// oldest good sync is read among the enabled scheduled sources only,
// a failed sync does not move it, and a source that never applied
// counts from when it was added.
func TestInventoryHealth(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	health := func() db.InventoryHealth {
		t.Helper()
		h, err := s.InventoryHealth(ctx, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	zero := map[string]int{db.InventorySourceOK: 0, db.InventorySourceFailing: 0, db.InventorySourceNever: 0, db.InventorySourceDisabled: 0}
	if h := health(); !maps.Equal(h.Sources, zero) || h.OldestGood != nil {
		t.Fatalf("no sources: %v, oldest good %v", h.Sources, h.OldestGood)
	}

	// A scheduled source that never synced counts from when it was added
	// (stored to the second).
	before := time.Now().UTC().Truncate(time.Second)
	newInventorySource(t, s, "never")
	after := time.Now().UTC()
	h := health()
	if h.OldestGood == nil || h.OldestGood.Before(before) || h.OldestGood.After(after) {
		t.Errorf("a never-synced source: oldest good %v, want its creation (%v .. %v)", h.OldestGood, before, after)
	}

	now := time.Now().UTC().Truncate(time.Second)
	applied := func(id int64, at time.Time) { t.Helper(); syncApplied(t, s, id, at) }
	failed := func(id int64, at time.Time) { t.Helper(); syncFailed(t, s, id, at) }
	ok := newInventorySource(t, s, "ok")
	applied(ok.ID, now.Add(-3*time.Hour))
	// Failing: applied 5 h ago, failed since; its last good sync stays.
	failing := newInventorySource(t, s, "failing")
	applied(failing.ID, now.Add(-5*time.Hour))
	failed(failing.ID, now.Add(-2*time.Hour))
	failed(failing.ID, now.Add(-time.Hour))
	// Recovered: failed, then applied; its last good sync moves on.
	recovered := newInventorySource(t, s, "recovered")
	failed(recovered.ID, now.Add(-4*time.Hour))
	applied(recovered.ID, now.Add(-30*time.Minute))
	// Neither a disabled source nor an on-demand one is scheduled: their
	// older good syncs are left out of the oldest.
	disabled := newInventorySource(t, s, "disabled")
	applied(disabled.ID, now.Add(-50*time.Hour))
	failed(disabled.ID, now.Add(-49*time.Hour))
	if _, err := s.UpdateInventorySource(ctx, disabled.ID, func(src *db.InventorySource) error {
		src.Enabled = false
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	onDemand, err := s.CreateInventorySource(ctx, db.InventorySource{Name: "on demand", Kind: db.InventoryHTTP,
		Config: json.RawMessage(`{}`), Enabled: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	failed(onDemand.ID, now.Add(-30*time.Hour))

	h = health()
	want := map[string]int{db.InventorySourceOK: 2, db.InventorySourceFailing: 2, db.InventorySourceNever: 1, db.InventorySourceDisabled: 1}
	if !maps.Equal(h.Sources, want) {
		t.Errorf("sources %v, want %v", h.Sources, want)
	}
	if wantGood := now.Add(-5 * time.Hour); h.OldestGood == nil || !h.OldestGood.Equal(wantGood) {
		t.Errorf("oldest good sync %v, want the failing source's last good one, %v", h.OldestGood, wantGood)
	}
}

// A scheduled source is overdue once its last good sync (never synced:
// its creation) is more than 2 × interval + 15 minutes old, whatever its
// interval: a weekly source 3 days out of date is not, an hourly one 3
// hours out of date is; disabled and on-demand sources never are.
func TestInventoryHealthOverdue(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	add := func(name string, interval int) db.InventorySource {
		t.Helper()
		src, err := s.CreateInventorySource(ctx, db.InventorySource{Name: name, Kind: db.InventoryHTTP,
			Config: json.RawMessage(`{}`), Enabled: true, IntervalMinutes: interval}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	overdue := func(now time.Time) int {
		t.Helper()
		h, err := s.InventoryHealth(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return h.Overdue
	}
	applied := func(id int64, at time.Time) { t.Helper(); syncApplied(t, s, id, at) }
	failed := func(id int64, at time.Time) { t.Helper(); syncFailed(t, s, id, at) }

	// Never synced: counted from its creation (stored to the second),
	// 2 h 15 min for an hourly source.
	created := time.Now().UTC().Truncate(time.Second)
	never := add("never hourly", 60)
	if never.LastGoodSyncAt != nil {
		t.Errorf("a new source: last good sync %q, want none", *never.LastGoodSyncAt)
	}
	if n := overdue(created.Add(2*time.Hour + 14*time.Minute)); n != 0 {
		t.Errorf("a never-synced hourly source 2 h 14 min after its creation: %d overdue, want 0", n)
	}
	if n := overdue(created.Add(2*time.Hour + 17*time.Minute)); n != 1 {
		t.Errorf("a never-synced hourly source 2 h 17 min after its creation: %d overdue, want 1", n)
	}
	applied(never.ID, created)

	now := created.Add(24 * time.Hour)
	// Weekly, applied 3 days ago and failed since: two weeks and 15
	// minutes are its due.
	weekly := add("weekly", db.MaxInventoryInterval)
	applied(weekly.ID, now.Add(-72*time.Hour))
	failed(weekly.ID, now.Add(-time.Hour))
	// Hourly, applied 3 h ago and failed twice since.
	hourly := add("hourly", 60)
	applied(hourly.ID, now.Add(-3*time.Hour))
	failed(hourly.ID, now.Add(-2*time.Hour))
	failed(hourly.ID, now.Add(-time.Hour))
	// The source read says both: its last try, and its last good sync.
	if got, err := s.InventorySource(ctx, hourly.ID); err != nil || got.LastGoodSyncAt == nil || got.LastSyncAt == nil ||
		*got.LastGoodSyncAt != now.Add(-3*time.Hour).Format(db.TimeFormat) || *got.LastSyncAt != now.Add(-time.Hour).Format(db.TimeFormat) {
		t.Errorf("the failing hourly source: last good sync %v, last sync %v (%v); want 3 h and 1 h before now", got.LastGoodSyncAt, got.LastSyncAt, err)
	}
	// Every 5 minutes, applied 24 minutes ago: one minute short of 25.
	fast := add("every 5 minutes", 5)
	applied(fast.ID, now.Add(-24*time.Minute))
	// Disabled and on demand, out of date for days: never overdue.
	disabled := add("disabled", 60)
	applied(disabled.ID, now.Add(-72*time.Hour))
	if _, err := s.UpdateInventorySource(ctx, disabled.ID, func(src *db.InventorySource) error {
		src.Enabled = false
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	onDemand := add("on demand", 0)
	failed(onDemand.ID, now.Add(-72*time.Hour))

	// The first hourly source applied 24 h before now: overdue with the
	// 3-hour one.
	if n := overdue(now); n != 2 {
		t.Errorf("at now: %d overdue, want 2 (the two hourly sources, not the weekly one 3 days out of date)", n)
	}
	// Two minutes on, the 5-minute source (26 min out of date) is too.
	if n := overdue(now.Add(2 * time.Minute)); n != 3 {
		t.Errorf("two minutes on: %d overdue, want 3 (the 5-minute source too)", n)
	}
	// The hourly ones apply again: only the 5-minute one stays overdue.
	applied(never.ID, now)
	applied(hourly.ID, now)
	if n := overdue(now.Add(2 * time.Minute)); n != 1 {
		t.Errorf("after the hourly sources applied: %d overdue, want 1", n)
	}
	// Two weeks and 16 minutes after its last good sync, the weekly
	// source is overdue at last (and the others with it).
	if n := overdue(now.Add(-72*time.Hour + 14*24*time.Hour + 16*time.Minute)); n != 4 {
		t.Errorf("two weeks and 16 min after the weekly source's good sync: %d overdue, want 4", n)
	}
}

// syncApplied records a sync of source id that applied at at, the way
// the Syncer does.
func syncApplied(t *testing.T, s *db.Store, id int64, at time.Time) {
	t.Helper()
	if _, err := s.ApplyInventorySync(context.Background(), id, db.InventorySync{At: at}); err != nil {
		t.Fatal(err)
	}
}

// syncFailed records a failed sync of source id at at, the way the
// Syncer does.
func syncFailed(t *testing.T, s *db.Store, id int64, at time.Time) {
	t.Helper()
	if err := s.RecordInventorySyncFailure(context.Background(), id, at, "the inventory answered 503"); err != nil {
		t.Fatal(err)
	}
}
