package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
)

// A restore puts a stored version (a good backup) back on its device. The
// store keeps it from the request to its end and moves it between states
// by compare-and-set: each move names the states it may leave, so that
// two people (or nodes) acting at once cannot both move it; the loser
// gets *ErrRestoreState with the state it found. Which moves the product
// allows, who may make them and what they notify is app/restore's; every
// move takes an optional audit entry, written in its transaction.

// Restore states.
const (
	// RestorePreviewing: requested; a fresh backup for the preview runs.
	RestorePreviewing = "previewing"
	// RestorePending waits for approval.
	RestorePending  = "pending"
	RestoreApproved = "approved"
	// RestoreQueued: its job waits in the queue; RestoreRunning: it runs
	// (Restore.Stage says where).
	RestoreQueued  = "queued"
	RestoreRunning = "running"
	// The ends of a run: the device holds the version (succeeded); it did
	// not verify, or applying failed, and the device was put back and
	// verified so (rolled_back); putting it back failed too, its state is
	// not known (rollback_failed); it failed before the device was changed
	// (failed); its process stopped while it ran, its state is not known
	// (interrupted).
	RestoreSucceeded      = "succeeded"
	RestoreRolledBack     = "rolled_back"
	RestoreRollbackFailed = "rollback_failed"
	RestoreFailed         = "failed"
	RestoreInterrupted    = "interrupted"
	// The ends of a request that never ran.
	RestoreRejected  = "rejected"
	RestoreCancelled = "cancelled"
	RestoreExpired   = "expired"
)

// RestoreStates lists every state.
var RestoreStates = []string{RestorePreviewing, RestorePending, RestoreApproved, RestoreQueued, RestoreRunning,
	RestoreSucceeded, RestoreRolledBack, RestoreRollbackFailed, RestoreFailed, RestoreRejected, RestoreCancelled,
	RestoreExpired, RestoreInterrupted}

// RestoreOpenStates are the states of a restore not yet ended: a device
// has at most one restore in them.
var RestoreOpenStates = []string{RestorePreviewing, RestorePending, RestoreApproved, RestoreQueued, RestoreRunning}

// openRestores is the condition on restores' state of the open ones, as
// the unique index restores_open_device spells it.
var openRestores = `state IN ` + stateList(RestoreOpenStates)

// ErrRestoreState refuses a move of a restore that is no longer in a
// state it may leave that way: Have is the state it is in.
type ErrRestoreState struct{ Have string }

func (e *ErrRestoreState) Error() string { return "the restore is " + e.Have }

// ErrOpenRestore refuses a second open restore of a device: ID is the
// open one (0 when another node created it at the same moment).
type ErrOpenRestore struct {
	ID    int64
	State string
}

func (e *ErrOpenRestore) Error() string {
	if e.ID == 0 {
		return "the device has an open restore"
	}
	return fmt.Sprintf("the device has an open restore (%d, %s)", e.ID, e.State)
}

// ErrRestoreExpired refuses approving or queuing a restore whose time ran
// out (the expiry sweep has not ended it yet).
var ErrRestoreExpired = errors.New("the restore request expired")

// ErrPreviewStale refuses an approval of a preview other than the
// restore's current one.
var ErrPreviewStale = errors.New("the preview changed since it was shown: look at it again")

