package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// JobRequest asks for one device to be backed up, not before NotBefore.
type JobRequest struct {
	DeviceID  int64
	Trigger   string
	NotBefore time.Time
}

// EnqueueJobs queues the requests and returns, per request in order, the
// job that will back the device up: a new one, or the one already queued
// or running for it (a device never has two). A request for a device that
// no longer exists gets 0. An operator's request (manual, cli), or the
// device's own report of a change (syslog), that joins a queued job makes
// it ready by the requested time, with all its attempts ahead of it again:
// what the operator starts, or the device just changed, runs now, whatever
// an earlier run left waiting (and a job the syslog request made run now
// is the syslog's: its backup says so). Its interruptions stay counted, so that the
// limit on them still ends a job that keeps stopping the process.
func (jq *Queue) EnqueueJobs(ctx context.Context, reqs []JobRequest) ([]int64, error) {
	out, err := jq.EnqueueJobsFound(ctx, reqs)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(out))
	for i, q := range out {
		ids[i] = q.JobID
	}
	return ids, nil
}

// Enqueued is what EnqueueJobsFound did with one request.
type Enqueued struct {
	// JobID is the job that backs the device up (0: no such device).
	JobID int64
	// Found is the state of the device's job the request joined: "" when
	// the request created the job, JobQueued or JobRunning when the device
	// had one already (no new job then).
	Found string
	// Kind is the job's kind: KindBackup, or, when the request joined a
	// restore or a push of the device, that kind (the device is backed
	// up as part of it: the caller can say "being restored").
	Kind string
}

// EnqueueJobsFound is EnqueueJobs, saying per request whether its job is
// new or one the device already had.
func (jq *Queue) EnqueueJobsFound(ctx context.Context, reqs []JobRequest) ([]Enqueued, error) {
	var out []Enqueued
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = EnqueueTx(ctx, tx, jq.d, reqs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

// EnqueueTx is EnqueueJobsFound in the caller's transaction (a schedule
// queues its devices in the transaction that records its run). A request
// for a device whose active job is a restore or a push joins it, and
// leaves it as it is: such a job backs the device up itself, and runs
// when its work was queued for, whatever asks for a backup meanwhile.
func EnqueueTx(ctx context.Context, tx *sql.Tx, d engine.Dialect, reqs []JobRequest) ([]Enqueued, error) {
	out := make([]Enqueued, len(reqs))
	now := backupTime(time.Now())
	err := func() error {
		insert, err := tx.PrepareContext(ctx, d.InsertOrIgnore(`jobs (device_id, trigger, state, not_before, created_at, zone_id)`,
			`SELECT id, ?, 'queued', ?, ?, zone_id FROM devices WHERE id = ?`))
		if err != nil {
			return err
		}
		defer insert.Close()
		active, err := tx.PrepareContext(ctx, `SELECT id, state, kind FROM jobs WHERE device_id = ? AND state IN ('queued', 'running')`)
		if err != nil {
			return err
		}
		defer active.Close()
		// A waiting job that a device's change log makes run now is
		// recorded as triggered by it; an operator's request keeps the
		// job's trigger.
		refresh, err := tx.PrepareContext(ctx, `UPDATE jobs
			SET trigger = CASE WHEN ? = 'syslog' AND not_before > ? THEN 'syslog' ELSE trigger END,
				not_before = CASE WHEN not_before < ? THEN not_before ELSE ? END, attempt = 0
			WHERE device_id = ? AND state = 'queued' AND kind = 'backup'`)
		if err != nil {
			return err
		}
		defer refresh.Close()
		for i, r := range reqs {
			res, err := insert.ExecContext(ctx, r.Trigger, backupTime(r.NotBefore), now, r.DeviceID)
			if err != nil {
				return err
			}
			created, _ := res.RowsAffected()
			if created == 0 && (r.Trigger == TriggerManual || r.Trigger == TriggerCLI || r.Trigger == TriggerSyslog) {
				at := backupTime(r.NotBefore)
				if _, err := refresh.ExecContext(ctx, r.Trigger, at, at, at, r.DeviceID); err != nil {
					return err
				}
			}
			var state string
			err = active.QueryRowContext(ctx, r.DeviceID).Scan(&out[i].JobID, &state, &out[i].Kind)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if created == 0 && err == nil {
				out[i].Found = state
			}
		}
		return nil
	}()
	return out, err
}
