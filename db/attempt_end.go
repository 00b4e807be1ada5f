package db

import (
	"context"
	"database/sql"
	"time"

	"backupd/db/queue"
)

// What an attempt's end means for its device, written by the queue's
// Hooks.Ended in the transaction that records the attempt: the
// notification events it causes, then the device's status fields.

// finishDeviceQuery updates a device's status fields at the end of an
// attempt: whether it answered when reachable is known, its host key
// pinned, a changed key recorded.
func finishDeviceQuery(reachable, pin, pending bool) string {
	set := `last_backup_at = ?, last_backup_success = ?`
	if reachable {
		set += `, status = ?, last_checked_at = ?`
	}
	// A key both pinned and recorded as pending keeps the pending one (a
	// column is set once: PostgreSQL refuses a second assignment).
	switch {
	case pin && pending:
		set += `, host_key = ?, pending_host_key = ?`
	case pin:
		set += `, host_key = ?, pending_host_key = NULL`
	case pending:
		set += `, pending_host_key = ?`
	}
	return `UPDATE devices SET ` + set + ` WHERE id = ?`
}

// finishDeviceQueries are every finishDeviceQuery, prepared when the
// store opens (writeQueries): every backup runs one.
func finishDeviceQueries() []string {
	var out []string
	for _, reachable := range []bool{false, true} {
		for _, pin := range []bool{false, true} {
			for _, pending := range []bool{false, true} {
				out = append(out, finishDeviceQuery(reachable, pin, pending))
			}
		}
	}
	return out
}

// attemptEnded is the queue's Hooks.Ended: it records the events the end
// of attempt c causes, before the device row is updated (the policy
// compares a changed host key with the one recorded before), then the
// device's status fields.
func (s *Store) attemptEnded(ctx context.Context, tx *sql.Tx, c queue.Claim, o queue.Outcome, at time.Time, trigger string) error {
	q := s.prepared(tx)
	if err := s.recordAttemptEvents(ctx, q, c, o, at, trigger); err != nil {
		return err
	}
	stamp := at.UTC().Format(TimeFormat)
	args := []any{stamp, o.Success}
	if o.Reachable != nil {
		status := StatusUnreachable
		if *o.Reachable {
			status = StatusReachable
		}
		args = append(args, status, stamp)
	}
	if o.PinHostKey != nil {
		args = append(args, o.PinHostKey)
	}
	if o.PendingHostKey != nil {
		args = append(args, o.PendingHostKey)
	}
	_, err := q.ExecContext(ctx, finishDeviceQuery(o.Reachable != nil, o.PinHostKey != nil, o.PendingHostKey != nil),
		append(args, c.DeviceID)...)
	return err
}

// attemptStored is the queue's Hooks.Stored. The attempt is recorded
// whatever packing does: a failure leaves the previous version whole
// (counted in PackCounts), and Repack tries again later.
func (s *Store) attemptStored(ctx context.Context, deviceID int64, hash string, text []byte) {
	_ = s.packDevice(ctx, deviceID, hash, text)
}
