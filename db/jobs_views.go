package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
)

// What the pages and the API read of the job queue: lists, counts, the
// activity and progress figures, the latest good version a backup
// compares with. The queue itself (enqueue, claim, finish, interrupt,
// cancel) is jobs.go's.

// JobFilter narrows a job list; zero values do not filter.
type JobFilter struct {
	State    string // queued, running, succeeded, failed, cancelled; "active" = queued or running
	DeviceID int64
}

// JobRow is a job with its device's name, for listing.
type JobRow struct {
	queue.Job
	DeviceName string
}

// ListJobs returns one page of jobs visible in scope, newest first, and
// the total.
func (s *Store) ListJobs(ctx context.Context, scope Scope, f JobFilter, limit, offset int) ([]JobRow, int, error) {
	cond, args := scope.clause()
	where := []string{cond}
	switch f.State {
	case "":
	case "active":
		where = append(where, `j.state IN ('queued', 'running')`)
	default:
		where = append(where, `j.state = ?`)
		args = append(args, f.State)
	}
	if f.DeviceID != 0 {
		where = append(where, `j.device_id = ?`)
		args = append(args, f.DeviceID)
	}
	w := strings.Join(where, " AND ")
	scan := func(r engine.Scanner) (JobRow, error) {
		var row JobRow
		var name string
		j, err := queue.ScanJob(prefixScanner{r, &name})
		row.Job, row.DeviceName = j, name
		return row, err
	}
	cols := strings.ReplaceAll("j."+queue.Columns, ", ", ", j.")
	items, total, err := engine.Page(ctx, s.reader, scan,
		`SELECT COUNT(*) FROM jobs j JOIN devices d ON d.id = j.device_id WHERE `+w,
		`SELECT d.name, `+cols+` FROM jobs j JOIN devices d ON d.id = j.device_id WHERE `+w+` ORDER BY j.id DESC`,
		limit, offset, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	return items, total, nil
}

// prefixScanner scans a leading column into first, then the rest.
type prefixScanner struct {
	r     engine.Scanner
	first any
}

func (p prefixScanner) Scan(dest ...any) error { return p.r.Scan(append([]any{p.first}, dest...)...) }

// JobCounts returns how many jobs are queued and running.
func (s *Store) JobCounts(ctx context.Context) (queued, running int, err error) {
	err = s.reader.QueryRowContext(ctx, `SELECT
			COALESCE(`+s.d.SumIf(`state = 'queued'`)+`, 0), COALESCE(`+s.d.SumIf(`state = 'running'`)+`, 0)
		FROM jobs WHERE state IN ('queued', 'running')`).Scan(&queued, &running)
	if err != nil {
		err = fmt.Errorf("job counts: %w", err)
	}
	return queued, running, err
}

// NextJobAt is when the earliest queued job of the server's own zone
// becomes ready, if any (the jobs of other zones wait for collectors).
func (s *Store) NextJobAt(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullString
	if err := s.reader.QueryRowContext(ctx, `SELECT MIN(not_before) FROM jobs WHERE state = 'queued' AND zone_id = 1`).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next job: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	t, err := time.ParseInLocation(BackupTimeFormat, at.String, time.UTC)
	return t, err == nil, err
}

// PruneJobs deletes finished jobs that ended before cutoff.
func (s *Store) PruneJobs(ctx context.Context, cutoff time.Time) (int, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM jobs WHERE state IN ('succeeded', 'failed', 'cancelled') AND created_at < ?`,
		backupTime(cutoff))
	if err != nil {
		return 0, fmt.Errorf("prune jobs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// latestGoodSnapshotQuery is prepared when the store opens (readQueries).
const latestGoodSnapshotQuery = `SELECT snapshot_hash FROM backups
		WHERE device_id = ? AND success = 1 ORDER BY started_at DESC LIMIT 1`

// LatestGoodSnapshot is the snapshot of a device's newest successful
// backup.
func (s *Store) LatestGoodSnapshot(ctx context.Context, deviceID int64) (string, bool, error) {
	var hash string
	err := s.read().QueryRowContext(ctx, latestGoodSnapshotQuery, deviceID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("latest good snapshot of device %d: %w", deviceID, err)
	}
	return hash, true, nil
}

// The jobs page's queries. Each sees only the caller's device-group
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
	err := s.reader.QueryRowContext(ctx, `SELECT COALESCE(`+s.d.SumIf(`j.state = 'queued'`)+`, 0), COALESCE(`+s.d.SumIf(`j.state = 'running'`)+`, 0)
		FROM `+from+` WHERE j.state IN ('queued', 'running') AND `+cond, args...).Scan(&a.Queued, &a.Running)
	if err != nil {
		return a, fmt.Errorf("active job counts: %w", err)
	}
	// The last day's finished jobs, through jobs_finished.
	hour, day := backupTime(now.Add(-time.Hour)), backupTime(now.Add(-24*time.Hour))
	err = s.reader.QueryRowContext(ctx, `SELECT COALESCE(`+s.d.SumIf(`j.finished_at >= ?`)+`, 0), COUNT(*), COALESCE(`+s.d.SumIf(`j.state = 'failed'`)+`, 0)
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
	countQuery := `SELECT COUNT(*) FROM (SELECT 1 FROM ` + from + ` WHERE ` + state + ` AND ` + cond
	countArgs := append(append([]any{}, filter...), args...)
	if countCap >= 0 {
		countQuery += ` LIMIT ?`
		countArgs = append(countArgs, countCap)
	}
	err := s.reader.QueryRowContext(ctx, countQuery+`) x`, countArgs...).Scan(&total)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s jobs: %w", view, err)
	}

	cols := "d.name, " + strings.ReplaceAll("j."+queue.Columns, ", ", ", j.")
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
	items, err := engine.QueryAll(ctx, s.reader, scanJobRow, query, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s jobs: %w", view, err)
	}
	return items, total, nil
}

