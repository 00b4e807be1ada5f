package seed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"backupd/app/collect/driver"
	"backupd/db"
	"backupd/db/seed"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
)

func TestSeed(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	opt := seed.Options{Devices: 50, BackupsPerDevice: 20, RootGroups: 3, ChildGroups: 4, Snapshots: 12, Now: now, RandomSeed: 7}
	if err := s.Seed(ctx, opt); err != nil {
		t.Fatalf("Seed: %v", err)
	}

	count := func(query string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := dbtest.Peek(t, s).QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	for _, c := range []struct {
		query string
		args  []any
		want  int64
	}{
		{`SELECT COUNT(*) FROM device_groups`, nil, 3 + 3*4},
		{`SELECT COUNT(*) FROM device_groups WHERE parent_id IS NOT NULL AND path <> (SELECT p.path FROM device_groups p WHERE p.id = device_groups.parent_id) || id || '/'`, nil, 0},
		{`SELECT COUNT(*) FROM credentials`, nil, 1},
		{`SELECT COUNT(*) FROM devices`, nil, 50},
		{`SELECT COUNT(*) FROM backups`, nil, 50 * 20},
		{`SELECT COUNT(*) FROM snapshots`, nil, 12},
		{`SELECT COUNT(DISTINCT device_id) FROM backups`, nil, 50},
		{`SELECT COUNT(*) FROM backups WHERE success = 1 AND (snapshot_hash IS NULL OR error_message IS NOT NULL OR bytes IS NULL)`, nil, 0},
		{`SELECT COUNT(*) FROM backups WHERE success = 0 AND (snapshot_hash IS NOT NULL OR error_message IS NULL)`, nil, 0},
		{`SELECT COUNT(*) FROM backups WHERE finished_at < started_at OR started_at > ? OR started_at < ?`,
			[]any{now.Format(db.BackupTimeFormat), now.AddDate(-1, 0, -1).Format(db.BackupTimeFormat)}, 0},
		{`SELECT COUNT(*) FROM backups WHERE trigger <> 'schedule'`, nil, 0},
		// Every device's first successful backup is its first backup, not a
		// change; its last change is its newest changed backup.
		{`SELECT COUNT(*) FROM devices d WHERE 1 <> (SELECT COUNT(*) FROM backups b WHERE b.device_id = d.id AND b.first_backup = 1)`, nil, 0},
		{`SELECT COUNT(*) FROM backups b WHERE b.first_backup = 1 AND (b.changed = 1 OR EXISTS (SELECT 1 FROM backups o
			WHERE o.device_id = b.device_id AND o.success = 1 AND o.started_at < b.started_at))`, nil, 0},
		{`SELECT COUNT(*) FROM devices d WHERE d.last_changed_at IS DISTINCT FROM
			(SELECT substr(MAX(b.started_at), 1, 19) FROM backups b WHERE b.device_id = d.id AND b.changed = 1)`, nil, 0},
		{`SELECT COUNT(*) FROM devices d WHERE d.last_changed_at IS NOT NULL`, nil, -1},
		{`SELECT COUNT(*) FROM devices d WHERE d.last_good_backup_at IS DISTINCT FROM
			(SELECT MAX(b.started_at) FROM backups b WHERE b.device_id = d.id AND b.success = 1)`, nil, 0},
	} {
		if got := count(c.query, c.args...); c.want < 0 && got == 0 {
			t.Errorf("%s = 0, want some", c.query)
		} else if c.want >= 0 && got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
	failed := count(`SELECT COUNT(*) FROM backups WHERE success = 0`)
	if failed == 0 || failed > 150 {
		t.Errorf("%d of 1000 backups failed, want about 5%%", failed)
	}
	if n := count(`SELECT COUNT(DISTINCT platform) FROM devices`); n < 5 {
		t.Errorf("%d distinct platforms, want a mix", n)
	}
	if n := count(`SELECT COUNT(*) FROM devices WHERE enabled = 0`); n == 0 || n == 50 {
		t.Errorf("%d of 50 devices disabled, want a mix", n)
	}

	// The trigger-kept counters equal what the tables hold.
	counters := map[string]string{
		"backups_total":         `SELECT COUNT(*) FROM backups`,
		"backups_succeeded":     `SELECT COUNT(*) FROM backups WHERE success = 1`,
		"backups_failed":        `SELECT COUNT(*) FROM backups WHERE success = 0 AND finished_at IS NOT NULL`,
		"snapshots":             `SELECT COUNT(*) FROM snapshots`,
		"snapshot_bytes":        `SELECT SUM(size) FROM snapshots`,
		"snapshot_stored_bytes": `SELECT SUM(stored_size) FROM snapshots`,
	}
	for name, query := range counters {
		if got, want := count(`SELECT value FROM counters WHERE name = ?`, name), count(query); got != want {
			t.Errorf("counter %s = %d, tables say %d", name, got, want)
		}
	}
	st, err := s.Stats(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.DevicesTotal != 50 || st.BackupsTotal != 1000 || st.BackupsSucceeded+st.BackupsFailed != 1000 || st.Groups != 15 {
		t.Errorf("stats = %+v", st)
	}

	devices, total, err := s.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{}, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 50 || len(devices) != 50 {
		t.Fatalf("ListDevices: %d of %d, want 50", len(devices), total)
	}
	texts := map[string]bool{}
	for _, d := range devices {
		history, total, err := s.ListBackups(ctx, d.ID, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if total != 20 || len(history) != 20 {
			t.Fatalf("device %d: %d of %d backups, want 20", d.ID, len(history), total)
		}
		for i := 1; i < len(history); i++ {
			if !history[i-1].StartedAt.After(history[i].StartedAt) {
				t.Errorf("device %d: history not newest first at %d: %v then %v", d.ID, i, history[i-1].StartedAt, history[i].StartedAt)
			}
		}
		newest := history[0]
		if d.LastBackupAt == nil || *d.LastBackupAt != newest.StartedAt.Format(db.TimeFormat) {
			t.Errorf("device %d: last_backup_at %v, newest backup started %v", d.ID, d.LastBackupAt, newest.StartedAt)
		}
		wantStatus := db.StatusUnreachable
		if newest.Success {
			wantStatus = db.StatusReachable
		}
		if d.LastBackupSuccess == nil || *d.LastBackupSuccess != newest.Success || d.Status != wantStatus {
			t.Errorf("device %d: status %s, last_backup_success %v; newest backup success %v", d.ID, d.Status, d.LastBackupSuccess, newest.Success)
		}
		for _, b := range history {
			if b.SnapshotHash == nil || texts[*b.SnapshotHash] {
				continue
			}
			text, err := s.SnapshotText(ctx, *b.SnapshotHash)
			if err != nil {
				t.Fatalf("snapshot %s: %v", *b.SnapshotHash, err)
			}
			if snapstore.Hash(text) != *b.SnapshotHash || b.Bytes == nil || int64(len(text)) != *b.Bytes {
				t.Errorf("backup %s: snapshot text does not match its hash or size", b.ID)
			}
			if len(text) < 20_000 || len(text) > 61_000 {
				t.Errorf("snapshot %s is %d bytes, want 20-60 KB", *b.SnapshotHash, len(text))
			}
			texts[*b.SnapshotHash] = true
		}
	}
	if len(texts) < 2 {
		t.Errorf("successful backups use %d distinct snapshots, want several", len(texts))
	}

	if err := s.Seed(ctx, opt); !errors.Is(err, seed.ErrNotEmpty) {
		t.Errorf("second Seed: %v, want ErrNotEmpty", err)
	}
	// A device added after seeding gets an id of its own.
	d, err := s.CreateDevice(ctx, db.Device{Name: "after-seed", Host: "192.0.2.1", Port: 22,
		Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil || d.ID <= count(`SELECT MAX(id) FROM devices WHERE name <> 'after-seed'`) {
		t.Errorf("device created after seeding: id %d, %v; want an id after the seeded ones", d.ID, err)
	}
}

// TestSeedDeterministic checks that the same options give the same rows,
// so that a seeded database can be cached and compared.
func TestSeedDeterministic(t *testing.T) {
	ctx := context.Background()
	opt := seed.Options{Devices: 5, BackupsPerDevice: 4, Snapshots: 3, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), RandomSeed: 1}
	var ids [2][]string
	for i := range ids {
		s := dbtest.Open(t)
		if err := s.Seed(ctx, opt); err != nil {
			t.Fatal(err)
		}
		rows, err := dbtest.Peek(t, s).QueryContext(ctx, `SELECT id || started_at || COALESCE(snapshot_hash, error_message) FROM backups ORDER BY device_id, started_at`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			ids[i] = append(ids[i], v)
		}
		rows.Close()
	}
	if len(ids[0]) != 20 || len(ids[0]) != len(ids[1]) {
		t.Fatalf("got %d and %d backups, want 20", len(ids[0]), len(ids[1]))
	}
	for i := range ids[0] {
		if ids[0][i] != ids[1][i] {
			t.Fatalf("backup %d differs between two seeds: %s vs %s", i, ids[0][i], ids[1][i])
		}
	}
}

// Every platform the seeded devices get is a built-in platform: a
// platform renamed or removed in the driver registry fails here rather
// than in a demo whose devices no backup can run.
func TestSeedPlatformsAreBuiltIn(t *testing.T) {
	for _, id := range seed.Platforms {
		if _, ok := driver.Lookup(id); !ok {
			t.Errorf("seed platform %q is not a built-in platform", id)
		}
	}
}
