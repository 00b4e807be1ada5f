package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/redact"
	"backupd/app/restore/frrplan"
	"backupd/db"
	"backupd/db/queue"
)

// Stages of a running restore, as Restore.Stage shows them.
const (
	StagePreBackup  = "pre_backup"
	StageCheck      = "check"
	StageApply      = "apply"
	StageVerify     = "verify"
	StageKeep       = "keep"
	StageUndo       = "rollback"
	StageUndoVerify = "rollback_verify"
)

// Error reasons of a restore that did not succeed.
const (
	ReasonBackupFailed = "backup_failed"
	ReasonDrift        = "changed_since_preview"
	ReasonNoMethod     = "not_supported"
	ReasonConnect      = "session_failed"
	ReasonRefused      = "refused"
	ReasonLost         = "session_lost"
	ReasonMismatch     = "verify_mismatch"
	ReasonNotConverged = "not_converged"
	ReasonKeep         = "keep_failed"
	ReasonStore        = "store"
)

// Shell is an open session on the device: Session, and its end.
type Shell interface {
	Session
	Close() error
}

// Runner runs restore jobs (backup.WorkRunner for queue.KindRestore).
type Runner struct {
	Store  *db.Store
	Engine *backup.Engine
	Keys   *redact.Keyring
	Log    *slog.Logger
	// Open logs in to the device for writing (collect.OpenShell).
	Open func(ctx context.Context, t collect.Target) (Shell, error)
	// Minute is how long one minute of a device's confirm timer lasts:
	// time.Minute when 0 (tests shorten it to match a simulator's).
	Minute time.Duration
}

// outcome is the JSON summary of a run kept with the restore: counts and
// verdicts, never configuration text.
type outcome struct {
	Applied
	// Already: the device held the version; nothing was sent.
	Already bool `json:"already,omitempty"`
	// Verified: the backup after the change equals the version.
	Verified bool `json:"verified,omitempty"`
	// Differences counts the lines that differed at verification.
	Differences int `json:"differences,omitempty"`
	// RolledBack: the device was put back; RollbackVerified: and the
	// backup after that equals the configuration before.
	RolledBack       bool `json:"rolled_back,omitempty"`
	RollbackVerified bool `json:"rollback_verified,omitempty"`
}

// run is one restore job in progress.
type run struct {
	*Runner
	c       queue.Claim
	r       db.Restore
	p       driver.Platform
	m       Method
	masker  *redact.Masker
	out     outcome
	tr      *collect.Transcript
	started time.Time
	// armedBy is when the method's apply returned on a platform whose
	// change waits under the device's own undo timer: by then the timer
	// ran, if it was armed at all.
	armedBy time.Time
}

// RunWork runs the restore job c.
func (rn *Runner) RunWork(ctx context.Context, c queue.Claim) {
	r, err := rn.Store.StartRestore(ctx, c.WorkID, c, nil)
	if err != nil {
		rn.Log.Error("starting a restore failed", "restore_id", c.WorkID, "job_id", c.ID, "err", err)
		return // the job stays this engine's; a shutdown or recovery ends it as interrupted
	}
	x := &run{Runner: rn, c: c, r: r, started: time.Now()}
	state, msg, reason := x.run(ctx)
	if ctx.Err() != nil && state != db.RestoreSucceeded {
		// Stopped mid-run (a shutdown): the engine interrupts the job,
		// which marks the restore interrupted, state unknown.
		return
	}
	x.finish(state, msg, reason)
}

