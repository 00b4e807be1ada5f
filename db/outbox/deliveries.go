package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/db/engine"
)

// Event is one recorded event.
type Event struct {
	ID        int64
	Kind      EventKind
	DeviceID  int64
	CreatedAt time.Time
	Payload   EventPayload
}

// Delivery is one event to one channel.
type Delivery struct {
	ID            int64
	OutboxID      int64
	ChannelID     int64
	IncludeDiff   bool
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LastStatus    *string
	LastError     *string
	SentAt        *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// BatchID is the batch (one message) the delivery was first sent in,
	// 0 before its first send (see CreateDeliveryBatch).
	BatchID int64
	Event   Event
}

// Columns are what ScanDelivery reads, of deliveries dl joined with
// their event o.
const Columns = `dl.id, dl.outbox_id, dl.channel_id, dl.include_diff, dl.state, dl.attempts, dl.next_attempt_at,
	dl.last_status, dl.last_error, dl.sent_at, dl.created_at, dl.updated_at, o.kind, o.device_id, o.created_at, o.payload,
	COALESCE(dl.batch_id, 0)`

// ScanDelivery reads a row of Columns.
func ScanDelivery(row engine.Scanner) (Delivery, error) {
	var d Delivery
	var next, created, updated, evCreated, payload, kind string
	var status, errText, sent sql.NullString
	if err := row.Scan(&d.ID, &d.OutboxID, &d.ChannelID, &d.IncludeDiff, &d.State, &d.Attempts, &next,
		&status, &errText, &sent, &created, &updated, &kind, &d.Event.DeviceID, &evCreated, &payload, &d.BatchID); err != nil {
		return d, err
	}
	var err error
	parse := func(s string) time.Time {
		t, perr := time.ParseInLocation(engine.BackupTimeFormat, s, time.UTC)
		if perr != nil && err == nil {
			err = fmt.Errorf("delivery %d: %w", d.ID, perr)
		}
		return t
	}
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = parse(next), parse(created), parse(updated)
	d.Event.ID, d.Event.Kind, d.Event.CreatedAt = d.OutboxID, EventKind(kind), parse(evCreated)
	if status.Valid {
		d.LastStatus = &status.String
	}
	if errText.Valid {
		d.LastError = &errText.String
	}
	if sent.Valid {
		t := parse(sent.String)
		d.SentAt = &t
	}
	if perr := json.Unmarshal([]byte(payload), &d.Event.Payload); perr != nil && err == nil {
		err = fmt.Errorf("delivery %d payload: %w", d.ID, perr)
	}
	return d, err
}

