package queue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/engine"
)

// RunningOwners returns the owners of running jobs in the server's
// engines (a remote collector's leases end by ExpireLeases).
func (jq *Queue) RunningOwners(ctx context.Context) ([]string, error) {
	owners, err := engine.QueryAll(ctx, jq.e.Reader, func(r engine.Scanner) (string, error) {
		var o string
		return o, r.Scan(&o)
	}, `SELECT DISTINCT owner FROM jobs WHERE state = 'running' AND owner IS NOT NULL AND collector_id IS NULL`)
	if err != nil {
		return nil, fmt.Errorf("running owners: %w", err)
	}
	return owners, nil
}

// Interrupted is what InterruptJobs did.
type Interrupted struct {
	// Attempts is how many attempts it ended.
	Attempts int
	// GaveUp lists the devices whose jobs failed because they had been
	// interrupted maxInterruptions times.
	GaveUp []int64
	// Work lists the restore and push jobs it ended: failed as
	// ErrorInterruptedUnknown, never to run again.
	Work []WorkEnd
}

// InterruptJobs ends the attempts owner was running because the process
// stopped (a shutdown, or a crash found later): their backups rows fail as
// interrupted and the jobs wait in the queue again, ready at once. Such an
// attempt was no fault of the device, so it does not count against the
// job's attempts; it counts as an interruption instead, and a job
// interrupted maxInterruptions times fails with ErrorInterruptedTooOften
// (its device's last backup then counts as failed).
//
// A restore or push job is never queued again: what it did to the device
// is not known, and running it again might change the device twice, or
// over a change made since. It fails as ErrorInterruptedUnknown, and
// Hooks.WorkEnded ends its work (the restore, the change set target) as
// interrupted in the same transaction.
func (jq *Queue) InterruptJobs(ctx context.Context, owner string, maxInterruptions int) (Interrupted, error) {
	var out Interrupted
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		out = Interrupted{}
		return jq.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, fmt.Errorf("interrupt jobs of %s: %w", owner, err)
	}
	return out, nil
}

// InterruptJob is InterruptJobs for the one attempt c, while it is still
// c's: the engine gives back a job whose result it could not record
// (FinishJob failed), so that it is not left running until the engine
// restarts. An attempt no longer c's (recorded after all, or queued again
// by another node) is left alone: Attempts is then 0.
func (jq *Queue) InterruptJob(ctx context.Context, c Claim, maxInterruptions int) (Interrupted, error) {
	if c.Owner == nil || *c.Owner == "" {
		return Interrupted{}, fmt.Errorf("interrupt job %d: the claim has no owner", c.ID)
	}
	var out Interrupted
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		out = Interrupted{}
		return jq.interruptJobs(ctx, tx, *c.Owner, c.ID, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, fmt.Errorf("interrupt job %d: %w", c.ID, err)
	}
	return out, nil
}