func (x *run) run(ctx context.Context) (state, msg, reason string) {
	dev, err := x.Store.GetDevice(ctx, x.r.DeviceID)
	if err != nil {
		return db.RestoreFailed, "reading the device failed: " + err.Error(), ReasonStore
	}
	p, ok := driver.Lookup(dev.Platform)
	m, mok := MethodOf(p)
	if !ok || !mok {
		return db.RestoreFailed, fmt.Sprintf("platform %s cannot restore a configuration", dev.Platform), ReasonNoMethod
	}
	x.p, x.m = p, m
	x.masker = x.Keys.Device(dev.ID, dev.Platform)
	target, err := x.Store.SnapshotText(ctx, x.r.TargetHash)
	if err != nil {
		return db.RestoreFailed, "reading the version failed: " + err.Error(), ReasonStore
	}
	merge := Merges(p)
	switch {
	case merge && len(x.r.Lines) == 0, !merge && x.r.Lines != nil:
		return db.RestoreFailed, fmt.Sprintf("platform %s now restores by method %s, which this request was not made for; nothing was sent. "+
			"Request the restore again", dev.Platform, p.Restore.Method), ReasonNoMethod
	case merge:
		// What is applied and verified is the selected lines with their
		// parents, not the whole version.
		target = PlanText(MergePlan(p, target, x.r.Lines))
	}

	// The backup just before: the job's own attempt.
	x.stage(ctx, StagePreBackup)
	pre := x.Engine.Attempt(ctx, x.c)
	if err := x.Store.Queue.RecordAttempt(ctx, x.c, pre); err != nil {
		return db.RestoreFailed, "recording the backup before the restore failed: " + err.Error(), ReasonStore
	}
	if !pre.Success {
		return db.RestoreFailed, "the backup before the restore failed, the device was not touched: " + pre.Error, ReasonBackupFailed
	}
	x.stage(ctx, StageCheck)
	if x.r.PreviewHash != nil && pre.Hash != *x.r.PreviewHash {
		preview, err := x.Store.SnapshotText(ctx, *x.r.PreviewHash)
		if err != nil {
			return db.RestoreFailed, "reading the preview failed: " + err.Error(), ReasonStore
		}
		if !x.samePlain(preview, pre.Text) {
			return db.RestoreFailed, "the device's configuration changed since the preview was approved; nothing was sent. " +
				"Request the restore again to see what it would change now", ReasonDrift
		}
	}
	if x.m.Same(x.p, pre.Text, target) {
		x.out.Already, x.out.Verified = true, true
		return db.RestoreSucceeded, "", ""
	}

	t, err := x.Engine.Target(ctx, dev.ID)
	if err != nil {
		return db.RestoreFailed, "preparing the login failed: " + err.Error(), ReasonConnect
	}
	x.tr = transcript(x.Keys.Device(dev.ID, dev.Platform))
	t.Transcript = x.tr
	x.stage(ctx, StageApply)
	sh, err := x.Open(ctx, t)
	if err != nil {
		return db.RestoreFailed, "logging in to write failed, the device was not touched: " + err.Error(), ReasonConnect
	}
	defer func() { _ = sh.Close() }()
	applied, err := x.m.Apply(ctx, sh, x.p, pre.Text, target)
	x.out.Applied = applied
	if rm, ok := driver.LookupRestoreMethod(x.p.Restore.Method); ok && rm.Timer {
		x.armedBy = time.Now()
	}
	if u, ok := errors.AsType[*UntouchedError](err); ok {
		f := x.applyFailure(u.Err)
		return db.RestoreFailed, f.msg + "; nothing was changed on the device", f.reason
	}
	if merge {
		return x.mergeEnd(ctx, target, applied, err)
	}
	if err != nil {
		return x.undo(ctx, sh, target, pre.Text, x.applyFailure(err))
	}

	x.stage(ctx, StageVerify)
	post, err := x.backup(ctx, db.RestorePostBackup)
	if err != nil {
		return x.undo(ctx, sh, target, pre.Text, failure{msg: err.Error(), reason: ReasonStore})
	}
	if !post.Success {
		return x.undo(ctx, sh, target, pre.Text, failure{msg: "the backup after the change failed: " + post.Error, reason: ReasonBackupFailed})
	}
	if !x.m.Same(x.p, post.Text, target) {
		x.out.Differences = countDiff(post.Text, target)
		return x.undo(ctx, sh, post.Text, pre.Text, failure{msg: fmt.Sprintf("after the change the device's configuration differs from the version in %d lines", x.out.Differences),
			reason: ReasonMismatch})
	}
	x.out.Verified = true
	x.stage(ctx, StageKeep)
	if err := x.m.Keep(ctx, sh, x.p); err != nil {
		return db.RestoreFailed, "the device runs the version, but keeping it failed: " + x.maskText(err.Error()), ReasonKeep
	}
	return db.RestoreSucceeded, "", ""
}

