package changesets

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"backupd/app/auth"
	"backupd/app/collect"
	"backupd/app/restore"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web"
	"backupd/web/ui/core"
)

// One change set: what it sends to which devices, who wrote and approved
// it, the dry run per device, the forms its state allows the user, each
// device's state while it runs and how each ended.

// maxTargetsShown bounds the devices the page lists one by one (the
// counts include them all).
const maxTargetsShown = 1000

// setPage is the data of changeset.html.
type setPage struct {
	ID       int64
	Name     string
	State    string
	StateKey string
	// Badge is the state badge's CSS class.
	Badge string
	// Live: the page's script follows the set (it may still move on
	// without the user).
	Live bool
	// The body as written, and whether it is a template with its
	// variables.
	Template bool
	// BodyLines are the body's lines (the page wraps a long one with a
	// hanging indent, so that a wrapped line reads as one).
	BodyLines []string
	Variables []variable
	// Who wrote it and when; who approved (or rejected: Rejected), when,
	// with what note.
	Creator, CreatedAt, CreatedISO   string
	Decider, DecidedAt, DecisionNote string
	Rejected                         bool
	ExpiresAt, StartedAt, FinishedAt string
	// Error says why it stopped or was cancelled.
	Error             string
	Concurrency       int
	StopAfterFailures int
	Counts            []stateCount
	Devices           int
	Targets           []targetRow
	// TargetsCut is how many devices the list leaves out.
	TargetsCut int
	// RenderFailed counts the devices the dry run could not render for:
	// a set with any cannot be approved.
	RenderFailed int
	// The forms: approve (FourEyesBlocked: the user wrote it and someone
	// else must approve; the button shows, disabled, saying so), reject,
	// cancel, dry run again.
	CanApprove, FourEyesBlocked, CanReject, CanCancel, CanDryRun bool
	// Secrets says how the body, the variables and the devices' lines
	// show secrets (secrets.go).
	Secrets core.Secrets
	// Note is the decision's note as typed in a refused form.
	Note    string
	Notice  string
	Refusal *refusal
	// APIURL is what the page's script follows.
	APIURL string
}

// variable is one of a template's variables.
type variable struct{ Key, Value string }

// stateCount is how many devices are in a state.
type stateCount struct {
	State, Key, Badge string
	N                 int
}

// targetRow is one device of the set as the page lists it.
type targetRow struct {
	ID                     int64
	URL                    string
	DeviceName, DeviceURL  string
	State, StateKey, Badge string
	StageKey               string
	// Lines is what the dry run rendered; Render and RenderDetail say
	// why it could not.
	Lines                []string
	Render, RenderDetail string
	// Reason and Error say why the push failed.
	Reason, Error string
	Before, After string
	Ended         bool
}

// notices say what a form did; it comes back to the page with ?done=.
var notices = map[string]string{
	"created":   keyNoticeCreated,
	"dry_run":   keyNoticeDryRun,
	"approved":  keyNoticeApproved,
	"rejected":  keyNoticeRejected,
	"cancelled": keyNoticeCancelled,
}

// liveStates are those a set may leave without the user doing anything.
var liveStates = []string{db.ChangeSetReady, db.ChangeSetApproved, db.ChangeSetRunning}

// cancellable are the states a change set may be cancelled in.
var cancellable = []string{db.ChangeSetDraft, db.ChangeSetReady, db.ChangeSetApproved, db.ChangeSetRunning}

func (u *handlers) setPage(w http.ResponseWriter, r *http.Request) error {
	c, err := u.setOf(r)
	if err != nil {
		return err
	}
	return u.showSet(w, r, http.StatusOK, c, nil, "")
}

