package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// A delivery batch is one message to one channel: the deliveries it holds,
// the id receivers see (X-Backupd-Delivery) and the events as rendered
// for its first send. The worker makes one when it first sends deliveries
// that have none, before the send; a retry (after a failure, a crash or a
// restart) claims the batch whole (ClaimDeliveries) and sends the same id
// and the same events again, while events recorded since go into a batch
// of their own. Which events a batch holds and what is sent of them is
// the worker's: the outbox only keeps them.

// MaxBatchEventsBytes bounds the rendered events one batch keeps.
const MaxBatchEventsBytes = 64 << 20

// DeliveryBatch is one message to one channel.
type DeliveryBatch struct {
	ID        int64
	ChannelID int64
	// Key identifies the message to receivers, the same on every retry.
	Key string
	// Events are the rendered events as the worker stored them (JSON);
	// nil once every delivery of the batch is settled.
	Events    json.RawMessage
	CreatedAt time.Time
}

// CreateDeliveryBatch records that the deliveries ids, which owner holds
// and which have no batch yet, are sent to channelID as one message
// identified by key, with events (the worker's JSON of what it sends).
// If owner no longer holds all of them, nothing is recorded:
// ErrNotLeased.
func (ob *Outbox) CreateDeliveryBatch(ctx context.Context, owner string, channelID int64, key string, events []byte, ids []int64, at time.Time) (int64, error) {
	switch {
	case len(ids) == 0:
		return 0, errors.New("delivery batch: the deliveries must not be empty")
	case key == "" || len(key) > 128:
		return 0, errors.New("delivery batch: the key must be 1 to 128 bytes")
	case len(events) > MaxBatchEventsBytes:
		return 0, fmt.Errorf("delivery batch: the events must be at most %d bytes", MaxBatchEventsBytes)
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	var id int64
	err = ob.e.InTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO delivery_batches (channel_id, delivery_key, events, created_at)
			VALUES (?, ?, ?, ?) RETURNING id`, channelID, key, string(events), backupTime(at)).Scan(&id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE deliveries SET batch_id = ?
			WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`)
				AND channel_id = ? AND state = 'sending' AND owner = ? AND batch_id IS NULL`, id, string(raw), channelID, owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != int64(len(ids)) {
			return ErrNotLeased // rolls the batch back
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("record delivery batch: %w", err)
	}
	return id, nil
}

// GetDeliveryBatch returns one batch or engine.ErrNotFound.
func (ob *Outbox) GetDeliveryBatch(ctx context.Context, id int64) (DeliveryBatch, error) {
	var b DeliveryBatch
	var events sql.NullString
	var created string
	err := ob.e.Reader.QueryRowContext(ctx, `SELECT id, channel_id, delivery_key, events, created_at FROM delivery_batches WHERE id = ?`, id).
		Scan(&b.ID, &b.ChannelID, &b.Key, &events, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return b, engine.ErrNotFound
	}
	if err != nil {
		return b, fmt.Errorf("get delivery batch %d: %w", id, err)
	}
	if events.Valid {
		b.Events = json.RawMessage(events.String)
	}
	b.CreatedAt, _ = time.ParseInLocation(engine.BackupTimeFormat, created, time.UTC)
	return b, nil
}

// settleBatches drops the rendered events of the batches of the
// deliveries in idsJSON that have no delivery left to send.
func settleBatches(ctx context.Context, tx *sql.Tx, d engine.Dialect, idsJSON string) error {
	_, err := tx.ExecContext(ctx, `UPDATE delivery_batches SET events = NULL
		WHERE id IN (SELECT batch_id FROM deliveries
				WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+d.JSONEach()+`) AND batch_id IS NOT NULL)
			AND events IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM deliveries WHERE batch_id = delivery_batches.id
				AND state IN ('pending', 'sending', 'failed'))`, idsJSON)
	return err
}

