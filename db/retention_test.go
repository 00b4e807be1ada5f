package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
)

// retNow is "now" for the retention tests; backups are placed before it.
var retNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func retDevice(t *testing.T, s *db.Store, name string) int64 {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: "192.0.2.1", Port: 22,
		Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// retVersion records a good backup of text, daysAgo days before retNow.
func retVersion(t *testing.T, s *db.Store, device int64, daysAgo float64, text string) string {
	t.Helper()
	ctx := context.Background()
	hash, err := s.PutSnapshot(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	started := retNow.Add(-time.Duration(daysAgo * float64(24*time.Hour)))
	finished := started.Add(time.Second)
	b := db.Backup{ID: uuid.NewString(), DeviceID: device, StartedAt: started, FinishedAt: &finished,
		Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule}
	if err := s.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// retFailure records a failed attempt daysAgo days before retNow; running
// leaves it unfinished.
func retFailure(t *testing.T, s *db.Store, device int64, daysAgo float64, running bool) string {
	t.Helper()
	started := retNow.Add(-time.Duration(daysAgo * float64(24*time.Hour)))
	b := db.Backup{ID: uuid.NewString(), DeviceID: device, StartedAt: started, Trigger: queue.TriggerSchedule}
	if !running {
		finished := started.Add(time.Second)
		msg := "connect: timeout"
		b.FinishedAt, b.ErrorMessage = &finished, &msg
	}
	if err := s.InsertBackup(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// retRemaining lists a device's backup ids, newest first.
func retRemaining(t *testing.T, s *db.Store, device int64) []string {
	t.Helper()
	items, _, err := s.ListBackups(context.Background(), device, 100000, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, b := range items {
		ids = append(ids, b.ID)
	}
	return ids
}

// retCheckCounters compares the trigger-kept counters with a count of the
// rows.
func retCheckCounters(t *testing.T, s *db.Store) {
	t.Helper()
	for name, query := range map[string]string{
		"backups_total":         `SELECT COUNT(*) FROM backups`,
		"backups_succeeded":     `SELECT COUNT(*) FROM backups WHERE success = 1`,
		"backups_failed":        `SELECT COUNT(*) FROM backups WHERE success = 0 AND finished_at IS NOT NULL`,
		"snapshots":             `SELECT COUNT(*) FROM snapshots`,
		"snapshot_bytes":        `SELECT COALESCE(SUM(size), 0) FROM snapshots`,
		"snapshot_stored_bytes": `SELECT COALESCE(SUM(stored_size), 0) FROM snapshots`,
	} {
		var counter, counted int64
		if err := s.Reader().QueryRow(`SELECT value FROM counters WHERE name = ?`, name).Scan(&counter); err != nil {
			t.Fatal(err)
		}
		if err := s.Reader().QueryRow(query).Scan(&counted); err != nil {
			t.Fatal(err)
		}
		if counter != counted {
			t.Errorf("counter %s = %d, the rows count %d", name, counter, counted)
		}
	}
}

func retApply(t *testing.T, s *db.Store, r db.Retention) db.RetentionResult {
	t.Helper()
	res, err := s.ApplyRetention(context.Background(), r, retNow)
	if err != nil {
		t.Fatalf("ApplyRetention(%+v): %v", r, err)
	}
	retCheckCounters(t, s)
	return res
}

// retHistory gives a device a good version every day for days days (1 to
// days days old, each its own text) and a failed attempt every day in
// between; it returns the version and failure ids, newest first.
func retHistory(t *testing.T, s *db.Store, device int64, days int) (versions, failures []string) {
	t.Helper()
	for d := 1; d <= days; d++ {
		versions = append(versions, retVersion(t, s, device, float64(d), fmt.Sprintf("hostname d%d\n! day %d\n", device, d)))
		failures = append(failures, retFailure(t, s, device, float64(d)+0.5, false))
	}
	return versions, failures
}

func TestApplyRetentionLimits(t *testing.T) {
	for _, c := range []struct {
		name   string
		policy db.Retention
		// keep is how many of the newest versions and failures stay.
		keepVersions, keepFailures int
	}{
		{"keep last", db.Retention{KeepLast: 3}, 3, 3},
		// 5 days: versions 1..5 days old (exactly 5 is not older than 5
		// days), failures 1.5..4.5 days old.
		{"keep days", db.Retention{KeepDays: 5}, 5, 4},
		{"keep days, shorter", db.Retention{KeepDays: 3}, 3, 2},
		{"both, days wider", db.Retention{KeepLast: 2, KeepDays: 5}, 5, 4},
		{"both, count wider", db.Retention{KeepLast: 7, KeepDays: 3}, 7, 7},
		{"neither", db.Retention{}, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			dev := retDevice(t, s, "r1")
			versions, failures := retHistory(t, s, dev, 10)
			other := retDevice(t, s, "r2")
			otherVersions, _ := retHistory(t, s, other, 10)
			res := retApply(t, s, c.policy)
			want := append(slices.Clone(versions[:c.keepVersions]), failures[:c.keepFailures]...)
			got := retRemaining(t, s, dev)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("kept %d backups, want %d versions and %d failures", len(got), c.keepVersions, c.keepFailures)
			}
			deleted := 2 * (20 - c.keepVersions - c.keepFailures) // two devices
			if res.BackupsDeleted != deleted || res.SnapshotsPurged != 2*(10-c.keepVersions) {
				t.Errorf("result %+v, want %d backups and %d snapshots", res, deleted, 2*(10-c.keepVersions))
			}
			if n := len(retRemaining(t, s, other)); n != c.keepVersions+c.keepFailures {
				t.Errorf("the other device kept %d", n)
			}
			for _, id := range otherVersions[:c.keepVersions] {
				if _, err := s.GetBackup(context.Background(), id); err != nil {
					t.Errorf("the other device lost a kept version: %v", err)
				}
			}
			// Running it again changes nothing.
			if res := retApply(t, s, c.policy); res != (db.RetentionResult{}) {
				t.Errorf("second run removed %+v", res)
			}
		})
	}
}

// TestApplyRetentionLatestGood: a device failing for weeks keeps its last
// good version, however old, and failures do not push it out.
func TestApplyRetentionLatestGood(t *testing.T) {
	s := openStore(t)
	dev := retDevice(t, s, "dead")
	retVersion(t, s, dev, 100, "hostname dead\n! v1\n")
	retVersion(t, s, dev, 90, "hostname dead\n! v2\n")
	latest := retVersion(t, s, dev, 80, "hostname dead\n! v3\n")
	var failures []string
	for d := 40; d >= 1; d-- {
		failures = append([]string{retFailure(t, s, dev, float64(d), false)}, failures...)
	}
	running := retFailure(t, s, dev, 60, true) // stuck since a crash; not finished

	res := retApply(t, s, db.Retention{KeepDays: 30})
	got := retRemaining(t, s, dev)
	want := append([]string{latest, running}, failures[:30]...) // failures 1..30 days old
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("kept %d backups, want the latest good, the running one and 30 failures (%d)", len(got), len(want))
	}
	if res.BackupsDeleted != 2+10 || res.SnapshotsPurged != 2 {
		t.Errorf("result %+v", res)
	}
	// Keep-last counts versions only: 40 newer failures do not push the
	// latest good version out, and only the newest failures stay.
	res = retApply(t, s, db.Retention{KeepLast: 5, KeepDays: 1})
	got = retRemaining(t, s, dev)
	want = append([]string{latest, running}, failures[:5]...)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || res.BackupsDeleted != 25 {
		t.Errorf("keep last 5: kept %d, deleted %d", len(got), res.BackupsDeleted)
	}
	if _, err := s.GetBackup(context.Background(), latest); err != nil {
		t.Errorf("latest good version: %v", err)
	}
}

func TestApplyRetentionSnapshots(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b := retDevice(t, s, "a"), retDevice(t, s, "b")
	shared := "hostname twin\n"
	retVersion(t, s, a, 50, shared)         // deleted, but b still uses the text
	retVersion(t, s, a, 40, "only a old\n") // deleted with its snapshot
	retVersion(t, s, a, 30, "only a old\n") // same snapshot, deleted too
	retVersion(t, s, a, 1, "a now\n")
	retVersion(t, s, b, 2, shared)
	// A snapshot stored by a backup still running (not named yet) and one
	// left behind long ago by a deleted device.
	inflight, err := s.PutSnapshot(ctx, "being backed up\n")
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := s.PutSnapshot(ctx, "of a deleted device\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `UPDATE snapshots SET created_at = ? WHERE hash = ?`,
		retNow.AddDate(0, 0, -3).Format(db.TimeFormat), orphan); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `UPDATE snapshots SET created_at = ? WHERE hash = ?`,
		retNow.Add(-time.Minute).Format(db.TimeFormat), inflight); err != nil {
		t.Fatal(err)
	}

	res := retApply(t, s, db.Retention{KeepLast: 1})
	if res.BackupsDeleted != 3 || res.SnapshotsPurged != 2 {
		t.Errorf("result %+v, want 3 backups and 2 snapshots (a's old text, the orphan)", res)
	}
	for text, kept := range map[string]bool{
		shared: true, "only a old\n": false, "a now\n": true, "being backed up\n": true, "of a deleted device\n": false,
	} {
		_, err := s.SnapshotText(ctx, snapstore.Hash(text))
		if kept && err != nil {
			t.Errorf("snapshot %q purged: %v", text, err)
		}
		if !kept && !errors.Is(err, db.ErrNotFound) {
			t.Errorf("snapshot %q kept (%v)", text, err)
		}
	}
	// Deleting a device leaves its snapshots; a later run purges them once
	// they are older than the grace period.
	if err := s.DeleteDevice(ctx, b); err != nil {
		t.Fatal(err)
	}
	if res := retApply(t, s, db.Retention{KeepLast: 1}); res.SnapshotsPurged != 0 {
		t.Errorf("snapshots of a device deleted just now purged: %+v", res)
	}
	later, err := s.ApplyRetention(ctx, db.Retention{KeepLast: 1}, time.Now().Add(db.SnapshotGrace+time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	retCheckCounters(t, s)
	if later.SnapshotsPurged != 2 { // the shared text, and the in-flight one that never got a backup
		t.Errorf("after the grace period: %+v", later)
	}
	if _, err := s.SnapshotText(ctx, snapstore.Hash("a now\n")); err != nil {
		t.Errorf("a's snapshot: %v", err)
	}
}

// TestApplyRetentionBatches runs retention over more rows than one batch
// holds, on devices of several sizes.
func TestApplyRetentionBatches(t *testing.T) {
	s := openStore(t)
	sizes := map[int64]int{}
	for i, n := range []int{2300, 700, 700, 3, 0} {
		dev := retDevice(t, s, fmt.Sprintf("big-%d", i))
		sizes[dev] = n
		// n good versions, one a minute, each with its own (fake) snapshot,
		// inserted 200 rows a statement.
		for lo := 1; lo <= n; lo += 200 {
			var snaps, backups []string
			var snapArgs, backupArgs []any
			for i := lo; i <= min(n, lo+199); i++ {
				hash := fmt.Sprintf("%d-%06d", dev, i)
				at := time.Date(2025, 1, 1, 0, i, 0, 0, time.UTC).Format(db.BackupTimeFormat)
				snaps = append(snaps, `(?, 100, 10, ?, '2020-01-01T00:00:00')`)
				snapArgs = append(snapArgs, hash, []byte{0})
				backups = append(backups, `(?, ?, ?, ?, 1, ?, 'schedule')`)
				backupArgs = append(backupArgs, fmt.Sprintf("b-%d-%06d", dev, i), dev, at, at, hash)
			}
			mustExec(t, s, `INSERT INTO snapshots (hash, size, stored_size, data, created_at) VALUES `+strings.Join(snaps, ", "), snapArgs...)
			mustExec(t, s, `INSERT INTO backups (id, device_id, started_at, finished_at, success, snapshot_hash, trigger) VALUES `+
				strings.Join(backups, ", "), backupArgs...)
		}
	}
	retCheckCounters(t, s)
	res := retApply(t, s, db.Retention{KeepLast: 10})
	wantDeleted := 2290 + 690 + 690
	if res.BackupsDeleted != wantDeleted || res.SnapshotsPurged != wantDeleted {
		t.Errorf("result %+v, want %d of each", res, wantDeleted)
	}
	for dev, n := range sizes {
		got := retRemaining(t, s, dev)
		var want []string
		for i := n; i > max(n-10, 0); i-- {
			want = append(want, fmt.Sprintf("b-%d-%06d", dev, i))
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("device with %d versions kept %d: %v...", n, len(got), got[:min(len(got), 3)])
		}
	}
}

func TestApplyRetentionErrors(t *testing.T) {
	s := openStore(t)
	dev := retDevice(t, s, "r1")
	retHistory(t, s, dev, 3)
	if _, err := s.ApplyRetention(context.Background(), db.Retention{KeepLast: -1}, retNow); err == nil {
		t.Error("a negative limit was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.ApplyRetention(ctx, db.Retention{KeepLast: 1}, retNow); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if n := len(retRemaining(t, s, dev)); n != 6 {
		t.Errorf("a cancelled run deleted backups: %d left", n)
	}
}

// BenchmarkRetention1M trims 1,000,000 backups (1,000 devices with 1,000
// versions each, one snapshot per 10 backups) to the newest 100 per device
// while another writer stores a setting every 5 ms, and reports how long
// that writer waited at most: the single writer is only ever held for one
// batch.
//
//	go test -run XXX -bench Retention1M -benchtime 1x ./db/
func BenchmarkRetention1M(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s, err := db.Open(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
			INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
			SELECT 'dev-' || i, '192.0.2.1', 22, 'cisco_ios', 'ssh', '2025-01-01T00:00:00', '2025-01-01T00:00:00' FROM n`); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
			INSERT INTO snapshots (hash, size, stored_size, data, created_at)
			SELECT printf('%064d', i), 50000, 5000, randomblob(5000), '2025-01-01T00:00:00' FROM n`); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
			INSERT INTO backups (id, device_id, started_at, finished_at, success, snapshot_hash, trigger)
			SELECT printf('b-%07d', i), i % 1000 + 1, strftime('%Y-%m-%dT%H:%M:%f', '2025-01-01', printf('+%d minutes', i)),
				strftime('%Y-%m-%dT%H:%M:%f', '2025-01-01', printf('+%d minutes', i)), 1, printf('%064d', i / 10 + 1), 'schedule' FROM n`); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		waits := make(chan time.Duration, 1)
		go func() {
			var worst time.Duration
			defer func() { waits <- worst }()
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				t0 := time.Now()
				if err := s.PutSetting(ctx, "bench", t0.UnixNano()); err != nil {
					b.Error(err)
					return
				}
				worst = max(worst, time.Since(t0))
			}
		}()
		b.StartTimer()
		res, err := s.ApplyRetention(ctx, db.Retention{KeepLast: 100}, time.Now())
		b.StopTimer()
		close(stop)
		worst := <-waits
		if err != nil {
			b.Fatal(err)
		}
		if res.BackupsDeleted != 900000 {
			b.Fatalf("deleted %+v", res)
		}
		b.ReportMetric(float64(worst.Microseconds())/1000, "max-write-wait-ms")
		b.ReportMetric(float64(res.SnapshotsPurged), "snapshots-purged")
		s.Close()
		b.StartTimer()
	}
}
