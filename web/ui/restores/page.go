package restores

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/restore"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web"
	"backupd/web/ui/core"
)

// One restore: what it puts back, who asked and decided, the preview,
// the forms its state allows the user, and how it ended.

// restorePage is the data of restore.html.
type restorePage struct {
	ID        int64
	Device    db.Device
	DeviceURL string
	// Version is the version put back; nil when retention deleted it.
	Version  *versionRef
	State    string
	StateKey string
	// Badge is the state badge's CSS class.
	Badge    string
	StageKey string
	Open     bool
	Method   string
	// Who asked, when and why; who decided, when and with what note.
	Requester, RequestedAt, RequestedISO string
	Reason                               string
	Decider, DecidedAt, DecisionNote     string
	ExpiresAt, StartedAt, FinishedAt     string
	// Outcome is what a run did; Failure why it did not succeed.
	Outcome *outcome
	Failure *failure
	// Backups are the backups the restore took, linked.
	Backups []backupLink
	Preview *preview
	// Merge is what a merge of selected lines sends (nil for a restore
	// of the whole version).
	Merge   *mergeView
	Secrets core.Secrets
	// Transcript is the session's (masked when stored).
	Transcript    []db.TranscriptSegment
	TranscriptCut bool
	// The forms: approve (with the preview's hash), reject, cancel.
	// FourEyesBlocked: the user asked for it and someone else must
	// approve; the button shows, disabled, saying so.
	CanApprove, FourEyesBlocked, CanReject, CanCancel bool
	PreviewHash                                       string
	// Note is the decision's note as typed in a refused form.
	Note    string
	Notice  string
	Refusal *refusal
	// APIURL is what the page's script follows while the restore is
	// open.
	APIURL string
}

// outcome is the runner's summary of a run (app/restore keeps it as
// JSON: counts and verdicts, never configuration text).
type outcome struct {
	Passes           int  `json:"passes"`
	Skipped          int  `json:"skipped"`
	Already          bool `json:"already"`
	Verified         bool `json:"verified"`
	Differences      int  `json:"differences"`
	RolledBack       bool `json:"rolled_back"`
	RollbackVerified bool `json:"rollback_verified"`
}

// failure is why a restore did not succeed: its reason in the page's
// language, then the run's own words.
type failure struct {
	Reason, Error string
}

// mergeView is a merge's lines as they will be (or were) sent, in
// order: the selected ones, each after its parent lines.
type mergeView struct {
	// Count is how many lines were selected.
	Count int
	Rows  []mergeRow
	// Gone: retention deleted the version since.
	Gone bool
}

// mergeRow is one line sent: its number in the version, its text
// (secrets masked as the page's are), and whether it is sent only as
// the parent of a selected line.
type mergeRow struct {
	No     int
	Text   string
	Parent bool
}

// backupLink is one backup a restore took.
type backupLink struct {
	// Label is its message key (before, after, …).
	Label   string
	Version *versionRef
	Failed  bool
}

// preview is the diff from the device's configuration before the
// restore (the preview's backup) to the version.
type preview struct {
	// From is the preview's backup.
	From *versionRef
	// Gone: retention deleted one of the two texts.
	Gone bool
	// Same: nothing to change; NoiseOnly: only lines change detection
	// ignores differ.
	Same, NoiseOnly       bool
	Added, Removed, Noise int
	Rows                  []diffRow
	Truncated             bool
	Shown, Total          int
	HasNoise              bool
	RulesIgnored          bool
}

// diffRow is one row of the unified diff: a hunk's header, or a line.
type diffRow struct {
	Header       string
	OldNo, NewNo int
	Text         string
	// Class is the line's CSS class (kind, and noise).
	Class string
}

// maxDiffRows bounds the rows the preview shows.
const maxDiffRows = 3000

// notices say what a form did; it comes back to the page with ?done=.
var notices = map[string]string{
	"requested": keyNoticeRequested,
	"approved":  keyNoticeApproved,
	"rejected":  keyNoticeRejected,
	"cancelled": keyNoticeCancelled,
}

