package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
)

// Schedule targets: every enabled device, the devices of some groups (and
// of their subgroups), or a list of devices.
const (
	ScheduleTargetAll     = "all"
	ScheduleTargetGroups  = "groups"
	ScheduleTargetDevices = "devices"
)

// SettingDefaultScheduleCreated is set once the default nightly schedule
// has been created, so that deleting it is respected on later starts.
const SettingDefaultScheduleCreated = "default_schedule_created"

// Schedule is a cron expression in a time zone that queues backups of its
// target. LastRunAt is the tick that fired last; NextRunAt is the tick the
// scheduler will fire next (nil until the scheduler has computed it). Both
// are UTC.
type Schedule struct {
	ID            int64
	Name          string
	Cron          string
	Timezone      string
	Target        string
	TargetIDs     []int64
	SpreadSeconds int
	Enabled       bool
	LastRunAt     *time.Time
	NextRunAt     *time.Time
	CreatedAt     string
	UpdatedAt     string
}

const scheduleColumns = `id, name, cron, timezone, target, target_ids, spread_seconds, enabled,
	last_run_at, next_run_at, created_at, updated_at`

func scanSchedule(row engine.Scanner) (Schedule, error) {
	var sc Schedule
	var ids string
	var last, next sql.NullString
	if err := row.Scan(&sc.ID, &sc.Name, &sc.Cron, &sc.Timezone, &sc.Target, &ids, &sc.SpreadSeconds,
		&sc.Enabled, &last, &next, &sc.CreatedAt, &sc.UpdatedAt); err != nil {
		return sc, err
	}
	sc.TargetIDs = []int64{}
	if err := json.Unmarshal([]byte(ids), &sc.TargetIDs); err != nil {
		return sc, fmt.Errorf("schedule %d target_ids: %w", sc.ID, err)
	}
	var err error
	if sc.LastRunAt, err = parseNullTime(last); err != nil {
		return sc, fmt.Errorf("schedule %d last_run_at: %w", sc.ID, err)
	}
	if sc.NextRunAt, err = parseNullTime(next); err != nil {
		return sc, fmt.Errorf("schedule %d next_run_at: %w", sc.ID, err)
	}
	return sc, nil
}

func parseNullTime(s sql.NullString) (*time.Time, error) {
	if !s.Valid {
		return nil, nil
	}
	t, err := ParseTime(s.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// scheduleTime is how schedule times are stored: UTC, seconds (cron ticks
// are whole minutes), so that equal instants compare equal as text.
func scheduleTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

func nullScheduleTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return scheduleTime(*t)
}

// normalizeTargetIDs sorts and deduplicates the IDs and returns their
// JSON; "all" keeps none.
func normalizeTargetIDs(sc *Schedule) (string, error) {
	if sc.Target == ScheduleTargetAll || len(sc.TargetIDs) == 0 {
		sc.TargetIDs = []int64{}
	} else {
		sc.TargetIDs = slices.Compact(slices.Sorted(slices.Values(sc.TargetIDs)))
	}
	raw, err := json.Marshal(sc.TargetIDs)
	return string(raw), err
}

// checkScheduleTargets verifies that the groups or devices a schedule
// names exist when it is saved (ones deleted later are simply skipped).
func (s *Store) checkScheduleTargets(ctx context.Context, q engine.Querier, target, idsJSON string) error {
	var table, noun string
	switch target {
	case ScheduleTargetAll:
		return nil
	case ScheduleTargetGroups:
		table, noun = "device_groups", "group"
	case ScheduleTargetDevices:
		table, noun = "devices", "device"
	default:
		return &ErrReference{"target", fmt.Sprintf("unknown target %q", target)}
	}
	var missing int64
	err := q.QueryRowContext(ctx, `SELECT j.id FROM (SELECT CAST(value AS BIGINT) AS id FROM `+s.d.JSONEach()+`) j
		WHERE j.id NOT IN (SELECT id FROM `+table+`) LIMIT 1`,
		idsJSON).Scan(&missing)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check schedule targets: %w", err)
	}
	return &ErrReference{"target_ids", fmt.Sprintf("%s %d does not exist", noun, missing)}
}

