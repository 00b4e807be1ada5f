package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Recording events: what the outbox keeps of an event, the matching of
// an event against the notification rules, and the events of a backup's
// end, a reachability check and the stale check, each written in the
// transaction of what caused it.

// EventPayload is what the outbox keeps of an event: the facts needed to
// render it when it is sent. Never a secret, never configuration text (a
// diff is rendered at send time from BackupID and PreviousBackupID).
type EventPayload struct {
	Kind     EventKind `json:"kind"`
	At       time.Time `json:"at"`
	Trigger  string    `json:"trigger"`
	DeviceID int64     `json:"device_id"`
	// The device as it was when the event happened (it may be renamed or
	// deleted before the event is sent).
	DeviceName     string `json:"device_name"`
	DeviceHost     string `json:"device_host"`
	DevicePlatform string `json:"device_platform"`
	GroupID        *int64 `json:"group_id,omitempty"`
	// GroupPath names the device's group and its ancestors, root first.
	GroupPath []string `json:"group_path,omitempty"`
	// BackupID is the attempt that caused the event; PreviousBackupID the
	// good version a change is against.
	BackupID         string        `json:"backup_id,omitempty"`
	PreviousBackupID string        `json:"previous_backup_id,omitempty"`
	Failure          *EventFailure `json:"failure,omitempty"`
	Stale            *EventStale   `json:"stale,omitempty"`
	Git              *EventGit     `json:"git,omitempty"`
}

// EventGit is the git mirror's remote (without credentials) and how many
// tries the push took, for git.push_failed and git.push_recovered.
type EventGit struct {
	Remote   string `json:"remote"`
	Attempts int    `json:"attempts"`
}

// EventFailure is why a backup failed (or a device is unreachable), and
// for how many attempts in a row.
type EventFailure struct {
	Stage       string `json:"stage"`
	Reason      string `json:"reason"`
	Consecutive int    `json:"consecutive"`
}

// EventStale is how long a device has gone without a good backup.
type EventStale struct {
	LastGoodAt       *time.Time `json:"last_good_at,omitempty"` // nil: never
	ThresholdSeconds int64      `json:"threshold_seconds"`
}

// thresholdTest is how an event's rules compare their failure threshold
// with the count of failures in a row.
type thresholdTest int

const (
	anyThreshold    thresholdTest = iota
	thresholdEquals               // the count just reached the rule's threshold
	thresholdAtMost               // the streak that ended had reached it
)

// deviceFacts is what an event names of its device.
type deviceFacts struct {
	name, host, platform   string
	groupID                *int64
	lastGood, createdAt    sql.NullString
	pendingHostKey         []byte
	consecutive, unreached int
	// wanted is ",kind,kind," of the kinds some enabled rule names: the
	// rest need no matching at all.
	wanted sql.NullString
}

func (f *deviceFacts) wants(k EventKind) bool {
	return f.wanted.Valid && strings.Contains(f.wanted.String, ","+string(k)+",")
}

// The queries of recording an event. The store prepares them once on its
// writer connection (see prepared): SQLite compiles the rule matching
// query in more time than it takes to run.
const (
	matchRulesQuery = `SELECT rc.channel_id, MAX(r.include_diff) FROM notification_rule_events e
			JOIN notification_rules r ON r.id = e.rule_id
			JOIN notification_rule_channels rc ON rc.rule_id = r.id
			JOIN notification_channels ch ON ch.id = rc.channel_id
		WHERE e.event = ? AND r.enabled = 1 AND ch.enabled = 1
			AND CASE CAST(? AS INTEGER) WHEN 1 THEN r.failure_threshold = ? WHEN 2 THEN r.failure_threshold <= ? ELSE 1 = 1 END
			AND (r.scope = 'all'
			OR (r.scope = 'devices' AND EXISTS (SELECT 1 FROM notification_rule_devices rd
				WHERE rd.rule_id = r.id AND rd.device_id = ?))
			OR (r.scope = 'groups' AND EXISTS (SELECT 1 FROM notification_rule_groups rg
				JOIN device_groups s ON s.id = rg.group_id
				JOIN devices d ON d.id = ?
				JOIN device_groups g ON g.id = d.group_id
				WHERE rg.rule_id = r.id AND substr(g.path, 1, length(s.path)) = s.path)))
		GROUP BY rc.channel_id ORDER BY rc.channel_id`
	insertOutboxQuery = `INSERT INTO outbox (kind, device_id, created_at, payload) VALUES (?, ?, ?, ?)`
	previousGoodQuery = `SELECT id FROM backups WHERE device_id = ? AND success = 1 AND id <> ?
				ORDER BY started_at DESC LIMIT 1`
	saveStateQuery = `INSERT INTO notification_device_state (device_id, consecutive_failures, unreachable_count)
		VALUES (?, ?, ?) ON CONFLICT (device_id) DO UPDATE SET consecutive_failures = excluded.consecutive_failures,
			unreachable_count = excluded.unreachable_count`
)

