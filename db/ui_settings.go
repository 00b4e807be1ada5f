package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Queries of the web interface's schedules, rules and settings pages.

// UpdateSetting reads the JSON stored under key into v (found reports
// whether it was set; v is left alone when not), lets change modify v,
// and stores v back, all in one write transaction: two people editing a
// list setting at once cannot lose each other's change. An error from
// change stores nothing and is returned as is.
func (s *Store) UpdateSetting(ctx context.Context, key string, v any, change func(found bool) error) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
		found := err == nil
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("get setting %s: %w", key, err)
		default:
			if err := json.Unmarshal([]byte(raw), v); err != nil {
				return fmt.Errorf("setting %s: %w", key, err)
			}
		}
		if err := change(found); err != nil {
			return err
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("setting %s: %w", key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			key, string(out), Now()); err != nil {
			return fmt.Errorf("put setting %s: %w", key, err)
		}
		return nil
	})
}

// SettingUpdatedAt is when the setting under key was last stored; false
// when it never was.
func (s *Store) SettingUpdatedAt(ctx context.Context, key string) (time.Time, bool, error) {
	var at string
	err := s.reader.QueryRowContext(ctx, `SELECT updated_at FROM settings WHERE key = ?`, key).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("setting %s updated_at: %w", key, err)
	}
	t, err := ParseTime(at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("setting %s updated_at: %w", key, err)
	}
	return t, true, nil
}

// scopeGroupsQuery selects the ids of the groups a scope of n listed
// groups covers: those groups and all their descendants.
func scopeGroupsQuery(n int) string {
	return `SELECT g.id FROM device_groups g JOIN device_groups s
		ON substr(g.path, 1, length(s.path)) = s.path WHERE s.id IN (` + placeholders(n) + `)`
}

func scopeArgs(scope Scope) []any {
	args := make([]any, len(scope.GroupIDs))
	for i, id := range scope.GroupIDs {
		args[i] = id
	}
	return args
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
	groups, err := queryAll(ctx, s.reader, scanGroup, `SELECT `+groupColumns+` FROM device_groups
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

func scanDeviceRef(row scanner) (DeviceRef, error) {
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
	out, err := queryAll(ctx, s.reader, scanDeviceRef, `SELECT d.id, d.name, d.group_id FROM devices d
		WHERE d.name IN (SELECT value FROM json_each(?)) AND `+cond+` ORDER BY d.name`,
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
	out, err := queryAll(ctx, s.reader, scanDeviceRef, `SELECT d.id, d.name, d.group_id FROM devices d
		WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.name`, string(raw))
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
		query = `SELECT COUNT(*) FROM device_groups x WHERE x.id IN (SELECT value FROM json_each(?))`
		if len(scope.GroupIDs) > 0 {
			query += ` AND x.id NOT IN (` + scopeGroupsQuery(len(scope.GroupIDs)) + `)`
			args = append(args, scopeArgs(scope)...)
		}
	case ScheduleTargetDevices:
		cond, cargs := scope.clause()
		// A device outside any group is in no scope but All; COALESCE
		// turns its NULL comparison into "outside".
		query = `SELECT COUNT(*) FROM devices d WHERE d.id IN (SELECT value FROM json_each(?))
			AND NOT COALESCE((` + cond + `), 0)`
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