func (u *handlers) restorePage(w http.ResponseWriter, r *http.Request) error {
	rs, d, err := u.restoreOf(r)
	if err != nil {
		return err
	}
	return u.showRestore(w, r, http.StatusOK, rs, d, nil, "")
}

// showRestore renders the page of rs with status, and rf (a refused
// form, with its note as typed) when set.
func (u *handlers) showRestore(w http.ResponseWriter, r *http.Request, status int, rs db.Restore, d db.Device, rf *refusal, note string) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	p := restorePage{
		ID: rs.ID, Device: d, DeviceURL: core.DevicePath(d.ID), State: rs.State, StateKey: stateKey(rs.State),
		Badge: badges[rs.State], Open: rs.Open(), Method: rs.Method,
		Requester: rs.RequestedByName, RequestedAt: u.StoredTimeText(&rs.RequestedAt), RequestedISO: core.StoredISO(&rs.RequestedAt),
		Reason: rs.Reason, Decider: deref(rs.DecidedByName), DecidedAt: u.StoredTimeText(rs.DecidedAt), DecisionNote: rs.DecisionNote,
		StartedAt: u.StoredTimeText(rs.StartedAt), FinishedAt: u.StoredTimeText(rs.FinishedAt),
		Note: note, Refusal: rf, APIURL: "/api" + core.RestorePath(rs.ID),
	}
	if rs.State == db.RestoreRunning {
		p.StageKey = stageKeys[rs.Stage]
	}
	if rs.State == db.RestorePending || rs.State == db.RestoreApproved {
		p.ExpiresAt = u.StoredTimeText(rs.ExpiresAt)
	}
	if rf == nil {
		p.Notice = notices[r.URL.Query().Get("done")]
	}
	target, err := u.Store.GetBackup(ctx, rs.TargetBackupID)
	switch {
	case err == nil:
		p.Version = u.versionRef(d, target)
	case !errors.Is(err, db.ErrNotFound):
		return err
	}
	if err := u.fillOutcome(r, rs, &p); err != nil {
		return err
	}
	if err := u.fillBackups(r, rs, d, &p); err != nil {
		return err
	}
	if rs.PreviewBackupID != nil || rs.Lines != nil {
		if p.Secrets, err = u.SecretsFor(r, "device", d.ID, map[string]any{"page": "restore", "restore": rs.ID}); err != nil {
			return err
		}
	}
	if rs.Lines != nil {
		if p.Merge, err = u.mergeView(r, rs, d, p.Secrets); err != nil {
			return err
		}
	} else if rs.PreviewBackupID != nil {
		if p.Preview, err = u.preview(r, rs, d, p.Secrets); err != nil {
			return err
		}
	}
	if p.Transcript, p.TranscriptCut, err = u.Store.RestoreTranscript(ctx, rs.ID); err != nil {
		return err
	}
	for i, sg := range p.Transcript {
		// The kind names a CSS class: only the known ones.
		if sg.Kind != collect.SegmentSent && sg.Kind != collect.SegmentNote {
			p.Transcript[i].Kind = collect.SegmentReceived
		}
	}

	// The forms the state allows this user.
	mine := rs.RequestedBy != nil && *rs.RequestedBy == s.UserID
	approver := s.Can(auth.PermApprove)
	if rs.State == db.RestorePending && approver && rs.PreviewHash != nil {
		p.CanApprove, p.PreviewHash = true, *rs.PreviewHash
		set, err := restore.LoadSettings(ctx, u.Store)
		if err != nil {
			return err
		}
		p.FourEyesBlocked = set.FourEyes && mine
	}
	p.CanReject = approver && (rs.State == db.RestorePending || rs.State == db.RestoreApproved)
	p.CanCancel = slices.Contains(cancellable, rs.State) && (approver || (mine && s.Can(auth.PermRestore)))
	return u.Render(w, r, status, "restore.html", keyTitleRestore, p)
}

// cancellable are the states a restore may be cancelled in: before its
// job runs.
var cancellable = []string{db.RestorePreviewing, db.RestorePending, db.RestoreApproved, db.RestoreQueued}

