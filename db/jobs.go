package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"backupd/db/engine"
	"backupd/db/snapstore"

	"github.com/google/uuid"
)

// Job states.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// ErrorInterrupted is the error of an attempt cut short by a shutdown or
// a crash of the process running it.
const ErrorInterrupted = "interrupted: the backup process stopped before the backup finished"

// ErrorInterruptedTooOften ends a job whose attempts the backup process
// stopped before they finished too many times: it is not retried forever,
// in case it is what stops the process.
const ErrorInterruptedTooOften = "given up: the backup process stopped before this device's backup finished too many times; see the server log"

// DefaultMaxInterruptions bounds how often a job's attempt may be cut
// short by the process stopping before the job fails.
const DefaultMaxInterruptions = 10

// Job is one device waiting for, or done with, a backup.
type Job struct {
	ID       int64
	DeviceID int64
	Trigger  string
	State    string
	// Attempt counts the attempts that used up the device's retries;
	// Interruptions those our own process cut short (they do not).
	Attempt       int
	Interruptions int
	NotBefore     time.Time
	CreatedAt     time.Time
	StartedAt     *time.Time
	FinishedAt    *time.Time
	Owner         *string
	BackupID      *string
	Error         *string
}

const jobColumns = `id, device_id, trigger, state, attempt, interruptions, not_before, created_at, started_at, finished_at, owner, backup_id, error`

func scanJob(row engine.Scanner) (Job, error) {
	var j Job
	var notBefore, created string
	var started, finished, owner, backupID, errText sql.NullString
	if err := row.Scan(&j.ID, &j.DeviceID, &j.Trigger, &j.State, &j.Attempt, &j.Interruptions, &notBefore, &created,
		&started, &finished, &owner, &backupID, &errText); err != nil {
		return j, err
	}
	var err error
	parse := func(s string) time.Time {
		t, perr := time.ParseInLocation(BackupTimeFormat, s, time.UTC)
		if perr != nil && err == nil {
			err = fmt.Errorf("job %d: %w", j.ID, perr)
		}
		return t
	}
	j.NotBefore, j.CreatedAt = parse(notBefore), parse(created)
	if started.Valid {
		t := parse(started.String)
		j.StartedAt = &t
	}
	if finished.Valid {
		t := parse(finished.String)
		j.FinishedAt = &t
	}
	if owner.Valid {
		j.Owner = &owner.String
	}
	if backupID.Valid {
		j.BackupID = &backupID.String
	}
	if errText.Valid {
		j.Error = &errText.String
	}
	return j, err
}

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
func (s *Store) EnqueueJobs(ctx context.Context, reqs []JobRequest) ([]int64, error) {
	out, err := s.EnqueueJobsFound(ctx, reqs)
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
}

