package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/engine"
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
// device, in one transaction. A restore or push job ends the same way,
// but is never queued again (o.RetryAt is ignored), and its backups row
// is left as its runner recorded it (RecordAttempt), or removed when the
// runner never took that backup.
func (jq *Queue) FinishJob(ctx context.Context, c Claim, o Outcome) error {
	var rec recorded
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		rec, err = jq.finishTx(ctx, tx, c, o)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish job %d: %w", c.ID, err)
	}
	jq.stored(ctx, c.DeviceID, rec, o)
	return nil
}

// EndWorkTx is FinishJob of a restore or push job in the caller's
// transaction, so that the work's own row (the restore, the change set
// target) ends with its job. A text it stores is not packed against the
// previous version at once (Hooks.Stored): the next repack does it.
func (jq *Queue) EndWorkTx(ctx context.Context, tx *sql.Tx, c Claim, o Outcome) error {
	if !work(c.Kind) {
		return fmt.Errorf("end job %d: %w", c.ID, ErrNotWork)
	}
	if _, err := jq.finishTx(ctx, tx, c, o); err != nil {
		return fmt.Errorf("end job %d: %w", c.ID, err)
	}
	return nil
}

// recorded is what recording an attempt stored: a new text (its
// predecessor can become a delta) and its hash.
type recorded struct {
	stored bool
	hash   string
}

// stored tells Hooks.Stored, after the commit, of a new latest version
// that is not the device's first. The attempt is recorded whatever
// packing does: a failure leaves the previous version whole (counted in
// PackCounts), and Repack tries again later.
func (jq *Queue) stored(ctx context.Context, deviceID int64, rec recorded, o Outcome) {
	if rec.stored && !o.First && jq.hooks.Stored != nil {
		jq.hooks.Stored(ctx, deviceID, rec.hash, []byte(o.Text))
	}
}

// finishTx is FinishJob in tx.
func (jq *Queue) finishTx(ctx context.Context, tx *sql.Tx, c Claim, o Outcome) (recorded, error) {
	finished := o.FinishedAt.UTC()
	var reason any // NULL for no reason given
	if o.Reason != "" {
		reason = o.Reason
	}
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
	case o.RetryAt != nil && !work(c.Kind):
		res, err = q.ExecContext(ctx, finishRetryQuery, backupTime(*o.RetryAt), o.Error, reason, c.ID, owner)
	default:
		res, err = q.ExecContext(ctx, finishFailedQuery, backupTime(finished), o.Error, reason, c.ID, owner)
	}
	if err != nil {
		return recorded{}, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return recorded{}, err
	} else if n == 0 {
		return recorded{}, ErrJobNotOwned
	}
	if work(c.Kind) {
		// The runner records the claim's backup (RecordAttempt) as soon
		// as it took it. One still open was never taken: the work ended
		// before it touched the device (its platform cannot do it any
		// more, the device was disabled, the store failed). Its row goes,
		// so that the device's history and status never show a backup
		// that failed for a restore's or a push's reason.
		open, err := attemptOpen(ctx, q, c.BackupID)
		if err != nil || !open {
			return recorded{}, err
		}
		return recorded{}, dropAttempt(ctx, q, c)
	}
	trigger := c.Trigger
	if c.Attempt > 1 {
		trigger = TriggerRetry
	}
	return jq.recordAttempt(ctx, tx, c, o, c.StartedAt, trigger)
}

// dropAttempt removes the claim's backups row, never taken, and the
// job's link to it.
func dropAttempt(ctx context.Context, q engine.Querier, c Claim) error {
	if _, err := q.ExecContext(ctx, `UPDATE jobs SET backup_id = NULL WHERE id = ? AND backup_id = ?`, c.ID, c.BackupID); err != nil {
		return err
	}
	_, err := q.ExecContext(ctx, `DELETE FROM backups WHERE id = ? AND finished_at IS NULL`, c.BackupID)
	return err
}

// attemptOpen reports whether the backups row backupID is still running.
func attemptOpen(ctx context.Context, q engine.Querier, backupID string) (bool, error) {
	return engine.Exists(ctx, q, `SELECT 1 FROM backups WHERE id = ? AND finished_at IS NULL`, backupID)
}

// recordAttempt records the end of the attempt whose backups row is
// c.BackupID, started at started: the row, the text it captured, its
// session log, and what Hooks.Ended writes of the device (trigger is the
// attempt's), all in tx.
func (jq *Queue) recordAttempt(ctx context.Context, tx *sql.Tx, c Claim, o Outcome, started time.Time, trigger string) (recorded, error) {
	q := jq.prepared(tx)
	finished := o.FinishedAt.UTC()
	dur := finished.Sub(started).Milliseconds()
	var rec recorded
	var errMsg, errReason, hash, size any
	if o.Success {
		h, isNew, err := snapstore.PutNew(ctx, q, jq.d, o.Text, o.Hash)
		if err != nil {
			return recorded{}, err
		}
		hash, size, rec = h, len(o.Text), recorded{stored: isNew, hash: h}
	} else {
		errMsg = o.Error
		if o.Reason != "" {
			errReason = o.Reason
		}
	}
	if _, err := q.ExecContext(ctx, finishBackupQuery,
		backupTime(finished), o.Success, errMsg, errReason, hash, o.Changed && !o.First && o.Success, o.First && o.Success,
		dur, size, c.BackupID); err != nil {
		return recorded{}, err
	}
	if !o.Success && o.Log != "" {
		if _, err := q.ExecContext(ctx, insertLogQuery, c.BackupID, o.Log, o.LogTruncated); err != nil {
			return recorded{}, err
		}
	}
	// What the end means for the device commits or rolls back with it.
	return rec, jq.ended(ctx, tx, c, o, finished, trigger)
}

// ended is Hooks.Ended, when there is one.
func (jq *Queue) ended(ctx context.Context, tx *sql.Tx, c Claim, o Outcome, at time.Time, trigger string) error {
	if jq.hooks.Ended == nil {
		return nil
	}
	return jq.hooks.Ended(ctx, tx, c, o, at, trigger)
}