func scanJobRow(r engine.Scanner) (JobRow, error) {
	var row JobRow
	j, err := queue.ScanJob(prefixScanner{r, &row.DeviceName})
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

// JobBatchStart is where the progress of the work in hand starts: the
// oldest job in scope that is queued or running, or that ended after the
// oldest of those was queued or was queued with it (it was in hand at the
// same time); false
// when nothing is in hand. Counting from the oldest active job alone
// dropped the jobs of a batch that had already ended: right after 31
// backups were queued, the page said "14 of 15".
func (s *Store) JobBatchStart(ctx context.Context, scope Scope) (int64, bool, error) {
	from, cond, args := jobsFrom(scope, false)
	var id sql.NullInt64
	var queuedAt sql.NullString
	// +j.id: the partial index on active jobs finds them, rather than a
	// walk up the whole history from the oldest id.
	if err := s.reader.QueryRowContext(ctx, `SELECT MIN(+j.id), MIN(j.created_at) FROM `+from+`
		WHERE j.state IN ('queued', 'running') AND `+cond, args...).Scan(&id, &queuedAt); err != nil {
		return 0, false, fmt.Errorf("job batch start: %w", err)
	}
	if !id.Valid {
		return 0, false, nil
	}
	var ended sql.NullInt64
	// An ended job was in hand with it when it ended after the oldest
	// active one was queued, or was queued with it (the same millisecond
	// or later: a batch's jobs that ended within the millisecond it was
	// queued are its too). A job queued before and ended in that
	// millisecond is not.
	if err := s.reader.QueryRowContext(ctx, `SELECT MIN(j.id) FROM `+from+`
		WHERE j.state IN ('succeeded', 'failed', 'cancelled') AND (j.finished_at > ? OR j.created_at >= ?) AND `+cond,
		append([]any{queuedAt.String, queuedAt.String}, args...)...).Scan(&ended); err != nil {
		return 0, false, fmt.Errorf("job batch start: %w", err)
	}
	if ended.Valid && ended.Int64 < id.Int64 {
		return ended.Int64, true, nil
	}
	return id.Int64, true, nil
}

// JobProgressSince counts the jobs in scope from job since on, and how
// many of them have ended (the failed ones among them). It reads the
// batch's range of ids.
func (s *Store) JobProgressSince(ctx context.Context, scope Scope, since int64) (JobProgress, error) {
	p := JobProgress{Since: since}
	from, cond, args := jobsFrom(scope, false)
	err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(`+s.d.SumIf(`j.state NOT IN ('queued', 'running')`)+`, 0),
			COALESCE(`+s.d.SumIf(`j.state = 'failed'`)+`, 0)
		FROM `+from+` WHERE j.id >= ? AND `+cond,
		append([]any{since}, args...)...).Scan(&p.Total, &p.Done, &p.Failed)
	if err != nil {
		return p, fmt.Errorf("job progress: %w", err)
	}
	return p, nil
}
