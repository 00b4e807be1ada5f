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

// What restores (restores.go) and change sets (changesets.go) share:
// their session transcripts, their audit entries written in the
// transaction of the change they record, and what the job queue tells
// the store of a restore or push job that ended without its runner.

// TranscriptSegment is one run of a restore's or a push's session in one
// direction, as stored (the same shape as a failed backup's session log).
// The caller masks it before it is stored: login passwords and the
// configuration's secrets never reach the store in clear.
type TranscriptSegment struct {
	Kind string `json:"kind"` // "sent", "received" or "note"
	Text string `json:"text"`
}

// TranscriptMax bounds the text a restore's or a target's transcript
// keeps; past it, what comes is dropped and the transcript is marked
// truncated.
const TranscriptMax = 256 << 10

// appendTranscript appends segs to the transcript of the row id of table
// (restores or change_set_targets) in tx, within TranscriptMax, and
// reports whether it is now truncated. cond names the states the row must
// be in; check explains, when it is not, which state it has.
func appendTranscript(ctx context.Context, tx *sql.Tx, table string, id int64, cond string, segs []TranscriptSegment,
	check func(ctx context.Context, tx *sql.Tx, id int64) error) (bool, error) {
	var raw string
	var truncated bool
	err := tx.QueryRowContext(ctx, `SELECT transcript, transcript_truncated FROM `+table+` WHERE id = ? AND `+cond, id).
		Scan(&raw, &truncated)
	if errors.Is(err, sql.ErrNoRows) {
		return false, check(ctx, tx, id)
	}
	if err != nil {
		return false, err
	}
	var have []TranscriptSegment
	if err := json.Unmarshal([]byte(raw), &have); err != nil {
		return false, fmt.Errorf("transcript of %s %d: %w", table, id, err)
	}
	size := 0
	for _, sg := range have {
		size += len(sg.Text)
	}
	for _, sg := range segs {
		if truncated {
			break
		}
		if size+len(sg.Text) > TranscriptMax {
			sg.Text = cutUTF8(sg.Text, TranscriptMax-size)
			truncated = true
		}
		if sg.Text == "" {
			continue
		}
		size += len(sg.Text)
		have = append(have, sg)
	}
	out, err := json.Marshal(have)
	if err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET transcript = ?, transcript_truncated = ? WHERE id = ?`, string(out), truncated, id)
	return truncated, err
}

// cutUTF8 is s cut to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// readTranscript decodes a stored transcript.
func readTranscript(raw string) ([]TranscriptSegment, error) {
	out := []TranscriptSegment{}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return out, nil
}

// auditIn records a, when the caller gave one, in tx, about the row id of
// targetType, naming deviceIDs among its devices: a change and its audit
// entry commit or roll back together.
func auditIn(ctx context.Context, tx *sql.Tx, a *AuditEntry, targetType string, id int64, deviceIDs ...int64) error {
	if a == nil {
		return nil
	}
	e := *a
	if e.TargetType == "" {
		e.TargetType = targetType
	}
	if e.TargetID == "" {
		e.TargetID = strconv.FormatInt(id, 10)
	}
	e.DeviceIDs = append(append([]int64{}, e.DeviceIDs...), deviceIDs...)
	return recordAudit(ctx, tx, e)
}

// stateList is states as an SQL list of literals (they are the package's
// constants, never input).
func stateList(states []string) string {
	return `('` + strings.Join(states, `', '`) + `')`
}

// workPage is one page of restores or change sets, newest first: the rows
// of selectFrom (aliased alias) that conds hold (with args), of the states
// asked for (each one of known, else *ErrInvalidField), below beforeID
// when above 0, at most limit (50 when 0, at most 500); and the cursor of
// the next page (0 when this one is the last).
func workPage[T any](ctx context.Context, q engine.Querier, scan func(engine.Scanner) (T, error), id func(T) int64,
	selectFrom, alias string, known, states, conds []string, args []any, limit int, beforeID int64) ([]T, int64, error) {
	if limit <= 0 {
		limit = 50
	}
	if limit > 500 {
		return nil, 0, &ErrInvalidField{"limit", "at most 500"}
	}
	if len(states) > 0 {
		for _, st := range states {
			if !slices.Contains(known, st) {
				return nil, 0, &ErrInvalidField{"state", fmt.Sprintf("unknown state %q", st)}
			}
		}
		conds = append(conds, alias+`.state IN `+stateList(states))
	}
	if beforeID > 0 {
		conds, args = append(conds, alias+`.id < ?`), append(args, beforeID)
	}
	where := ""
	if len(conds) > 0 {
		where = ` WHERE ` + strings.Join(conds, ` AND `)
	}
	out, err := engine.QueryAll(ctx, q, scan, selectFrom+where+` ORDER BY `+alias+`.id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = id(out[limit-1])
	}
	return out, next, nil
}