// Restore is one restore, as stored.
type Restore struct {
	ID         int64
	DeviceID   int64
	DeviceName string
	// TargetBackupID is the version to put back; TargetHash its text.
	TargetBackupID string
	TargetHash     string
	// Method is how (app/restore's registry); Options its settings
	// (JSON object: confirm time, transfer, selected lines).
	Method  string
	Options string
	State   string
	// Stage is the step a running restore is at ("" before it runs).
	Stage string
	// The backups it took: for the preview (PreviewHash its text), before
	// the change, to verify it, to verify a rollback.
	PreviewBackupID  *string
	PreviewHash      *string
	PreBackupID      *string
	PostBackupID     *string
	RollbackBackupID *string
	RequestedBy      *int64
	RequestedByName  string
	RequestedAt      string
	Reason           string
	// Who approved or rejected it.
	DecidedBy     *int64
	DecidedByName *string
	DecidedAt     *string
	DecisionNote  string
	// ExpiresAt ends a pending or approved restore (ExpireRestores).
	ExpiresAt  *string
	JobID      *int64
	StartedAt  *string
	FinishedAt *string
	// Outcome is the runner's summary of a run (JSON, never
	// configuration text); Error and ErrorReason why it failed.
	Outcome     *string
	Error       *string
	ErrorReason *string
	// TranscriptTruncated: the session said more than TranscriptMax.
	TranscriptTruncated bool
	UpdatedAt           string
}

// Open reports whether r has not ended.
func (r Restore) Open() bool { return slices.Contains(RestoreOpenStates, r.State) }

const restoreColumns = `id, device_id, target_backup_id, target_hash, method, options, state, stage,
	preview_backup_id, preview_hash, pre_backup_id, post_backup_id, rollback_backup_id,
	requested_by, requested_by_name, requested_at, reason, decided_by, decided_by_name, decided_at, decision_note,
	expires_at, job_id, started_at, finished_at, outcome, error, error_reason, transcript_truncated, updated_at`

// restoreSelect reads restores with their device's name; where follows.
var restoreSelect = `SELECT ` + strings.ReplaceAll("r."+restoreColumns, ", ", ", r.") + `, d.name
	FROM restores r JOIN devices d ON d.id = r.device_id `

func scanRestore(row engine.Scanner) (Restore, error) {
	var r Restore
	err := row.Scan(&r.ID, &r.DeviceID, &r.TargetBackupID, &r.TargetHash, &r.Method, &r.Options, &r.State, &r.Stage,
		&r.PreviewBackupID, &r.PreviewHash, &r.PreBackupID, &r.PostBackupID, &r.RollbackBackupID,
		&r.RequestedBy, &r.RequestedByName, &r.RequestedAt, &r.Reason, &r.DecidedBy, &r.DecidedByName, &r.DecidedAt, &r.DecisionNote,
		&r.ExpiresAt, &r.JobID, &r.StartedAt, &r.FinishedAt, &r.Outcome, &r.Error, &r.ErrorReason, &r.TranscriptTruncated, &r.UpdatedAt,
		&r.DeviceName)
	return r, err
}

