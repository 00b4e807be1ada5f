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
	"unicode/utf8"

	"backupd/db/engine"
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

// What the person deciding a change set decided.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

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
	// Decision is what they decided: DecisionApproved, DecisionRejected,
	// or "" while nobody has.
	Decision   string
	ExpiresAt  *string
	StartedAt  *string
	FinishedAt *string
	// Error says why it stopped or was cancelled.
	Error     *string
	UpdatedAt string
	// Targets is how many devices it has.
	Targets int
}

const changeSetColumns = `c.id, c.name, c.body, c.kind, c.variables, c.state, c.concurrency, c.stop_after_failures, c.confirm_seconds,
	c.created_by, c.created_by_name, c.created_at, c.decided_by, c.decided_by_name, c.decided_at, c.decision_note, c.decision,
	c.expires_at, c.started_at, c.finished_at, c.error, c.updated_at,
	(SELECT COUNT(*) FROM change_set_targets t WHERE t.change_set_id = c.id)`

func scanChangeSet(row engine.Scanner) (ChangeSet, error) {
	var c ChangeSet
	err := row.Scan(&c.ID, &c.Name, &c.Body, &c.Kind, &c.Variables, &c.State, &c.Concurrency, &c.StopAfterFailures, &c.ConfirmSeconds,
		&c.CreatedBy, &c.CreatedByName, &c.CreatedAt, &c.DecidedBy, &c.DecidedByName, &c.DecidedAt, &c.DecisionNote, &c.Decision,
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
	// RenderError why it could not (then Rendered is nil), in the
	// service's words, and RenderReason the same as a code for the pages
	// to say in the reader's language.
	Rendered     *string
	RenderError  *string
	RenderReason *string
	State        string
	Stage        string
	JobID        *int64
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
	t.render_reason, t.state, t.stage, t.job_id, t.pre_backup_id, t.post_backup_id, t.started_at, t.finished_at, t.error, t.error_reason,
	t.transcript_truncated`

const targetSelect = `SELECT ` + targetColumns + ` FROM change_set_targets t JOIN devices d ON d.id = t.device_id `

func scanTarget(row engine.Scanner) (ChangeSetTarget, error) {
	var t ChangeSetTarget
	err := row.Scan(&t.ID, &t.ChangeSetID, &t.DeviceID, &t.DeviceName, &t.Position, &t.Variables, &t.Rendered, &t.RenderError,
		&t.RenderReason, &t.State, &t.Stage, &t.JobID, &t.PreBackupID, &t.PostBackupID, &t.StartedAt, &t.FinishedAt, &t.Error, &t.ErrorReason,
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
	var conds []string
	var args []any
	if f.Scope != nil && !f.Scope.All {
		cond, sargs := f.Scope.clause()
		conds = append(conds, `NOT EXISTS (SELECT 1 FROM change_set_targets t WHERE t.change_set_id = c.id
			AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = t.device_id AND `+cond+`))`)
		args = append(args, sargs...)
	}
	out, next, err := workPage(ctx, s.reader, scanChangeSet, func(c ChangeSet) int64 { return c.ID },
		`SELECT `+changeSetColumns+` FROM change_sets c`, "c", ChangeSetStates, f.States, conds, args, f.Limit, f.BeforeID)
	if err != nil {
		return nil, 0, changeSetErr("list change sets", err)
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
	case !utf8.ValidString(n.Name):
		return &ErrInvalidField{"name", "not valid UTF-8"}
	case !utf8.ValidString(n.Body):
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
		found, err := engine.QueryAll(ctx, tx, scanID, `SELECT id FROM devices WHERE id IN (SELECT CAST(value AS BIGINT) FROM `+s.d.JSONEach()+`)`, string(raw))
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
