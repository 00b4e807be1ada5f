package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/db/engine"
	"backupd/db/queue"
)

// A change set is commands sent to many devices (a push): made as a
// draft, rendered per device by a dry run (ready), approved, then run,
// each device a target whose push is a job of kind push on it. As with
// restores, the store moves sets and targets between states by
// compare-and-set (*ErrChangeSetState, *ErrTargetState when they moved
// meanwhile) and writes the optional audit entry of each move in its
// transaction; which moves the product allows is app/'s.

// Change set states.
const (
	ChangeSetDraft    = "draft"
	ChangeSetReady    = "ready"
	ChangeSetApproved = "approved"
	ChangeSetRunning  = "running"
	// ChangeSetDone: every target ran; ChangeSetStopped: it stopped after
	// too many failures, the targets not run skipped.
	ChangeSetDone      = "done"
	ChangeSetStopped   = "stopped"
	ChangeSetCancelled = "cancelled"
	ChangeSetExpired   = "expired"
)

// ChangeSetStates lists every change set state.
var ChangeSetStates = []string{ChangeSetDraft, ChangeSetReady, ChangeSetApproved, ChangeSetRunning,
	ChangeSetDone, ChangeSetStopped, ChangeSetCancelled, ChangeSetExpired}

// Change set kinds: the body as it is, or a Go text/template rendered
// per device.
const (
	ChangeSetSnippet  = "snippet"
	ChangeSetTemplate = "template"
)

// Change set target states.
const (
	TargetPending     = "pending"
	TargetQueued      = "queued"
	TargetRunning     = "running"
	TargetSucceeded   = "succeeded"
	TargetFailed      = "failed"
	TargetSkipped     = "skipped"
	TargetInterrupted = "interrupted"
)

// TargetStates lists every target state.
var TargetStates = []string{TargetPending, TargetQueued, TargetRunning, TargetSucceeded, TargetFailed, TargetSkipped, TargetInterrupted}

// Bounds of a change set as stored.
const (
	ChangeSetNameMax    = 200
	ChangeSetBodyMax    = 256 << 10
	ChangeSetTargetsMax = 10000
	// RenderedMax bounds what a dry run rendered for one device.
	RenderedMax = 256 << 10
)

// ErrChangeSetState refuses a move of a change set no longer in a state
// it may leave that way: Have is its state.
type ErrChangeSetState struct{ Have string }

func (e *ErrChangeSetState) Error() string { return "the change set is " + e.Have }

// ErrTargetState refuses a move of a change set target no longer in a
// state it may leave that way: Have is its state.
type ErrTargetState struct{ Have string }

func (e *ErrTargetState) Error() string { return "the change set target is " + e.Have }

// ErrChangeSetExpired refuses approving or starting a change set whose
// time ran out.
var ErrChangeSetExpired = errors.New("the change set expired")

// ChangeSet is one change set, as stored.
type ChangeSet struct {
	ID   int64
	Name string
	Body string
	// Kind is ChangeSetSnippet or ChangeSetTemplate; Variables (JSON
	// object) the template's variables for every device.
	Kind      string
	Variables string
	State     string
	// Concurrency is how many targets run at once; StopAfterFailures
	// stops the set after that many failed targets (0: never);
	// ConfirmSeconds is the undo window of a platform's commit (0: the
	// platform's default).
	Concurrency       int
	StopAfterFailures int
	ConfirmSeconds    int
	CreatedBy         *int64
	CreatedByName     string
	CreatedAt         string
	DecidedBy         *int64
	DecidedByName     *string
	DecidedAt         *string
	DecisionNote      string
	ExpiresAt         *string
	StartedAt         *string
	FinishedAt        *string
	// Error says why it stopped or was cancelled.
	Error     *string
	UpdatedAt string
	// Targets is how many devices it has.
	Targets int
}

const changeSetColumns = `c.id, c.name, c.body, c.kind, c.variables, c.state, c.concurrency, c.stop_after_failures, c.confirm_seconds,
	c.created_by, c.created_by_name, c.created_at, c.decided_by, c.decided_by_name, c.decided_at, c.decision_note,
	c.expires_at, c.started_at, c.finished_at, c.error, c.updated_at,
	(SELECT COUNT(*) FROM change_set_targets t WHERE t.change_set_id = c.id)`