// claimPicks choose what ClaimDeliveries leases: expired leases, then due
// deliveries. Each must read its partial index (deliveries_leased,
// deliveries_due).
var claimPicks = []string{
	`SELECT id FROM deliveries WHERE state = 'sending' AND lease_until <= ? ORDER BY lease_until, id LIMIT ?`,
	`SELECT id FROM deliveries WHERE state IN ('pending', 'failed') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
}

// ClaimDeliveries leases up to limit deliveries due at now to owner, for
// DeliveryLease: those not tried yet or waiting for a retry, and those
// whose lease ran out (their worker died). Sent and given-up deliveries
// are never claimed. A delivery already sent in a batch comes with the
// rest of its batch (CreateDeliveryBatch). They come ordered by channel,
// then event, so that a worker can send one digest per channel. Each
// claim counts an attempt.
func (ob *Outbox) ClaimDeliveries(ctx context.Context, now time.Time, limit int, owner string) ([]Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	if owner == "" {
		return nil, errors.New("claim deliveries: the owner must not be empty")
	}
	stamp := backupTime(now)
	var out []Delivery
	err := ob.e.InTx(ctx, func(tx *sql.Tx) error {
		out = nil // a run again must not hand out an earlier run's claims
		// Expired leases first, then the due deliveries oldest first: each
		// read off its partial index, never a walk over the sent history.
		var ids []int64
		for _, pick := range claimPicks {
			if len(ids) >= limit {
				break
			}
			got, err := engine.QueryAll(ctx, tx, scanID, `UPDATE deliveries SET state = 'sending', owner = ?, lease_until = ?,
					attempts = attempts + 1, updated_at = ?
				WHERE id IN (`+pick+`) RETURNING id`, owner, backupTime(now.Add(DeliveryLease)), stamp, stamp, limit-len(ids))
			if err != nil {
				return err
			}
			ids = append(ids, got...)
		}
		if len(ids) == 0 {
			return nil
		}
		raw, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		// A batch goes whole: the other deliveries of the batches picked
		// (cut off by limit, or not due at the same time) come too, so
		// that the message is sent again as it was.
		more, err := engine.QueryAll(ctx, tx, scanID, `UPDATE deliveries SET state = 'sending', owner = ?, lease_until = ?,
				attempts = attempts + 1, updated_at = ?
			WHERE batch_id IN (SELECT batch_id FROM deliveries
					WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`) AND batch_id IS NOT NULL)
				AND (state IN ('pending', 'failed') OR (state = 'sending' AND lease_until <= ?))
			RETURNING id`, owner, backupTime(now.Add(DeliveryLease)), stamp, string(raw), stamp)
		if err != nil {
			return err
		}
		if len(more) > 0 {
			ids = append(ids, more...)
			if raw, err = json.Marshal(ids); err != nil {
				return err
			}
		}
		out, err = engine.QueryAll(ctx, tx, ScanDelivery, `SELECT `+Columns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
			WHERE dl.id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`) ORDER BY dl.channel_id, dl.outbox_id`, string(raw))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return out, nil
}