// mergeEnd ends a merge once its lines were typed (or the device refused
// one, or the session was lost): a backup after, then each line typed
// must show in it under its parents. Nothing is ever undone: a failure
// says what was sent and that nothing was rolled back.
func (x *run) mergeEnd(ctx context.Context, plan string, applied Applied, applyErr error) (string, string, string) {
	total := len(planLines(plan))
	x.stage(ctx, StageVerify)
	post, berr := x.backup(ctx, db.RestorePostBackup)
	after := "; see the backup after the restore for the device's configuration now"
	switch {
	case berr != nil:
		after = "; recording the backup after failed: " + berr.Error() + ". Back the device up to see its state"
	case !post.Success:
		after = "; the backup after failed: " + post.Error + ". Back the device up to see its state"
	}
	if applyErr != nil {
		if _, ok := errors.AsType[*SaveError](applyErr); ok {
			return db.RestoreFailed, fmt.Sprintf("all %d lines were sent, but %s; the running configuration has them, the saved one not, "+
				"and nothing was rolled back", total, x.maskText(applyErr.Error())) + after, ReasonKeep
		}
		f := x.applyFailure(applyErr)
		if f.reason == ReasonLost {
			return db.RestoreFailed, fmt.Sprintf("%s after %d of %d lines went in; the device's state is not known, nothing was rolled back and "+
				"nothing was saved", f.msg, applied.Sent, total) + after, f.reason
		}
		return db.RestoreFailed, fmt.Sprintf("%s; partially applied: the %d lines before it were sent (of %d), nothing was rolled back "+
			"and the configuration was not saved", f.msg, applied.Sent, total) + after, f.reason
	}
	if berr != nil || !post.Success {
		return db.RestoreFailed, fmt.Sprintf("all %d lines were sent and saved, but they could not be verified", total) + after, ReasonBackupFailed
	}
	if missing := MissingLines(x.p, post.Text, plan); len(missing) > 0 {
		x.out.Differences = len(missing)
		shown := missing[:min(len(missing), 3)]
		for i := range shown {
			shown[i] = fmt.Sprintf("%q", x.maskText(shown[i]))
		}
		return db.RestoreFailed, fmt.Sprintf("all %d lines were sent and saved, but %d of them do not show in the configuration after (%s); "+
			"nothing was rolled back", total, len(missing), strings.Join(shown, ", ")), ReasonMismatch
	}
	x.out.Verified = true
	return db.RestoreSucceeded, "", ""
}

// failure is why a run goes back.
type failure struct{ msg, reason string }

func (x *run) applyFailure(err error) failure {
	if r, ok := asRefused(err); ok {
		return failure{msg: fmt.Sprintf("the device refused %q: %s", x.maskText(r.Line), x.maskText(r.Answer)), reason: ReasonRefused}
	}
	var nc *frrplan.NotConvergedError
	if errors.As(err, &nc) {
		return failure{msg: err.Error(), reason: ReasonNotConverged}
	}
	if isLostErr(err) {
		return failure{msg: "the session was lost while applying: " + x.maskText(err.Error()), reason: ReasonLost}
	}
	return failure{msg: x.maskText(err.Error()), reason: ReasonRefused}
}

