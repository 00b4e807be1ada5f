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
		h, err := s.InventoryHealth(ctx)
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
	applied := func(id int64, at time.Time) {
		t.Helper()
		if _, err := s.ApplyInventorySync(ctx, id, db.InventorySync{At: at}); err != nil {
			t.Fatal(err)
		}
	}
	failed := func(id int64, at time.Time) {
		t.Helper()
		if err := s.RecordInventorySyncFailure(ctx, id, at, "NetBox answered 503"); err != nil {
			t.Fatal(err)
		}
	}
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