// ListSchedules returns one page of schedules ordered by id, and the total
// count.
func (s *Store) ListSchedules(ctx context.Context, limit, offset int) ([]Schedule, int, error) {
	items, total, err := engine.Page(ctx, s.reader, scanSchedule, `SELECT COUNT(*) FROM schedules`,
		`SELECT `+scheduleColumns+` FROM schedules ORDER BY id`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list schedules: %w", err)
	}
	return items, total, nil
}

// GetSchedule returns one schedule or ErrNotFound.
func (s *Store) GetSchedule(ctx context.Context, id int64) (Schedule, error) {
	return getSchedule(ctx, s.reader, id)
}

func getSchedule(ctx context.Context, q engine.Querier, id int64) (Schedule, error) {
	sc, err := scanSchedule(q.QueryRowContext(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sc, ErrNotFound
	}
	if err != nil {
		return sc, fmt.Errorf("get schedule %d: %w", id, err)
	}
	return sc, nil
}

// ScheduleByName returns the schedule of that name (ASCII case folded, as
// the name column compares), or ErrNotFound.
func (s *Store) ScheduleByName(ctx context.Context, name string) (Schedule, error) {
	sc, err := scanSchedule(s.reader.QueryRowContext(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return sc, ErrNotFound
	}
	if err != nil {
		return sc, fmt.Errorf("schedule %q: %w", name, err)
	}
	return sc, nil
}

// CreateSchedule inserts sc (validated by the caller: see
// backup.ValidateSchedule). Names are unique ignoring case (ErrNameExists);
// the groups or devices it targets must exist (*ErrReference on
// "target_ids"). NextRunAt may be given (the first tick, computed by the
// caller) or left nil for the scheduler to compute; LastRunAt is ignored.
func (s *Store) CreateSchedule(ctx context.Context, sc Schedule) (Schedule, error) {
	var out Schedule
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := normalizeTargetIDs(&sc)
		if err != nil {
			return err
		}
		if err := s.checkScheduleTargets(ctx, tx, sc.Target, ids); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM schedules WHERE name = ?`, sc.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO schedules (name, cron, timezone, target, target_ids, spread_seconds,
			enabled, next_run_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sc.Name, sc.Cron, sc.Timezone, sc.Target, ids, sc.SpreadSeconds, sc.Enabled, nullScheduleTime(sc.NextRunAt), now, now)
		if err != nil {
			return fmt.Errorf("insert schedule: %w", err)
		}
		out, err = getSchedule(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateSchedule reads the schedule, lets patch change it (patch may refuse
// with its own error) and writes it back, in one transaction. When the
// cron expression, time zone or enabled flag changes, the next run is
// cleared (so a re-enabled schedule never fires a tick it missed while
// disabled) unless patch set NextRunAt itself; LastRunAt is kept.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateSchedule(ctx context.Context, id int64, patch func(*Schedule) error) (Schedule, error) {
	var out Schedule
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := getSchedule(ctx, tx, id)
		if err != nil {
			return err
		}
		sc := cur
		sc.TargetIDs = slices.Clone(cur.TargetIDs)
		if err := patch(&sc); err != nil {
			return err
		}
		ids, err := normalizeTargetIDs(&sc)
		if err != nil {
			return err
		}
		if sc.Target != cur.Target || !slices.Equal(sc.TargetIDs, cur.TargetIDs) {
			if err := s.checkScheduleTargets(ctx, tx, sc.Target, ids); err != nil {
				return err
			}
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM schedules WHERE name = ? AND id <> ?`, sc.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		next := sc.NextRunAt
		nextPatched := !sameTime(cur.NextRunAt, sc.NextRunAt)
		if !nextPatched && (sc.Cron != cur.Cron || sc.Timezone != cur.Timezone || sc.Enabled != cur.Enabled) {
			next = nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schedules SET name = ?, cron = ?, timezone = ?, target = ?, target_ids = ?,
			spread_seconds = ?, enabled = ?, next_run_at = ?, updated_at = ? WHERE id = ?`,
			sc.Name, sc.Cron, sc.Timezone, sc.Target, ids, sc.SpreadSeconds, sc.Enabled, nullScheduleTime(next), Now(), id); err != nil {
			return fmt.Errorf("update schedule: %w", err)
		}
		out, err = getSchedule(ctx, tx, id)
		return err
	})
	return out, err
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// DeleteSchedule removes a schedule. Jobs it already queued stay queued.
func (s *Store) DeleteSchedule(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete schedule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DueSchedules returns, by id, the enabled schedules the scheduler has
// work for at now: those whose next run is at or before now, and those
// whose next run is not computed yet (NextRunAt nil).
func (s *Store) DueSchedules(ctx context.Context, now time.Time) ([]Schedule, error) {
	items, err := engine.QueryAll(ctx, s.reader, scanSchedule, `SELECT `+scheduleColumns+` FROM schedules
		WHERE enabled = 1 AND (next_run_at IS NULL OR next_run_at <= ?) ORDER BY id`, scheduleTime(now))
	if err != nil {
		return nil, fmt.Errorf("due schedules: %w", err)
	}
	return items, nil
}

// NextScheduleRunAfter is the earliest next run of an enabled schedule
// that lies after t, if any; the scheduler sleeps until then.
func (s *Store) NextScheduleRunAfter(ctx context.Context, t time.Time) (time.Time, bool, error) {
	var at sql.NullString
	if err := s.reader.QueryRowContext(ctx, `SELECT MIN(next_run_at) FROM schedules WHERE enabled = 1 AND next_run_at > ?`,
		scheduleTime(t)).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next schedule run: %w", err)
	}
	next, err := parseNullTime(at)
	if err != nil || next == nil {
		return time.Time{}, false, err
	}
	return *next, true, nil
}

// ClaimScheduleRun moves a schedule's next run from expectedNext to newNext
// and records expectedNext as its last run, only if the next run still is
// expectedNext. Whoever gets true fires that tick; every other process or
// scheduler gets false, so a tick never fires twice.
func (s *Store) ClaimScheduleRun(ctx context.Context, id int64, expectedNext, newNext time.Time) (bool, error) {
	res, err := s.writer.ExecContext(ctx, `UPDATE schedules SET next_run_at = ?, last_run_at = ?
		WHERE id = ? AND next_run_at = ?`, scheduleTime(newNext), scheduleTime(expectedNext), id, scheduleTime(expectedNext))
	if err != nil {
		return false, fmt.Errorf("claim run of schedule %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// FireScheduleRun is ClaimScheduleRun and the queueing of the tick's
// backups in one transaction: either the schedule moves on to newNext and
// the jobs of reqs are queued, or neither happens. A scheduler that dies
// at any point therefore leaves the tick either fired or still due, and
// the next scheduler (another node's, after it takes the lead) neither
// fires it again nor skips it. It reports false, queueing nothing, when
// the next run is no longer expectedNext (another scheduler fired the
// tick, or the schedule changed).
func (s *Store) FireScheduleRun(ctx context.Context, id int64, expectedNext, newNext time.Time, reqs []queue.JobRequest) (bool, error) {
	var fired bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		fired = false
		res, err := tx.ExecContext(ctx, `UPDATE schedules SET next_run_at = ?, last_run_at = ?
			WHERE id = ? AND next_run_at = ?`, scheduleTime(newNext), scheduleTime(expectedNext), id, scheduleTime(expectedNext))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		if _, err := queue.EnqueueTx(ctx, tx, s.d, reqs); err != nil {
			return err
		}
		fired = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("fire schedule %d: %w", id, err)
	}
	return fired, nil
}

// ReleaseScheduleRun undoes a ClaimScheduleRun whose backups could not be
// queued: the next run goes back to tick and the last run to lastRunAt,
// only if nobody changed the schedule since (the next run still is
// claimedNext), so that the tick is tried again.
func (s *Store) ReleaseScheduleRun(ctx context.Context, id int64, claimedNext, tick time.Time, lastRunAt *time.Time) (bool, error) {
	res, err := s.writer.ExecContext(ctx, `UPDATE schedules SET next_run_at = ?, last_run_at = ?
		WHERE id = ? AND next_run_at = ?`, scheduleTime(tick), nullScheduleTime(lastRunAt), id, scheduleTime(claimedNext))
	if err != nil {
		return false, fmt.Errorf("release run of schedule %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// InitScheduleNextRun sets the next run of a schedule that has none; it
// reports false when the schedule is gone or already has one.
func (s *Store) InitScheduleNextRun(ctx context.Context, id int64, next time.Time) (bool, error) {
	res, err := s.writer.ExecContext(ctx, `UPDATE schedules SET next_run_at = ? WHERE id = ? AND next_run_at IS NULL`,
		scheduleTime(next), id)
	if err != nil {
		return false, fmt.Errorf("set next run of schedule %d: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// TargetDevices resolves a schedule target into the IDs of the enabled
// devices it covers, ascending: every enabled device for "all"; for
// "groups", the enabled devices in those groups and all their descendant
// groups; for "devices", those of ids that exist and are enabled.
func (s *Store) TargetDevices(ctx context.Context, target string, ids []int64) ([]int64, error) {
	var where string
	var args []any
	switch target {
	case ScheduleTargetAll:
		where = "1=1"
	case ScheduleTargetGroups:
		if len(ids) == 0 {
			return []int64{}, nil
		}
		where, args = Scope{GroupIDs: ids}.clause()
	case ScheduleTargetDevices:
		if len(ids) == 0 {
			return []int64{}, nil
		}
		raw, err := json.Marshal(ids)
		if err != nil {
			return nil, err
		}
		// One JSON argument instead of one placeholder per device: a
		// target may list thousands of devices.
		where, args = `d.id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`)`, []any{string(raw)}
	default:
		return nil, fmt.Errorf("target devices: unknown target %q", target)
	}
	out, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT d.id FROM devices d WHERE d.enabled = 1 AND `+where+` ORDER BY d.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("target devices: %w", err)
	}
	return out, nil
}

// DeviceAddress is where a device listens: all a reachability check needs.
type DeviceAddress struct {
	ID   int64
	Host string
	Port int
}

// EnabledDeviceAddresses returns up to limit enabled devices of the
// server's own zone with an id above afterID, by id: callers walk a large
// inventory page by page without holding every device in memory. Another
// zone's addresses mean nothing from here.
func (s *Store) EnabledDeviceAddresses(ctx context.Context, afterID int64, limit int) ([]DeviceAddress, error) {
	out, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (DeviceAddress, error) {
		var a DeviceAddress
		return a, r.Scan(&a.ID, &a.Host, &a.Port)
	}, `SELECT id, host, port FROM devices WHERE enabled = 1 AND zone_id = 1 AND id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("device addresses: %w", err)
	}
	return out, nil
}

// ScheduleGroups returns the groups visible in scope, in tree order (a
// parent before its children): the groups a schedule editor may target.
func (s *Store) ScheduleGroups(ctx context.Context, scope Scope) ([]Group, error) {
	if scope.All {
		return s.AllGroups(ctx)
	}
	if len(scope.GroupIDs) == 0 {
		return []Group{}, nil
	}
	groups, err := engine.QueryAll(ctx, s.reader, scanGroup, `SELECT `+groupColumns+` FROM device_groups
		WHERE id IN (`+scopeGroupsQuery(len(scope.GroupIDs))+`) ORDER BY depth, sort_order, name, id`, scopeArgs(scope)...)
	if err != nil {
		return nil, fmt.Errorf("groups in scope: %w", err)
	}
	return groups, nil
}

// DeviceRef names a device: enough to show and to check a schedule's
// target.
type DeviceRef struct {
	ID      int64
	Name    string
	GroupID *int64
}

func scanDeviceRef(row engine.Scanner) (DeviceRef, error) {
	var d DeviceRef
	var group sql.NullInt64
	if err := row.Scan(&d.ID, &d.Name, &group); err != nil {
		return d, err
	}
	if group.Valid {
		d.GroupID = &group.Int64
	}
	return d, nil
}

// ScheduleDevicesByName returns the devices visible in scope whose names
// (ignoring case, as names are unique) are among names, by name. A name
// that matches nothing is simply absent: the caller reports it.
func (s *Store) ScheduleDevicesByName(ctx context.Context, scope Scope, names []string) ([]DeviceRef, error) {
	if len(names) == 0 {
		return []DeviceRef{}, nil
	}
	raw, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	cond, args := scope.clause()
	// One JSON argument rather than a placeholder per name: a target may
	// list thousands of devices.
	out, err := engine.QueryAll(ctx, s.reader, scanDeviceRef, `SELECT d.id, d.name, d.group_id FROM devices d
		WHERE d.name IN (SELECT CAST(value AS citext) FROM `+s.d.JSONEach()+`) AND `+cond+` ORDER BY d.name`,
		append([]any{string(raw)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("devices by name: %w", err)
	}
	return out, nil
}

// ScheduleDeviceNames returns the devices of ids that still exist, by
// name.
func (s *Store) ScheduleDeviceNames(ctx context.Context, ids []int64) ([]DeviceRef, error) {
	if len(ids) == 0 {
		return []DeviceRef{}, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	out, err := engine.QueryAll(ctx, s.reader, scanDeviceRef, `SELECT d.id, d.name, d.group_id FROM devices d
		WHERE d.id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`) ORDER BY d.name`, string(raw))
	if err != nil {
		return nil, fmt.Errorf("device names: %w", err)
	}
	return out, nil
}

