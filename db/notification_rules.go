package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"backupd/db/engine"
	"backupd/db/outbox"
)

// NotificationRule sends Events of the devices in its scope to Channels.
type NotificationRule struct {
	ID      int64
	Name    string
	Enabled bool
	Events  []outbox.EventKind
	// Scope is all, groups (GroupIDs and their subgroups) or devices
	// (DeviceIDs).
	Scope      string
	GroupIDs   []int64
	DeviceIDs  []int64
	ChannelIDs []int64
	// IncludeDiff lets the configuration diff into the message.
	IncludeDiff bool
	// FailureThreshold is how many failed backups (or reachability
	// checks) in a row make backup.failed (device.unreachable); 0 means 1.
	FailureThreshold int
	CreatedAt        string
	UpdatedAt        string
}

func (r *NotificationRule) check() error {
	if err := checkName(r.Name); err != nil {
		return err
	}
	if len(r.Events) == 0 {
		return &ErrInvalidField{"events", "must name at least one event"}
	}
	for _, k := range r.Events {
		if !k.Valid() {
			return &ErrInvalidField{"events", fmt.Sprintf("unknown event %q", k)}
		}
	}
	r.Events = slices.Clone(r.Events)
	slices.Sort(r.Events)
	r.Events = slices.Compact(r.Events)
	r.GroupIDs, r.DeviceIDs, r.ChannelIDs = uniqueIDs(r.GroupIDs), uniqueIDs(r.DeviceIDs), uniqueIDs(r.ChannelIDs)
	switch r.Scope {
	case RuleScopeAll:
		if len(r.GroupIDs) > 0 || len(r.DeviceIDs) > 0 {
			return &ErrInvalidField{"scope", "a rule for all devices lists no groups or devices"}
		}
	case RuleScopeGroups:
		if len(r.GroupIDs) == 0 || len(r.DeviceIDs) > 0 {
			return &ErrInvalidField{"group_ids", "a rule for groups lists at least one group and no devices"}
		}
	case RuleScopeDevices:
		if len(r.DeviceIDs) == 0 || len(r.GroupIDs) > 0 {
			return &ErrInvalidField{"device_ids", "a rule for devices lists at least one device and no groups"}
		}
	default:
		return &ErrInvalidField{"scope", "must be all, groups or devices"}
	}
	if len(r.ChannelIDs) == 0 {
		return &ErrInvalidField{"channel_ids", "must name at least one channel"}
	}
	for field, ids := range map[string][]int64{"group_ids": r.GroupIDs, "device_ids": r.DeviceIDs, "channel_ids": r.ChannelIDs} {
		if len(ids) > MaxRuleTargets {
			return &ErrInvalidField{field, fmt.Sprintf("must list at most %d", MaxRuleTargets)}
		}
	}
	if r.FailureThreshold == 0 {
		r.FailureThreshold = 1
	}
	if r.FailureThreshold < 1 || r.FailureThreshold > MaxRuleThreshold {
		return &ErrInvalidField{"failure_threshold", fmt.Sprintf("must be between 1 and %d", MaxRuleThreshold)}
	}
	return nil
}

// checkRuleReferences verifies that every group, device and channel a
// rule names exists.
func (s *Store) checkRuleReferences(ctx context.Context, q engine.Querier, r NotificationRule) error {
	for _, ref := range []struct {
		field, table, what string
		ids                []int64
	}{
		{"group_ids", "device_groups", "group", r.GroupIDs},
		{"device_ids", "devices", "device", r.DeviceIDs},
		{"channel_ids", "notification_channels", "channel", r.ChannelIDs},
	} {
		if len(ref.ids) == 0 {
			continue
		}
		raw, err := json.Marshal(ref.ids)
		if err != nil {
			return err
		}
		var missing sql.NullInt64
		err = q.QueryRowContext(ctx, `SELECT MIN(j.id) FROM (SELECT CAST(value AS BIGINT) AS id FROM `+s.d.JSONEach()+`) j
			WHERE NOT EXISTS (SELECT 1 FROM `+ref.table+` t WHERE t.id = j.id)`, string(raw)).Scan(&missing)
		if err != nil {
			return err
		}
		if missing.Valid {
			return &ErrReference{ref.field, fmt.Sprintf("%s %d does not exist", ref.what, missing.Int64)}
		}
	}
	return nil
}

