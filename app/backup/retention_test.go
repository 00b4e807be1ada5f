package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// TestRunRetention applies the stored policy and prunes old finished jobs.
func TestRunRetention(t *testing.T) {
	ctx := context.Background()
	s := histStore(t)
	d := histDevice(t, s, "r1", "cisco_ios", nil)
	now := time.Now()
	var versions []db.Backup
	for i := range 5 {
		versions = append(versions, histVersion(t, s, d.ID, now.Add(-time.Duration(5-i)*time.Hour), fmt.Sprintf("hostname r1\n! v%d\n", i)))
	}
	if err := s.PutSetting(ctx, db.SettingRetention, db.Retention{KeepLast: 2}); err != nil {
		t.Fatal(err)
	}
	// Three finished jobs, two of them older than the job history.
	ids, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: d.ID, Trigger: queue.TriggerSchedule, NotBefore: now}})
	if err != nil {
		t.Fatal(err)
	}
	for i, age := range []time.Duration{40 * 24 * time.Hour, 31 * 24 * time.Hour, time.Hour} {
		created := now.Add(-age).UTC().Format(db.BackupTimeFormat)
		if i == 0 {
			if _, err := dbtest.Poke(t, s).ExecContext(ctx, `UPDATE jobs SET state = 'succeeded', created_at = ?, finished_at = ? WHERE id = ?`, created, created, ids[0]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := dbtest.Poke(t, s).ExecContext(ctx, `INSERT INTO jobs (device_id, trigger, state, not_before, created_at, finished_at)
			VALUES (?, 'schedule', 'failed', ?, ?, ?)`, d.ID, created, created, created); err != nil {
			t.Fatal(err)
		}
	}

	var logs bytes.Buffer
	res, err := backup.RunRetention(ctx, s, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if res.BackupsDeleted != 3 || res.SnapshotsPurged != 3 {
		t.Errorf("result %+v, want 3 backups and 3 snapshots", res)
	}
	left, total, err := s.ListBackups(ctx, d.ID, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || left[0].ID != versions[4].ID || left[1].ID != versions[3].ID {
		t.Errorf("kept %d backups, want the newest two", total)
	}
	var jobs int
	if err := dbtest.Peek(t, s).QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 1 {
		t.Errorf("%d jobs left, want the recent one", jobs)
	}
	if !strings.Contains(logs.String(), "backups_deleted=3") || !strings.Contains(logs.String(), "jobs_pruned=2") {
		t.Errorf("log: %s", logs.String())
	}
}
