package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"

	"github.com/google/uuid"
)

// Restores and pushes ("work") run as jobs of their kind on the device:
// EnqueueWork queues one, ClaimJobsOfKinds hands it to its runner, and
// the runner records the backups it takes of the device while the job
// runs (RecordAttempt, RecordExtraAttempt) before FinishJob or EndWorkTx
// ends it. Such a job runs once: it is never retried, and a process that
// stops while it runs leaves it failed as ErrorInterruptedUnknown
// (interruptJobs), never queued again.

// ErrNotWork is a work job's operation asked of a backup job.
var ErrNotWork = errors.New("not a restore or push job")

// ErrAttemptRecorded is RecordAttempt of a claim whose backup was
// recorded already.
var ErrAttemptRecorded = errors.New("the claim's backup is recorded already")

// ErrWorkRemoteZone refuses a restore or push of a device in a remote
// collector's zone: collectors only back devices up.
var ErrWorkRemoteZone = errors.New("the device is in a remote collector's zone: restores and pushes run on the server's own zone only")

// WorkRequest asks for a restore (Kind KindRestore, WorkID the restores
// row) or a push (KindPush, WorkID the change_set_targets row) to run on
// a device, not before NotBefore (now when zero).
type WorkRequest struct {
	DeviceID  int64
	Kind      string
	WorkID    int64
	NotBefore time.Time
}

// WorkEnqueued is what EnqueueWork did.
type WorkEnqueued struct {
	// JobID is the work's job, 0 when Busy is set.
	JobID int64
	// TookOver is set when the device's queued backup job became the
	// work's job (the work backs the device up itself, first).
	TookOver bool
	// Busy is the device's active job when the work could not be queued:
	// a job running (a backup, a restore, a push), or another restore or
	// push queued. Nothing changed; the caller tries again later.
	Busy *ActiveJob
}

// enqueueWorkTries bounds EnqueueWork's looks at a device whose active
// job other nodes change under it (claimed, finished) on PostgreSQL.
const enqueueWorkTries = 3

