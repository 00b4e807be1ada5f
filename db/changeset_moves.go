package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
)

// The moves of a change set from one state to the next (changesets.go
// keeps what a change set is, and reads it), each a compare-and-set with
// its optional audit entry in its transaction.

// changeSetErr wraps err, leaving the store's own answers as they are.
func changeSetErr(what string, err error) error {
	var cs *ErrChangeSetState
	var ts *ErrTargetState
	var field *ErrInvalidField
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrChangeSetExpired) ||
		errors.As(err, &cs) || errors.As(err, &ts) || errors.As(err, &field) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// moveChangeSet is casMove of a change set (updated_at set), its refusal
// *ErrChangeSetState.
func moveChangeSet(ctx context.Context, tx *sql.Tx, id int64, from []string, set string, args []any, extra string, extraArgs ...any) error {
	have, err := casMove(ctx, tx, "change_sets", id, from, set+`, updated_at = ?`, append(args, Now()), extra, extraArgs)
	if err != nil || have == "" {
		return err
	}
	return &ErrChangeSetState{Have: have}
}

// moveTarget is casMove of a target, its refusal *ErrTargetState.
func moveTarget(ctx context.Context, tx *sql.Tx, id int64, from []string, set string, args []any, extra string, extraArgs ...any) error {
	have, err := casMove(ctx, tx, "change_set_targets", id, from, set, args, extra, extraArgs)
	if err != nil || have == "" {
		return err
	}
	return &ErrTargetState{Have: have}
}

// changeSetMoved runs move in a transaction, records the events of the
// move (events_changeset.go; rejected: a cancel with a decision), writes
// the audit entry naming the set's devices, and returns the set as it
// now is.
func (s *Store) changeSetMoved(ctx context.Context, what string, id int64, rejected bool, audit *AuditEntry, move func(tx *sql.Tx) error) (ChangeSet, error) {
	var c ChangeSet
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		from, err := rowState(ctx, tx, "change_sets", id)
		if err != nil {
			return err
		}
		if err := move(tx); err != nil {
			return err
		}
		if c, err = getChangeSet(ctx, tx, id); err != nil {
			return err
		}
		if err := s.recordChangeSetEvents(ctx, tx, c, from, rejected, time.Now()); err != nil {
			return err
		}
		return auditChangeSet(ctx, tx, audit, id)
	})
	if err != nil {
		return ChangeSet{}, changeSetErr(fmt.Sprintf("%s change set %d", what, id), err)
	}
	return c, nil
}

// auditChangeSet writes audit, when given, in tx: on change set id and
// each of its devices.
func auditChangeSet(ctx context.Context, tx *sql.Tx, audit *AuditEntry, id int64) error {
	if audit == nil {
		return nil
	}
	devices, err := engine.QueryAll(ctx, tx, scanID, `SELECT device_id FROM change_set_targets WHERE change_set_id = ?`, id)
	if err != nil {
		return err
	}
	return auditIn(ctx, tx, audit, "change_set", id, devices...)
}

// TargetRender is what a dry run rendered for one target: Rendered, or
// Error when it could not.
type TargetRender struct {
	TargetID int64
	Rendered string
	Error    string
	// Reason is Error's code (app/restore's Render* constants).
	Reason string
}

