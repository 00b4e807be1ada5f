package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"backupd/db/queue"
)

// The moves of a restore from one state to the next (restores.go keeps
// what a restore is, and reads it): each a compare-and-set that names the
// states it may leave, with its optional audit entry and the events it
// causes (events_restore.go) in its transaction.

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

// restoreMoved runs move in a transaction, records the events of the
// move and the audit entry of the restore's device, and returns the
// restore as it now is.
func (s *Store) restoreMoved(ctx context.Context, what string, id int64, audit *AuditEntry, move func(tx *sql.Tx) error) (Restore, error) {
	var r Restore
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := move(tx); err != nil {
			return err
		}
		var err error
		if r, err = getRestore(ctx, tx, id); err != nil {
			return err
		}
		if err := s.recordRestoreEvents(ctx, tx, r, time.Now()); err != nil {
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
	return s.restoreMoved(ctx, "preview", id, audit, func(tx *sql.Tx) error {
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
	return s.restoreMoved(ctx, "approve", id, audit, func(tx *sql.Tx) error {
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
	return s.restoreMoved(ctx, "reject", id, audit, func(tx *sql.Tx) error {
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
	return s.restoreMoved(ctx, "cancel", id, audit, func(tx *sql.Tx) error {
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
		if err := s.recordRestoreEvents(ctx, tx, r, time.Now()); err != nil {
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
	return s.restoreMoved(ctx, "start", id, audit, func(tx *sql.Tx) error {
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
	return s.restoreMoved(ctx, "finish", id, audit, func(tx *sql.Tx) error {
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
		if err := s.Queue.EndWorkTx(ctx, tx, *c, o); err != nil {
			return err
		}
		return forgetUntakenBackup(ctx, tx, "restores", id)
	})
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ExpireRestores ends the pending and approved restores whose time ran
// out by now (expired), with their events, and returns them. With audit,
// each gets that entry (its target and device set).
func (s *Store) ExpireRestores(ctx context.Context, now time.Time, audit *AuditEntry) ([]Restore, error) {
	var out []Restore
	stamp := now.UTC().Format(TimeFormat)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := expireWork(ctx, tx, "restores", []string{RestorePending, RestoreApproved}, RestoreExpired, stamp)
		if err != nil {
			return err
		}
		out = make([]Restore, 0, len(ids))
		for _, id := range ids {
			r, err := getRestore(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := s.recordRestoreEvents(ctx, tx, r, now); err != nil {
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
	slices.SortFunc(out, func(a, b Restore) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