func scanChangeSet(row engine.Scanner) (ChangeSet, error) {
	var c ChangeSet
	err := row.Scan(&c.ID, &c.Name, &c.Body, &c.Kind, &c.Variables, &c.State, &c.Concurrency, &c.StopAfterFailures, &c.ConfirmSeconds,
		&c.CreatedBy, &c.CreatedByName, &c.CreatedAt, &c.DecidedBy, &c.DecidedByName, &c.DecidedAt, &c.DecisionNote,
		&c.ExpiresAt, &c.StartedAt, &c.FinishedAt, &c.Error, &c.UpdatedAt, &c.Targets)
	return c, err
}

func getChangeSet(ctx context.Context, q engine.Querier, id int64) (ChangeSet, error) {
	c, err := scanChangeSet(q.QueryRowContext(ctx, `SELECT `+changeSetColumns+` FROM change_sets c WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	return c, err
}

// ChangeSetTarget is one device of a change set.
type ChangeSetTarget struct {
	ID          int64
	ChangeSetID int64
	DeviceID    int64
	DeviceName  string
	Position    int
	// Variables are the device's own (JSON object).
	Variables string
	// Rendered is what the dry run rendered for the device;
	// RenderError why it could not (then Rendered is nil).
	Rendered    *string
	RenderError *string
	State       string
	Stage       string
	JobID       *int64
	// PreBackupID is its job's first backup (before the change);
	// PostBackupID the one after.
	PreBackupID         *string
	PostBackupID        *string
	StartedAt           *string
	FinishedAt          *string
	Error               *string
	ErrorReason         *string
	TranscriptTruncated bool
}

const targetColumns = `t.id, t.change_set_id, t.device_id, d.name, t.position, t.variables, t.rendered, t.render_error,
	t.state, t.stage, t.job_id, t.pre_backup_id, t.post_backup_id, t.started_at, t.finished_at, t.error, t.error_reason,
	t.transcript_truncated`

const targetSelect = `SELECT ` + targetColumns + ` FROM change_set_targets t JOIN devices d ON d.id = t.device_id `

func scanTarget(row engine.Scanner) (ChangeSetTarget, error) {
	var t ChangeSetTarget
	err := row.Scan(&t.ID, &t.ChangeSetID, &t.DeviceID, &t.DeviceName, &t.Position, &t.Variables, &t.Rendered, &t.RenderError,
		&t.State, &t.Stage, &t.JobID, &t.PreBackupID, &t.PostBackupID, &t.StartedAt, &t.FinishedAt, &t.Error, &t.ErrorReason,
		&t.TranscriptTruncated)
	return t, err
}

func getTarget(ctx context.Context, q engine.Querier, id int64) (ChangeSetTarget, error) {
	t, err := scanTarget(q.QueryRowContext(ctx, targetSelect+`WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, ErrNotFound
	}
	return t, err
}

// ChangeSet returns one change set, or ErrNotFound.
func (s *Store) ChangeSet(ctx context.Context, id int64) (ChangeSet, error) {
	c, err := getChangeSet(ctx, s.reader, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return c, fmt.Errorf("change set %d: %w", id, err)
	}
	return c, err
}

// ChangeSetFilter selects change sets; zero fields select all.
type ChangeSetFilter struct {
	States []string
	// Scope keeps the change sets whose every device lies in it.
	Scope *Scope
	// Limit bounds the page (50 when 0, at most 500); BeforeID starts it
	// below that change set (the cursor ListChangeSets returns).
	Limit    int
	BeforeID int64
}

// ListChangeSets returns one page of the change sets f selects, newest
// first, and the cursor of the next page (0 when this one is the last).
func (s *Store) ListChangeSets(ctx context.Context, f ChangeSetFilter) ([]ChangeSet, int64, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	if limit > 500 {
		return nil, 0, &ErrInvalidField{"limit", "at most 500"}
	}
	var conds []string
	var args []any
	if len(f.States) > 0 {
		for _, st := range f.States {
			if !slices.Contains(ChangeSetStates, st) {
				return nil, 0, &ErrInvalidField{"state", fmt.Sprintf("unknown state %q", st)}
			}
		}
		conds = append(conds, `c.state IN `+stateList(f.States))
	}
	if f.BeforeID > 0 {
		conds, args = append(conds, `c.id < ?`), append(args, f.BeforeID)
	}
	if f.Scope != nil && !f.Scope.All {
		cond, sargs := f.Scope.clause()
		conds = append(conds, `NOT EXISTS (SELECT 1 FROM change_set_targets t WHERE t.change_set_id = c.id
			AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = t.device_id AND `+cond+`))`)
		args = append(args, sargs...)
	}
	where := ""
	if len(conds) > 0 {
		where = ` WHERE ` + strings.Join(conds, ` AND `)
	}
	out, err := engine.QueryAll(ctx, s.reader, scanChangeSet, `SELECT `+changeSetColumns+` FROM change_sets c`+where+
		` ORDER BY c.id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list change sets: %w", err)
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// ChangeSetTargets returns a change set's targets in position order.
func (s *Store) ChangeSetTargets(ctx context.Context, changeSetID int64) ([]ChangeSetTarget, error) {
	out, err := engine.QueryAll(ctx, s.reader, scanTarget, targetSelect+`WHERE t.change_set_id = ? ORDER BY t.position, t.id`, changeSetID)
	if err != nil {
		return nil, fmt.Errorf("change set %d targets: %w", changeSetID, err)
	}
	return out, nil
}

// ChangeSetTarget returns one target, or ErrNotFound.
func (s *Store) ChangeSetTarget(ctx context.Context, id int64) (ChangeSetTarget, error) {
	t, err := getTarget(ctx, s.reader, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return t, fmt.Errorf("change set target %d: %w", id, err)
	}
	return t, err
}

// ChangeSetTargetTranscript returns a target's session transcript and
// whether it was cut short.
func (s *Store) ChangeSetTargetTranscript(ctx context.Context, id int64) ([]TranscriptSegment, bool, error) {
	var raw string
	var truncated bool
	err := s.reader.QueryRowContext(ctx, `SELECT transcript, transcript_truncated FROM change_set_targets WHERE id = ?`, id).
		Scan(&raw, &truncated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("change set target %d transcript: %w", id, err)
	}
	segs, err := readTranscript(raw)
	return segs, truncated, err
}

// ChangeSetCounts returns how many of a change set's targets are in each
// state (states without any are left out).
func (s *Store) ChangeSetCounts(ctx context.Context, changeSetID int64) (map[string]int, error) {
	out := map[string]int{}
	err := engine.EachRow(ctx, s.reader, `SELECT state, COUNT(*) FROM change_set_targets WHERE change_set_id = ? GROUP BY state`,
		[]any{changeSetID}, func(r engine.Scanner) error {
			var state string
			var n int
			if err := r.Scan(&state, &n); err != nil {
				return err
			}
			out[state] = n
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("change set %d counts: %w", changeSetID, err)
	}
	return out, nil
}

// NewChangeSet is a change set to create, a draft.
type NewChangeSet struct {
	Name              string
	Body              string
	Kind              string // ChangeSetSnippet when ""
	Variables         string // JSON object; "" for none
	Concurrency       int    // 1 when 0
	StopAfterFailures int
	ConfirmSeconds    int
	CreatedBy         *int64
	CreatedByName     string
	Targets           []NewTarget
}

// NewTarget is one device of a new change set, in order.
type NewTarget struct {
	DeviceID  int64
	Variables string // JSON object; "" for none
}

func (n *NewChangeSet) check() error {
	switch {
	case strings.TrimSpace(n.Name) == "" || utf8.RuneCountInString(n.Name) > ChangeSetNameMax:
		return &ErrInvalidField{"name", fmt.Sprintf("1 to %d characters", ChangeSetNameMax)}
	case strings.TrimSpace(n.Body) == "" || len(n.Body) > ChangeSetBodyMax:
		return &ErrInvalidField{"body", fmt.Sprintf("1 byte to %d KiB", ChangeSetBodyMax>>10)}
	case !utf8.ValidString(n.Name) || !utf8.ValidString(n.Body):
		return &ErrInvalidField{"body", "not valid UTF-8"}
	case n.Concurrency < 0, n.StopAfterFailures < 0, n.ConfirmSeconds < 0:
		return &ErrInvalidField{"concurrency", "concurrency, stop_after_failures and confirm_seconds must not be negative"}
	case n.CreatedByName == "":
		return &ErrInvalidField{"created_by_name", "required"}
	case len(n.Targets) == 0 || len(n.Targets) > ChangeSetTargetsMax:
		return &ErrInvalidField{"targets", fmt.Sprintf("1 to %d devices", ChangeSetTargetsMax)}
	}
	if n.Kind == "" {
		n.Kind = ChangeSetSnippet
	}
	if n.Kind != ChangeSetSnippet && n.Kind != ChangeSetTemplate {
		return &ErrInvalidField{"kind", "snippet or template"}
	}
	if n.Concurrency == 0 {
		n.Concurrency = 1
	}
	var err error
	if n.Variables, err = jsonObject("variables", n.Variables); err != nil {
		return err
	}
	seen := map[int64]bool{}
	for i := range n.Targets {
		t := &n.Targets[i]
		if seen[t.DeviceID] {
			return &ErrInvalidField{"targets", fmt.Sprintf("device %d is listed twice", t.DeviceID)}
		}
		seen[t.DeviceID] = true
		if t.Variables, err = jsonObject("targets.variables", t.Variables); err != nil {
			return err
		}
	}
	return nil
}

// CreateChangeSet records a draft change set with its targets in order.
// Devices that do not exist, or listed twice, are *ErrInvalidField.
func (s *Store) CreateChangeSet(ctx context.Context, n NewChangeSet, audit *AuditEntry) (ChangeSet, error) {
	if err := n.check(); err != nil {
		return ChangeSet{}, err
	}
	ids := make([]int64, len(n.Targets))
	for i, t := range n.Targets {
		ids[i] = t.DeviceID
	}
	raw, err := json.Marshal(ids)
	if err != nil {
		return ChangeSet{}, err
	}
	var c ChangeSet
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		found, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `SELECT id FROM devices WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`)`, string(raw))
		if err != nil {
			return err
		}
		if len(found) != len(ids) {
			var missing []string
			for _, id := range ids {
				if !slices.Contains(found, id) {
					missing = append(missing, strconv.FormatInt(id, 10))
				}
			}
			return &ErrInvalidField{"targets", "no such devices: " + strings.Join(missing, ", ")}
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx, `INSERT INTO change_sets (name, body, kind, variables, state, concurrency,
			stop_after_failures, confirm_seconds, created_by, created_by_name, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, n.Name, n.Body, n.Kind, n.Variables, ChangeSetDraft, n.Concurrency,
			n.StopAfterFailures, n.ConfirmSeconds, n.CreatedBy, n.CreatedByName, now, now)
		if err != nil {
			return err
		}
		insert, err := tx.PrepareContext(ctx, `INSERT INTO change_set_targets (change_set_id, device_id, position, variables, state)
			VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insert.Close()
		for i, t := range n.Targets {
			if _, err := insert.ExecContext(ctx, id, t.DeviceID, i, t.Variables, TargetPending); err != nil {
				return err
			}
		}
		if err := auditIn(ctx, tx, audit, "change_set", id, ids...); err != nil {
			return err
		}
		c, err = getChangeSet(ctx, tx, id)
		return err
	})
	if err != nil {
		return ChangeSet{}, changeSetErr("create change set", err)
	}
	return c, nil
}

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

