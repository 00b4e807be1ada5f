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
