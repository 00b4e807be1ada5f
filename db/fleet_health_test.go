package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

func fleetHealth(t *testing.T, s *db.Store) db.FleetHealth {
	t.Helper()
	h, err := s.FleetHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func wantTime(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil || !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// attempt runs one attempt of a queued job for device through the queue,
// as the engine does, ending as o says.
func attempt(t *testing.T, s *db.Store, device int64, o queue.Outcome) {
	t.Helper()
	ctx := context.Background()
	jobs := enqueueNow(t, s, queue.TriggerManual, device)
	claims, err := s.ClaimJobs(ctx, "test", 1, jobs)
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v %v", claims, err)
	}
	o.FinishedAt = time.Now()
	if err := s.FinishJob(ctx, claims[0], o); err != nil {
		t.Fatal(err)
	}
}

// The figures the metrics endpoint reads: failed and stale devices among
// the enabled ones, counters that deleting records never lowers, and the
// oldest queued job.
func TestFleetHealth(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	if h := fleetHealth(t, s); h != (db.FleetHealth{}) {
		t.Fatalf("empty store: %+v", h)
	}

	added := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b, c, off := retDevice(t, s, "a"), retDevice(t, s, "b"), retDevice(t, s, "c"), retDevice(t, s, "off")
	if _, err := s.Exec(ctx, `UPDATE devices SET created_at = ?, enabled = CASE WHEN id = ? THEN 0 ELSE 1 END`, added.Format(db.TimeFormat), off); err != nil {
		t.Fatal(err)
	}
	day := func(daysAgo int) time.Time { return retNow.AddDate(0, 0, -daysAgo) }
	retVersion(t, s, a, 3, "a1")
	retVersion(t, s, a, 1, "a2")
	bOnly := retVersion(t, s, b, 10, "b1")
	retVersion(t, s, off, 100, "off")
	retFailure(t, s, c, 1, false)
	retFailure(t, s, c, 0.5, true) // still running: not finished, not counted

	// c never had a good backup: it counts from when it was added.
	h := fleetHealth(t, s)
	wantTime(t, "oldest good, c never backed up", h.OldestGood, added)
	if h.DevicesEnabled != 3 || h.BackupsSucceeded != 4 || h.BackupsFailed != 1 {
		t.Errorf("enabled %d, succeeded %d, failed %d; want 3, 4, 1", h.DevicesEnabled, h.BackupsSucceeded, h.BackupsFailed)
	}
	retVersion(t, s, c, 2, "c1")
	wantTime(t, "oldest good, b's", fleetHealth(t, s).OldestGood, day(10))

	// b's only good backup goes: b counts from when it was added again;
	// of two, the newer goes: the older is b's last good one.
	if _, err := s.Exec(ctx, `DELETE FROM backups WHERE id = ?`, bOnly); err != nil {
		t.Fatal(err)
	}
	wantTime(t, "oldest good after b's went", fleetHealth(t, s).OldestGood, added)
	retVersion(t, s, b, 20, "b2")
	newer := retVersion(t, s, b, 5, "b3")
	wantTime(t, "oldest good, b's newest", fleetHealth(t, s).OldestGood, day(5))
	if _, err := s.Exec(ctx, `DELETE FROM backups WHERE id = ?`, newer); err != nil {
		t.Fatal(err)
	}
	h = fleetHealth(t, s)
	wantTime(t, "oldest good after b's newest went", h.OldestGood, day(20))
	if h.BackupsSucceeded != 7 {
		t.Errorf("succeeded %d after deletes, want 7: the counter never goes down", h.BackupsSucceeded)
	}

	// Attempts through the queue: a fails now, c succeeds with a change.
	attempt(t, s, a, queue.Outcome{Error: "connect: timeout"})
	attempt(t, s, c, queue.Outcome{Success: true, Text: "c2", Changed: true})
	attempt(t, s, off, queue.Outcome{Error: "connect: timeout"})
	h = fleetHealth(t, s)
	if h.DevicesLastFailed != 1 || h.BackupsFailed != 3 || h.BackupsSucceeded != 8 || h.ConfigChanges != 1 {
		t.Errorf("after attempts: %+v; want 1 enabled device failed, 3 failures, 8 successes, 1 change", h)
	}
	if h.OldestQueued != nil {
		t.Errorf("nothing queued, yet oldest queued %v", h.OldestQueued)
	}

	due := time.Date(2026, 3, 4, 5, 6, 7, 890e6, time.UTC)
	if _, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: b, Trigger: queue.TriggerManual, NotBefore: due.Add(time.Hour)},
		{DeviceID: c, Trigger: queue.TriggerManual, NotBefore: due}}); err != nil {
		t.Fatal(err)
	}
	wantTime(t, "oldest queued", fleetHealth(t, s).OldestQueued, due)
}

// Migration 00011 fills the new figures from the history a database
// already holds, and rolls back cleanly.
func TestFleetHealthMigrationBackfills(t *testing.T) {
	dir := t.TempDir()
	s, err := db.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := retDevice(t, s, "a")
	retVersion(t, s, a, 2, "a1")
	retVersion(t, s, a, 1, "a2")
	retFailure(t, s, a, 0.5, false)
	if _, err := s.Exec(ctx, `UPDATE backups SET changed = 1`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Back to before 00011 (later migrations rolled back first), then up.
	if err := db.MigrateDownTo(ctx, s.Path(), 10); err != nil {
		t.Fatalf("migrate down to 10: %v", err)
	}
	if err := db.Migrate(ctx, s.Path(), engine.MigrateUp, nil); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	s, err = db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := fleetHealth(t, s)
	wantTime(t, "oldest good", h.OldestGood, retNow.AddDate(0, 0, -1))
	if h.BackupsSucceeded != 2 || h.BackupsFailed != 1 || h.ConfigChanges != 3 {
		t.Errorf("backfilled: %+v; want 2 successes, 1 failure, 3 changes", h)
	}
}

// TestFleetHealthUsesIndexes keeps a scrape cheap however large the
// inventory: no query of FleetHealth reads a whole table.
func TestFleetHealthUsesIndexes(t *testing.T) {
	s := openStore(t)
	want := []string{"devices_enabled_last_good", "devices_last_failed", "jobs_ready"}
	var all []string
	for _, q := range db.FleetHealthQueries {
		if s.Postgres() {
			p := dbtest.ExplainPG(t, s, q)
			if len(p.SeqScans) > 0 {
				t.Errorf("%s\nreads a whole table: %v\n%s", q, p.SeqScans, p.Text)
			}
			all = append(all, p.Indexes...)
			continue
		}
		for _, detail := range dbtest.PlanSQLite(t, s, q) {
			if strings.HasPrefix(detail, "SCAN ") && !strings.Contains(detail, "INDEX") && detail != "SCAN CONSTANT ROW" {
				t.Errorf("%s\nreads a whole table: %s", q, detail)
			}
			all = append(all, detail)
		}
	}
	for _, index := range want {
		if !strings.Contains(strings.Join(all, "; "), index) {
			t.Errorf("the plans do not use %s:\n%s", index, strings.Join(all, "\n"))
		}
	}
}
