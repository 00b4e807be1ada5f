package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"backupd/db/engine"
)

// getJobsQuery reads n jobs by ID; the one of a single job, which an
// engine reads as each of its jobs finishes, is prepared (readQueries).
func getJobsQuery(n int) string {
	return `SELECT ` + Columns + ` FROM jobs WHERE id IN (` + engine.Placeholders(n) + `)`
}

// GetJobs returns the jobs with the given IDs (missing ones are skipped).
func (jq *Queue) GetJobs(ctx context.Context, ids []int64) ([]Job, error) {
	var out []Job
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		jobs, err := engine.QueryAll(ctx, jq.read(), ScanJob, getJobsQuery(len(chunk)), args...)
		if err != nil {
			return nil, fmt.Errorf("get jobs: %w", err)
		}
		out = append(out, jobs...)
	}
	return out, nil
}

// jobStatesQuery reads the state of a list of jobs, one JSON parameter
// however long the list.
func jobStatesQuery(d engine.Dialect) string {
	return `SELECT id, state FROM jobs WHERE id IN (SELECT CAST(value AS BIGINT) FROM ` + d.JSONEach() + `)`
}

// JobStates returns the state of each of the jobs with the given IDs that
// exists: a cheap look at a long list, for a caller waiting for them to
// finish.
func (jq *Queue) JobStates(ctx context.Context, ids []int64) (map[int64]string, error) {
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("job states: %w", err)
	}
	rows, err := jq.read().QueryContext(ctx, jobStatesQuery(jq.d), string(raw))
	if err != nil {
		return nil, fmt.Errorf("job states: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]string, len(ids))
	for rows.Next() {
		var id int64
		var state string
		if err := rows.Scan(&id, &state); err != nil {
			return nil, fmt.Errorf("job states: %w", err)
		}
		out[id] = state
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("job states: %w", err)
	}
	return out, nil
}

// ActiveJob is a device's queued or running job.
type ActiveJob struct {
	ID    int64
	State string
	// Kind is what the job does: a backup, a restore or a push.
	Kind string
}

func activeJobsQuery(d engine.Dialect) string {
	return `SELECT device_id, id, state, kind FROM jobs WHERE state IN ('queued', 'running')
		AND device_id IN (SELECT CAST(value AS BIGINT) FROM ` + d.JSONEach() + `)`
}

// ActiveJobs returns the queued or running job of each of the devices
// that has one (a device has at most one): what a page of devices shows
// as "queued" or "running" while it follows them.
func (jq *Queue) ActiveJobs(ctx context.Context, deviceIDs []int64) (map[int64]ActiveJob, error) {
	out := make(map[int64]ActiveJob)
	if len(deviceIDs) == 0 {
		return out, nil
	}
	raw, err := json.Marshal(deviceIDs)
	if err != nil {
		return nil, fmt.Errorf("active jobs: %w", err)
	}
	rows, err := jq.read().QueryContext(ctx, activeJobsQuery(jq.d), string(raw))
	if err != nil {
		return nil, fmt.Errorf("active jobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var device int64
		var j ActiveJob
		if err := rows.Scan(&device, &j.ID, &j.State, &j.Kind); err != nil {
			return nil, fmt.Errorf("active jobs: %w", err)
		}
		out[device] = j
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("active jobs: %w", err)
	}
	return out, nil
}

// CancelJob cancels a job: a queued one at once; a running one is flagged,
// and the engine running it (in whichever process) stops it within
// seconds. It reports false for a job that already finished. A queued
// restore or push ends its work too (Hooks.WorkEnded), in the same
// transaction; a running one's runner decides what a cancel may still
// stop.
func (jq *Queue) CancelJob(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		now := time.Now()
		works, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (WorkEnd, error) {
			w := WorkEnd{State: JobCancelled, Error: ErrorCancelled, Reason: ReasonCancelled, At: now}
			var workID sql.NullInt64
			err := r.Scan(&w.JobID, &w.DeviceID, &w.Kind, &workID)
			w.WorkID = workID.Int64
			return w, err
		}, `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = ?, error_reason = ?
			WHERE id = ? AND state = 'queued' RETURNING id, device_id, kind, work_id`, backupTime(now), ErrorCancelled, ReasonCancelled, id)
		if err != nil {
			return err
		}
		if n = int64(len(works)); n == 1 {
			if w := works[0]; work(w.Kind) {
				return jq.workEnded(ctx, tx, w)
			}
			return nil
		}
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'`, id)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("cancel job %d: %w", id, err)
	}
	return n == 1, nil
}

// CancelRequested returns which of the given running jobs an operator
// asked to stop.
func (jq *Queue) CancelRequested(ctx context.Context, owner string) ([]int64, error) {
	ids, err := engine.QueryAll(ctx, jq.e.Reader, func(r engine.Scanner) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT id FROM jobs WHERE state = 'running' AND owner = ? AND cancel_requested = 1`, owner)
	if err != nil {
		return nil, fmt.Errorf("cancel requests: %w", err)
	}
	return ids, nil
}