// interruptJobs is InterruptJobs in the caller's transaction; with jobID
// above 0, of that job only.
func (jq *Queue) interruptJobs(ctx context.Context, tx *sql.Tx, owner string, jobID int64, maxInterruptions int, out *Interrupted) error {
	now := time.Now()
	stamp := backupTime(now)
	// The running jobs meant, in each statement below.
	mine, arg := `state = 'running' AND owner = ?`, []any{owner}
	if jobID > 0 {
		mine, arg = mine+` AND id = ?`, append(arg, jobID)
	}
	res, err := tx.ExecContext(ctx, `UPDATE backups SET finished_at = ?, success = 0, error_message = ?, error_reason = '`+ReasonInterrupted+`',
			duration_ms = `+jq.d.MillisBetween("started_at", "?")+`
		WHERE id IN (SELECT backup_id FROM jobs WHERE `+mine+`) AND finished_at IS NULL`,
		append([]any{stamp, ErrorInterrupted, stamp}, arg...)...)
	if err != nil {
		return err
	}
	affected, _ := res.RowsAffected()
	out.Attempts = int(affected)
	// Restores and pushes end here, for good.
	works, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (WorkEnd, error) {
		w := WorkEnd{State: JobFailed, Error: ErrorInterruptedUnknown, Reason: ReasonInterrupted, At: now}
		var workID sql.NullInt64
		err := r.Scan(&w.JobID, &w.DeviceID, &w.Kind, &workID)
		w.WorkID = workID.Int64
		return w, err
	}, `UPDATE jobs SET state = 'failed', finished_at = ?, owner = NULL, error = ?, error_reason = '`+ReasonInterrupted+`'
		WHERE `+mine+` AND kind <> 'backup'
		RETURNING id, device_id, kind, work_id`, append([]any{stamp, ErrorInterruptedUnknown}, arg...)...)
	if err != nil {
		return err
	}
	for _, w := range works {
		if err := jq.workEnded(ctx, tx, w); err != nil {
			return err
		}
	}
	out.Work = works
	// Only backup jobs still run now. The claim counted the attempt; take
	// it back.
	gaveUp, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (Claim, error) {
		var c Claim
		var backupID sql.NullString
		err := r.Scan(&c.DeviceID, &backupID, &c.Trigger, &c.Attempt)
		c.BackupID = backupID.String
		return c, err
	}, `UPDATE jobs SET state = 'failed', finished_at = ?, owner = NULL, error = ?, error_reason = '`+ReasonInterrupted+`',
			attempt = `+jq.d.Greater("attempt - 1", "0")+`, interruptions = interruptions + 1
		WHERE `+mine+` AND interruptions + 1 >= ?
		RETURNING device_id, backup_id, trigger, attempt`,
		append(append([]any{stamp, ErrorInterruptedTooOften}, arg...), max(maxInterruptions, 1))...)
	if err != nil {
		return err
	}
	for _, c := range gaveUp {
		out.GaveUp = append(out.GaveUp, c.DeviceID)
		// The device's backup failed: notified as any failure is.
		trigger := c.Trigger
		if c.Attempt > 1 {
			trigger = TriggerRetry
		}
		if err := jq.ended(ctx, tx, c, Outcome{Error: ErrorInterruptedTooOften, Reason: ReasonInterrupted}, now, trigger); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', not_before = ?, owner = NULL, error = ?, error_reason = '`+ReasonInterrupted+`',
			attempt = `+jq.d.Greater("attempt - 1", "0")+`, interruptions = interruptions + 1
		WHERE `+mine, append([]any{stamp, ErrorInterrupted}, arg...)...)
	return err
}

// workEnded is Hooks.WorkEnded, when there is one.
func (jq *Queue) workEnded(ctx context.Context, tx *sql.Tx, w WorkEnd) error {
	if jq.hooks.WorkEnded == nil {
		return nil
	}
	return jq.hooks.WorkEnded(ctx, tx, w)
}

// OwnerLockName is the PostgreSQL advisory lock a running engine holds
// while it lives (on a lock session, app/cluster/lock), named after the
// owner id on its jobs. InterruptDeadOwner takes it to learn the engine
// is gone.
func OwnerLockName(owner string) string { return "backupd-owner:" + owner }

// InterruptDeadOwner ends the running attempts of engine owner when it is
// dead, as InterruptJobs does; dead reports whether it was. On PostgreSQL
// the engine is dead when its liveness lock (OwnerLockName) can be taken,
// here in the transaction that requeues its jobs, so that nodes checking
// the same owner at once requeue its jobs once. On SQLite the caller
// decides (the engine's lock file) and this is InterruptJobs.
func (jq *Queue) InterruptDeadOwner(ctx context.Context, owner string, maxInterruptions int) (out Interrupted, dead bool, err error) {
	err = jq.e.InTx(ctx, func(tx *sql.Tx) error {
		out, dead = Interrupted{}, true
		if jq.e.Postgres() {
			if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`,
				OwnerLockName(owner)).Scan(&dead); err != nil || !dead {
				return err
			}
		}
		return jq.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, false, fmt.Errorf("interrupt jobs of %s: %w", owner, err)
	}
	return out, dead, nil
}