// showSet renders the page of c with status, and rf (a refused form,
// with its note as typed) when set.
func (u *handlers) showSet(w http.ResponseWriter, r *http.Request, status int, c db.ChangeSet, rf *refusal, note string) error {
	ctx := r.Context()
	var err error
	s := core.SessionOf(r)
	lang := core.LangOf(r)
	p := setPage{
		ID: c.ID, Name: c.Name, State: c.State, StateKey: setStateKey(c.State), Badge: setBadges[c.State],
		Live: slices.Contains(liveStates, c.State), Template: c.Kind == db.ChangeSetTemplate,
		Creator: c.CreatedByName, CreatedAt: u.StoredTimeText(&c.CreatedAt), CreatedISO: core.StoredISO(&c.CreatedAt),
		Decider: deref(c.DecidedByName), DecidedAt: u.StoredTimeText(c.DecidedAt), DecisionNote: c.DecisionNote, Rejected: restore.Rejected(c),
		StartedAt: u.StoredTimeText(c.StartedAt), FinishedAt: u.StoredTimeText(c.FinishedAt), Error: deref(c.Error),
		Concurrency: c.Concurrency, StopAfterFailures: c.StopAfterFailures, Devices: c.Targets,
		Note: note, Refusal: rf, APIURL: "/api" + core.ChangeSetPath(c.ID),
	}
	if c.State == db.ChangeSetReady || c.State == db.ChangeSetApproved {
		p.ExpiresAt = u.StoredTimeText(c.ExpiresAt)
	}
	if rf == nil {
		p.Notice = notices[r.URL.Query().Get("done")]
	}
	if p.Secrets, err = u.secretsFor(r, c, "change_set", c.ID, map[string]any{"page": "change_set", "change_set": c.ID}); err != nil {
		return err
	}
	targets, err := u.Store.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		return err
	}
	mask, err := u.masker(ctx, p.Secrets, targets)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for i, t := range targets {
		counts[t.State]++
		if t.RenderError != nil {
			p.RenderFailed++
		}
		// Every device's lines are masked, shown or not: the secrets
		// they hold mask the variables.
		row := u.targetRow(lang, c, t, mask)
		if i < maxTargetsShown {
			p.Targets = append(p.Targets, row)
		}
	}
	body, secretVars := mask.body(c)
	p.BodyLines = lines(body)
	if p.Template {
		var vars map[string]string
		_ = json.Unmarshal([]byte(c.Variables), &vars)
		for k, v := range vars {
			p.Variables = append(p.Variables, variable{Key: k, Value: mask.variable(k, v, secretVars)})
		}
		sort.Slice(p.Variables, func(i, j int) bool { return p.Variables[i].Key < p.Variables[j].Key })
	}
	p.TargetsCut = len(targets) - len(p.Targets)
	p.Counts = stateCounts(counts)

	// The forms the state allows this user.
	approver := s.Can(auth.PermApprove)
	if c.State == db.ChangeSetReady && approver {
		p.CanApprove = true
		set, err := restore.LoadSettings(ctx, u.Store)
		if err != nil {
			return err
		}
		p.FourEyesBlocked = set.FourEyes && mine(r, c)
	}
	p.CanReject = approver && (c.State == db.ChangeSetReady || c.State == db.ChangeSetApproved)
	p.CanCancel = slices.Contains(cancellable, c.State) && (approver || (mine(r, c) && s.Can(auth.PermPush)))
	p.CanDryRun = (c.State == db.ChangeSetDraft || c.State == db.ChangeSetReady) && s.Can(auth.PermPush)
	return u.Render(w, r, status, "changeset.html", keyTitleSet, p)
}

// stateCounts lists the counts in the order of the target states, those
// with none left out.
func stateCounts(counts map[string]int) []stateCount {
	var out []stateCount
	for _, st := range db.TargetStates {
		if n := counts[st]; n > 0 {
			out = append(out, stateCount{State: st, Key: targetStateKey(st), Badge: targetBadges[st], N: n})
		}
	}
	return out
}

// targetRow is t as the page lists it, its lines masked by mask.
func (u *handlers) targetRow(lang string, c db.ChangeSet, t db.ChangeSetTarget, mask *setMasker) targetRow {
	row := targetRow{ID: t.ID, URL: targetPath(c.ID, t.ID), DeviceName: t.DeviceName, DeviceURL: core.DevicePath(t.DeviceID),
		State: t.State, StateKey: targetStateKey(t.State), Badge: targetBadges[t.State],
		Ended: !slices.Contains([]string{db.TargetPending, db.TargetQueued, db.TargetRunning}, t.State)}
	if t.State == db.TargetRunning {
		row.StageKey = stageKeys[t.Stage]
	}
	if t.Rendered != nil {
		row.Lines = lines(mask.lines(t))
	} else {
		row.Render, row.RenderDetail = u.renderText(lang, t)
	}
	if t.Error != nil || t.ErrorReason != nil {
		row.Reason, row.Error = u.failureText(lang, t)
	}
	if t.PreBackupID != nil {
		row.Before = core.VersionPath(t.DeviceID, *t.PreBackupID)
	}
	if t.PostBackupID != nil {
		row.After = core.VersionPath(t.DeviceID, *t.PostBackupID)
	}
	return row
}

// lines splits text into its lines, the newline ending the last one
// not making another.
func lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// renderText says, in lang, why the dry run rendered nothing for t
// (its reason's code), and its own words (English, from app/restore)
// when they add something.
func (u *handlers) renderText(lang string, t db.ChangeSetTarget) (string, string) {
	msg := deref(t.RenderError)
	detail := strings.TrimPrefix(msg, t.DeviceName+": ")
	if msg == "" {
		return u.Text(lang, keyRenderPending), ""
	}
	switch deref(t.RenderReason) {
	case restore.RenderNoPush:
		return u.Text(lang, keyRenderNoPush), detail
	case restore.RenderBlock:
		return u.Text(lang, keyRenderBlock), detail
	case restore.RenderDisabled:
		return u.Text(lang, keyRenderDisabled), ""
	case restore.RenderRemoteZone:
		return u.Text(lang, keyRenderRemote), ""
	case restore.RenderNothing:
		return u.Text(lang, keyRenderNothing), ""
	}
	return u.Text(lang, keyRenderTemplate), detail
}

