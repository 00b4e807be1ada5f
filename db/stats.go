package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"backupd/db/engine"
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
	SnapshotDeltas      int64 // of Snapshots, stored as deltas
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
	counters["snapshot_deltas"] = &st.SnapshotDeltas
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
	if err := s.reader.QueryRowContext(ctx, s.last24hQuery(), since).Scan(&st.Last24hTotal, &sOK, &sFail, &sChanged); err != nil {
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

// last24hQuery counts the backups started since its argument: all,
// succeeded, failed and changed.
func (s *Store) last24hQuery() string {
	return `SELECT COUNT(*), ` + s.outcomeSums("") + ` FROM backups WHERE started_at >= ?`
}

// outcomeSums counts, of the backups b (a table prefix such as "b."),
// those that succeeded, that failed and that changed. SQLite sums the
// comparisons, from its covering index on (finished_at IS NOT NULL);
// PostgreSQL's CASE sums are answered by its index on finished_at
// (migration 00022) alone.
func (s *Store) outcomeSums(b string) string {
	return s.d.SumIf(b+"success = 1") + ", " + s.d.SumIf(b+"success = 0 AND "+b+"finished_at IS NOT NULL") + ", " + s.d.SumIf(b+"changed = 1")
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

// The web dashboard's figures. Unlike Stats (the public /stats, which is
// system-wide), each of these sees only the caller's device-group scope,
// and each is bounded: by an index, a time window or a LIMIT.

// DeviceCounts are the devices of a scope by status, with how many are
// enabled and how many enabled ones failed their last backup.
type DeviceCounts struct {
	Total       int
	Enabled     int
	Reachable   int
	Unreachable int
	Unknown     int
	Failing     int
}

// DeviceCountsInScope counts the devices visible in scope.
func (s *Store) DeviceCountsInScope(ctx context.Context, scope Scope) (DeviceCounts, error) {
	var c DeviceCounts
	cond, args := scope.clause()
	rows, err := s.reader.QueryContext(ctx, `SELECT d.status, d.enabled, COUNT(*) FROM devices d WHERE `+cond+`
		GROUP BY d.status, d.enabled`, args...)
	if err != nil {
		return c, fmt.Errorf("device counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var enabled bool
		var n int
		if err := rows.Scan(&status, &enabled, &n); err != nil {
			return c, err
		}
		c.Total += n
		if enabled {
			c.Enabled += n
		}
		switch status {
		case StatusReachable:
			c.Reachable += n
		case StatusUnreachable:
			c.Unreachable += n
		default:
			c.Unknown += n
		}
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM devices d
		WHERE d.last_backup_success = 0 AND d.enabled = 1 AND `+cond, args...).Scan(&c.Failing); err != nil {
		return c, fmt.Errorf("failing devices count: %w", err)
	}
	return c, nil
}

// FailingDevice is an enabled device whose last backup failed.
type FailingDevice struct {
	ID   int64
	Name string
	// At is when the failed attempt ended.
	At time.Time
	// Error is the failed attempt's message; empty when none was kept.
	// Reason is its class ("connect", "auth", ...), empty when none.
	Error, Reason string
}

// FailingDevices returns up to limit enabled devices of scope whose last
// backup failed, the most recent failure first.
func (s *Store) FailingDevices(ctx context.Context, scope Scope, limit int) ([]FailingDevice, error) {
	cond, args := scope.clause()
	// The message and its reason come from the device's newest finished
	// failure, found once through backups_device_success.
	out, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (FailingDevice, error) {
		var f FailingDevice
		var at, msg, reason sql.NullString
		if err := r.Scan(&f.ID, &f.Name, &at, &msg, &reason); err != nil {
			return f, err
		}
		if at.Valid {
			t, err := ParseTime(at.String)
			if err != nil {
				return f, fmt.Errorf("device %d last_backup_at: %w", f.ID, err)
			}
			f.At = t
		}
		f.Error, f.Reason = msg.String, reason.String
		return f, nil
	}, `SELECT d.id, d.name, d.last_backup_at, f.error_message, f.error_reason
		FROM devices d LEFT JOIN backups f ON f.id = (SELECT b.id FROM backups b
			WHERE b.device_id = d.id AND b.success = 0 AND b.finished_at IS NOT NULL ORDER BY b.started_at DESC LIMIT 1)
		WHERE d.last_backup_success = 0 AND d.enabled = 1 AND `+cond+`
		ORDER BY d.last_backup_at DESC, d.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("failing devices: %w", err)
	}
	return out, nil
}

// ChangedConfig is a backup whose configuration differed from the
// device's previous one.
type ChangedConfig struct {
	BackupID   string
	DeviceID   int64
	DeviceName string
	At         time.Time
}

// ChangedConfigsSince returns how many backups of scope's devices started
// at or after since saw a changed configuration, and the newest limit of
// them.
func (s *Store) ChangedConfigsSince(ctx context.Context, scope Scope, since time.Time, limit int) ([]ChangedConfig, int, error) {
	return s.Changes(ctx, scope, ChangesQuery{Since: since}, limit, 0)
}

// ChangesQuery picks the changes of the fleet-wide list: those started
// in [Since, Until) (a zero Until: up to now) of the devices of GroupID
// and its subgroups (0: any).
type ChangesQuery struct {
	Since, Until time.Time
	GroupID      int64
}

// MaxChangesPage bounds one page of Changes.
const MaxChangesPage = 500

// Changes returns how many backups of scope's devices that q picks saw
// a changed configuration, and one page of them, newest first.
func (s *Store) Changes(ctx context.Context, scope Scope, q ChangesQuery, limit, offset int) ([]ChangedConfig, int, error) {
	cond, args := scope.clause()
	where := `b.started_at >= ? AND b.changed = 1 AND ` + cond
	args = append([]any{backupTime(q.Since)}, args...)
	if !q.Until.IsZero() {
		where += ` AND b.started_at < ?`
		args = append(args, backupTime(q.Until))
	}
	if q.GroupID > 0 {
		where += ` AND d.group_id IN (SELECT g.id FROM device_groups g JOIN device_groups p
			ON substr(g.path, 1, length(p.path)) = p.path WHERE p.id = ?)`
		args = append(args, q.GroupID)
	}
	var total int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups b JOIN devices d ON d.id = b.device_id
		WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count changed configs: %w", err)
	}
	limit = min(max(limit, 1), MaxChangesPage)
	items, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (ChangedConfig, error) {
		var c ChangedConfig
		var at string
		if err := r.Scan(&c.BackupID, &c.DeviceID, &c.DeviceName, &at); err != nil {
			return c, err
		}
		t, err := time.ParseInLocation(BackupTimeFormat, at, time.UTC)
		if err != nil {
			return c, fmt.Errorf("backup %s started_at: %w", c.BackupID, err)
		}
		c.At = t
		return c, nil
	}, `SELECT b.id, d.id, d.name, b.started_at FROM backups b JOIN devices d ON d.id = b.device_id
		WHERE `+where+`
		ORDER BY b.started_at DESC, b.id DESC LIMIT ? OFFSET ?`, append(args, limit, max(offset, 0))...)
	if err != nil {
		return nil, 0, fmt.Errorf("changed configs: %w", err)
	}
	return items, total, nil
}

// DayOutcome is what the backups started in one period ended as.
// Changed ones are also counted in Succeeded; attempts still running are
// in neither.
type DayOutcome struct {
	Start     time.Time
	Succeeded int
	Changed   int
	Failed    int
}

// maxOutcomePeriods bounds DailyBackupOutcomes (and its SQL parameters).
const maxOutcomePeriods = 366

// DailyBackupOutcomes counts the outcomes of the backups of scope's
// devices started in each period [bounds[i], bounds[i+1]). The caller
// picks the bounds (local midnights, say), so that days follow its time
// zone, daylight saving included. Each period is one range of the
// started_at index.
func (s *Store) DailyBackupOutcomes(ctx context.Context, scope Scope, bounds []time.Time) ([]DayOutcome, error) {
	n := len(bounds) - 1
	if n < 1 || n > maxOutcomePeriods {
		return nil, fmt.Errorf("daily backup outcomes: %d periods, want 1 to %d", n, maxOutcomePeriods)
	}
	out := make([]DayOutcome, n)
	values := make([]string, n)
	args := make([]any, 0, 3*n)
	for i := range n {
		if !bounds[i+1].After(bounds[i]) {
			return nil, fmt.Errorf("daily backup outcomes: bounds must increase")
		}
		out[i].Start = bounds[i]
		values[i] = "(?, ?, ?)"
		args = append(args, i, backupTime(bounds[i]), backupTime(bounds[i+1]))
	}
	query := `WITH periods(i, lo, hi) AS (VALUES ` + strings.Join(values, ", ") + `)
		SELECT p.i, ` + s.outcomeSums("b.") + `
		FROM periods p JOIN backups b ON b.started_at >= p.lo AND b.started_at < p.hi`
	if !scope.All {
		cond, sargs := scope.clause()
		query += ` JOIN devices d ON d.id = b.device_id WHERE ` + cond
		args = append(args, sargs...)
	}
	query += ` GROUP BY p.i`
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("daily backup outcomes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		var ok, failed, changed sql.NullInt64
		if err := rows.Scan(&i, &ok, &failed, &changed); err != nil {
			return nil, err
		}
		if i >= 0 && i < n {
			out[i].Succeeded, out[i].Changed, out[i].Failed = int(ok.Int64), int(changed.Int64), int(failed.Int64)
		}
	}
	return out, rows.Err()
}

// FoldCounters moves the counters' pending deltas into their totals and
// returns how many it moved. On PostgreSQL the triggers append a delta per
// change instead of updating shared rows (migration 00021), and the
// counters view adds them up: folding now and then (the leader does) keeps
// that sum short. The values read never change by it. On SQLite, whose
// triggers update the counters in place, there is nothing to fold.
func (s *Store) FoldCounters(ctx context.Context) (int64, error) {
	if !s.pg {
		return 0, nil
	}
	var n int64
	if err := s.writer.QueryRowContext(ctx, `SELECT bd_fold_counters()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("fold the counters: %w", err)
	}
	return n, nil
}