// expireWork ends, in tx, the rows of table (restores, change_sets) in
// one of the states from whose expires_at is at or before stamp: they
// move to state to, finished then. It returns their ids.
func expireWork(ctx context.Context, tx *sql.Tx, table string, from []string, to, stamp string) ([]int64, error) {
	return engine.QueryAll(ctx, tx, scanID, `UPDATE `+table+` SET state = ?, finished_at = ?, updated_at = ?
		WHERE state IN `+stateList(from)+` AND expires_at IS NOT NULL AND expires_at <= ?
		RETURNING id`, to, stamp, stamp, stamp)
}

// Decision is who approves or rejects a restore or a change set, and why.
type Decision struct {
	UserID *int64
	Name   string
	Note   string
}

// noteMax bounds a reason or a decision's note.
const noteMax = 2000

func checkNote(field, note string) error {
	if utf8.RuneCountInString(note) > noteMax {
		return &ErrInvalidField{field, fmt.Sprintf("at most %d characters", noteMax)}
	}
	if !utf8.ValidString(note) {
		return &ErrInvalidField{field, "not valid UTF-8"}
	}
	return nil
}

// stageMax bounds a stage's name.
const stageMax = 64

// checkStage accepts a stage name: lower-case letters, digits and
// underscores (pre_backup, apply, verify, rollback, ...).
func checkStage(stage string) error {
	if stage == "" || len(stage) > stageMax {
		return &ErrInvalidField{"stage", fmt.Sprintf("1 to %d characters", stageMax)}
	}
	for _, r := range stage {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return &ErrInvalidField{"stage", "lower-case letters, digits and underscores only"}
		}
	}
	return nil
}

// jsonObject checks that raw is a JSON object ("" is {}) and returns it.
func jsonObject(field, raw string) (string, error) {
	if raw == "" {
		return "{}", nil
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v == nil {
		return "", &ErrInvalidField{field, "must be a JSON object"}
	}
	return raw, nil
}

// workEnded is the queue's Hooks.WorkEnded: a restore or push job ended
// without its runner, so its work ends with it, in the same transaction.
// A job interrupted (its process stopped) leaves the device in a state
// nobody knows: the restore, or the change set target, is interrupted.
// A queued job cancelled cancels its restore, or skips its target. A
// restore that moved so causes its events, as any move does.
func (s *Store) workEnded(ctx context.Context, tx *sql.Tx, w queue.WorkEnd) error {
	stamp := w.At.UTC().Format(TimeFormat)
	cancelled := w.State == queue.JobCancelled
	switch w.Kind {
	case queue.KindRestore:
		state := RestoreInterrupted
		if cancelled {
			state = RestoreCancelled
		}
		res, err := tx.ExecContext(ctx, `UPDATE restores SET state = ?, error = ?, error_reason = ?, finished_at = ?, updated_at = ?
			WHERE id = ? AND job_id = ? AND state IN ('queued', 'running')`, state, w.Error, w.Reason, stamp, stamp, w.WorkID, w.JobID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		r, err := getRestore(ctx, tx, w.WorkID)
		if err != nil {
			return err
		}
		return s.recordRestoreEvents(ctx, tx, r, w.At)
	case queue.KindPush:
		state := TargetInterrupted
		if cancelled {
			state = TargetSkipped
		}
		_, err := tx.ExecContext(ctx, `UPDATE change_set_targets SET state = ?, error = ?, error_reason = ?, finished_at = ?
			WHERE id = ? AND job_id = ? AND state IN ('queued', 'running')`, state, w.Error, w.Reason, stamp, w.WorkID, w.JobID)
		return err
	}
	return nil
}

// forgetUntakenBackup clears the backup before of row id of table
// (restores, change_set_targets) when its job ended without taking it
// (queue.EndWorkTx removed its row).
func forgetUntakenBackup(ctx context.Context, tx *sql.Tx, table string, id int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE `+table+` SET pre_backup_id = NULL
		WHERE id = ? AND pre_backup_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM backups b WHERE b.id = `+table+`.pre_backup_id)`, id)
	return err
}

// casMove is the compare-and-set of a row of table (restores,
// change_sets, change_set_targets): it runs set (columns = ?, … with
// args) on row id when its state is one of from and extra holds (with
// extraArgs; "" for none). It returns "" when the row moved, else the
// state it found it in; ErrNotFound when there is none.
func casMove(ctx context.Context, tx *sql.Tx, table string, id int64, from []string, set string, args []any, extra string, extraArgs []any) (string, error) {
	cond := `id = ? AND state IN ` + stateList(from)
	if extra != "" {
		cond += ` AND ` + extra
	}
	all := append(append(append([]any{}, args...), id), extraArgs...)
	res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+set+` WHERE `+cond, all...)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return "", err
	}
	return rowState(ctx, tx, table, id)
}

// rowState is the state of the row id of table, or ErrNotFound.
func rowState(ctx context.Context, tx *sql.Tx, table string, id int64) (string, error) {
	var have string
	err := tx.QueryRowContext(ctx, `SELECT state FROM `+table+` WHERE id = ?`, id).Scan(&have)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return have, err
}

// workTime is t as the restore and change set rows keep times; the zero
// time is NULL.
func workTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(TimeFormat)
}