// badges are the CSS classes of the state badges.
var badges = map[string]string{
	db.RestorePreviewing:     "device-badge-running",
	db.RestorePending:        "device-badge-changed",
	db.RestoreApproved:       "device-badge-running",
	db.RestoreQueued:         "device-badge-running",
	db.RestoreRunning:        "device-badge-running",
	db.RestoreSucceeded:      "device-badge-ok",
	db.RestoreRolledBack:     "device-badge-off",
	db.RestoreRollbackFailed: "device-badge-bad",
	db.RestoreFailed:         "device-badge-bad",
	db.RestoreInterrupted:    "device-badge-bad",
}

// fillOutcome reads what a run did and why it failed.
func (u *handlers) fillOutcome(r *http.Request, rs db.Restore, p *restorePage) error {
	if rs.Outcome != nil && *rs.Outcome != "" {
		var o outcome
		if err := json.Unmarshal([]byte(*rs.Outcome), &o); err != nil {
			return err
		}
		p.Outcome = &o
	}
	switch rs.State {
	case db.RestoreCancelled, db.RestoreRejected, db.RestoreExpired:
		// Their state says it all; the note, if any, is the decision's.
		return nil
	}
	if rs.Error == nil && rs.ErrorReason == nil {
		return nil
	}
	lang := core.LangOf(r)
	f := &failure{Error: deref(rs.Error)}
	reason := deref(rs.ErrorReason)
	if k, ok := reasonKeys[reason]; ok {
		f.Reason = u.Text(lang, k)
	} else {
		f.Reason = u.ReasonText(lang, reason)
	}
	// The interruption's own sentence is the reason's, in the page's
	// language.
	if reason == queue.ReasonInterrupted {
		f.Error = ""
	}
	p.Failure = f
	return nil
}

// fillBackups links the backups the restore took.
func (u *handlers) fillBackups(r *http.Request, rs db.Restore, d db.Device, p *restorePage) error {
	for _, b := range []struct {
		label string
		id    *string
	}{
		{keyBackupPreview, rs.PreviewBackupID},
		{keyBackupBefore, rs.PreBackupID},
		{keyBackupAfter, rs.PostBackupID},
		{keyBackupRollback, rs.RollbackBackupID},
	} {
		if b.id == nil {
			continue
		}
		bk, err := u.Store.GetBackup(r.Context(), *b.id)
		if errors.Is(err, db.ErrNotFound) {
			continue // deleted by retention since
		}
		if err != nil {
			return err
		}
		p.Backups = append(p.Backups, backupLink{Label: b.label, Version: u.versionRef(d, bk), Failed: !bk.Success})
	}
	return nil
}

// preview compares the preview's backup with the version, with the
// noise rules change detection uses, secrets masked as sec says.
func (u *handlers) preview(r *http.Request, rs db.Restore, d db.Device, sec core.Secrets) (*preview, error) {
	ctx := r.Context()
	p := &preview{}
	from, err := u.Store.GetBackup(ctx, *rs.PreviewBackupID)
	if errors.Is(err, db.ErrNotFound) {
		return &preview{Gone: true}, nil
	}
	if err != nil {
		return nil, err
	}
	p.From = u.versionRef(d, from)
	rules, err := u.Store.NoiseRules(ctx)
	if err != nil {
		return nil, err
	}
	res, err := backup.DiffMasked(ctx, u.Store, from.ID, rs.TargetBackupID, rules, sec.Keys)
	var bad *backup.NoiseRuleError
	if errors.As(err, &bad) {
		// A user rule that cannot be used: the built-in ones still mark
		// the noise, and the page says so.
		p.RulesIgnored = true
		res, err = backup.DiffMasked(ctx, u.Store, from.ID, rs.TargetBackupID, nil, sec.Keys)
	}
	switch {
	case errors.Is(err, db.ErrNotFound) || errors.Is(err, backup.ErrNoSnapshot):
		p.Gone = true
		return p, nil
	case err != nil:
		return nil, err
	}
	p.Same, p.NoiseOnly = len(res.Hunks) == 0, len(res.Hunks) > 0 && !res.Changed
	p.Added, p.Removed = res.Added-res.NoiseAdded, res.Removed-res.NoiseRemoved
	p.Noise = res.NoiseAdded + res.NoiseRemoved
	for _, h := range res.Hunks {
		p.Total += len(h.Lines)
	}
	p.Rows, p.Shown, p.HasNoise = diffRows(res.Hunks, maxDiffRows)
	p.Truncated = p.Shown < p.Total
	return p, nil
}