const ruleColumns = `id, name, enabled, scope, include_diff, failure_threshold, created_at, updated_at`

func scanRule(row engine.Scanner) (NotificationRule, error) {
	var r NotificationRule
	err := row.Scan(&r.ID, &r.Name, &r.Enabled, &r.Scope, &r.IncludeDiff, &r.FailureThreshold, &r.CreatedAt, &r.UpdatedAt)
	return r, err
}

// loadRuleLists fills the events, groups, devices and channels of rules.
func loadRuleLists(ctx context.Context, q engine.Querier, rules []NotificationRule) error {
	if len(rules) == 0 {
		return nil
	}
	byID := make(map[int64]*NotificationRule, len(rules))
	for i := range rules {
		r := &rules[i]
		r.Events, r.GroupIDs, r.DeviceIDs, r.ChannelIDs = []outbox.EventKind{}, []int64{}, []int64{}, []int64{}
		byID[r.ID] = r
	}
	err := engine.EachRow(ctx, q, `SELECT rule_id, event FROM notification_rule_events ORDER BY rule_id, event`, nil, func(row engine.Scanner) error {
		var id int64
		var k string
		if err := row.Scan(&id, &k); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.Events = append(r.Events, outbox.EventKind(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range []struct {
		table, column string
		list          func(*NotificationRule) *[]int64
	}{
		{"notification_rule_groups", "group_id", func(r *NotificationRule) *[]int64 { return &r.GroupIDs }},
		{"notification_rule_devices", "device_id", func(r *NotificationRule) *[]int64 { return &r.DeviceIDs }},
		{"notification_rule_channels", "channel_id", func(r *NotificationRule) *[]int64 { return &r.ChannelIDs }},
	} {
		err := engine.EachRow(ctx, q, `SELECT rule_id, `+l.column+` FROM `+l.table+` ORDER BY rule_id, `+l.column, nil, func(row engine.Scanner) error {
			var id, v int64
			if err := row.Scan(&id, &v); err != nil {
				return err
			}
			if r := byID[id]; r != nil {
				*l.list(r) = append(*l.list(r), v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// NotificationRules returns every rule by name, with its lists.
func (s *Store) NotificationRules(ctx context.Context) ([]NotificationRule, error) {
	rules, err := engine.QueryAll(ctx, s.reader, scanRule, `SELECT `+ruleColumns+` FROM notification_rules ORDER BY name, id`)
	if err == nil {
		err = loadRuleLists(ctx, s.reader, rules)
	}
	if err != nil {
		return nil, fmt.Errorf("list notification rules: %w", err)
	}
	return rules, nil
}

// GetNotificationRule returns one rule or ErrNotFound.
func (s *Store) GetNotificationRule(ctx context.Context, id int64) (NotificationRule, error) {
	return getRule(ctx, s.reader, id)
}

func getRule(ctx context.Context, q engine.Querier, id int64) (NotificationRule, error) {
	r, err := scanRule(q.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM notification_rules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err == nil {
		rules := []NotificationRule{r}
		err = loadRuleListsOf(ctx, q, rules)
		r = rules[0]
	}
	if err != nil {
		return r, fmt.Errorf("get notification rule %d: %w", id, err)
	}
	return r, nil
}

// loadRuleListsOf fills the lists of one rule without reading every
// rule's.
func loadRuleListsOf(ctx context.Context, q engine.Querier, rules []NotificationRule) error {
	r := &rules[0]
	var err error
	r.Events, err = engine.QueryAll(ctx, q, func(row engine.Scanner) (outbox.EventKind, error) {
		var k string
		return outbox.EventKind(k), row.Scan(&k)
	}, `SELECT event FROM notification_rule_events WHERE rule_id = ? ORDER BY event`, r.ID)
	if err != nil {
		return err
	}
	for _, l := range []struct {
		table, column string
		dst           *[]int64
	}{
		{"notification_rule_groups", "group_id", &r.GroupIDs},
		{"notification_rule_devices", "device_id", &r.DeviceIDs},
		{"notification_rule_channels", "channel_id", &r.ChannelIDs},
	} {
		*l.dst, err = engine.QueryAll(ctx, q, scanID, `SELECT `+l.column+` FROM `+l.table+` WHERE rule_id = ? ORDER BY `+l.column, r.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// writeRuleLists replaces the rule's events, groups, devices and channels.
func (s *Store) writeRuleLists(ctx context.Context, tx *sql.Tx, r NotificationRule) error {
	for _, table := range []string{"notification_rule_events", "notification_rule_groups", "notification_rule_devices", "notification_rule_channels"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE rule_id = ?`, r.ID); err != nil {
			return err
		}
	}
	events := make([]string, len(r.Events))
	for i, k := range r.Events {
		events[i] = string(k)
	}
	for _, l := range []struct {
		table, column, kind string
		values              any
	}{
		{"notification_rule_events", "event", "TEXT", events},
		{"notification_rule_groups", "group_id", "BIGINT", r.GroupIDs},
		{"notification_rule_devices", "device_id", "BIGINT", r.DeviceIDs},
		{"notification_rule_channels", "channel_id", "BIGINT", r.ChannelIDs},
	} {
		raw, err := json.Marshal(l.values)
		if err != nil {
			return err
		}
		if string(raw) == "null" || string(raw) == "[]" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+l.table+` (rule_id, `+l.column+`) SELECT ?, CAST(value AS `+l.kind+`) FROM `+s.d.JSONEach(),
			r.ID, string(raw)); err != nil {
			return err
		}
	}
	return nil
}

// CreateNotificationRule checks and inserts r.
func (s *Store) CreateNotificationRule(ctx context.Context, r NotificationRule) (NotificationRule, error) {
	if err := r.check(); err != nil {
		return NotificationRule{}, err
	}
	var out NotificationRule
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkRuleReferences(ctx, tx, r); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rules WHERE name = ?`, r.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		var err error
		r.ID, err = engine.InsertID(ctx, tx, `INSERT INTO notification_rules (name, enabled, scope, include_diff, failure_threshold, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Name, r.Enabled, r.Scope, r.IncludeDiff, r.FailureThreshold, now, now)
		if err != nil {
			return fmt.Errorf("insert notification rule: %w", err)
		}
		if err := s.writeRuleLists(ctx, tx, r); err != nil {
			return fmt.Errorf("insert notification rule: %w", err)
		}
		out, err = getRule(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// UpdateNotificationRule reads the rule, lets patch change it, checks and
// writes it back, in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateNotificationRule(ctx context.Context, id int64, patch func(*NotificationRule) error) (NotificationRule, error) {
	var out NotificationRule
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := getRule(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&r); err != nil {
			return err
		}
		r.ID = id
		if err := r.check(); err != nil {
			return err
		}
		if err := s.checkRuleReferences(ctx, tx, r); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM notification_rules WHERE name = ? AND id <> ?`, r.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_rules SET name = ?, enabled = ?, scope = ?, include_diff = ?,
				failure_threshold = ?, updated_at = ? WHERE id = ?`,
			r.Name, r.Enabled, r.Scope, r.IncludeDiff, r.FailureThreshold, Now(), id); err != nil {
			return fmt.Errorf("update notification rule: %w", err)
		}
		if err := s.writeRuleLists(ctx, tx, r); err != nil {
			return fmt.Errorf("update notification rule: %w", err)
		}
		out, err = getRule(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteNotificationRule removes a rule. Events it already recorded are
// still delivered.
func (s *Store) DeleteNotificationRule(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM notification_rules WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete notification rule %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
