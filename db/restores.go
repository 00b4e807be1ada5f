package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"backupd/db/engine"
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
	// Lines are the line numbers (from 1) of the version a merge types,
	// sorted; nil for a restore of the whole version.
	Lines []int
	State string
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
	expires_at, job_id, started_at, finished_at, outcome, error, error_reason, transcript_truncated, updated_at, lines`

// restoreSelect reads restores with their device's name; where follows.
var restoreSelect = `SELECT ` + strings.ReplaceAll("r."+restoreColumns, ", ", ", r.") + `, d.name
	FROM restores r JOIN devices d ON d.id = r.device_id `

func scanRestore(row engine.Scanner) (Restore, error) {
	var r Restore
	var lines sql.NullString
	err := row.Scan(&r.ID, &r.DeviceID, &r.TargetBackupID, &r.TargetHash, &r.Method, &r.Options, &r.State, &r.Stage,
		&r.PreviewBackupID, &r.PreviewHash, &r.PreBackupID, &r.PostBackupID, &r.RollbackBackupID,
		&r.RequestedBy, &r.RequestedByName, &r.RequestedAt, &r.Reason, &r.DecidedBy, &r.DecidedByName, &r.DecidedAt, &r.DecisionNote,
		&r.ExpiresAt, &r.JobID, &r.StartedAt, &r.FinishedAt, &r.Outcome, &r.Error, &r.ErrorReason, &r.TranscriptTruncated, &r.UpdatedAt, &lines,
		&r.DeviceName)
	if err == nil && lines.Valid {
		if jerr := json.Unmarshal([]byte(lines.String), &r.Lines); jerr != nil {
			return r, fmt.Errorf("restore %d: its lines: %w", r.ID, jerr)
		}
	}
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
	var conds []string
	var args []any
	if f.DeviceID > 0 {
		conds, args = append(conds, `r.device_id = ?`), append(args, f.DeviceID)
	}
	if f.Scope != nil && !f.Scope.All {
		cond, sargs := f.Scope.clause()
		conds, args = append(conds, cond), append(args, sargs...)
	}
	out, next, err := workPage(ctx, s.reader, scanRestore, func(r Restore) int64 { return r.ID }, restoreSelect, "r",
		RestoreStates, f.States, conds, args, f.Limit, f.BeforeID)
	if err != nil {
		return nil, 0, restoreErr("list restores", err)
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
	Options string
	// Lines are the line numbers of the version a merge types (nil: the
	// whole version).
	Lines           []int
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
	var lines *string
	if n.Lines != nil {
		for _, l := range n.Lines {
			if l < 1 {
				return Restore{}, &ErrInvalidField{"lines", "line numbers start at 1"}
			}
		}
		raw, _ := json.Marshal(n.Lines)
		js := string(raw)
		lines = &js
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
		id, err := engine.InsertID(ctx, tx, `INSERT INTO restores (device_id, target_backup_id, target_hash, method, options, lines, state,
			requested_by, requested_by_name, requested_at, reason, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.DeviceID, n.TargetBackupID, hash.String, n.Method, options, lines, RestorePreviewing,
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