// EnqueueWork queues r in the caller's transaction (the one that moves
// the restore or the target to queued). A device has one active job at
// most (jobs_active_device): with none, a new job is queued; a queued
// backup job is taken over (its kind, work, trigger and time become the
// work's, its attempts start again); a job of the same work already
// queued is returned as it is; any other active job makes the device
// Busy. A device that does not exist is ErrNotFound, one of a remote
// zone ErrWorkRemoteZone.
func EnqueueWork(ctx context.Context, tx *sql.Tx, d engine.Dialect, r WorkRequest) (WorkEnqueued, error) {
	if !work(r.Kind) || r.WorkID <= 0 {
		return WorkEnqueued{}, fmt.Errorf("enqueue work: kind %q, work %d: %w", r.Kind, r.WorkID, ErrNotWork)
	}
	trigger := TriggerRestore
	if r.Kind == KindPush {
		trigger = TriggerPush
	}
	now := time.Now()
	if r.NotBefore.IsZero() {
		r.NotBefore = now
	}
	var zone int64
	err := tx.QueryRowContext(ctx, `SELECT zone_id FROM devices WHERE id = ?`, r.DeviceID).Scan(&zone)
	if errors.Is(err, sql.ErrNoRows) {
		return WorkEnqueued{}, engine.ErrNotFound
	}
	if err != nil {
		return WorkEnqueued{}, fmt.Errorf("enqueue work: %w", err)
	}
	if zone != 1 {
		return WorkEnqueued{}, ErrWorkRemoteZone
	}
	for range enqueueWorkTries {
		var a ActiveJob
		var workID sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT id, state, kind, work_id FROM jobs WHERE device_id = ? AND state IN ('queued', 'running')`,
			r.DeviceID).Scan(&a.ID, &a.State, &a.Kind, &workID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// Skipped when another transaction queued a job for the device
			// meanwhile: the next look finds that one.
			if _, err := tx.ExecContext(ctx, d.InsertOrIgnore(`jobs (device_id, trigger, state, not_before, created_at, zone_id, kind, work_id)`,
				`VALUES (?, ?, 'queued', ?, ?, 1, ?, ?)`), r.DeviceID, trigger, backupTime(r.NotBefore), backupTime(now), r.Kind, r.WorkID); err != nil {
				return WorkEnqueued{}, fmt.Errorf("enqueue work: %w", err)
			}
			continue
		case err != nil:
			return WorkEnqueued{}, fmt.Errorf("enqueue work: %w", err)
		case a.State == JobQueued && a.Kind == r.Kind && workID.Int64 == r.WorkID:
			return WorkEnqueued{JobID: a.ID}, nil
		case a.State == JobQueued && a.Kind == KindBackup:
			res, err := tx.ExecContext(ctx, `UPDATE jobs SET kind = ?, work_id = ?, trigger = ?, not_before = ?,
					attempt = 0, interruptions = 0, error = NULL, error_reason = NULL
				WHERE id = ? AND state = 'queued' AND kind = 'backup'`, r.Kind, r.WorkID, trigger, backupTime(r.NotBefore), a.ID)
			if err != nil {
				return WorkEnqueued{}, fmt.Errorf("enqueue work: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return WorkEnqueued{JobID: a.ID, TookOver: true}, nil
			}
			continue // claimed meanwhile: look again
		default:
			return WorkEnqueued{Busy: &a}, nil
		}
	}
	return WorkEnqueued{}, fmt.Errorf("enqueue work: the device's jobs kept changing; try again")
}

// RecordAttempt records the end of the claim's own backup (its backups
// row, the first backup a restore or push job takes: the one before the
// device is changed), as FinishJob would, but leaves the job running: the
// text, the row, and what Hooks.Ended writes of the device. The job must
// still be the claim's (ErrJobNotOwned), and the backup not recorded yet
// (ErrAttemptRecorded).
func (jq *Queue) RecordAttempt(ctx context.Context, c Claim, o Outcome) error {
	if !work(c.Kind) {
		return fmt.Errorf("record attempt of job %d: %w", c.ID, ErrNotWork)
	}
	var rec recorded
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		if err := jq.holdWork(ctx, tx, c); err != nil {
			return err
		}
		open, err := attemptOpen(ctx, tx, c.BackupID)
		if err != nil {
			return err
		}
		if !open {
			return ErrAttemptRecorded
		}
		rec, err = jq.recordAttempt(ctx, tx, c, o, c.StartedAt, c.Trigger)
		return err
	})
	if err != nil {
		return fmt.Errorf("record attempt of job %d: %w", c.ID, err)
	}
	jq.stored(ctx, c.DeviceID, rec, o)
	return nil
}

// RecordExtraAttempt records one more backup a restore or push job took
// while it runs (after the change, after a rollback): a backups row of
// trigger, started at started, with o's end, recorded as FinishJob
// records one (text, row, Hooks.Ended), while the job keeps running. It
// returns the row's ID. The job must still be the claim's
// (ErrJobNotOwned).
func (jq *Queue) RecordExtraAttempt(ctx context.Context, c Claim, trigger string, started time.Time, o Outcome) (string, error) {
	if !work(c.Kind) {
		return "", fmt.Errorf("record attempt of job %d: %w", c.ID, ErrNotWork)
	}
	extra := c
	extra.BackupID = uuid.NewString()
	extra.Job.BackupID = &extra.BackupID
	extra.Trigger = trigger
	extra.StartedAt = started
	var rec recorded
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		if err := jq.holdWork(ctx, tx, c); err != nil {
			return err
		}
		if err := insertAttempt(ctx, jq.prepared(tx), extra.BackupID, c.DeviceID, started, trigger); err != nil {
			return err
		}
		var err error
		rec, err = jq.recordAttempt(ctx, tx, extra, o, started, trigger)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("record attempt of job %d: %w", c.ID, err)
	}
	jq.stored(ctx, c.DeviceID, rec, o)
	return extra.BackupID, nil
}

// holdWork checks, in tx, that the claim's job still runs under its
// owner, and locks its row (PostgreSQL) so that it stays so until tx
// ends: nothing is recorded for a job taken for dead meanwhile.
func (jq *Queue) holdWork(ctx context.Context, tx *sql.Tx, c Claim) error {
	var owner string
	if c.Owner != nil {
		owner = *c.Owner
	}
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET owner = owner WHERE id = ? AND state = 'running' AND owner = ?`, c.ID, owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrJobNotOwned
	}
	return nil
}