// EnqueueJobsFound is EnqueueJobs, saying per request whether its job is
// new or one the device already had.
func (s *Store) EnqueueJobsFound(ctx context.Context, reqs []JobRequest) ([]Enqueued, error) {
	var out []Enqueued
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = enqueueJobs(ctx, tx, s.d, reqs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

// enqueueJobs is EnqueueJobsFound in the caller's transaction.
func enqueueJobs(ctx context.Context, tx *sql.Tx, d engine.Dialect, reqs []JobRequest) ([]Enqueued, error) {
	out := make([]Enqueued, len(reqs))
	now := backupTime(time.Now())
	err := func() error {
		insert, err := tx.PrepareContext(ctx, d.InsertOrIgnore(`jobs (device_id, trigger, state, not_before, created_at, zone_id)`,
			`SELECT id, ?, 'queued', ?, ?, zone_id FROM devices WHERE id = ?`))
		if err != nil {
			return err
		}
		defer insert.Close()
		active, err := tx.PrepareContext(ctx, `SELECT id, state FROM jobs WHERE device_id = ? AND state IN ('queued', 'running')`)
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
			WHERE device_id = ? AND state = 'queued'`)
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
			err = active.QueryRowContext(ctx, r.DeviceID).Scan(&out[i].JobID, &state)
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

// ErrJobNotOwned is FinishJob's error for an attempt whose job is no
// longer its own: it was queued again (its engine was taken for dead) or
// ended otherwise meanwhile. Nothing of the attempt is recorded.
var ErrJobNotOwned = errors.New("the job is no longer this attempt's: it was queued again or ended meanwhile")

// Claim is a job a worker took, with the backups row of this attempt.
type Claim struct {
	Job
	BackupID  string
	StartedAt time.Time
}

// The claim's statements, prepared when the store opens (jobQueries). On
// PostgreSQL several nodes claim at once, each on its own connection: the
// rows a claim picks are locked as it picks them, and those another
// node's claim holds are skipped rather than waited for (and, without the
// lock, taken a second time once that claim commits). SQLite has one
// writer, so its claims never overlap.
func claimQuery(d engine.Dialect) string {
	return `UPDATE jobs SET state = 'running', owner = ?, started_at = ?,
				attempt = attempt + 1, finished_at = NULL, error = NULL
			WHERE state = 'queued' AND id ` + d.InLockedPick(`SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ?
				ORDER BY not_before, id LIMIT ?`) + `
			RETURNING ` + jobColumns
}

// claimAmongQuery is claimQuery among the jobs of one JSON parameter,
// however many: no statement with thousands of placeholders to parse per
// claim.
func claimAmongQuery(d engine.Dialect) string {
	return `UPDATE jobs SET state = 'running', owner = ?, started_at = ?,
				attempt = attempt + 1, finished_at = NULL, error = NULL
			WHERE state = 'queued' AND id ` + d.InLockedPick(`SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ?
				AND id IN (SELECT CAST(value AS BIGINT) FROM `+d.JSONEach()+`) ORDER BY not_before, id LIMIT ?`) + `
			RETURNING ` + jobColumns
}

const (
	readyQueueQuery  = `SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ? ORDER BY not_before, id LIMIT ?`
	claimBackupQuery = `UPDATE jobs SET backup_id = ? WHERE id = ?`
)

// ClaimJobs moves up to n ready jobs of the server's own zone (oldest
// first; other zones' jobs are leased to their collectors) to running under
// owner, each with a fresh backups row that shows it running. With only
// non-empty, it claims only among those job IDs (sorted ascending, a
// caller claiming often from a long list saves a sort per claim).
func (s *Store) ClaimJobs(ctx context.Context, owner string, n int, only []int64) ([]Claim, error) {
	if n <= 0 {
		return nil, nil
	}
	if !slices.IsSorted(only) {
		only = slices.Sorted(slices.Values(only))
	}
	now := time.Now().UTC()
	stamp := backupTime(now)
	var claims []Claim
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		claims = claims[:0]
		q := s.prepared(tx)
		query, amongQuery := claimQuery(s.d), claimAmongQuery(s.d)
		args := []any{owner, stamp, stamp}
		if len(only) > 0 {
			among, err := readyAmong(ctx, q, stamp, only, n)
			if err != nil || len(among) == 0 {
				return err
			}
			raw, err := json.Marshal(among)
			if err != nil {
				return err
			}
			query, args = amongQuery, append(args, string(raw))
		}
		args = append(args, n)
		jobs, err := engine.QueryAll(ctx, q, scanJob, query, args...)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			c := Claim{Job: j, BackupID: uuid.NewString(), StartedAt: now}
			trigger := j.Trigger
			if j.Attempt > 1 {
				trigger = TriggerRetry
			}
			if err := insertBackup(ctx, q, Backup{ID: c.BackupID, DeviceID: j.DeviceID, StartedAt: now, Trigger: trigger}); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, claimBackupQuery, c.BackupID, j.ID); err != nil {
				return err
			}
			c.Job.BackupID = &c.BackupID
			claims = append(claims, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return claims, nil
}

// readyAmong picks the first n ready jobs in claim order that are in
// only (sorted). It walks the ready queue rather than handing SQLite the
// whole list: a fleet-wide `backup run` claims thousands of times from a
// list of thousands of jobs, almost all of them at the head of the
// queue. A queue mostly of other jobs stops the walk after as many rows
// as only has; then it returns only itself and the claim filters the
// whole list in SQL, as before.
func readyAmong(ctx context.Context, q engine.Querier, now string, only []int64, n int) ([]int64, error) {
	budget := len(only) + n
	rows, err := q.QueryContext(ctx, readyQueueQuery, now, budget)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	picked := []int64{}
	walked := 0
	for rows.Next() {
		walked++
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if _, ok := slices.BinarySearch(only, id); ok {
			if picked = append(picked, id); len(picked) == n {
				return picked, nil
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if walked == budget {
		return only, nil // the walk gave up: let SQL filter
	}
	return picked, nil // the whole ready queue was walked
}

// Outcome is how one attempt ended.
type Outcome struct {
	Success bool
	Error   string // when failed: what to tell the operator; never secrets or config text
	Reason  string // when failed: its class, for logs and metrics (not stored)
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
}

// The end of an attempt's statements, prepared when the store opens
// (jobQueries).
const (
	finishBackupQuery = `UPDATE backups SET finished_at = ?, success = ?, error_message = ?,
				snapshot_hash = ?, changed = ?, first_backup = ?, duration_ms = ?, bytes = ? WHERE id = ?`
	finishSucceededQuery = `UPDATE jobs SET state = 'succeeded', finished_at = ?, owner = NULL, error = NULL WHERE id = ? AND state = 'running' AND owner = ?`
	finishCancelledQuery = `UPDATE jobs SET state = 'cancelled', finished_at = ?, owner = NULL, error = ? WHERE id = ? AND state = 'running' AND owner = ?`
	finishRetryQuery     = `UPDATE jobs SET state = 'queued', not_before = ?, owner = NULL, error = ? WHERE id = ? AND state = 'running' AND owner = ?`
	finishFailedQuery    = `UPDATE jobs SET state = 'failed', finished_at = ?, owner = NULL, error = ? WHERE id = ? AND state = 'running' AND owner = ?`
)

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

// jobQueries are the statements every backup runs, prepared when the
// store opens: parsing them again for each of thousands of devices is a
// good part of a fleet-wide run's CPU.
func jobQueries(d engine.Dialect) []string {
	out := append([]string{claimQuery(d), claimAmongQuery(d), readyQueueQuery, claimBackupQuery, insertBackupQuery,
		finishBackupQuery, finishSucceededQuery, finishCancelledQuery, finishRetryQuery, finishFailedQuery},
		snapstore.PutQueries(d)...)
	for _, reachable := range []bool{false, true} {
		for _, pin := range []bool{false, true} {
			for _, pending := range []bool{false, true} {
				out = append(out, finishDeviceQuery(reachable, pin, pending))
			}
		}
	}
	return out
}

// FinishJob records the end of a claimed attempt: the backups row, the
// job, the device's status fields and the notification events the end
// causes (as the store's event policy decides them), in one transaction.
func (s *Store) FinishJob(ctx context.Context, c Claim, o Outcome) error {
	finished := o.FinishedAt.UTC()
	dur := finished.Sub(c.StartedAt).Milliseconds()
	var stored bool // a new text was stored: its predecessor can become a delta
	var storedHash string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		stored = false
		q := s.prepared(tx)
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
			res, err = q.ExecContext(ctx, finishCancelledQuery, backupTime(finished), o.Error, c.ID, owner)
		case o.RetryAt != nil:
			res, err = q.ExecContext(ctx, finishRetryQuery, backupTime(*o.RetryAt), o.Error, c.ID, owner)
		default:
			res, err = q.ExecContext(ctx, finishFailedQuery, backupTime(finished), o.Error, c.ID, owner)
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrJobNotOwned
		}
		var errMsg, hash, size any
		if o.Success {
			h, isNew, err := snapstore.PutNew(ctx, q, s.d, o.Text, o.Hash)
			if err != nil {
				return err
			}
			hash, size, stored, storedHash = h, len(o.Text), isNew, h
		} else {
			errMsg = o.Error
		}
		if _, err := q.ExecContext(ctx, finishBackupQuery,
			backupTime(finished), o.Success, errMsg, hash, o.Changed && !o.First && o.Success, o.First && o.Success,
			dur, size, c.BackupID); err != nil {
			return err
		}
		// The notifications this end causes commit or roll back with it.
		trigger := c.Trigger
		if c.Attempt > 1 {
			trigger = TriggerRetry
		}
		if err := s.recordAttemptEvents(ctx, q, c, o, finished, trigger); err != nil {
			return err
		}
		at := finished.Format(TimeFormat)
		args := []any{at, o.Success}
		if o.Reachable != nil {
			status := StatusUnreachable
			if *o.Reachable {
				status = StatusReachable
			}
			args = append(args, status, at)
		}
		if o.PinHostKey != nil {
			args = append(args, o.PinHostKey)
		}
		if o.PendingHostKey != nil {
			args = append(args, o.PendingHostKey)
		}
		_, err = q.ExecContext(ctx, finishDeviceQuery(o.Reachable != nil, o.PinHostKey != nil, o.PendingHostKey != nil),
			append(args, c.DeviceID)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish job %d: %w", c.ID, err)
	}
	if stored && !o.First {
		// The attempt is recorded whatever packing does: a failure leaves
		// the previous version whole (counted in PackCounts), and Repack
		// tries again later.
		_ = s.packDevice(ctx, c.DeviceID, storedHash, []byte(o.Text))
	}
	return nil
}

// RunningOwners returns the owners of running jobs in the server's
// engines (a remote collector's leases end by ExpireLeases).
func (s *Store) RunningOwners(ctx context.Context) ([]string, error) {
	owners, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (string, error) {
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
}

// InterruptJobs ends the attempts owner was running because the process
// stopped (a shutdown, or a crash found later): their backups rows fail as
// interrupted and the jobs wait in the queue again, ready at once. Such an
// attempt was no fault of the device, so it does not count against the
// job's attempts; it counts as an interruption instead, and a job
// interrupted maxInterruptions times fails with ErrorInterruptedTooOften
// (its device's last backup then counts as failed).
func (s *Store) InterruptJobs(ctx context.Context, owner string, maxInterruptions int) (Interrupted, error) {
	var out Interrupted
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = Interrupted{}
		return s.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
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
func (s *Store) InterruptJob(ctx context.Context, c Claim, maxInterruptions int) (Interrupted, error) {
	if c.Owner == nil || *c.Owner == "" {
		return Interrupted{}, fmt.Errorf("interrupt job %d: the claim has no owner", c.ID)
	}
	var out Interrupted
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = Interrupted{}
		return s.interruptJobs(ctx, tx, *c.Owner, c.ID, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, fmt.Errorf("interrupt job %d: %w", c.ID, err)
	}
	return out, nil
}

// interruptJobs is InterruptJobs in the caller's transaction; with jobID
// above 0, of that job only.
func (s *Store) interruptJobs(ctx context.Context, tx *sql.Tx, owner string, jobID int64, maxInterruptions int, out *Interrupted) error {
	now := time.Now()
	stamp := backupTime(now)
	// The running jobs meant, in each statement below.
	mine, arg := `state = 'running' AND owner = ?`, []any{owner}
	if jobID > 0 {
		mine, arg = mine+` AND id = ?`, append(arg, jobID)
	}
	res, err := tx.ExecContext(ctx, `UPDATE backups SET finished_at = ?, success = 0, error_message = ?,
			duration_ms = `+s.d.MillisBetween("started_at", "?")+`
		WHERE id IN (SELECT backup_id FROM jobs WHERE `+mine+`) AND finished_at IS NULL`,
		append([]any{stamp, ErrorInterrupted, stamp}, arg...)...)
	if err != nil {
		return err
	}
	affected, _ := res.RowsAffected()
	out.Attempts = int(affected)
	// The claim counted the attempt; take it back.
	gaveUp, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (Claim, error) {
		var c Claim
		var backupID sql.NullString
		err := r.Scan(&c.DeviceID, &backupID, &c.Trigger, &c.Attempt)
		c.BackupID = backupID.String
		return c, err
	}, `UPDATE jobs SET state = 'failed', finished_at = ?, owner = NULL, error = ?,
			attempt = `+s.d.Greater("attempt - 1", "0")+`, interruptions = interruptions + 1
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
		if err := s.recordAttemptEvents(ctx, s.prepared(tx), c, Outcome{Error: ErrorInterruptedTooOften, Reason: "interrupted"}, now, trigger); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET last_backup_at = ?, last_backup_success = 0 WHERE id = ?`,
			now.UTC().Format(TimeFormat), c.DeviceID); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', not_before = ?, owner = NULL, error = ?,
			attempt = `+s.d.Greater("attempt - 1", "0")+`, interruptions = interruptions + 1
		WHERE `+mine, append([]any{stamp, ErrorInterrupted}, arg...)...)
	return err
}

// getJobsQuery reads n jobs by ID; the one of a single job, which an
// engine reads as each of its jobs finishes, is prepared when the store
// opens (readQueries).
func getJobsQuery(n int) string {
	return `SELECT ` + jobColumns + ` FROM jobs WHERE id IN (` + engine.Placeholders(n) + `)`
}

// GetJobs returns the jobs with the given IDs (missing ones are skipped).
func (s *Store) GetJobs(ctx context.Context, ids []int64) ([]Job, error) {
	var out []Job
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		jobs, err := engine.QueryAll(ctx, s.read(), scanJob, getJobsQuery(len(chunk)), args...)
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
func (s *Store) JobStates(ctx context.Context, ids []int64) (map[int64]string, error) {
	raw, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("job states: %w", err)
	}
	rows, err := s.read().QueryContext(ctx, jobStatesQuery(s.d), string(raw))
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

// ErrorCancelled is the error of an attempt an operator stopped.
const ErrorCancelled = "cancelled by an operator"

// CancelJob cancels a job: a queued one at once; a running one is flagged,
// and the engine running it (in whichever process) stops it within
// seconds. It reports false for a job that already finished.
func (s *Store) CancelJob(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = ?
			WHERE id = ? AND state = 'queued'`, backupTime(time.Now()), ErrorCancelled, id)
		if err != nil {
			return err
		}
		if n, _ = res.RowsAffected(); n == 1 {
			return nil
		}
		res, err = tx.ExecContext(ctx, `UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'`, id)
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
func (s *Store) CancelRequested(ctx context.Context, owner string) ([]int64, error) {
	ids, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT id FROM jobs WHERE state = 'running' AND owner = ? AND cancel_requested = 1`, owner)
	if err != nil {
		return nil, fmt.Errorf("cancel requests: %w", err)
	}
	return ids, nil
}