func getRestore(ctx context.Context, q engine.Querier, id int64) (Restore, error) {
	r, err := scanRestore(q.QueryRowContext(ctx, restoreSelect+`WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	return r, err
}

// Restore returns one restore (ErrNotFound when there is none). Whether
// the caller may see it is its device's scope (DeviceInScope).
func (s *Store) Restore(ctx context.Context, id int64) (Restore, error) {
	r, err := getRestore(ctx, s.reader, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return r, fmt.Errorf("restore %d: %w", id, err)
	}
	return r, err
}

// OpenRestore returns the device's open restore, or ErrNotFound.
func (s *Store) OpenRestore(ctx context.Context, deviceID int64) (Restore, error) {
	r, err := scanRestore(s.reader.QueryRowContext(ctx, restoreSelect+`WHERE r.device_id = ? AND r.`+openRestores, deviceID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNotFound
	}
	if err != nil {
		return r, fmt.Errorf("open restore of device %d: %w", deviceID, err)
	}
	return r, nil
}

// RestoreFilter selects restores; zero fields select all.
type RestoreFilter struct {
	DeviceID int64
	States   []string
	// Scope keeps the restores of the devices in it.
	Scope *Scope
	// Limit bounds the page (50 when 0, at most 500); BeforeID starts it
	// below that restore (the cursor ListRestores returns).
	Limit    int
	BeforeID int64
}

// ListRestores returns one page of the restores f selects, newest first,
// and the cursor of the next page (0 when this one is the last).
func (s *Store) ListRestores(ctx context.Context, f RestoreFilter) ([]Restore, int64, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	if limit > 500 {
		return nil, 0, &ErrInvalidField{"limit", "at most 500"}
	}
	var conds []string
	var args []any
	if f.DeviceID > 0 {
		conds, args = append(conds, `r.device_id = ?`), append(args, f.DeviceID)
	}
	if len(f.States) > 0 {
		for _, st := range f.States {
			if !slices.Contains(RestoreStates, st) {
				return nil, 0, &ErrInvalidField{"state", fmt.Sprintf("unknown state %q", st)}
			}
		}
		conds = append(conds, `r.state IN `+stateList(f.States))
	}
	if f.BeforeID > 0 {
		conds, args = append(conds, `r.id < ?`), append(args, f.BeforeID)
	}
	if f.Scope != nil && !f.Scope.All {
		cond, sargs := f.Scope.clause()
		conds, args = append(conds, cond), append(args, sargs...)
	}
	where := ""
	if len(conds) > 0 {
		where = `WHERE ` + strings.Join(conds, ` AND `)
	}
	out, err := engine.QueryAll(ctx, s.reader, scanRestore, restoreSelect+where+` ORDER BY r.id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list restores: %w", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// RestoreTranscript returns a restore's session transcript (secrets
// masked when it was stored) and whether it was cut short.
func (s *Store) RestoreTranscript(ctx context.Context, id int64) ([]TranscriptSegment, bool, error) {
	var raw string
	var truncated bool
	err := s.reader.QueryRowContext(ctx, `SELECT transcript, transcript_truncated FROM restores WHERE id = ?`, id).Scan(&raw, &truncated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("restore %d transcript: %w", id, err)
	}
	segs, err := readTranscript(raw)
	return segs, truncated, err
}

// NewRestore is a restore request.
type NewRestore struct {
	DeviceID int64
	// TargetBackupID is the version to put back: a good backup of the
	// device.
	TargetBackupID string
	Method         string
	// Options is a JSON object ("" for none).
	Options         string
	Reason          string
	RequestedBy     *int64
	RequestedByName string
}

// CreateRestore records a restore request, previewing. The device must
// exist (ErrNotFound), the target be a good backup of that device
// (*ErrInvalidField), and the device have no open restore
// (*ErrOpenRestore).
func (s *Store) CreateRestore(ctx context.Context, n NewRestore, audit *AuditEntry) (Restore, error) {
	if strings.TrimSpace(n.Method) == "" {
		return Restore{}, &ErrInvalidField{"method", "required"}
	}
	if n.RequestedByName == "" {
		return Restore{}, &ErrInvalidField{"requested_by_name", "required"}
	}
	if err := checkNote("reason", n.Reason); err != nil {
		return Restore{}, err
	}
	options, err := jsonObject("options", n.Options)
	if err != nil {
		return Restore{}, err
	}
	var r Restore
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if ok, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices WHERE id = ?`, n.DeviceID); err != nil {
			return err
		} else if !ok {
			return ErrNotFound
		}
		var device int64
		var success bool
		var hash sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT device_id, success, snapshot_hash FROM backups WHERE id = ?`, n.TargetBackupID).
			Scan(&device, &success, &hash)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return &ErrInvalidField{"target_backup_id", "no such backup"}
		case err != nil:
			return err
		case device != n.DeviceID:
			return &ErrInvalidField{"target_backup_id", "a backup of another device"}
		case !success || !hash.Valid:
			return &ErrInvalidField{"target_backup_id", "holds no configuration (a failed or unfinished backup)"}
		}
		var open ErrOpenRestore
		err = tx.QueryRowContext(ctx, `SELECT id, state FROM restores WHERE device_id = ? AND `+openRestores, n.DeviceID).
			Scan(&open.ID, &open.State)
		if err == nil {
			return &open
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO restores (device_id, target_backup_id, target_hash, method, options, state,
			requested_by, requested_by_name, requested_at, reason, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.DeviceID, n.TargetBackupID, hash.String, n.Method, options, RestorePreviewing,
			n.RequestedBy, n.RequestedByName, now, n.Reason, now)
		if _, unique := engine.UniqueViolation(err); unique {
			return &ErrOpenRestore{} // another node's, created at the same moment
		}
		if err != nil {
			return err
		}
		if err := auditIn(ctx, tx, audit, "restore", id, n.DeviceID); err != nil {
			return err
		}
		r, err = getRestore(ctx, tx, id)
		return err
	})
	if err != nil {
		return Restore{}, restoreErr("create restore", err)
	}
	return r, nil
}

