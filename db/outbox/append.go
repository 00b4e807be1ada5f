package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"backupd/db/engine"
)

// Target is one channel an event goes to, and whether the message may
// include the configuration diff.
type Target struct {
	Channel int64
	Diff    bool
}

// The queries of Append, which package db prepares on its writer
// (AppendQueries): every backup's end may run them.
const insertEventQuery = `INSERT INTO outbox (kind, device_id, created_at, payload) VALUES (?, ?, ?, ?)`

// insertDeliveriesQuery writes an event's deliveries, one JSON parameter
// of [[channel, diff], ...] for all of them.
func insertDeliveriesQuery(d engine.Dialect) string {
	return `INSERT INTO deliveries (outbox_id, channel_id, include_diff, state, next_attempt_at, created_at, updated_at)
		SELECT ?, p.a, p.b, 'pending', ?, ?, ? FROM ` + d.JSONIntPairs() + ` p`
}

// AppendQueries are Append's statements, for the caller to prepare.
func AppendQueries(d engine.Dialect) []string {
	return []string{insertEventQuery, insertDeliveriesQuery(d)}
}

// Append records event p and one delivery per target, due at once, with
// q (the caller's transaction: the event commits or rolls back with what
// caused it). targets must not be empty.
func Append(ctx context.Context, q engine.Querier, d engine.Dialect, p EventPayload, targets []Target) error {
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	now := backupTime(time.Now())
	outboxID, err := engine.InsertID(ctx, q, insertEventQuery, string(p.Kind), p.DeviceID, backupTime(p.At), string(payload))
	if err != nil {
		return fmt.Errorf("record %s event: %w", p.Kind, err)
	}
	// One statement for every channel: [[channel, diff], ...].
	rows := make([][2]int64, len(targets))
	for i, t := range targets {
		rows[i][0] = t.Channel
		if t.Diff {
			rows[i][1] = 1
		}
	}
	raw, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, insertDeliveriesQuery(d), outboxID, now, now, now, string(raw)); err != nil {
		return fmt.Errorf("record %s deliveries: %w", p.Kind, err)
	}
	return nil
}
