package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Stats are the dashboard figures. Every one comes from an index or a
// trigger-kept counter; none scans the backup history.
type Stats struct {
	Devices             map[string]int // by status
	DevicesTotal        int
	DevicesEnabled      int
	Groups              int
	Credentials         int
	Templates           int
	BackupsTotal        int
	BackupsSucceeded    int
	BackupsFailed       int
	Last24hTotal        int
	Last24hSucceeded    int
	Last24hFailed       int
	Last24hChanged      int
	LastBackupAt        *time.Time
	Snapshots           int
	SnapshotBytes       int64
	SnapshotStoredBytes int64
}

// Stats computes the dashboard figures as of now.
func (s *Store) Stats(ctx context.Context, now time.Time) (Stats, error) {
	st := Stats{Devices: map[string]int{StatusUnknown: 0, StatusReachable: 0, StatusUnreachable: 0}}
	rows, err := s.reader.QueryContext(ctx, `SELECT status, enabled, COUNT(*) FROM devices GROUP BY status, enabled`)
	if err != nil {
		return st, fmt.Errorf("device counts: %w", err)
	}
	for rows.Next() {
		var status string
		var enabled bool
		var n int
		if err := rows.Scan(&status, &enabled, &n); err != nil {
			rows.Close()
			return st, err
		}
		st.Devices[status] += n
		st.DevicesTotal += n
		if enabled {
			st.DevicesEnabled += n
		}
	}
	rows.Close()
	for _, c := range []struct {
		dst   *int
		query string
	}{
		{&st.Groups, `SELECT COUNT(*) FROM device_groups`},
		{&st.Credentials, `SELECT COUNT(*) FROM credentials`},
		{&st.Templates, `SELECT COUNT(*) FROM templates`},
	} {
		if err := s.reader.QueryRowContext(ctx, c.query).Scan(c.dst); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
	}
	counters := map[string]*int64{}
	var total, ok, failed, snaps int64
	counters["backups_total"], counters["backups_succeeded"], counters["backups_failed"] = &total, &ok, &failed
	counters["snapshots"], counters["snapshot_bytes"], counters["snapshot_stored_bytes"] = &snaps, &st.SnapshotBytes, &st.SnapshotStoredBytes
	crows, err := s.reader.QueryContext(ctx, `SELECT name, value FROM counters`)
	if err != nil {
		return st, fmt.Errorf("counters: %w", err)
	}
	for crows.Next() {
		var name string
		var v int64
		if err := crows.Scan(&name, &v); err != nil {
			crows.Close()
			return st, err
		}
		if dst, known := counters[name]; known {
			*dst = v
		}
	}
	crows.Close()
	st.BackupsTotal, st.BackupsSucceeded, st.BackupsFailed, st.Snapshots = int(total), int(ok), int(failed), int(snaps)

	since := backupTime(now.Add(-24 * time.Hour))
	var sOK, sFail, sChanged sql.NullInt64
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*), SUM(success = 1), SUM(success = 0 AND finished_at IS NOT NULL), SUM(changed = 1)
		FROM backups WHERE started_at >= ?`, since).Scan(&st.Last24hTotal, &sOK, &sFail, &sChanged); err != nil {
		return st, fmt.Errorf("last 24h: %w", err)
	}
	st.Last24hSucceeded, st.Last24hFailed, st.Last24hChanged = int(sOK.Int64), int(sFail.Int64), int(sChanged.Int64)
	var last sql.NullString
	if err := s.reader.QueryRowContext(ctx, `SELECT MAX(started_at) FROM backups`).Scan(&last); err != nil {
		return st, fmt.Errorf("last backup: %w", err)
	}
	if last.Valid {
		t, err := time.ParseInLocation(BackupTimeFormat, last.String, time.UTC)
		if err == nil {
			st.LastBackupAt = &t
		}
	}
	return st, nil
}

// FleetHealth is what the metrics endpoint reads from the database at
// every scrape, so that backups done by any process (the server, `backupd
// backup run`) count. Each figure is an index lookup or a trigger-kept
// counter (migration 00011), however long the history.
type FleetHealth struct {
	DevicesEnabled int
	// DevicesLastFailed counts enabled devices whose newest attempt failed.
	DevicesLastFailed int
	// OldestGood is, among enabled devices, the oldest start of a device's
	// newest successful backup; a device never backed up successfully
	// counts from when it was added. Nil when no device is enabled.
	OldestGood *time.Time
	// Attempts finished by result and configuration changes found, ever
	// recorded: retention deleting old records does not lower them.
	BackupsSucceeded, BackupsFailed, ConfigChanges int64
	// OldestQueued is the earliest not-before time among queued jobs (the
	// moment the longest-waiting one became due, when it is in the past).
	// Nil when nothing is queued.
	OldestQueued *time.Time
}

// The queries of FleetHealth, each answered from an index: the partial
// indexes devices_enabled_last_good (enabled devices by last good backup)
// and devices_last_failed (devices whose last attempt failed), and
// jobs_ready (queued jobs by not-before time).
const (
	fleetDevicesQuery = `SELECT
		(SELECT COUNT(*) FROM devices WHERE enabled = 1),
		(SELECT COUNT(*) FROM devices WHERE last_backup_success = 0 AND enabled = 1)`
	fleetOldestQuery = `SELECT
		(SELECT MIN(last_good_backup_at) FROM devices WHERE enabled = 1),
		(SELECT MIN(created_at) FROM devices WHERE enabled = 1 AND last_good_backup_at IS NULL),
		(SELECT MIN(not_before) FROM jobs WHERE state = 'queued')`
)

// FleetHealth reads the figures in one read transaction, so that they
// agree with each other.
func (s *Store) FleetHealth(ctx context.Context) (FleetHealth, error) {
	var h FleetHealth
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return h, fmt.Errorf("fleet health: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, fleetDevicesQuery).Scan(&h.DevicesEnabled, &h.DevicesLastFailed); err != nil {
		return h, fmt.Errorf("enabled and failed devices: %w", err)
	}
	var good, added, queued sql.NullString
	if err := tx.QueryRowContext(ctx, fleetOldestQuery).Scan(&good, &added, &queued); err != nil {
		return h, fmt.Errorf("oldest backup and job: %w", err)
	}
	for _, v := range []sql.NullString{good, added} {
		t, err := parseNullTime(v)
		if err != nil {
			return h, fmt.Errorf("oldest good backup: %w", err)
		}
		if t != nil && (h.OldestGood == nil || t.Before(*h.OldestGood)) {
			h.OldestGood = t
		}
	}
	if h.OldestQueued, err = parseNullTime(queued); err != nil {
		return h, fmt.Errorf("oldest queued job: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, value FROM counters
		WHERE name IN ('backups_succeeded_ever', 'backups_failed_ever', 'backups_changed_ever')`)
	if err != nil {
		return h, fmt.Errorf("backup counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return h, fmt.Errorf("backup counters: %w", err)
		}
		switch name {
		case "backups_succeeded_ever":
			h.BackupsSucceeded = v
		case "backups_failed_ever":
			h.BackupsFailed = v
		case "backups_changed_ever":
			h.ConfigChanges = v
		}
	}
	return h, rows.Err()
}