// SetChangeSetRendered records a dry run of a draft or ready change set:
// what it rendered for each of its targets, every one of them. The set is
// then ready when each target rendered, waiting for an approval until
// expiresAt (the zero time: for ever), and a draft again when any could
// not (a draft never expires: it cannot run).
func (s *Store) SetChangeSetRendered(ctx context.Context, id int64, renders []TargetRender, expiresAt time.Time, audit *AuditEntry) (ChangeSet, error) {
	ok := true
	for _, r := range renders {
		if len(r.Rendered) > RenderedMax || len(r.Error) > noteMax {
			return ChangeSet{}, &ErrInvalidField{"rendered", fmt.Sprintf("target %d: at most %d KiB rendered, %d bytes of error",
				r.TargetID, RenderedMax>>10, noteMax)}
		}
		ok = ok && r.Error == ""
	}
	to, expires := ChangeSetReady, workTime(expiresAt)
	if !ok {
		to, expires = ChangeSetDraft, nil
	}
	return s.changeSetMoved(ctx, "render", id, false, audit, func(tx *sql.Tx) error {
		if err := moveChangeSet(ctx, tx, id, []string{ChangeSetDraft, ChangeSetReady}, `state = ?, expires_at = ?`,
			[]any{to, expires}, ""); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM change_set_targets WHERE change_set_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n != len(renders) {
			return &ErrInvalidField{"rendered", fmt.Sprintf("%d renders for %d targets", len(renders), n)}
		}
		for _, r := range renders {
			var rendered, renderErr, reason any = r.Rendered, nil, nil
			if r.Error != "" {
				rendered, renderErr, reason = nil, r.Error, nullIfEmpty(r.Reason)
			}
			res, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET rendered = ?, render_error = ?, render_reason = ?
				WHERE id = ? AND change_set_id = ? AND state = ?`, rendered, renderErr, reason, r.TargetID, id, TargetPending)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return &ErrInvalidField{"rendered", fmt.Sprintf("target %d is not a pending target of change set %d", r.TargetID, id)}
			}
		}
		return nil
	})
}

// ApproveChangeSet approves a ready change set until expiresAt (the zero
// time keeps none). An expired one is ErrChangeSetExpired.
func (s *Store) ApproveChangeSet(ctx context.Context, id int64, d Decision, expiresAt time.Time, audit *AuditEntry) (ChangeSet, error) {
	if err := checkNote("note", d.Note); err != nil {
		return ChangeSet{}, err
	}
	now := Now()
	return s.changeSetMoved(ctx, "approve", id, false, audit, func(tx *sql.Tx) error {
		err := moveChangeSet(ctx, tx, id, []string{ChangeSetReady},
			`state = ?, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?, decision = ?, expires_at = ?`,
			[]any{ChangeSetApproved, d.UserID, d.Name, now, d.Note, DecisionApproved, workTime(expiresAt)}, `(expires_at IS NULL OR expires_at > ?)`, now)
		var st *ErrChangeSetState
		if errors.As(err, &st) && st.Have == ChangeSetReady {
			return ErrChangeSetExpired
		}
		return err
	})
}

// StartChangeSet starts an approved change set (running): its targets
// may then be queued. An expired one is ErrChangeSetExpired.
func (s *Store) StartChangeSet(ctx context.Context, id int64, audit *AuditEntry) (ChangeSet, error) {
	now := Now()
	return s.changeSetMoved(ctx, "start", id, false, audit, func(tx *sql.Tx) error {
		err := moveChangeSet(ctx, tx, id, []string{ChangeSetApproved}, `state = ?, started_at = ?`,
			[]any{ChangeSetRunning, now}, `(expires_at IS NULL OR expires_at > ?)`, now)
		var st *ErrChangeSetState
		if errors.As(err, &st) && st.Have == ChangeSetApproved {
			return ErrChangeSetExpired
		}
		return err
	})
}

// CancelChangeSet cancels a change set not yet ended: its pending
// targets are skipped, and so are its queued ones, whose jobs are
// cancelled with them. Running targets run to their end (their runner
// decides what a cancel may still stop). d, when given, makes it a
// rejection, which records who decided: only a ready set, or an approved
// one not started, may be rejected (*ErrChangeSetState).
func (s *Store) CancelChangeSet(ctx context.Context, id int64, d *Decision, reason string, audit *AuditEntry) (ChangeSet, error) {
	if err := checkNote("reason", reason); err != nil {
		return ChangeSet{}, err
	}
	now := time.Now()
	stamp := now.UTC().Format(TimeFormat)
	set, args := `state = ?, finished_at = ?, error = ?`, []any{ChangeSetCancelled, stamp, nullIfEmpty(reason)}
	from := []string{ChangeSetDraft, ChangeSetReady, ChangeSetApproved, ChangeSetRunning}
	if d != nil {
		if err := checkNote("note", d.Note); err != nil {
			return ChangeSet{}, err
		}
		set += `, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?, decision = ?`
		args = append(args, d.UserID, d.Name, stamp, d.Note, DecisionRejected)
		from = []string{ChangeSetReady, ChangeSetApproved}
	}
	return s.changeSetMoved(ctx, "cancel", id, d != nil, audit, func(tx *sql.Tx) error {
		if err := moveChangeSet(ctx, tx, id, from, set, args, ""); err != nil {
			return err
		}
		// The queued targets' jobs first: one claimed meanwhile runs on.
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = ?, error_reason = ?
			WHERE state = 'queued' AND kind = ? AND work_id IN (SELECT id FROM change_set_targets WHERE change_set_id = ? AND state = ?)`,
			now.UTC().Format(BackupTimeFormat), queue.ErrorCancelled, queue.ReasonCancelled, queue.KindPush, id, TargetQueued); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET state = ?, finished_at = ?
			WHERE change_set_id = ? AND (state = ? OR (state = ? AND NOT EXISTS (SELECT 1 FROM jobs j
				WHERE j.id = change_set_targets.job_id AND j.state IN ('queued', 'running'))))`,
			TargetSkipped, stamp, id, TargetPending, TargetQueued)
		return err
	})
}

// FinishChangeSet ends a running change set: done, or stopped (errText
// says why; its pending targets are skipped).
func (s *Store) FinishChangeSet(ctx context.Context, id int64, state, errText string, audit *AuditEntry) (ChangeSet, error) {
	if state != ChangeSetDone && state != ChangeSetStopped {
		return ChangeSet{}, &ErrInvalidField{"state", fmt.Sprintf("%q does not end a running change set", state)}
	}
	if err := checkNote("error", errText); err != nil {
		return ChangeSet{}, err
	}
	stamp := Now()
	return s.changeSetMoved(ctx, "finish", id, false, audit, func(tx *sql.Tx) error {
		if err := moveChangeSet(ctx, tx, id, []string{ChangeSetRunning}, `state = ?, finished_at = ?, error = ?`,
			[]any{state, stamp, nullIfEmpty(errText)}, ""); err != nil {
			return err
		}
		if state != ChangeSetStopped {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET state = ?, finished_at = ? WHERE change_set_id = ? AND state = ?`,
			TargetSkipped, stamp, id, TargetPending)
		return err
	})
}

// ExpireChangeSets ends the ready and approved change sets whose time ran
// out by now (expired), their targets skipped, records the events of each
// move, and returns them. With audit, each gets that entry.
func (s *Store) ExpireChangeSets(ctx context.Context, now time.Time, audit *AuditEntry) ([]ChangeSet, error) {
	var out []ChangeSet
	stamp := now.UTC().Format(TimeFormat)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := expireWork(ctx, tx, "change_sets", []string{ChangeSetReady, ChangeSetApproved}, ChangeSetExpired, stamp)
		if err != nil {
			return err
		}
		out = make([]ChangeSet, 0, len(ids))
		for _, id := range ids {
			// None started: a set runs only once started, and an
			// expired one never is.
			if _, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET state = ?, finished_at = ? WHERE change_set_id = ? AND state = ?`,
				TargetSkipped, stamp, id, TargetPending); err != nil {
				return err
			}
			c, err := getChangeSet(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := s.recordChangeSetEvents(ctx, tx, c, "", false, now); err != nil {
				return err
			}
			if err := auditChangeSet(ctx, tx, audit, id); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire change sets: %w", err)
	}
	slices.SortFunc(out, func(a, b ChangeSet) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