// undo puts the configuration before back after a failed apply or
// verification, in the same session or, when it was lost, a new one,
// and verifies it.
func (x *run) undo(ctx context.Context, sh Shell, current, previous string, f failure) (string, string, string) {
	x.stage(ctx, StageUndo)
	if isLostReason(f.reason) {
		t, err := x.Engine.Target(ctx, x.r.DeviceID)
		if err == nil {
			t.Transcript = x.tr
			var nsh Shell
			if nsh, err = x.Open(ctx, t); err == nil {
				defer func() { _ = nsh.Close() }()
				sh = nsh
			}
		}
		if err != nil {
			return x.awaitTimer(ctx, previous, f, "logging in again to put the configuration back failed: "+x.maskText(err.Error()))
		}
	}
	if _, err := x.m.Undo(ctx, sh, x.p, current, previous); err != nil {
		return x.awaitTimer(ctx, previous, f, "putting the configuration back failed too: "+x.maskText(err.Error()))
	}
	x.out.RolledBack = true
	x.stage(ctx, StageUndoVerify)
	after, err := x.backup(ctx, db.RestoreRollbackBackup)
	if err != nil || !after.Success {
		msg := "the backup after putting it back failed"
		if err != nil {
			msg += ": " + err.Error()
		} else {
			msg += ": " + after.Error
		}
		return db.RestoreRollbackFailed, f.msg + "; " + msg + ". Back the device up to see its state", f.reason
	}
	if !x.m.Same(x.p, after.Text, previous) {
		return db.RestoreRollbackFailed, f.msg + fmt.Sprintf("; after putting it back the configuration still differs from before in %d lines", countDiff(after.Text, previous)), f.reason
	}
	x.out.RollbackVerified = true
	return db.RestoreRolledBack, f.msg + "; the configuration before was put back and verified", f.reason
}

// awaitTimer ends a restore whose undo failed (why): on a platform whose
// change was applied under the device's own undo timer, which nobody
// confirmed, the device puts the configuration before back itself when
// the timer runs out. So the restore waits for that, backs the device up
// and compares: rolled back when the backup shows the configuration
// before, else rollback failed. Without a timer the device's state is
// not known.
func (x *run) awaitTimer(ctx context.Context, previous string, f failure, why string) (string, string, string) {
	unknown := f.msg + "; " + why + ". The device's state is not known: back it up to see"
	if x.armedBy.IsZero() {
		return db.RestoreRollbackFailed, unknown, f.reason
	}
	minute := x.Minute
	if minute <= 0 {
		minute = time.Minute
	}
	// The method armed the timer in whole minutes (at least one); half a
	// minute more for the device to finish putting it back.
	minutes := max(1, int(x.p.Restore.Timer.Default.Minutes()))
	until := x.armedBy.Add(time.Duration(minutes)*minute + minute/2)
	x.stage(ctx, StageUndoVerify)
	x.Log.Info("restore waits for the device's confirm timer", "restore_id", x.r.ID, "until", until.UTC().Format(time.RFC3339))
	wait := time.NewTimer(time.Until(until))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return db.RestoreRollbackFailed, unknown, f.reason
	case <-wait.C:
	}
	after, err := x.backup(ctx, db.RestoreRollbackBackup)
	switch {
	case err != nil:
		return db.RestoreRollbackFailed, unknown + " (the backup after the device's confirm timer: " + err.Error() + ")", f.reason
	case !after.Success:
		return db.RestoreRollbackFailed, unknown + " (the backup after the device's confirm timer failed: " + after.Error + ")", f.reason
	case !x.m.Same(x.p, after.Text, previous):
		return db.RestoreRollbackFailed, f.msg + "; " + why + fmt.Sprintf(
			"; after the device's confirm timer ran out its configuration still differs from before in %d lines", countDiff(after.Text, previous)), f.reason
	}
	x.out.RolledBack, x.out.RollbackVerified = true, true
	return db.RestoreRolledBack, f.msg + "; " + why + "; the device's own confirm timer ran out and put the configuration before back, " +
		"verified by a backup", f.reason
}

