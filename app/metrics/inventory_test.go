package metrics

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"backupd/db"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// The inventory sources' figures come from a real store at scrape time:
// sources in every state, their syncs recorded by the store's own
// functions as insync's Syncer records them (ApplyInventorySync for a
// sync that applied, RecordInventorySyncFailure for one that failed).
// The staleness is the failing source's last good sync, not its last
// try, and leaves out the disabled and the on-demand sources, older as
// they are; so does the count of overdue sources.
func TestInventoryMetricsFromStore(t *testing.T) {
	set = vm.NewSet()
	store := dbtest.Open(t)
	ctx := context.Background()
	state := func(ctx context.Context) (State, error) {
		h, err := store.InventoryHealth(ctx, time.Now())
		return State{Inventory: h}, err
	}
	values := func() map[string]float64 {
		t.Helper()
		out := scrape(t, Options{Version: "dev", Commit: "unknown"}, state)
		samples, types := testkit.Exposition(t, out)
		for _, name := range []string{"backupd_inventory_sources", "backupd_inventory_oldest_good_sync_age_seconds",
			"backupd_inventory_sources_overdue"} {
			if types[name] != gauge {
				t.Errorf("%s has TYPE %q, want gauge", name, types[name])
			}
		}
		v := map[string]float64{}
		for _, s := range samples {
			id := s.Name
			if st := s.Labels["state"]; st != "" {
				id += "/" + st
			}
			f, err := strconv.ParseFloat(s.Value, 64)
			if err != nil {
				t.Fatalf("%s: value %q", id, s.Value)
			}
			v[id] = f
		}
		testkit.Promtool(t, out, "check", "metrics")
		return v
	}

	// No source: every state at 0, and nothing is stale.
	empty := values()
	for _, id := range []string{"backupd_inventory_sources/ok", "backupd_inventory_sources/failing",
		"backupd_inventory_sources/never", "backupd_inventory_sources/disabled", "backupd_inventory_oldest_good_sync_age_seconds",
		"backupd_inventory_sources_overdue"} {
		if v, ok := empty[id]; !ok || v != 0 {
			t.Errorf("no source: %s = %v (published %v), want 0", id, v, ok)
		}
	}

	add := func(name string, interval int) db.InventorySource {
		t.Helper()
		src, err := store.CreateInventorySource(ctx, db.InventorySource{Name: name, Kind: db.InventoryHTTP,
			Config: json.RawMessage(`{"url":"https://cmdb.example.net/devices"}`), Enabled: true, IntervalMinutes: interval}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	applied := func(id int64, at time.Time) {
		t.Helper()
		if _, err := store.ApplyInventorySync(ctx, id, db.InventorySync{At: at}); err != nil {
			t.Fatal(err)
		}
	}
	failed := func(id int64, at time.Time) {
		t.Helper()
		if err := store.RecordInventorySyncFailure(ctx, id, at, "the inventory answered 503"); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	applied(add("ok hourly", 60).ID, now.Add(-40*time.Minute))
	applied(add("ok on demand", 0).ID, now.Add(-40*time.Hour))
	failing := add("failing", 60)
	applied(failing.ID, now.Add(-5*time.Hour))
	failed(failing.ID, now.Add(-2*time.Hour))
	failed(failing.ID, now.Add(-time.Hour))
	failedOnDemand := add("failing on demand", 0)
	failed(failedOnDemand.ID, now.Add(-30*time.Hour))
	add("never", 24*60)
	disabled := add("disabled", 60)
	failed(disabled.ID, now.Add(-50*time.Hour))
	if _, err := store.UpdateInventorySource(ctx, disabled.ID, func(src *db.InventorySource) error {
		src.Enabled = false
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}

	got := values()
	for id, want := range map[string]float64{
		"backupd_inventory_sources/ok":       2,
		"backupd_inventory_sources/failing":  2,
		"backupd_inventory_sources/never":    1,
		"backupd_inventory_sources/disabled": 1,
		// The failing hourly source, 5 h out of date (over 2 h 15 min);
		// not the daily one never synced, added a moment ago, nor the
		// disabled or on-demand ones, older as they are.
		"backupd_inventory_sources_overdue": 1,
	} {
		if got[id] != want {
			t.Errorf("%s = %v, want %v", id, got[id], want)
		}
	}
	// 5 h, measured at the scrape a moment later (the store keeps
	// seconds).
	if age := got["backupd_inventory_oldest_good_sync_age_seconds"]; age < 5*3600-1 || age > 5*3600+60 {
		t.Errorf("oldest good sync age %v s, want 5 h (the failing source's last good sync)", age)
	}

	// The failing source applies again: the hourly one that applied 40
	// minutes ago is now the stalest.
	applied(failing.ID, time.Now())
	got = values()
	if got["backupd_inventory_sources/failing"] != 1 || got["backupd_inventory_sources/ok"] != 3 {
		t.Errorf("after the failing source recovered: failing %v, ok %v; want 1, 3",
			got["backupd_inventory_sources/failing"], got["backupd_inventory_sources/ok"])
	}
	if age := got["backupd_inventory_oldest_good_sync_age_seconds"]; age < 40*60-1 || age > 40*60+60 {
		t.Errorf("oldest good sync age %v s, want 40 min (the hourly source's last good sync)", age)
	}
	if n := got["backupd_inventory_sources_overdue"]; n != 0 {
		t.Errorf("after the failing source recovered: %v overdue, want 0", n)
	}
}
