package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// The web jobs page's queries. Each sees only the caller's device-group
// scope. Active jobs (at most one per device) are read through the
// partial index on queued and running jobs; finished ones newest first by
// id, so that a page stops reading after its rows; progress reads the
// range of ids of its batch; finished counts the partial index on
// finished_at (migration 00007), and a device's or a group's jobs
// jobs_device.

// Views of the jobs page.
const (
	// JobViewActive is the queued and running jobs: the running ones
	// first, then the queue in the order it will run.
	JobViewActive = "active"
	// JobViewFinished is the succeeded, failed and cancelled jobs, newest
	// first.
	JobViewFinished = "finished"
	// JobViewFailed is the failed jobs, newest first.
	JobViewFailed = "failed"
)

// JobCountCap bounds the count of a finished view: past it a list says
// "more than" rather than reading the whole history to count it.
const JobCountCap = 10000

// jobsFrom is the FROM clause and scope condition of a job query. Every
// job has its device (deleting one deletes its jobs), so a caller seeing
// all groups needs no join unless it wants the device's columns.
func jobsFrom(scope Scope, needDevice bool) (from, cond string, args []any) {
	if scope.All && !needDevice {
		return `jobs j`, `1=1`, nil
	}
	cond, args = scope.clause()
	return `jobs j JOIN devices d ON d.id = j.device_id`, cond, args
}

// JobActivity is what the jobs page counts: the queue now, and the jobs
// that ended in the last hour and day.
type JobActivity struct {
	Queued           int
	Running          int
	FinishedLastHour int
	FinishedLastDay  int
	FailedLastDay    int
}

// JobActivityInScope counts the jobs of the devices in scope.
func (s *Store) JobActivityInScope(ctx context.Context, scope Scope, now time.Time) (JobActivity, error) {
	var a JobActivity
	from, cond, args := jobsFrom(scope, false)
	err := s.reader.QueryRowContext(ctx, `SELECT COALESCE(SUM(j.state = 'queued'), 0), COALESCE(SUM(j.state = 'running'), 0)
		FROM `+from+` WHERE j.state IN ('queued', 'running') AND `+cond, args...).Scan(&a.Queued, &a.Running)
	if err != nil {
		return a, fmt.Errorf("active job counts: %w", err)
	}
	// The last day's finished jobs, through jobs_finished.
	hour, day := backupTime(now.Add(-time.Hour)), backupTime(now.Add(-24*time.Hour))
	err = s.reader.QueryRowContext(ctx, `SELECT COALESCE(SUM(j.finished_at >= ?), 0), COUNT(*), COALESCE(SUM(j.state = 'failed'), 0)
		FROM `+from+` WHERE j.state IN ('succeeded', 'failed', 'cancelled') AND j.finished_at >= ? AND `+cond,
		append([]any{hour, day}, args...)...).Scan(&a.FinishedLastHour, &a.FinishedLastDay, &a.FailedLastDay)
	if err != nil {
		return a, fmt.Errorf("finished job counts: %w", err)
	}
	return a, nil
}

// JobsInView returns one page of a view of the jobs in scope (of one
// device when deviceID is set), and how many the view holds; a finished
// view's count stops at JobCountCap.
func (s *Store) JobsInView(ctx context.Context, scope Scope, view string, deviceID int64, limit, offset int) ([]JobRow, int, error) {
	var state, order string
	countCap := -1
	switch view {
	case JobViewActive:
		state = `j.state IN ('queued', 'running')`
		order = `CASE j.state WHEN 'running' THEN 0 ELSE 1 END,
			CASE j.state WHEN 'running' THEN j.started_at ELSE j.not_before END, j.id`
	case JobViewFinished:
		state, order, countCap = `j.state IN ('succeeded', 'failed', 'cancelled')`, `j.id DESC`, JobCountCap
	case JobViewFailed:
		state, order, countCap = `j.state = 'failed'`, `j.id DESC`, JobCountCap
	default:
		return nil, 0, fmt.Errorf("list jobs: unknown view %q", view)
	}
	var filter []any
	if deviceID != 0 {
		state += ` AND j.device_id = ?`
		filter = append(filter, deviceID)
	}

	from, cond, args := jobsFrom(scope, false)
	var total int
	err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM `+from+` WHERE `+state+` AND `+cond+` LIMIT ?)`,
		append(append(append([]any{}, filter...), args...), countCap)...).Scan(&total)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s jobs: %w", view, err)
	}

	cols := "d.name, " + strings.ReplaceAll("j."+jobColumns, ", ", ", j.")
	var query string
	if scope.All {
		// Order and cut the jobs first, then name the page's devices: the
		// queue of a fleet-wide run is sorted without a lookup per job.
		query = `SELECT ` + cols + ` FROM (SELECT * FROM jobs j WHERE ` + state + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?) j
			JOIN devices d ON d.id = j.device_id ORDER BY ` + order
		args = filter
	} else {
		from, cond, scopeArgs := jobsFrom(scope, true)
		query = `SELECT ` + cols + ` FROM ` + from + ` WHERE ` + state + ` AND ` + cond + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`
		args = append(filter, scopeArgs...)
	}
	items, err := queryAll(ctx, s.reader, scanJobRow, query, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s jobs: %w", view, err)
	}
	return items, total, nil
}

func scanJobRow(r scanner) (JobRow, error) {
	var row JobRow
	j, err := scanJob(prefixScanner{r, &row.DeviceName})
	row.Job = j
	return row, err
}

// JobProgress is how far a batch of jobs has come: the jobs in scope
// from job Since on. Ids grow as jobs are queued, so a batch is every job
// queued since its first one, including any queued while it runs.
type JobProgress struct {
	Since  int64
	Total  int
	Done   int
	Failed int
}

// JobBatchStart is the oldest queued or running job in scope, where the
// progress of the work in hand starts; false when nothing is in hand.
func (s *Store) JobBatchStart(ctx context.Context, scope Scope) (int64, bool, error) {
	from, cond, args := jobsFrom(scope, false)
	var id sql.NullInt64
	// +j.id: the partial index on active jobs finds them, rather than a
	// walk up the whole history from the oldest id.
	if err := s.reader.QueryRowContext(ctx, `SELECT MIN(+j.id) FROM `+from+`
		WHERE j.state IN ('queued', 'running') AND `+cond, args...).Scan(&id); err != nil {
		return 0, false, fmt.Errorf("job batch start: %w", err)
	}
	return id.Int64, id.Valid, nil
}

// JobProgressSince counts the jobs in scope from job since on, and how
// many of them have ended (the failed ones among them). It reads the
// batch's range of ids.
func (s *Store) JobProgressSince(ctx context.Context, scope Scope, since int64) (JobProgress, error) {
	p := JobProgress{Since: since}
	from, cond, args := jobsFrom(scope, false)
	err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(j.state NOT IN ('queued', 'running')), 0),
			COALESCE(SUM(j.state = 'failed'), 0)
		FROM `+from+` WHERE j.id >= ? AND `+cond,
		append([]any{since}, args...)...).Scan(&p.Total, &p.Done, &p.Failed)
	if err != nil {
		return p, fmt.Errorf("job progress: %w", err)
	}
	return p, nil
}