// restoreErr wraps err, leaving the store's own answers as they are.
func restoreErr(what string, err error) error {
	var state *ErrRestoreState
	var open *ErrOpenRestore
	var field *ErrInvalidField
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrRestoreExpired) || errors.Is(err, ErrPreviewStale) ||
		errors.As(err, &state) || errors.As(err, &open) || errors.As(err, &field) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// moveRestore moves restore id out of one of from in tx: set (columns =
// ?, …) with args, updated_at added. extra, when set, is one more
// condition (extraArgs its arguments); a restore in one of from that
// fails it is refused with failed. A restore in no state of from is
// *ErrRestoreState, one that does not exist ErrNotFound.
func moveRestore(ctx context.Context, tx *sql.Tx, id int64, from []string, set string, args []any, extra string, failed error, extraArgs ...any) error {
	have, err := casMove(ctx, tx, "restores", id, from, set+`, updated_at = ?`, append(args, Now()), extra, extraArgs)
	switch {
	case err != nil || have == "":
		return err
	case slices.Contains(from, have) && failed != nil:
		return failed
	}
	return &ErrRestoreState{Have: have}
}

// restoreState is the state of restore id, or ErrNotFound.
func restoreState(ctx context.Context, tx *sql.Tx, id int64) (string, error) {
	return rowState(ctx, tx, "restores", id)
}

// moved runs move in a transaction, writes the audit entry of the
// restore's device, and returns the restore as it now is.
func (s *Store) moved(ctx context.Context, what string, id int64, audit *AuditEntry, move func(tx *sql.Tx) error) (Restore, error) {
	var r Restore
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := move(tx); err != nil {
			return err
		}
		var err error
		if r, err = getRestore(ctx, tx, id); err != nil {
			return err
		}
		return auditIn(ctx, tx, audit, "restore", id, r.DeviceID)
	})
	if err != nil {
		return Restore{}, restoreErr(fmt.Sprintf("%s restore %d", what, id), err)
	}
	return r, nil
}

// RestorePreview is the fresh backup a restore's preview compares with
// its target, and until when the request waits for approval.
type RestorePreview struct {
	BackupID  string
	Hash      string
	ExpiresAt time.Time
}

// SetRestorePreview records the preview of a previewing restore, which
// then waits for approval (pending).
func (s *Store) SetRestorePreview(ctx context.Context, id int64, p RestorePreview, audit *AuditEntry) (Restore, error) {
	if p.BackupID == "" || p.Hash == "" {
		return Restore{}, &ErrInvalidField{"preview", "a backup and its hash are required"}
	}
	return s.moved(ctx, "preview", id, audit, func(tx *sql.Tx) error {
		return moveRestore(ctx, tx, id, []string{RestorePreviewing},
			`state = ?, preview_backup_id = ?, preview_hash = ?, expires_at = ?`,
			[]any{RestorePending, p.BackupID, p.Hash, workTime(p.ExpiresAt)}, "", nil)
	})
}