// ChannelHealth is how a channel's last real deliveries went (a "Send
// test" does not count).
type ChannelHealth struct {
	ChannelID    int64
	LastOKAt     *time.Time
	LastFailedAt *time.Time
	// FailingSince is the first failure after the last success; nil
	// while the channel works.
	FailingSince *time.Time
	LastStatus   string
	// LastError is the last failure's secret-free message, empty once a
	// delivery went through.
	LastError string
	// NextRetry is the earliest retry of the channel's failing
	// deliveries; nil when none waits.
	NextRetry *time.Time
}

// RecordChannelResult records how a send to channelID went at at: ok,
// or failed with status (may be empty) and the secret-free errText.
func (ob *Outbox) RecordChannelResult(ctx context.Context, channelID int64, ok bool, at time.Time, status, errText string) error {
	stamp := backupTime(at)
	var err error
	if ok {
		_, err = ob.e.Writer.ExecContext(ctx, `INSERT INTO notification_channel_health (channel_id, last_ok_at, last_status)
			SELECT id, ?, ? FROM notification_channels WHERE id = ?
			ON CONFLICT (channel_id) DO UPDATE SET last_ok_at = excluded.last_ok_at, failing_since = NULL,
				last_status = excluded.last_status, last_error = NULL`, stamp, shortText(status, 200), channelID)
	} else {
		_, err = ob.e.Writer.ExecContext(ctx, `INSERT INTO notification_channel_health (channel_id, last_failed_at, failing_since, last_status, last_error)
			SELECT id, ?, ?, ?, ? FROM notification_channels WHERE id = ?
			ON CONFLICT (channel_id) DO UPDATE SET last_failed_at = excluded.last_failed_at,
				failing_since = COALESCE(notification_channel_health.failing_since, excluded.failing_since),
				last_status = excluded.last_status, last_error = excluded.last_error`,
			stamp, stamp, shortText(status, 200), shortText(errText, 500), channelID)
	}
	if err != nil {
		return fmt.Errorf("record result of channel %d: %w", channelID, err)
	}
	return nil
}

// ChannelHealths returns the health of every channel that has had a
// delivery tried or has one waiting for a retry, by channel id.
func (ob *Outbox) ChannelHealths(ctx context.Context) (map[int64]ChannelHealth, error) {
	out := map[int64]ChannelHealth{}
	parse := func(v sql.NullString) *time.Time {
		if !v.Valid {
			return nil
		}
		t, err := time.ParseInLocation(engine.BackupTimeFormat, v.String, time.UTC)
		if err != nil {
			return nil
		}
		return &t
	}
	rows, err := engine.QueryAll(ctx, ob.e.Reader, func(r engine.Scanner) (ChannelHealth, error) {
		var h ChannelHealth
		var ok, failed, since, status, errText sql.NullString
		err := r.Scan(&h.ChannelID, &ok, &failed, &since, &status, &errText)
		h.LastOKAt, h.LastFailedAt, h.FailingSince = parse(ok), parse(failed), parse(since)
		h.LastStatus, h.LastError = status.String, errText.String
		return h, err
	}, `SELECT channel_id, last_ok_at, last_failed_at, failing_since, last_status, last_error FROM notification_channel_health`)
	if err != nil {
		return nil, fmt.Errorf("channel health: %w", err)
	}
	for _, h := range rows {
		out[h.ChannelID] = h
	}
	// The retries waiting, off the partial index of unsettled deliveries.
	type retry struct {
		channel int64
		at      sql.NullString
	}
	retries, err := engine.QueryAll(ctx, ob.e.Reader, func(r engine.Scanner) (retry, error) {
		var v retry
		return v, r.Scan(&v.channel, &v.at)
	}, `SELECT channel_id, MIN(next_attempt_at) FROM deliveries
		WHERE state IN ('pending', 'failed') AND state = 'failed' GROUP BY channel_id`)
	if err != nil {
		return nil, fmt.Errorf("channel retries: %w", err)
	}
	for _, r := range retries {
		h := out[r.channel]
		h.ChannelID, h.NextRetry = r.channel, parse(r.at)
		out[r.channel] = h
	}
	return out, nil
}