// wantedEventsQuery is ",kind,kind," of the kinds some enabled rule names.
func wantedEventsQuery(d dialect) string {
	return `SELECT ',' || ` + d.joinedDistinct("e.event") + ` || ',' FROM notification_rule_events e
				JOIN notification_rules r ON r.id = e.rule_id WHERE r.enabled = 1`
}

func deviceFactsQuery(d dialect) string {
	return `SELECT d.name, d.host, d.platform, d.group_id, d.last_good_backup_at, d.created_at,
			d.pending_host_key, n.consecutive_failures, n.unreachable_count,
			(` + wantedEventsQuery(d) + `)
		FROM devices d LEFT JOIN notification_device_state n ON n.device_id = d.id WHERE d.id = ?`
}

// insertDeliveriesQuery writes an event's deliveries, one JSON parameter
// of [[channel, diff], ...] for all of them.
func insertDeliveriesQuery(d dialect) string {
	return `INSERT INTO deliveries (outbox_id, channel_id, include_diff, state, next_attempt_at, created_at, updated_at)
		SELECT ?, p.a, p.b, 'pending', ?, ?, ? FROM ` + d.jsonIntPairs() + ` p`
}

// eventQueries are prepared when the store opens.
func eventQueries(d dialect) []string {
	return []string{matchRulesQuery, deviceFactsQuery(d), insertOutboxQuery, insertDeliveriesQuery(d), previousGoodQuery, saveStateQuery}
}

// recordEvent matches the enabled rules of p.Kind whose scope holds the
// device, and when any does, writes the event and one delivery per channel
// of those rules (with the diff when any of the rules allows it). With no
// rule matching nothing is written. It reports whether it recorded.
func recordEvent(ctx context.Context, q querier, d dialect, f *deviceFacts, p EventPayload, test thresholdTest, count int) (bool, error) {
	if !f.wants(p.Kind) {
		return false, nil
	}
	args := []any{string(p.Kind), int(test), count, count, p.DeviceID, p.DeviceID}
	type target struct {
		channel int64
		diff    bool
	}
	targets, err := queryAll(ctx, q, func(row scanner) (target, error) {
		var t target
		return t, row.Scan(&t.channel, &t.diff)
	}, matchRulesQuery, args...)
	if err != nil {
		return false, fmt.Errorf("match notification rules: %w", err)
	}
	if len(targets) == 0 {
		return false, nil
	}
	if p.GroupID != nil {
		p.GroupPath, err = queryAll(ctx, q, func(r scanner) (string, error) {
			var name string
			return name, r.Scan(&name)
		}, `SELECT a.name FROM device_groups g JOIN device_groups a ON substr(g.path, 1, length(a.path)) = a.path
			WHERE g.id = ? ORDER BY a.depth`, *p.GroupID)
		if err != nil {
			return false, fmt.Errorf("group of device %d: %w", p.DeviceID, err)
		}
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return false, err
	}
	now := backupTime(time.Now())
	outboxID, err := insertID(ctx, q, insertOutboxQuery,
		string(p.Kind), p.DeviceID, backupTime(p.At), string(payload))
	if err != nil {
		return false, fmt.Errorf("record %s event: %w", p.Kind, err)
	}
	// One statement for every channel: [[channel, diff], ...].
	rows := make([][2]int64, len(targets))
	for i, t := range targets {
		rows[i][0] = t.channel
		if t.diff {
			rows[i][1] = 1
		}
	}
	raw, err := json.Marshal(rows)
	if err != nil {
		return false, err
	}
	if _, err := q.ExecContext(ctx, insertDeliveriesQuery(d), outboxID, now, now, now, string(raw)); err != nil {
		return false, fmt.Errorf("record %s deliveries: %w", p.Kind, err)
	}
	return true, nil
}

// loadDeviceFacts reads what the events name of a device, and its
// hysteresis state.
func loadDeviceFacts(ctx context.Context, q querier, d dialect, deviceID int64) (deviceFacts, error) {
	var f deviceFacts
	var group sql.NullInt64
	var consecutive, unreached sql.NullInt64
	err := q.QueryRowContext(ctx, deviceFactsQuery(d), deviceID).Scan(
		&f.name, &f.host, &f.platform, &group, &f.lastGood, &f.createdAt, &f.pendingHostKey, &consecutive, &unreached, &f.wanted)
	if errors.Is(err, sql.ErrNoRows) {
		return f, ErrNotFound
	}
	if err != nil {
		return f, fmt.Errorf("device %d for notifications: %w", deviceID, err)
	}
	if group.Valid {
		f.groupID = &group.Int64
	}
	f.consecutive, f.unreached = int(consecutive.Int64), int(unreached.Int64)
	return f, nil
}

