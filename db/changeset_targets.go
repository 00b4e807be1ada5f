package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/queue"
)

// The moves of a change set's targets: each queued as a push job on its
// device, started by that job's claim, and ended with it.

// QueueChangeSetTarget queues the push of a pending target of a running
// change set (queue.EnqueueWork): the target is then queued, its job
// named. When its device is busy nothing changes and the answer's Busy
// says with what: the caller tries again later (or another target).
func (s *Store) QueueChangeSetTarget(ctx context.Context, id int64, notBefore time.Time) (ChangeSetTarget, queue.WorkEnqueued, error) {
	var enq queue.WorkEnqueued
	var t ChangeSetTarget
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		enq = queue.WorkEnqueued{}
		var err error
		if t, err = getTarget(ctx, tx, id); err != nil {
			return err
		}
		var setState string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM change_sets WHERE id = ?`, t.ChangeSetID).Scan(&setState); err != nil {
			return err
		}
		switch {
		case setState != ChangeSetRunning:
			return &ErrChangeSetState{Have: setState}
		case t.State != TargetPending:
			return &ErrTargetState{Have: t.State}
		case t.Rendered == nil:
			return &ErrInvalidField{"rendered", "the target has nothing rendered to push"}
		}
		enq, err = queue.EnqueueWork(ctx, tx, s.d, queue.WorkRequest{DeviceID: t.DeviceID, Kind: queue.KindPush, WorkID: id, NotBefore: notBefore})
		if err != nil || enq.Busy != nil {
			return err
		}
		if err := moveTarget(ctx, tx, id, []string{TargetPending}, `state = ?, job_id = ?`, []any{TargetQueued, enq.JobID}, ""); err != nil {
			return err
		}
		t, err = getTarget(ctx, tx, id)
		return err
	})
	if err != nil {
		if errors.Is(err, queue.ErrWorkRemoteZone) {
			return ChangeSetTarget{}, queue.WorkEnqueued{}, err
		}
		return ChangeSetTarget{}, queue.WorkEnqueued{}, changeSetErr(fmt.Sprintf("queue change set target %d", id), err)
	}
	return t, enq, nil
}

// targetMoved runs move in a transaction and returns the target as it
// now is.
func (s *Store) targetMoved(ctx context.Context, what string, id int64, audit *AuditEntry, move func(tx *sql.Tx) error) (ChangeSetTarget, error) {
	var t ChangeSetTarget
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := move(tx); err != nil {
			return err
		}
		var err error
		if t, err = getTarget(ctx, tx, id); err != nil {
			return err
		}
		return auditIn(ctx, tx, audit, "change_set", t.ChangeSetID, t.DeviceID)
	})
	if err != nil {
		return ChangeSetTarget{}, changeSetErr(fmt.Sprintf("%s change set target %d", what, id), err)
	}
	return t, nil
}

// StartChangeSetTarget starts a queued target whose job c claimed:
// running, the claim's backup its pre-push backup.
func (s *Store) StartChangeSetTarget(ctx context.Context, id int64, c queue.Claim) (ChangeSetTarget, error) {
	if c.Kind != queue.KindPush || c.WorkID != id {
		return ChangeSetTarget{}, fmt.Errorf("start change set target %d: job %d is not its job", id, c.ID)
	}
	return s.targetMoved(ctx, "start", id, nil, func(tx *sql.Tx) error {
		return moveTarget(ctx, tx, id, []string{TargetQueued}, `state = ?, started_at = ?, pre_backup_id = ?, stage = ''`,
			[]any{TargetRunning, workTime(c.StartedAt), c.BackupID}, `job_id = ?`, c.ID)
	})
}

// SetChangeSetTargetStage records the step a running target is at.
func (s *Store) SetChangeSetTargetStage(ctx context.Context, id int64, stage string) error {
	if err := checkStage(stage); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return moveTarget(ctx, tx, id, []string{TargetRunning}, `stage = ?`, []any{stage}, "")
	})
	return changeSetErr(fmt.Sprintf("change set target %d stage", id), err)
}

// SetChangeSetTargetPostBackup records the backup a running target took
// after the push (its ID from queue.RecordExtraAttempt).
func (s *Store) SetChangeSetTargetPostBackup(ctx context.Context, id int64, backupID string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return moveTarget(ctx, tx, id, []string{TargetRunning}, `post_backup_id = ?`, []any{backupID}, "")
	})
	return changeSetErr(fmt.Sprintf("change set target %d backup", id), err)
}

// AppendChangeSetTargetTranscript appends segments (masked by the
// caller) to a running target's transcript, within TranscriptMax; it
// reports whether the transcript is now truncated.
func (s *Store) AppendChangeSetTargetTranscript(ctx context.Context, id int64, segs []TranscriptSegment) (bool, error) {
	var truncated bool
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		truncated, err = appendTranscript(ctx, tx, "change_set_targets", id, `state = '`+TargetRunning+`'`, segs,
			func(ctx context.Context, tx *sql.Tx, id int64) error {
				have, err := rowState(ctx, tx, "change_set_targets", id)
				if err != nil {
					return err
				}
				return &ErrTargetState{Have: have}
			})
		return err
	})
	return truncated, changeSetErr(fmt.Sprintf("change set target %d transcript", id), err)
}

// TargetEnd is how a target's push ended.
type TargetEnd struct {
	// State is TargetSucceeded or TargetFailed.
	State string
	// Error and Reason say why it failed: never configuration text or a
	// secret.
	Error  string
	Reason string
}

// FinishChangeSetTarget ends a queued or running target. With c, the
// claim of its job, the job ends in the same transaction
// (queue.EndWorkTx): succeeded when the push did, else failed.
func (s *Store) FinishChangeSetTarget(ctx context.Context, id int64, e TargetEnd, c *queue.Claim, audit *AuditEntry) (ChangeSetTarget, error) {
	if e.State != TargetSucceeded && e.State != TargetFailed {
		return ChangeSetTarget{}, &ErrInvalidField{"state", fmt.Sprintf("%q does not end a target", e.State)}
	}
	if c != nil && (c.Kind != queue.KindPush || c.WorkID != id) {
		return ChangeSetTarget{}, fmt.Errorf("finish change set target %d: job %d is not its job", id, c.ID)
	}
	now := time.Now()
	return s.targetMoved(ctx, "finish", id, audit, func(tx *sql.Tx) error {
		if err := moveTarget(ctx, tx, id, []string{TargetQueued, TargetRunning},
			`state = ?, error = ?, error_reason = ?, finished_at = ?`,
			[]any{e.State, nullIfEmpty(e.Error), nullIfEmpty(e.Reason), workTime(now)}, ""); err != nil {
			return err
		}
		if c == nil {
			return nil
		}
		o := queue.Outcome{Success: e.State == TargetSucceeded, Error: e.Error, Reason: e.Reason, FinishedAt: now}
		if !o.Success && o.Error == "" {
			o.Error = "push failed"
		}
		if err := s.Queue.EndWorkTx(ctx, tx, *c, o); err != nil {
			return err
		}
		return forgetUntakenBackup(ctx, tx, "change_set_targets", id)
	})
}