// changeSetMoved runs move in a transaction, writes the audit entry
// naming the set's devices, and returns the set as it now is.
func (s *Store) changeSetMoved(ctx context.Context, what string, id int64, audit *AuditEntry, move func(tx *sql.Tx) error) (ChangeSet, error) {
	var c ChangeSet
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := move(tx); err != nil {
			return err
		}
		var err error
		if c, err = getChangeSet(ctx, tx, id); err != nil {
			return err
		}
		if audit == nil {
			return nil
		}
		devices, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `SELECT device_id FROM change_set_targets WHERE change_set_id = ?`, id)
		if err != nil {
			return err
		}
		return auditIn(ctx, tx, audit, "change_set", id, devices...)
	})
	if err != nil {
		return ChangeSet{}, changeSetErr(fmt.Sprintf("%s change set %d", what, id), err)
	}
	return c, nil
}

// TargetRender is what a dry run rendered for one target: Rendered, or
// Error when it could not.
type TargetRender struct {
	TargetID int64
	Rendered string
	Error    string
}

// SetChangeSetRendered records a dry run of a draft or ready change set:
// what it rendered for each of its targets, every one of them. The set is
// then ready when each target rendered, and a draft again when any could
// not.
func (s *Store) SetChangeSetRendered(ctx context.Context, id int64, renders []TargetRender, audit *AuditEntry) (ChangeSet, error) {
	ok := true
	for _, r := range renders {
		if len(r.Rendered) > RenderedMax || len(r.Error) > noteMax {
			return ChangeSet{}, &ErrInvalidField{"rendered", fmt.Sprintf("target %d: at most %d KiB rendered, %d bytes of error",
				r.TargetID, RenderedMax>>10, noteMax)}
		}
		ok = ok && r.Error == ""
	}
	to := ChangeSetReady
	if !ok {
		to = ChangeSetDraft
	}
	return s.changeSetMoved(ctx, "render", id, audit, func(tx *sql.Tx) error {
		if err := moveChangeSet(ctx, tx, id, []string{ChangeSetDraft, ChangeSetReady}, `state = ?`, []any{to}, ""); err != nil {
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
			var rendered, renderErr any = r.Rendered, nil
			if r.Error != "" {
				rendered, renderErr = nil, r.Error
			}
			res, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET rendered = ?, render_error = ?
				WHERE id = ? AND change_set_id = ? AND state = ?`, rendered, renderErr, r.TargetID, id, TargetPending)
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
	return s.changeSetMoved(ctx, "approve", id, audit, func(tx *sql.Tx) error {
		err := moveChangeSet(ctx, tx, id, []string{ChangeSetReady},
			`state = ?, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?, expires_at = ?`,
			[]any{ChangeSetApproved, d.UserID, d.Name, now, d.Note, workTime(expiresAt)}, `(expires_at IS NULL OR expires_at > ?)`, now)
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
	return s.changeSetMoved(ctx, "start", id, audit, func(tx *sql.Tx) error {
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
// decides what a cancel may still stop). d, when given, records who
// decided (a rejection).
func (s *Store) CancelChangeSet(ctx context.Context, id int64, d *Decision, reason string, audit *AuditEntry) (ChangeSet, error) {
	if err := checkNote("reason", reason); err != nil {
		return ChangeSet{}, err
	}
	now := time.Now()
	stamp := now.UTC().Format(TimeFormat)
	set, args := `state = ?, finished_at = ?, error = ?`, []any{ChangeSetCancelled, stamp, nullIfEmpty(reason)}
	if d != nil {
		if err := checkNote("note", d.Note); err != nil {
			return ChangeSet{}, err
		}
		set += `, decided_by = ?, decided_by_name = ?, decided_at = ?, decision_note = ?`
		args = append(args, d.UserID, d.Name, stamp, d.Note)
	}
	return s.changeSetMoved(ctx, "cancel", id, audit, func(tx *sql.Tx) error {
		if err := moveChangeSet(ctx, tx, id, []string{ChangeSetDraft, ChangeSetReady, ChangeSetApproved, ChangeSetRunning},
			set, args, ""); err != nil {
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
	return s.changeSetMoved(ctx, "finish", id, audit, func(tx *sql.Tx) error {
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
// out by now (expired) and returns them, for the caller to notify. With
// audit, each gets that entry.
func (s *Store) ExpireChangeSets(ctx context.Context, now time.Time, audit *AuditEntry) ([]ChangeSet, error) {
	var out []ChangeSet
	stamp := now.UTC().Format(TimeFormat)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		ids, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `UPDATE change_sets SET state = ?, finished_at = ?, updated_at = ?
			WHERE state IN `+stateList([]string{ChangeSetReady, ChangeSetApproved})+` AND expires_at IS NOT NULL AND expires_at <= ?
			RETURNING id`, ChangeSetExpired, stamp, stamp, stamp)
		if err != nil {
			return err
		}
		out = make([]ChangeSet, 0, len(ids))
		for _, id := range ids {
			c, err := getChangeSet(ctx, tx, id)
			if err != nil {
				return err
			}
			if audit != nil {
				devices, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
					var id int64
					return id, r.Scan(&id)
				}, `SELECT device_id FROM change_set_targets WHERE change_set_id = ?`, id)
				if err != nil {
					return err
				}
				if err := auditIn(ctx, tx, audit, "change_set", id, devices...); err != nil {
					return err
				}
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire change sets: %w", err)
	}
	slices.SortFunc(out, func(a, b ChangeSet) int { return int(a.ID - b.ID) })
	return out, nil
}

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
		return s.Queue.EndWorkTx(ctx, tx, *c, o)
	})
}
