// Package queue is backupd's job queue. A device waiting for a backup is
// a job; the server's engines claim jobs (ClaimJobs), remote collectors
// lease them (LeaseJobs), and each attempt ends in FinishJob, or is
// interrupted when what ran it stopped. The queue keeps the jobs table
// and the backups row of each attempt, and stores a good attempt's text
// (package snapstore) in the transaction that names it. What an
// attempt's end means for its device, its status fields and the
// notification events it causes, the store above writes through Hooks,
// in that same transaction.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// Job states.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// What starts a job, as its backups rows name it too.
const (
	TriggerManual   = "manual"
	TriggerSchedule = "schedule"
	TriggerRetry    = "retry"
	TriggerCLI      = "cli"
	// TriggerSyslog: the device logged a configuration change (serve
	// --syslog-listen).
	TriggerSyslog = "syslog"
	// TriggerRestore and TriggerPush name the jobs of a restore and of a
	// change set's push, and the backups they take of the device.
	TriggerRestore = "restore"
	TriggerPush    = "push"
)

// What a job does (Job.Kind). A restore or a push is a job of its kind on
// the device, so that the one active job a device may have (the unique
// index jobs_active_device) keeps backups, restores and pushes from
// ever running on a device at once.
const (
	KindBackup  = "backup"
	KindRestore = "restore"
	KindPush    = "push"
)

// Kinds lists every job kind.
var Kinds = []string{KindBackup, KindRestore, KindPush}

// work reports whether kind is one that changes the device (a restore or
// a push): such a job runs once and is never queued again.
func work(kind string) bool { return kind == KindRestore || kind == KindPush }

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

// ErrorInterruptedUnknown ends a restore or push job whose process
// stopped while it ran: what it did to the device is not known, and it is
// never run again on its own (it might apply a change twice, or over one
// an operator made since).
const ErrorInterruptedUnknown = "interrupted — state unknown, back up to see"

// ErrorCancelled is the error of an attempt an operator stopped.
const ErrorCancelled = "cancelled by an operator"

// The reasons the queue itself gives an attempt's end (the engine gives
// the others: app/collect's, and its own).
const (
	ReasonInterrupted = "interrupted"
	ReasonCancelled   = "cancelled"
)

// Hooks are what the queue asks of the store above it.
type Hooks struct {
	// Ended writes, in tx, what the end of attempt c means for its
	// device: its status fields and the notification events the end
	// causes, so that they commit or roll back with the attempt. at is
	// when it ended; trigger the attempt's (TriggerRetry after the
	// first).
	Ended func(ctx context.Context, tx *sql.Tx, c Claim, o Outcome, at time.Time, trigger string) error
	// Stored is told, once FinishJob has committed, that text (stored as
	// hash) is the device's new latest version and not its first: the
	// store may rewrite the previous one as a delta against it.
	Stored func(ctx context.Context, deviceID int64, hash string, text []byte)
	// WorkEnded writes, in tx, what a restore or push job that ended
	// without its runner means for the work it ran (the restore, the
	// change set target): its process stopped while it ran (end.Reason
	// ReasonInterrupted: the device's state is unknown), or an operator
	// cancelled it while it was queued.
	WorkEnded func(ctx context.Context, tx *sql.Tx, end WorkEnd) error
}

// WorkEnd is a restore or push job that ended without its runner.
type WorkEnd struct {
	JobID    int64
	DeviceID int64
	Kind     string
	WorkID   int64
	// State is the job's end: JobFailed (interrupted) or JobCancelled.
	State  string
	Error  string
	Reason string
	At     time.Time
}

// Queue is the job queue on one database.
type Queue struct {
	e *engine.DB
	d engine.Dialect
	// stmts are writeQueries prepared on the writer, reads readQueries on
	// the reader: parsing them again for each of thousands of devices is
	// a good part of a fleet-wide run's CPU.
	stmts map[string]*sql.Stmt
	reads map[string]*sql.Stmt
	hooks Hooks
}

// New is the queue on e, its frequent statements prepared.
func New(e *engine.DB, h Hooks) *Queue {
	return &Queue{e: e, d: e.Dialect, hooks: h,
		stmts: engine.PrepareAll(e.Writer, writeQueries(e.Dialect)),
		reads: engine.PrepareAll(e.Reader, readQueries(e.Dialect))}
}

// Close closes the prepared statements (not e).
func (jq *Queue) Close() error {
	var errs []error
	for _, st := range jq.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range jq.reads {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// writeQueries are the statements every backup runs in its transactions.
func writeQueries(d engine.Dialect) []string {
	return append([]string{claimQuery(d, backupKinds), claimAmongQuery(d, backupKinds), readyQueueQuery(backupKinds),
		claimBackupQuery, insertAttemptQuery,
		finishBackupQuery, finishSucceededQuery, finishCancelledQuery, finishRetryQuery, finishFailedQuery, insertLogQuery},
		snapstore.PutQueries(d)...)
}

// readQueries are the reads an engine makes as each of its jobs ends.
func readQueries(d engine.Dialect) []string {
	return []string{getJobsQuery(1), jobStatesQuery(d)}
}

// prepared wraps tx so that the queue's statements run prepared.
func (jq *Queue) prepared(tx *sql.Tx) engine.Querier {
	return engine.PreparedTx{Tx: tx, Stmts: jq.stmts}
}

// read is the read pool, with readQueries prepared.
func (jq *Queue) read() engine.Querier { return engine.Prepared{DB: jq.e.Reader, Stmts: jq.reads} }

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
	// ErrorReason is Error's class ("connect", "auth", ...), nil when
	// none was given.
	ErrorReason *string
	// Kind is what the job does (KindBackup, KindRestore, KindPush);
	// WorkID the restore or change set target it runs, 0 for a backup.
	Kind   string
	WorkID int64
}

// Columns are the jobs table's columns ScanJob reads, in its order.
const Columns = `id, device_id, trigger, state, attempt, interruptions, not_before, created_at, started_at, finished_at, owner, backup_id, error, error_reason, kind, work_id`

// ScanJob reads a row of Columns.
func ScanJob(row engine.Scanner) (Job, error) {
	var j Job
	var notBefore, created string
	var started, finished, owner, backupID, errText, errReason sql.NullString
	var workID sql.NullInt64
	if err := row.Scan(&j.ID, &j.DeviceID, &j.Trigger, &j.State, &j.Attempt, &j.Interruptions, &notBefore, &created,
		&started, &finished, &owner, &backupID, &errText, &errReason, &j.Kind, &workID); err != nil {
		return j, err
	}
	j.WorkID = workID.Int64
	var err error
	parse := func(s string) time.Time {
		t, perr := time.ParseInLocation(engine.BackupTimeFormat, s, time.UTC)
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
	if errReason.Valid {
		j.ErrorReason = &errReason.String
	}
	return j, err
}

func backupTime(t time.Time) string { return t.UTC().Format(engine.BackupTimeFormat) }