// failureText says why t's push failed: its reason in lang, then the
// run's own words (masked as stored).
func (u *handlers) failureText(lang string, t db.ChangeSetTarget) (string, string) {
	reason := deref(t.ErrorReason)
	text := deref(t.Error)
	if reason == "" && t.State == db.TargetInterrupted {
		reason = queue.ReasonInterrupted
	}
	k, ok := reasonKeys[reason]
	if !ok {
		return u.ReasonText(lang, reason), text
	}
	return u.Text(lang, k), text
}

// targetPath is the page of one device of a change set.
func targetPath(setID, targetID int64) string {
	return core.ChangeSetPath(setID) + "/devices/" + strconv.FormatInt(targetID, 10)
}

// devicePage is the data of changeset_device.html.
type devicePage struct {
	SetID   int64
	SetName string
	SetURL  string
	Row     targetRow
	// Secrets says how the lines show secrets; the transcript is masked
	// when stored, whatever it says.
	Secrets core.Secrets
	// Transcript is the session's (masked when stored).
	Transcript    []db.TranscriptSegment
	TranscriptCut bool
	StartedAt     string
	FinishedAt    string
}

// devicePage is one device of a change set: the lines, how it ended,
// the backups and the whole session.
func (u *handlers) devicePage(w http.ResponseWriter, r *http.Request) error {
	c, err := u.setOf(r)
	if err != nil {
		return err
	}
	tid, ok := core.PathInt(r, "target")
	if !ok {
		return db.ErrNotFound
	}
	ctx := r.Context()
	t, err := u.Store.ChangeSetTarget(ctx, tid)
	if err != nil {
		return err
	}
	if t.ChangeSetID != c.ID {
		return db.ErrNotFound
	}
	p := devicePage{SetID: c.ID, SetName: c.Name, SetURL: core.ChangeSetPath(c.ID),
		StartedAt: u.StoredTimeText(t.StartedAt), FinishedAt: u.StoredTimeText(t.FinishedAt)}
	if p.Secrets, err = u.secretsFor(r, c, "device", t.DeviceID,
		map[string]any{"page": "change_set_device", "change_set": c.ID, "target": t.ID}); err != nil {
		return err
	}
	mask, err := u.masker(ctx, p.Secrets, []db.ChangeSetTarget{t})
	if err != nil {
		return err
	}
	p.Row = u.targetRow(core.LangOf(r), c, t, mask)
	if p.Transcript, p.TranscriptCut, err = u.Store.ChangeSetTargetTranscript(ctx, t.ID); err != nil {
		return err
	}
	for i, sg := range p.Transcript {
		// The kind names a CSS class: only the known ones.
		if sg.Kind != collect.SegmentSent && sg.Kind != collect.SegmentNote {
			p.Transcript[i].Kind = collect.SegmentReceived
		}
	}
	return u.Render(w, r, http.StatusOK, "changeset_device.html", keyTitleDevice, p)
}

// apiSet is GET /api/change-sets/{id}: the state of a change set and of
// each of its devices, in the user's language, for its page's script;
// states and counts only, never configuration text.
func (u *handlers) apiSet(w http.ResponseWriter, r *http.Request) error {
	if !mayView(core.SessionOf(r)) {
		return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "permission "+auth.PermPush+" or "+auth.PermApprove+" is required")
	}
	c, err := u.setOf(r)
	if err != nil {
		return err
	}
	targets, err := u.Store.ChangeSetTargets(r.Context(), c.ID)
	if err != nil {
		return err
	}
	lang := core.LangOf(r)
	out := apiSetState{ID: c.ID, State: c.State, StateText: u.Text(lang, setStateKey(c.State)),
		Live: slices.Contains(liveStates, c.State), UpdatedAt: c.UpdatedAt, Counts: map[string]int{}, Targets: []apiTargetState{}}
	for i, t := range targets {
		out.Counts[t.State]++
		if i >= maxTargetsShown {
			continue
		}
		ts := apiTargetState{ID: t.ID, State: t.State, StateText: u.Text(lang, targetStateKey(t.State))}
		if t.State == db.TargetRunning {
			ts.Stage = t.Stage
			if k, ok := stageKeys[t.Stage]; ok {
				ts.StageText = u.Text(lang, k)
			}
		}
		out.Targets = append(out.Targets, ts)
	}
	return core.WriteJSON(w, http.StatusOK, out)
}

// apiSetState is what GET /api/change-sets/{id} answers.
type apiSetState struct {
	ID        int64  `json:"id"`
	State     string `json:"state"`
	StateText string `json:"state_text"`
	// Live: the set may still move on; the script stops when it is not.
	Live      bool           `json:"live"`
	UpdatedAt string         `json:"updated_at"`
	Counts    map[string]int `json:"counts"`
	// Targets are the devices the page lists, in its order.
	Targets []apiTargetState `json:"targets"`
}

// apiTargetState is one device's state in apiSetState.
type apiTargetState struct {
	ID        int64  `json:"id"`
	State     string `json:"state"`
	StateText string `json:"state_text"`
	Stage     string `json:"stage"`
	StageText string `json:"stage_text"`
}
