package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/db/queue"
)

// Recording events: the matching of an event against the notification
// rules, and the events of a backup's
// end, a reachability check and the stale check, each written in the
// transaction of what caused it.

// deviceFacts is what the store reads of a device for its events: what
// they name of it and its event state.
type deviceFacts struct {
	dev                 EventDevice
	state               EventState
	lastGood, createdAt sql.NullString
	// wanted is ",kind,kind," of the kinds some enabled rule names: the
	// rest need no matching at all.
	wanted sql.NullString
}

func (f *deviceFacts) wants(k outbox.EventKind) bool {
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
	previousGoodQuery = `SELECT id FROM backups WHERE device_id = ? AND success = 1 AND id <> ?
				ORDER BY started_at DESC LIMIT 1`
	saveStateQuery = `INSERT INTO notification_device_state (device_id, consecutive_failures, unreachable_count)
		VALUES (?, ?, ?) ON CONFLICT (device_id) DO UPDATE SET consecutive_failures = excluded.consecutive_failures,
			unreachable_count = excluded.unreachable_count`
	staleMarkQuery = `INSERT INTO notification_device_state (device_id, stale_notified_for) VALUES (?, ?)
		ON CONFLICT (device_id) DO UPDATE SET stale_notified_for = excluded.stale_notified_for`
)

// wantedEventsQuery is ",kind,kind," of the kinds some enabled rule names.
func wantedEventsQuery(d engine.Dialect) string {
	return `SELECT ',' || ` + d.JoinedDistinct("e.event") + ` || ',' FROM notification_rule_events e
				JOIN notification_rules r ON r.id = e.rule_id WHERE r.enabled = 1`
}

func deviceFactsQuery(d engine.Dialect) string {
	return `SELECT d.name, d.host, d.platform, d.group_id, d.last_good_backup_at, d.created_at,
			d.pending_host_key, n.consecutive_failures, n.unreachable_count, n.stale_notified_for,
			(` + wantedEventsQuery(d) + `)
		FROM devices d LEFT JOIN notification_device_state n ON n.device_id = d.id WHERE d.id = ?`
}

// eventQueries are prepared when the store opens.
func eventQueries(d engine.Dialect) []string {
	return append([]string{matchRulesQuery, deviceFactsQuery(d), previousGoodQuery, saveStateQuery}, outbox.AppendQueries(d)...)
}

// recordEvent matches the enabled rules of e's kind whose scope holds its
// device and whose threshold passes e's test, and when any does, writes
// the event and one delivery per channel of those rules (with the diff
// when any of the rules allows it). With no rule matching nothing is
// written. It reports whether it recorded.
func recordEvent(ctx context.Context, q engine.Querier, d engine.Dialect, f *deviceFacts, e DecidedEvent) (bool, error) {
	p := e.Payload
	if !f.wants(p.Kind) {
		return false, nil
	}
	args := []any{string(p.Kind), int(e.Threshold), e.Count, e.Count, p.DeviceID, p.DeviceID}
	targets, err := engine.QueryAll(ctx, q, func(row engine.Scanner) (outbox.Target, error) {
		var t outbox.Target
		return t, row.Scan(&t.Channel, &t.Diff)
	}, matchRulesQuery, args...)
	if err != nil {
		return false, fmt.Errorf("match notification rules: %w", err)
	}
	if len(targets) == 0 {
		return false, nil
	}
	if e.WithPreviousGood {
		err := q.QueryRowContext(ctx, previousGoodQuery, p.DeviceID, p.BackupID).Scan(&p.PreviousBackupID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("previous version of device %d: %w", p.DeviceID, err)
		}
	}
	if p.GroupID != nil {
		p.GroupPath, err = engine.QueryAll(ctx, q, func(r engine.Scanner) (string, error) {
			var name string
			return name, r.Scan(&name)
		}, `SELECT a.name FROM device_groups g JOIN device_groups a ON substr(g.path, 1, length(a.path)) = a.path
			WHERE g.id = ? ORDER BY a.depth`, *p.GroupID)
		if err != nil {
			return false, fmt.Errorf("group of device %d: %w", p.DeviceID, err)
		}
	}
	if err := outbox.Append(ctx, q, d, p, targets); err != nil {
		return false, err
	}
	return true, nil
}

// loadDeviceFacts reads what the events name of a device, and its event
// state.
func loadDeviceFacts(ctx context.Context, q engine.Querier, d engine.Dialect, deviceID int64) (deviceFacts, error) {
	f := deviceFacts{dev: EventDevice{ID: deviceID}}
	var group sql.NullInt64
	var consecutive, unreached sql.NullInt64
	var staleFor sql.NullString
	err := q.QueryRowContext(ctx, deviceFactsQuery(d), deviceID).Scan(
		&f.dev.Name, &f.dev.Host, &f.dev.Platform, &group, &f.lastGood, &f.createdAt, &f.dev.PendingHostKey,
		&consecutive, &unreached, &staleFor, &f.wanted)
	if errors.Is(err, sql.ErrNoRows) {
		return f, ErrNotFound
	}
	if err != nil {
		return f, fmt.Errorf("device %d for notifications: %w", deviceID, err)
	}
	if group.Valid {
		f.dev.GroupID = &group.Int64
	}
	f.state = EventState{ConsecutiveFailures: int(consecutive.Int64), Unreachable: int(unreached.Int64),
		StaleNotifiedFor: staleFor.String}
	return f, nil
}

