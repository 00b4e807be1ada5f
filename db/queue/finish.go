package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/snapstore"
)

// Outcome is how one attempt ended.
type Outcome struct {
	Success bool
	Error   string // when failed: what to tell the operator; never secrets or config text
	Reason  string // when failed: its class (ReasonInterrupted, the engine's), stored beside Error
	// Text is the configuration captured when succeeded; FinishJob stores
	// it (once per distinct content) in the same transaction that names
	// it, so a retention purge can never slip in between.
	Text string
	// Hash is snapstore.Hash(Text) when the caller has computed it
	// (the engine does, to compare); empty, FinishJob computes it.
	Hash string
	// Changed is whether Text differs from the device's previous version,
	// noise ignored; First whether there was no previous version (then
	// it is not a change).
	Changed    bool
	First      bool
	FinishedAt time.Time
	// Reachable is whether the device answered on its port; nil when the
	// attempt never got that far (the status is left as it was).
	Reachable *bool
	// PinHostKey is pinned on the device when set (first use).
	PinHostKey []byte
	// PendingHostKey records a changed key the operator must accept.
	PendingHostKey []byte
	// RetryAt, when set on a failure, queues the job again for then
	// instead of finishing it.
	RetryAt *time.Time
	// Cancelled ends the job as cancelled (an operator stopped it).
	Cancelled bool
	// Log is a failed attempt's session log (JSON, passwords masked),
	// stored with it; LogTruncated when the session said more than was
	// kept. Ignored on a success.
	Log          string
	LogTruncated bool
}

// The end of an attempt's statements (writeQueries).
const (
	finishBackupQuery = `UPDATE backups SET finished_at = ?, success = ?, error_message = ?, error_reason = ?,
				snapshot_hash = ?, changed = ?, first_backup = ?, duration_ms = ?, bytes = ? WHERE id = ?`
	finishSucceededQuery = `UPDATE jobs SET state = 'succeeded', finished_at = ?, owner = NULL, error = NULL, error_reason = NULL WHERE id = ? AND state = 'running' AND owner = ?`
	finishCancelledQuery = `UPDATE jobs SET state = 'cancelled', finished_at = ?, owner = NULL, error = ?, error_reason = ? WHERE id = ? AND state = 'running' AND owner = ?`
	finishRetryQuery     = `UPDATE jobs SET state = 'queued', not_before = ?, owner = NULL, error = ?, error_reason = ? WHERE id = ? AND state = 'running' AND owner = ?`
	insertLogQuery       = `INSERT INTO backup_logs (backup_id, segments, truncated) VALUES (?, ?, ?)`
	finishFailedQuery    = `UPDATE jobs SET state = 'failed', finished_at = ?, owner = NULL, error = ?, error_reason = ? WHERE id = ? AND state = 'running' AND owner = ?`
)

// FinishJob records the end of a claimed attempt: the job, its backups
// row and the text it captured, and what Hooks.Ended writes of the
// device, in one transaction.
func (jq *Queue) FinishJob(ctx context.Context, c Claim, o Outcome) error {
	finished := o.FinishedAt.UTC()
	dur := finished.Sub(c.StartedAt).Milliseconds()
	var stored bool // a new text was stored: its predecessor can become a delta
	var storedHash string
	var reason any // NULL for no reason given
	if o.Reason != "" {
		reason = o.Reason
	}
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		stored = false
		q := jq.prepared(tx)
		// The job is still this attempt's, or nothing is recorded: an
		// attempt whose engine was taken for dead (its jobs queued again,
		// perhaps already run by another node) must not add a result.
		var owner string
		if c.Owner != nil {
			owner = *c.Owner
		}
		var res sql.Result
		var err error
		switch {
		case o.Success:
			res, err = q.ExecContext(ctx, finishSucceededQuery, backupTime(finished), c.ID, owner)
		case o.Cancelled:
			res, err = q.ExecContext(ctx, finishCancelledQuery, backupTime(finished), o.Error, reason, c.ID, owner)
		case o.RetryAt != nil:
			res, err = q.ExecContext(ctx, finishRetryQuery, backupTime(*o.RetryAt), o.Error, reason, c.ID, owner)
		default:
			res, err = q.ExecContext(ctx, finishFailedQuery, backupTime(finished), o.Error, reason, c.ID, owner)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrJobNotOwned
		}
		var errMsg, errReason, hash, size any
		if o.Success {
			h, isNew, err := snapstore.PutNew(ctx, q, jq.d, o.Text, o.Hash)
			if err != nil {
				return err
			}
			hash, size, stored, storedHash = h, len(o.Text), isNew, h
		} else {
			errMsg, errReason = o.Error, reason
		}
		if _, err := q.ExecContext(ctx, finishBackupQuery,
			backupTime(finished), o.Success, errMsg, errReason, hash, o.Changed && !o.First && o.Success, o.First && o.Success,
			dur, size, c.BackupID); err != nil {
			return err
		}
		if !o.Success && o.Log != "" {
			if _, err := q.ExecContext(ctx, insertLogQuery, c.BackupID, o.Log, o.LogTruncated); err != nil {
				return err
			}
		}
		// What the end means for the device commits or rolls back with it.
		trigger := c.Trigger
		if c.Attempt > 1 {
			trigger = TriggerRetry
		}
		return jq.ended(ctx, tx, c, o, finished, trigger)
	})
	if err != nil {
		return fmt.Errorf("finish job %d: %w", c.ID, err)
	}
	if stored && !o.First {
		// The attempt is recorded whatever packing does: a failure leaves
		// the previous version whole (counted in PackCounts), and Repack
		// tries again later.
		if jq.hooks.Stored != nil {
			jq.hooks.Stored(ctx, c.DeviceID, storedHash, []byte(o.Text))
		}
	}
	return nil
}

// ended is Hooks.Ended, when there is one.
func (jq *Queue) ended(ctx context.Context, tx *sql.Tx, c Claim, o Outcome, at time.Time, trigger string) error {
	if jq.hooks.Ended == nil {
		return nil
	}
	return jq.hooks.Ended(ctx, tx, c, o, at, trigger)
}