// ApproveRestore approves a pending restore, as shown with the preview
// of previewHash (another is ErrPreviewStale), until expiresAt (the zero
// time keeps none). An expired one is ErrRestoreExpired.
func (s *Store) ApproveRestore(ctx context.Context, id int64, d Decision, previewHash string, expiresAt time.Time, audit *AuditEntry) (Restore, error) {
	if err := checkNote("note", d.Note); err != nil {
		return Restore{}, err
	}
	now := Now()
	return s.moved(ctx, "approve", id, audit, func(tx *sql.Tx) error {
		var have sql.NullString
		var expires sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT preview_hash, expires_at FROM restores WHERE id = ? AND state = ?`, id, RestorePending).
			Scan(&have, &expires)
		if err == nil && (!have.Valid || have.String != previewHash) {
			return ErrPreviewStale
		}
		if err == nil && expires.Valid && expires.String <= now {
			return ErrRestoreExpired
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return moveRestore(ctx, tx, id, []string{RestorePending},
			`state = ?, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?, expires_at = ?`,
			[]any{RestoreApproved, d.UserID, d.Name, now, d.Note, workTime(expiresAt)},
			`preview_hash = ? AND (expires_at IS NULL OR expires_at > ?)`, ErrPreviewStale, previewHash, now)
	})
}

// RejectRestore rejects a pending or approved restore.
func (s *Store) RejectRestore(ctx context.Context, id int64, d Decision, audit *AuditEntry) (Restore, error) {
	if err := checkNote("note", d.Note); err != nil {
		return Restore{}, err
	}
	now := Now()
	return s.moved(ctx, "reject", id, audit, func(tx *sql.Tx) error {
		return moveRestore(ctx, tx, id, []string{RestorePending, RestoreApproved},
			`state = ?, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?, finished_at = ?`,
			[]any{RestoreRejected, d.UserID, d.Name, now, d.Note, now}, "", nil)
	})
}

// CancelRestore cancels a restore that has not started: previewing,
// pending, approved, or queued (its job, still queued, is cancelled with
// it). One whose job runs already is *ErrRestoreState running: its runner
// decides what a cancel may still stop.
func (s *Store) CancelRestore(ctx context.Context, id int64, audit *AuditEntry) (Restore, error) {
	now := time.Now()
	return s.moved(ctx, "cancel", id, audit, func(tx *sql.Tx) error {
		var state string
		var jobID sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT state, job_id FROM restores WHERE id = ?`, id).Scan(&state, &jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if state == RestoreQueued && jobID.Valid {
			res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = ?, error_reason = ?
				WHERE id = ? AND state = 'queued' AND kind = ? AND work_id = ?`,
				now.UTC().Format(BackupTimeFormat), queue.ErrorCancelled, queue.ReasonCancelled, jobID.Int64, queue.KindRestore, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return &ErrRestoreState{Have: RestoreRunning}
			}
		}
		stamp := now.UTC().Format(TimeFormat)
		return moveRestore(ctx, tx, id, []string{RestorePreviewing, RestorePending, RestoreApproved, RestoreQueued},
			`state = ?, finished_at = ?, error = ?, error_reason = ?`,
			[]any{RestoreCancelled, stamp, queue.ErrorCancelled, queue.ReasonCancelled}, "", nil)
	})
}

// QueueRestore queues the job of an approved restore (queue.EnqueueWork):
// the restore is then queued, its job named. When the device is busy
// (a job running, or another restore or push queued) nothing changes and
// the answer's Busy says with what: the caller tries again later. An
// expired restore is ErrRestoreExpired, a device of a remote zone
// queue.ErrWorkRemoteZone.
func (s *Store) QueueRestore(ctx context.Context, id int64, notBefore time.Time, audit *AuditEntry) (Restore, queue.WorkEnqueued, error) {
	var enq queue.WorkEnqueued
	var r Restore
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		enq = queue.WorkEnqueued{}
		var err error
		if r, err = getRestore(ctx, tx, id); err != nil {
			return err
		}
		now := Now()
		switch {
		case r.State != RestoreApproved:
			return &ErrRestoreState{Have: r.State}
		case r.ExpiresAt != nil && *r.ExpiresAt <= now:
			return ErrRestoreExpired
		}
		enq, err = queue.EnqueueWork(ctx, tx, s.d, queue.WorkRequest{DeviceID: r.DeviceID, Kind: queue.KindRestore, WorkID: id, NotBefore: notBefore})
		if err != nil || enq.Busy != nil {
			return err
		}
		if err := moveRestore(ctx, tx, id, []string{RestoreApproved}, `state = ?, job_id = ?`,
			[]any{RestoreQueued, enq.JobID}, "", nil); err != nil {
			return err
		}
		if r, err = getRestore(ctx, tx, id); err != nil {
			return err
		}
		return auditIn(ctx, tx, audit, "restore", id, r.DeviceID)
	})
	if err != nil {
		if errors.Is(err, queue.ErrWorkRemoteZone) {
			return Restore{}, queue.WorkEnqueued{}, err
		}
		return Restore{}, queue.WorkEnqueued{}, restoreErr(fmt.Sprintf("queue restore %d", id), err)
	}
	return r, enq, nil
}

// StartRestore starts a queued restore whose job c claimed: running, the
// claim's backup (the one before the change) its pre-restore backup.
func (s *Store) StartRestore(ctx context.Context, id int64, c queue.Claim, audit *AuditEntry) (Restore, error) {
	if c.Kind != queue.KindRestore || c.WorkID != id {
		return Restore{}, fmt.Errorf("start restore %d: job %d is not its job", id, c.ID)
	}
	return s.moved(ctx, "start", id, audit, func(tx *sql.Tx) error {
		return moveRestore(ctx, tx, id, []string{RestoreQueued}, `state = ?, started_at = ?, pre_backup_id = ?, stage = ''`,
			[]any{RestoreRunning, workTime(c.StartedAt), c.BackupID}, `job_id = ?`, &ErrRestoreState{Have: RestoreQueued}, c.ID)
	})
}

// SetRestoreStage records the step a running restore is at.
func (s *Store) SetRestoreStage(ctx context.Context, id int64, stage string) error {
	if err := checkStage(stage); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return moveRestore(ctx, tx, id, []string{RestoreRunning}, `stage = ?`, []any{stage}, "", nil)
	})
	return restoreErr(fmt.Sprintf("restore %d stage", id), err)
}

// RestoreBackup names the backups a running restore takes after the
// one before the change.
type RestoreBackup string

const (
	// RestorePostBackup verifies the change.
	RestorePostBackup RestoreBackup = "post_backup_id"
	// RestoreRollbackBackup verifies a rollback.
	RestoreRollbackBackup RestoreBackup = "rollback_backup_id"
)

// SetRestoreBackup records a backup a running restore took (its ID from
// queue.RecordExtraAttempt).
func (s *Store) SetRestoreBackup(ctx context.Context, id int64, which RestoreBackup, backupID string) error {
	if which != RestorePostBackup && which != RestoreRollbackBackup {
		return &ErrInvalidField{"backup", fmt.Sprintf("unknown restore backup %q", which)}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return moveRestore(ctx, tx, id, []string{RestoreRunning}, string(which)+` = ?`, []any{backupID}, "", nil)
	})
	return restoreErr(fmt.Sprintf("restore %d backup", id), err)
}

// AppendRestoreTranscript appends segments (masked by the caller) to a
// running restore's transcript, within TranscriptMax; it reports whether
// the transcript is now truncated.
func (s *Store) AppendRestoreTranscript(ctx context.Context, id int64, segs []TranscriptSegment) (bool, error) {
	var truncated bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		truncated, err = appendTranscript(ctx, tx, "restores", id, `state = '`+RestoreRunning+`'`, segs,
			func(ctx context.Context, tx *sql.Tx, id int64) error {
				have, err := restoreState(ctx, tx, id)
				if err != nil {
					return err
				}
				return &ErrRestoreState{Have: have}
			})
		return err
	})
	return truncated, restoreErr(fmt.Sprintf("restore %d transcript", id), err)
}

// RestoreEnd is how a restore's run (or its preview) ended.
type RestoreEnd struct {
	// State is RestoreSucceeded, RestoreRolledBack, RestoreRollbackFailed
	// or RestoreFailed.
	State string
	// Outcome is the runner's summary (JSON object; "" none).
	Outcome string
	// Error and Reason say why it did not succeed: never configuration
	// text or a secret.
	Error  string
	Reason string
}

// restoreEnds are the states FinishRestore ends a restore in.
var restoreEnds = []string{RestoreSucceeded, RestoreRolledBack, RestoreRollbackFailed, RestoreFailed}

// FinishRestore ends a restore whose preview failed (previewing), or
// whose run ended (queued: it failed before it started; running). With
// c, the claim of its job, the job ends in the same transaction
// (queue.EndWorkTx): succeeded when the restore did, else failed with
// e.Error.
func (s *Store) FinishRestore(ctx context.Context, id int64, e RestoreEnd, c *queue.Claim, audit *AuditEntry) (Restore, error) {
	if !slices.Contains(restoreEnds, e.State) {
		return Restore{}, &ErrInvalidField{"state", fmt.Sprintf("%q does not end a restore", e.State)}
	}
	var outcome any
	if e.Outcome != "" {
		raw, err := jsonObject("outcome", e.Outcome)
		if err != nil {
			return Restore{}, err
		}
		outcome = raw
	}
	if c != nil && (c.Kind != queue.KindRestore || c.WorkID != id) {
		return Restore{}, fmt.Errorf("finish restore %d: job %d is not its job", id, c.ID)
	}
	errText, reason := nullIfEmpty(e.Error), nullIfEmpty(e.Reason)
	now := time.Now()
	return s.moved(ctx, "finish", id, audit, func(tx *sql.Tx) error {
		if err := moveRestore(ctx, tx, id, []string{RestorePreviewing, RestoreQueued, RestoreRunning},
			`state = ?, outcome = ?, error = ?, error_reason = ?, finished_at = ?`,
			[]any{e.State, outcome, errText, reason, workTime(now)}, "", nil); err != nil {
			return err
		}
		if c == nil {
			return nil
		}
		o := queue.Outcome{Success: e.State == RestoreSucceeded, Error: e.Error, Reason: e.Reason, FinishedAt: now}
		if !o.Success && o.Error == "" {
			o.Error = "restore " + e.State
		}
		return s.Queue.EndWorkTx(ctx, tx, *c, o)
	})
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ExpireRestores ends the pending and approved restores whose time ran
// out by now (expired) and returns them, for the caller to notify. With
// audit, each gets that entry (its target and device set).
func (s *Store) ExpireRestores(ctx context.Context, now time.Time, audit *AuditEntry) ([]Restore, error) {
	var out []Restore
	stamp := now.UTC().Format(TimeFormat)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `UPDATE restores SET state = ?, finished_at = ?, updated_at = ?
			WHERE state IN `+stateList([]string{RestorePending, RestoreApproved})+` AND expires_at IS NOT NULL AND expires_at <= ?
			RETURNING id`, RestoreExpired, stamp, stamp, stamp)
		if err != nil {
			return err
		}
		out = make([]Restore, 0, len(ids))
		for _, id := range ids {
			r, err := getRestore(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := auditIn(ctx, tx, audit, "restore", id, r.DeviceID); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire restores: %w", err)
	}
	slices.SortFunc(out, func(a, b Restore) int { return int(a.ID - b.ID) })
	return out, nil
}