// backup takes and records an extra backup of the running job.
func (x *run) backup(ctx context.Context, which db.RestoreBackup) (queue.Outcome, error) {
	began := time.Now()
	o := x.Engine.Attempt(ctx, x.c)
	id, err := x.Store.Queue.RecordExtraAttempt(ctx, x.c, queue.TriggerRestore, began, o)
	if err != nil {
		return o, fmt.Errorf("recording the backup failed: %w", err)
	}
	if err := x.Store.SetRestoreBackup(ctx, x.r.ID, which, id); err != nil {
		return o, fmt.Errorf("recording the backup failed: %w", err)
	}
	return o, nil
}

func (x *run) stage(ctx context.Context, stage string) {
	if err := x.Store.SetRestoreStage(ctx, x.r.ID, stage); err != nil && ctx.Err() == nil {
		x.Log.Warn("recording a restore's stage failed", "restore_id", x.r.ID, "stage", stage, "err", err)
	}
}

// finish records the end, with the session's transcript (masked).
func (x *run) finish(state, msg, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if x.tr != nil {
		segs, _ := x.tr.Segments()
		out := make([]db.TranscriptSegment, 0, len(segs))
		for _, s := range segs {
			out = append(out, db.TranscriptSegment{Kind: s.Kind, Text: s.Text})
		}
		if _, err := x.Store.AppendRestoreTranscript(ctx, x.r.ID, out); err != nil {
			x.Log.Warn("recording a restore's session failed", "restore_id", x.r.ID, "err", err)
		}
	}
	raw, _ := json.Marshal(x.out)
	audit := systemAudit("restore.finish", map[string]any{"device_id": x.r.DeviceID, "state": state, "reason": reason})
	if _, err := x.Store.FinishRestore(ctx, x.r.ID, db.RestoreEnd{State: state, Outcome: string(raw), Error: msg, Reason: reason}, &x.c, audit); err != nil {
		x.Log.Error("recording a restore's end failed", "restore_id", x.r.ID, "state", state, "err", err)
		return
	}
	countEnd(x.r.Method, state)
	x.Log.Info("restore ended", "restore_id", x.r.ID, "device_id", x.r.DeviceID, "state", state, "reason", reason,
		"took", time.Since(x.started).Round(time.Millisecond))
}

// maskText masks the configuration secrets a text quotes.
func (x *run) maskText(s string) string {
	if x.masker == nil {
		return s
	}
	return x.masker.Text(s)
}

// samePlain compares two backups of the device, noise ignored.
func (x *run) samePlain(a, b string) bool {
	f, err := backup.NewNoiseFilter(x.p.ID, nil)
	if err != nil {
		return a == b
	}
	return !backup.Changed(a, b, f)
}

func isLostReason(reason string) bool { return reason == ReasonLost }

func isLostErr(err error) bool {
	return errors.Is(err, driver.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// countDiff counts the lines one text has and the other has not.
func countDiff(a, b string) int {
	count := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(b, "\n") {
		count[l]--
	}
	n := 0
	for _, c := range count {
		n += max(c, -c)
	}
	return n
}

// AuditInterface names the restore and push runs in the audit log: they
// act on their own once approved, neither through the web, the API nor
// the CLI.
const AuditInterface = "system"

// systemAudit is the audit entry of a run's end.
func systemAudit(action string, details map[string]any) *db.AuditEntry {
	return &db.AuditEntry{Username: "backupd", Interface: AuditInterface, Action: action, Details: details}
}

// transcript records a restore's or push's session with the device's
// secrets masked line by line as they come, whole lines only (a line
// split between reads is joined first, and the prompt in front of an
// echoed line does not hide its secret): the masker is the transcript's
// own.
func transcript(m *redact.Masker) *collect.Transcript {
	return &collect.Transcript{Max: db.TranscriptMax, MaskLine: m.Text}
}