// CSS classes of the diff's lines, as the devices' diff has them.
const (
	classContext = "diff-ctx"
	classRemoved = "diff-del"
	classAdded   = "diff-add"
	classNoise   = " diff-noise"
)

// diffRows lays the hunks out one line a row, as diff -u shows them, up
// to limit rows; it returns how many diff lines it laid out and whether
// any is noise.
func diffRows(hunks []backup.Hunk, limit int) (rows []diffRow, shown int, noise bool) {
	for _, h := range hunks {
		if len(rows) >= limit {
			break
		}
		header := "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) + " +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@"
		if h.Section != "" {
			header += " " + h.Section
		}
		rows = append(rows, diffRow{Header: header})
		for _, l := range h.Lines {
			if len(rows) >= limit {
				break
			}
			row := diffRow{OldNo: l.OldNo, NewNo: l.NewNo, Text: l.Text, Class: classContext}
			switch l.Kind {
			case backup.LineRemoved:
				row.Class = classRemoved
			case backup.LineAdded:
				row.Class = classAdded
			}
			if l.Noise {
				row.Class += classNoise
				noise = true
			}
			rows = append(rows, row)
			shown++
		}
	}
	return rows, shown, noise
}

// apiRestore is GET /api/restores/{id}: the state and stage of a
// restore, in the user's language, for its page's script.
func (u *handlers) apiRestore(w http.ResponseWriter, r *http.Request) error {
	if !mayView(core.SessionOf(r)) {
		return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "permission "+auth.PermRestore+" or "+auth.PermApprove+" is required")
	}
	rs, _, err := u.restoreOf(r)
	if err != nil {
		return err
	}
	lang := core.LangOf(r)
	out := apiRestoreState{ID: rs.ID, State: rs.State, StateText: u.Text(lang, stateKey(rs.State)), Open: rs.Open(), UpdatedAt: rs.UpdatedAt}
	if rs.State == db.RestoreRunning {
		out.Stage = rs.Stage
		if k, ok := stageKeys[rs.Stage]; ok {
			out.StageText = u.Text(lang, k)
		}
	}
	return core.WriteJSON(w, http.StatusOK, out)
}

// apiRestoreState is what GET /api/restores/{id} answers.
type apiRestoreState struct {
	ID        int64  `json:"id"`
	State     string `json:"state"`
	StateText string `json:"state_text"`
	Stage     string `json:"stage"`
	StageText string `json:"stage_text"`
	Open      bool   `json:"open"`
	UpdatedAt string `json:"updated_at"`
}

// mergeView lays out what a merge sends: MergePlan of its version and
// lines, each line masked as the page masks secrets.
func (u *handlers) mergeView(r *http.Request, rs db.Restore, d db.Device, sec core.Secrets) (*mergeView, error) {
	m := &mergeView{Count: len(rs.Lines)}
	text, err := u.Store.SnapshotText(r.Context(), rs.TargetHash)
	switch {
	case errors.Is(err, db.ErrNotFound) || errors.Is(err, backup.ErrNoSnapshot):
		m.Gone = true
		return m, nil
	case err != nil:
		return nil, err
	}
	p, _ := driver.Lookup(d.Platform)
	for _, l := range restore.MergePlan(p, text, rs.Lines) {
		m.Rows = append(m.Rows, mergeRow{No: l.Number, Text: sec.Mask(d.ID, d.Platform, l.Text), Parent: l.Parent})
	}
	return m, nil
}