// DeliveryOwners returns the owners holding leased deliveries, so that a
// starting worker can release those of dead processes (as the backup
// engine does with jobs).
func (ob *Outbox) DeliveryOwners(ctx context.Context) ([]string, error) {
	owners, err := engine.QueryAll(ctx, ob.e.Reader, func(r engine.Scanner) (string, error) {
		var o string
		return o, r.Scan(&o)
	}, `SELECT DISTINCT owner FROM deliveries WHERE state = 'sending' AND owner IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("delivery owners: %w", err)
	}
	return owners, nil
}

// ReleaseDeliveries gives back the deliveries owner leased (its process
// stopped): they are due again at once, the attempt the claim counted
// taken back. It returns how many.
func (ob *Outbox) ReleaseDeliveries(ctx context.Context, owner string) (int, error) {
	stamp := backupTime(time.Now())
	res, err := ob.e.Writer.ExecContext(ctx, `UPDATE deliveries SET attempts = `+ob.d.Greater("attempts - 1", "0")+`,
			state = CASE WHEN attempts > 1 THEN 'failed' ELSE 'pending' END,
			owner = NULL, lease_until = NULL, next_attempt_at = ?, updated_at = ?
		WHERE state = 'sending' AND owner = ?`, stamp, stamp, owner)
	if err != nil {
		return 0, fmt.Errorf("release deliveries of %s: %w", owner, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// shortText bounds a status or error kept in the delivery log.
func shortText(s string, n int) any {
	if s == "" {
		return nil
	}
	s = strings.ToValidUTF8(s, "?")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// MarkDelivered records that the deliveries ids reached their channel at
// at with status (an HTTP code, an SMTP reply). A sent delivery is never
// claimed again; marking one sent twice changes nothing. It is recorded
// whoever holds the lease now: what was delivered was delivered.
func (ob *Outbox) MarkDelivered(ctx context.Context, ids []int64, status string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	stamp := backupTime(at)
	err = ob.e.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET state = 'sent', sent_at = ?, last_status = ?, last_error = NULL,
				owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`) AND state <> 'sent'`, stamp, shortText(status, 200), stamp, string(raw)); err != nil {
			return err
		}
		return settleBatches(ctx, tx, ob.d, string(raw))
	})
	if err != nil {
		return fmt.Errorf("mark deliveries sent: %w", err)
	}
	return nil
}

// DeliveryFailure is how an attempt to deliver failed.
type DeliveryFailure struct {
	Status string // the HTTP code or SMTP reply, if any
	Error  string // secret-free
	At     time.Time
	// RetryAt is when to try again; past DeliveryMaxAge from the event,
	// or with Permanent set, the delivery gives up instead.
	RetryAt   time.Time
	Permanent bool
}

// MarkFailed records a failed attempt of the deliveries ids that owner
// holds: each is tried again at f.RetryAt, or gives up (permanent, or the
// retry would come more than DeliveryMaxAge after its event was recorded).
// It returns the ids that gave up. Deliveries owner no longer holds are
// left alone; if none of ids is held, ErrNotLeased.
func (ob *Outbox) MarkFailed(ctx context.Context, owner string, ids []int64, f DeliveryFailure) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	stamp, retry := backupTime(f.At), backupTime(f.RetryAt)
	var gaveUp []int64
	err = ob.e.InTx(ctx, func(tx *sql.Tx) error {
		gaveUp = nil
		type settled struct {
			id    int64
			state string
		}
		rows, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (settled, error) {
			var v settled
			return v, r.Scan(&v.id, &v.state)
		}, `UPDATE deliveries SET
				state = CASE WHEN ? OR created_at < ? THEN 'gave_up' ELSE 'failed' END,
				next_attempt_at = ?, last_status = ?, last_error = ?, owner = NULL, lease_until = NULL, updated_at = ?
			WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`) AND state = 'sending' AND owner = ?
			RETURNING id, state`, f.Permanent, backupTime(f.RetryAt.Add(-DeliveryMaxAge)),
			retry, shortText(f.Status, 200), shortText(f.Error, 500), stamp, string(raw), owner)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return ErrNotLeased
		}
		for _, r := range rows {
			if r.state == DeliveryGaveUp {
				gaveUp = append(gaveUp, r.id)
			}
		}
		if len(gaveUp) == 0 {
			return nil
		}
		return settleBatches(ctx, tx, ob.d, string(raw))
	})
	if err != nil {
		return nil, fmt.Errorf("mark deliveries failed: %w", err)
	}
	slices.Sort(gaveUp)
	return gaveUp, nil
}

// GetDeliveries returns the deliveries with the given ids (missing ones
// are skipped), by id.
func (ob *Outbox) GetDeliveries(ctx context.Context, ids []int64) ([]Delivery, error) {
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	out, err := engine.QueryAll(ctx, ob.e.Reader, ScanDelivery, `SELECT `+Columns+` FROM deliveries dl JOIN outbox o ON o.id = dl.outbox_id
		WHERE dl.id IN (SELECT CAST(value AS BIGINT) FROM `+ob.d.JSONEach()+`) ORDER BY dl.id`, string(raw))
	if err != nil {
		return nil, fmt.Errorf("get deliveries: %w", err)
	}
	return out, nil
}

// PruneNotifications deletes the sent and given-up deliveries settled
// before cutoff, and the events and batches left with no delivery that
// were recorded before it. Pending and failing deliveries stay, whatever their age.
func (ob *Outbox) PruneNotifications(ctx context.Context, cutoff time.Time) (int, error) {
	stamp := backupTime(cutoff)
	var n int64
	err := ob.e.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE state IN ('sent', 'gave_up') AND updated_at < ?`, stamp)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if _, err = tx.ExecContext(ctx, `DELETE FROM delivery_batches WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries WHERE batch_id = delivery_batches.id)`, stamp); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM outbox WHERE created_at < ?
			AND NOT EXISTS (SELECT 1 FROM deliveries WHERE outbox_id = outbox.id)`, stamp)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune notifications: %w", err)
	}
	return int(n), nil
}
