package insync

import (
	"context"
	"encoding/json"
	"testing"

	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

// BenchmarkSyncNetBox20k syncs a NetBox of 20,000 devices (netbox20k)
// into a real store: "first" creates them all (a fresh store each
// round, made before the clock starts), "unchanged" syncs the same
// source again and must write no device row and no audit entry. The
// issue asks for ≤ 10 s for a 20,000-device source.
func BenchmarkSyncNetBox20k(b *testing.B) {
	const total = 20000
	url, _ := netbox20k(b, total)
	sealer, err := secret.New(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	setup := func() (*db.Store, int64) {
		s := dbtest.Open(b)
		raw, _ := json.Marshal(SourceConfig{NetBox: &NetBoxConfig{URL: url, GroupFrom: []string{"site", "role"}}})
		src, err := s.CreateInventorySource(ctx, db.InventorySource{Name: "NetBox", Kind: db.InventoryNetBox, Config: raw,
			Token: sealer.Seal(tokenV1, secret.PurposeInventoryToken), Enabled: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return s, src.ID
	}
	run := func(s *db.Store, id int64) Report {
		rep, err := Syncer{Store: s, Sealer: sealer}.Sync(ctx, id, false, db.AuditEntry{Username: "bench", Interface: "cli"})
		if err != nil {
			b.Fatal(err)
		}
		return rep
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s, id := setup()
			b.StartTimer()
			if c := run(s, id).Counts(); c["create"] != total {
				b.Fatalf("first sync: %v", c)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		s, id := setup()
		run(s, id)
		_, audits, _ := s.ListAudit(ctx, 1, 0)
		stamp := lastUpdate(b, s)
		for b.Loop() {
			if c := run(s, id).Counts(); c["leave"] != total || len(c) != 1 {
				b.Fatalf("unchanged sync: %v", c)
			}
		}
		b.StopTimer()
		if _, n, _ := s.ListAudit(ctx, 1, 0); n != audits {
			b.Errorf("an unchanged sync wrote %d audit entries", n-audits)
		}
		if got := lastUpdate(b, s); got != stamp {
			b.Errorf("an unchanged sync wrote device rows (updated_at %s, was %s)", got, stamp)
		}
	})
}

// lastUpdate is the newest updated_at of the store's devices.
func lastUpdate(b *testing.B, s *db.Store) string {
	b.Helper()
	list, _, err := s.ListDevices(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 100000, 0)
	if err != nil {
		b.Fatal(err)
	}
	newest := ""
	for _, d := range list {
		newest = max(newest, d.UpdatedAt)
	}
	return newest
}