func (f *deviceFacts) payload(kind EventKind, deviceID int64, at time.Time, trigger string) EventPayload {
	return EventPayload{Kind: kind, At: at.UTC(), Trigger: trigger, DeviceID: deviceID,
		DeviceName: f.name, DeviceHost: f.host, DevicePlatform: f.platform, GroupID: f.groupID}
}

// saveDeviceState writes the device's hysteresis counters when they
// changed.
func saveDeviceState(ctx context.Context, q querier, deviceID int64, f deviceFacts, consecutive, unreached int) error {
	if consecutive == f.consecutive && unreached == f.unreached {
		return nil
	}
	_, err := q.ExecContext(ctx, saveStateQuery, deviceID, consecutive, unreached)
	if err != nil {
		return fmt.Errorf("notification state of device %d: %w", deviceID, err)
	}
	return nil
}

// reachabilityEvent records device.unreachable once the failed checks in
// a row reach a rule's threshold, and device.reachable on the first good
// check after a streak that did. It returns the new count.
func reachabilityEvent(ctx context.Context, q querier, d dialect, f *deviceFacts, deviceID int64, reachable bool, at time.Time, trigger, stage, reason string) (int, error) {
	if reachable {
		if f.unreached > 0 {
			p := f.payload(EventDeviceReachable, deviceID, at, trigger)
			p.Failure = &EventFailure{Stage: stage, Reason: reason, Consecutive: f.unreached}
			if _, err := recordEvent(ctx, q, d, f, p, thresholdAtMost, f.unreached); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	n := f.unreached + 1
	p := f.payload(EventDeviceUnreachable, deviceID, at, trigger)
	p.Failure = &EventFailure{Stage: stage, Reason: reason, Consecutive: n}
	_, err := recordEvent(ctx, q, d, f, p, thresholdEquals, n)
	return n, err
}

// recordOutcomeEvents records the events an attempt's end causes, in the
// transaction that records the attempt (FinishJob), before the device row
// is updated. trigger is the attempt's.
func recordOutcomeEvents(ctx context.Context, q querier, d dialect, c Claim, o Outcome, at time.Time, trigger string) error {
	f, err := loadDeviceFacts(ctx, q, d, c.DeviceID)
	if errors.Is(err, ErrNotFound) {
		return nil // the device is gone; the update below touches nothing either
	}
	if err != nil {
		return err
	}
	consecutive, unreached := f.consecutive, f.unreached
	base := func(kind EventKind) EventPayload {
		p := f.payload(kind, c.DeviceID, at, trigger)
		p.BackupID = c.BackupID
		return p
	}
	failed := !o.Success && !o.Cancelled && o.RetryAt == nil
	switch {
	case o.Success:
		switch {
		case o.First:
			if _, err := recordEvent(ctx, q, d, &f, base(EventFirstBackup), anyThreshold, 0); err != nil {
				return err
			}
		case o.Changed && f.wants(EventConfigChanged):
			p := base(EventConfigChanged)
			err := q.QueryRowContext(ctx, previousGoodQuery, c.DeviceID, c.BackupID).Scan(&p.PreviousBackupID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if _, err := recordEvent(ctx, q, d, &f, p, anyThreshold, 0); err != nil {
				return err
			}
		}
		if consecutive > 0 {
			p := base(EventBackupRecovered)
			p.Failure = &EventFailure{Consecutive: consecutive}
			if _, err := recordEvent(ctx, q, d, &f, p, thresholdAtMost, consecutive); err != nil {
				return err
			}
		}
		consecutive = 0
	case failed:
		consecutive++
		p := base(EventBackupFailed)
		p.Failure = &EventFailure{Stage: o.Reason, Reason: o.Error, Consecutive: consecutive}
		if _, err := recordEvent(ctx, q, d, &f, p, thresholdEquals, consecutive); err != nil {
			return err
		}
	}
	if o.Reachable != nil {
		stage, reason := "", ""
		if !*o.Reachable {
			stage, reason = o.Reason, o.Error
		}
		if unreached, err = reachabilityEvent(ctx, q, d, &f, c.DeviceID, *o.Reachable, at, trigger, stage, reason); err != nil {
			return err
		}
	}
	if o.PendingHostKey != nil && !bytes.Equal(o.PendingHostKey, f.pendingHostKey) {
		if _, err := recordEvent(ctx, q, d, &f, base(EventHostKeyChanged), anyThreshold, 0); err != nil {
			return err
		}
	}
	return saveDeviceState(ctx, q, c.DeviceID, f, consecutive, unreached)
}

// RecordReachability records the result of a reachability check, and the
// device.unreachable / device.reachable events it causes, in one
// transaction.
func (s *Store) RecordReachability(ctx context.Context, deviceID int64, reachable bool, at time.Time) error {
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		q := s.prepared(tx)
		f, err := loadDeviceFacts(ctx, q, s.d, deviceID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		stage, reason := "", ""
		if !reachable {
			stage, reason = "connect", "the device did not answer on its port"
		}
		unreached, err := reachabilityEvent(ctx, q, s.d, &f, deviceID, reachable, at, TriggerCheck, stage, reason)
		if err != nil {
			return err
		}
		if err := saveDeviceState(ctx, q, deviceID, f, f.consecutive, unreached); err != nil {
			return err
		}
		status := StatusUnreachable
		if reachable {
			status = StatusReachable
		}
		_, err = q.ExecContext(ctx, `UPDATE devices SET status = ?, last_checked_at = ? WHERE id = ?`,
			status, at.UTC().Format(TimeFormat), deviceID)
		return err
	})
	if err != nil {
		return fmt.Errorf("set reachability of device %d: %w", deviceID, err)
	}
	return nil
}

// staleBatch bounds the devices one transaction of RecordStaleEvents
// handles.
const staleBatch = 500

// RecordStaleEvents records backup.stale for every enabled device whose
// last good backup (or, never backed up, its creation) is older than
// threshold at now, once per stale period: a device is told about again
// only after a newer good backup. It returns how many events it recorded.
// With no enabled rule for backup.stale it reads nothing else.
func (s *Store) RecordStaleEvents(ctx context.Context, now time.Time, threshold time.Duration) (int, error) {
	if threshold <= 0 {
		return 0, &ErrInvalidField{"threshold", "must be positive"}
	}
	wanted, err := exists(ctx, s.reader, `SELECT 1 FROM notification_rule_events e JOIN notification_rules r ON r.id = e.rule_id
		WHERE e.event = ? AND r.enabled = 1 LIMIT 1`, string(EventBackupStale))
	if err != nil || !wanted {
		return 0, err
	}
	cutoffGood, cutoffCreated := backupTime(now.Add(-threshold)), now.Add(-threshold).UTC().Format(TimeFormat)
	recorded := 0
	after := int64(0)
	// Each pass moves after forward past the devices it read: bounded by
	// the device count.
	for {
		var ids []int64
		var batch int // this pass's events, counted once it commits (InTx may run it again)
		err := s.InTx(ctx, func(tx *sql.Tx) error {
			batch = 0
			var err error
			ids, err = queryAll(ctx, tx, scanID, `SELECT d.id FROM devices d
					LEFT JOIN notification_device_state n ON n.device_id = d.id
				WHERE d.enabled = 1 AND d.id > ?
					AND (d.last_good_backup_at < ? OR (d.last_good_backup_at IS NULL AND d.created_at < ?))
					AND `+s.d.differ("n.stale_notified_for", "COALESCE(d.last_good_backup_at, d.created_at)")+`
				ORDER BY d.id LIMIT ?`, after, cutoffGood, cutoffCreated, staleBatch)
			if err != nil {
				return err
			}
			q := s.prepared(tx)
			for _, id := range ids {
				f, err := loadDeviceFacts(ctx, q, s.d, id)
				if err != nil {
					return err
				}
				p := f.payload(EventBackupStale, id, now, TriggerCheck)
				p.Stale = &EventStale{ThresholdSeconds: int64(threshold / time.Second)}
				mark := f.createdAt.String
				if f.lastGood.Valid {
					mark = f.lastGood.String
					if t, err := time.ParseInLocation(BackupTimeFormat, f.lastGood.String, time.UTC); err == nil {
						p.Stale.LastGoodAt = &t
					}
				}
				ok, err := recordEvent(ctx, q, s.d, &f, p, anyThreshold, 0)
				if err != nil {
					return err
				}
				if ok {
					batch++
				}
				// Told or not (no rule of this device's wants it), this
				// period is done: the next check skips the device.
				if _, err := tx.ExecContext(ctx, `INSERT INTO notification_device_state (device_id, stale_notified_for) VALUES (?, ?)
					ON CONFLICT (device_id) DO UPDATE SET stale_notified_for = excluded.stale_notified_for`, id, mark); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return recorded, fmt.Errorf("record stale events: %w", err)
		}
		recorded += batch
		if len(ids) < staleBatch {
			return recorded, nil
		}
		after = ids[len(ids)-1]
	}
}