// ScheduleTargetInScope reports whether a schedule's target lies wholly
// in scope, which a user needs to change or delete the schedule: "all"
// only for a user who sees every group; groups that are in scope; devices
// in groups that are in scope. Targets deleted since the schedule was
// saved are skipped, as the scheduler skips them.
func (s *Store) ScheduleTargetInScope(ctx context.Context, scope Scope, target string, ids []int64) (bool, error) {
	if scope.All {
		return true, nil
	}
	if target == ScheduleTargetAll {
		return false, nil
	}
	if len(ids) == 0 {
		return true, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return false, err
	}
	var query string
	args := []any{string(raw)}
	switch target {
	case ScheduleTargetGroups:
		query = `SELECT COUNT(*) FROM device_groups x WHERE x.id IN (SELECT CAST(value AS BIGINT) FROM ` + s.d.JSONEach() + `)`
		if len(scope.GroupIDs) > 0 {
			query += ` AND x.id NOT IN (` + scopeGroupsQuery(len(scope.GroupIDs)) + `)`
			args = append(args, scopeArgs(scope)...)
		}
	case ScheduleTargetDevices:
		cond, cargs := scope.clause()
		// A device outside any group is in no scope but All; COALESCE
		// turns its NULL comparison into "outside".
		query = `SELECT COUNT(*) FROM devices d WHERE d.id IN (SELECT CAST(value AS BIGINT) FROM ` + s.d.JSONEach() + `)
			AND NOT COALESCE((` + cond + `), 0=1)`
		args = append(args, cargs...)
	default:
		return false, fmt.Errorf("schedule target in scope: unknown target %q", target)
	}
	var outside int
	if err := s.reader.QueryRowContext(ctx, query, args...).Scan(&outside); err != nil {
		return false, fmt.Errorf("schedule target in scope: %w", err)
	}
	return outside == 0, nil
}