// saveDeviceState writes what changed of the device's event state. The
// counters and the stale mark are written apart, so that the stale check
// and a backup's end of one device, on two nodes at once, do not write
// back each other's part as they read it.
func saveDeviceState(ctx context.Context, q engine.Querier, deviceID int64, prev, next EventState) error {
	if next.ConsecutiveFailures != prev.ConsecutiveFailures || next.Unreachable != prev.Unreachable {
		if _, err := q.ExecContext(ctx, saveStateQuery, deviceID, next.ConsecutiveFailures, next.Unreachable); err != nil {
			return fmt.Errorf("notification state of device %d: %w", deviceID, err)
		}
	}
	if next.StaleNotifiedFor != prev.StaleNotifiedFor {
		var mark any
		if next.StaleNotifiedFor != "" {
			mark = next.StaleNotifiedFor
		}
		if _, err := q.ExecContext(ctx, staleMarkQuery, deviceID, mark); err != nil {
			return fmt.Errorf("stale mark of device %d: %w", deviceID, err)
		}
	}
	return nil
}

// recordDecision asks the policy which events in causes to device f,
// and writes them and the device's new event state. It returns how many
// events it recorded (those some rule wanted).
func (s *Store) recordDecision(ctx context.Context, q engine.Querier, f *deviceFacts, in EventInput) (int, error) {
	in.Device, in.Prev = f.dev, f.state
	dec, err := s.decide(in)
	if err != nil {
		return 0, err
	}
	recorded := 0
	for _, e := range dec.Events {
		ok, err := recordEvent(ctx, q, s.d, f, e)
		if err != nil {
			return recorded, err
		}
		if ok {
			recorded++
		}
	}
	return recorded, saveDeviceState(ctx, q, f.dev.ID, f.state, dec.Next)
}

// recordAttemptEvents records the events an attempt's end causes, in the
// transaction that records the attempt (FinishJob, or a job given up
// after too many interruptions), before the device row is updated (the
// policy compares a changed host key with the one recorded before).
// trigger is the attempt's.
func (s *Store) recordAttemptEvents(ctx context.Context, q engine.Querier, c queue.Claim, o queue.Outcome, at time.Time, trigger string) error {
	f, err := loadDeviceFacts(ctx, q, s.d, c.DeviceID)
	if errors.Is(err, ErrNotFound) {
		return nil // the device is gone; the update after this touches nothing either
	}
	if err != nil {
		return err
	}
	_, err = s.recordDecision(ctx, q, &f, EventInput{At: at, Trigger: trigger,
		Attempt: &AttemptEnd{BackupID: c.BackupID, Outcome: o}})
	return err
}

// RecordReachability records the result of a reachability check, and the
// device.unreachable / device.reachable events it causes, in one
// transaction.
func (s *Store) RecordReachability(ctx context.Context, deviceID int64, reachable bool, at time.Time) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q := s.prepared(tx)
		f, err := loadDeviceFacts(ctx, q, s.d, deviceID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := s.recordDecision(ctx, q, &f, EventInput{At: at, Trigger: TriggerCheck,
			Check: &ReachabilityCheck{Reachable: reachable}}); err != nil {
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

// RecordStaleEvents hands the policy every enabled device whose last good
// backup (or, never backed up, its creation) is older than threshold at
// now and that it was not told about for this stale period yet, and
// records the events it decides (backup.stale, once per stale period: a
// new good backup starts a new one). It returns how many events it
// recorded. With no enabled rule for backup.stale, the only kind a stale
// device's events can have, it reads nothing else.
func (s *Store) RecordStaleEvents(ctx context.Context, now time.Time, threshold time.Duration) (int, error) {
	if threshold <= 0 {
		return 0, &ErrInvalidField{"threshold", "must be positive"}
	}
	wanted, err := engine.Exists(ctx, s.reader, `SELECT 1 FROM notification_rule_events e JOIN notification_rules r ON r.id = e.rule_id
		WHERE e.event = ? AND r.enabled = 1 LIMIT 1`, string(outbox.EventBackupStale))
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
		var batch int // this pass's events, counted once it commits (inTx may run it again)
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			batch = 0
			var err error
			ids, err = engine.QueryAll(ctx, tx, scanID, `SELECT d.id FROM devices d
					LEFT JOIN notification_device_state n ON n.device_id = d.id
				WHERE d.enabled = 1 AND d.id > ?
					AND (d.last_good_backup_at < ? OR (d.last_good_backup_at IS NULL AND d.created_at < ?))
					AND `+s.d.Differ("n.stale_notified_for", "COALESCE(d.last_good_backup_at, d.created_at)")+`
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
				check, err := f.staleCheck(threshold)
				if err != nil {
					return err
				}
				n, err := s.recordDecision(ctx, q, &f, EventInput{At: now, Trigger: TriggerCheck, Stale: &check})
				if err != nil {
					return err
				}
				batch += n
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

// staleCheck is what the policy needs of f for the stale check. The
// device's stale period is named by the time it starts from, as stored.
func (f *deviceFacts) staleCheck(threshold time.Duration) (StaleCheck, error) {
	c := StaleCheck{Threshold: threshold, Period: f.createdAt.String}
	var err error
	// TimeFormat reads the stored times with or without their fraction
	// of a second (a last good backup has one).
	if c.CreatedAt, err = time.ParseInLocation(TimeFormat, f.createdAt.String, time.UTC); err != nil {
		return c, fmt.Errorf("device %d creation time: %w", f.dev.ID, err)
	}
	if f.lastGood.Valid {
		t, err := time.ParseInLocation(TimeFormat, f.lastGood.String, time.UTC)
		if err != nil {
			return c, fmt.Errorf("device %d last good backup time: %w", f.dev.ID, err)
		}
		c.LastGoodAt, c.Period = &t, f.lastGood.String
	}
	return c, nil
}
