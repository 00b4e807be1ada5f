package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"
	"unicode"

	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/restore/frrplan"
	"backupd/db"
	"backupd/db/queue"
)

// A change set sends a snippet of configuration (or a template rendered
// per device from its fields and variables) to many devices: a dry run
// shows, per device, the lines that would be sent; it is approved like a
// restore; then the dispatcher runs its devices a few at a time, each a
// push job on the device that backs it up before, sends the lines in
// configuration mode, stops at the first line the device refuses (and
// shows its answer), saves, and backs it up after with the trigger
// "push", so that the history, the git mirror and the notifications
// record the change as a push.

// Pusher is a method that can also send a snippet (merge lines, not a
// whole configuration).
type Pusher interface {
	Push(ctx context.Context, s Session, p driver.Platform, lines []string) error
}

// ErrPushNotSupported: the device's platform cannot take a push.
var ErrPushNotSupported = errors.New("this device's platform cannot take a push")

// ErrPushBlock: the lines hold a block (a banner, a certificate) that
// cannot be sent line by line.
var ErrPushBlock = errors.New("leave it out of the change set")

// ErrPushDisabled: the device is disabled, and nothing is sent to it.
var ErrPushDisabled = errors.New("the device is disabled; enable it to push to it")

// Why a device of a change set rendered nothing in its dry run
// (db.ChangeSetTarget.RenderReason): the pages say it in the reader's
// language from these, and show the service's own words (RenderError)
// beside them where they add something.
const (
	// RenderNoPush: the device's platform cannot take a push.
	RenderNoPush = "no_push"
	// RenderRemoteZone: the device is reached through a remote collector.
	RenderRemoteZone = "remote_zone"
	// RenderDisabled: the device is disabled.
	RenderDisabled = "disabled"
	// RenderTemplate: the template cannot be rendered for the device (a
	// variable it lacks), or the device could not be read.
	RenderTemplate = "template"
	// RenderNothing: the lines are empty once rendered.
	RenderNothing = "nothing_to_send"
	// RenderBlock: the lines hold a block (ErrPushBlock).
	RenderBlock = "block"
)

// RenderError is why the dry run rendered nothing for one device: Reason
// is one of the Render* codes, Err the sentence, which its text is.
type RenderError struct {
	Reason string
	Err    error
}

func (e *RenderError) Error() string { return e.Err.Error() }
func (e *RenderError) Unwrap() error { return e.Err }

// renderErr is a RenderError of reason, its sentence formatted as
// fmt.Errorf formats one.
func renderErr(reason, format string, args ...any) error {
	return &RenderError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// TemplateError refuses a new change set whose template does not parse:
// Parse is the parser's own words. It unwraps to the body's
// *db.ErrInvalidField, so that what reads a refused field (the CLI)
// reads it as one, in the same words.
type TemplateError struct {
	Parse error
	field *db.ErrInvalidField
}

func newTemplateError(parse error) *TemplateError {
	return &TemplateError{Parse: parse, field: &db.ErrInvalidField{Field: "body", Message: "the template does not parse: " + parse.Error()}}
}

func (e *TemplateError) Error() string { return e.field.Error() }
func (e *TemplateError) Unwrap() error { return e.field }

// PusherOf returns how a platform takes a push.
func PusherOf(p driver.Platform) (Pusher, bool) {
	m, ok := MethodOf(p)
	if !ok {
		return nil, false
	}
	pu, ok := m.(Pusher)
	return pu, ok
}

// Push sends the lines in FRR's configuration mode, "?" quoted, stops at
// the first the router refuses (leaving configuration mode), then saves.
func (frrVtysh) Push(ctx context.Context, s Session, p driver.Platform, lines []string) error {
	for _, cmd := range p.Restore.ConfigEnter {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	for _, line := range lines {
		out, err := s.Send(ctx, frrplan.Keystrokes(line), p.Restore.ApplyError)
		if err != nil {
			if isLost(ctx, err) {
				return err
			}
			for _, cmd := range p.Restore.ConfigExit {
				_, _ = s.Send(ctx, cmd, nil)
			}
			return refused(line, out, p.Restore.ApplyError)
		}
	}
	for _, cmd := range p.Restore.ConfigExit {
		if out, err := s.Send(ctx, cmd, p.Restore.ApplyError); err != nil {
			return lineErr(ctx, cmd, out, err, p)
		}
	}
	return frrVtysh{}.Keep(ctx, s, p)
}

// NewChangeSet is a change set as a person writes it.
type NewChangeSet struct {
	Name string
	// Body is the snippet, or with Template a Go text/template whose
	// data are the device's fields (.Name, .Host, .Platform) and
	// Variables (.Vars).
	Body              string
	Template          bool
	Variables         map[string]string
	DeviceIDs         []int64
	Concurrency       int
	StopAfterFailures int
}

// MaxConcurrency bounds how many devices of a change set run at once.
const MaxConcurrency = 50

// CreateChangeSet records a draft and runs its dry run.
func (s *Service) CreateChangeSet(ctx context.Context, a Actor, n NewChangeSet) (db.ChangeSet, error) {
	if n.Concurrency < 1 || n.Concurrency > MaxConcurrency {
		return db.ChangeSet{}, &db.ErrInvalidField{Field: "concurrency", Message: fmt.Sprintf("between 1 and %d", MaxConcurrency)}
	}
	if n.StopAfterFailures < 0 {
		return db.ChangeSet{}, &db.ErrInvalidField{Field: "stop_after_failures", Message: "0 (never) or more"}
	}
	for i, l := range strings.Split(n.Body, "\n") {
		if strings.ContainsFunc(strings.TrimRight(l, "\r"), func(r rune) bool { return unicode.IsControl(r) && r != '\t' }) {
			return db.ChangeSet{}, &db.ErrInvalidField{Field: "body", Message: fmt.Sprintf("line %d holds a control character", i+1)}
		}
	}
	if n.Template {
		if _, err := parseTemplate(n.Body); err != nil {
			return db.ChangeSet{}, newTemplateError(err)
		}
	}
	if n.Variables == nil {
		n.Variables = map[string]string{}
	}
	vars, _ := json.Marshal(n.Variables)
	kind := db.ChangeSetSnippet
	if n.Template {
		kind = db.ChangeSetTemplate
	}
	targets := make([]db.NewTarget, len(n.DeviceIDs))
	for i, id := range n.DeviceIDs {
		targets[i] = db.NewTarget{DeviceID: id}
	}
	c, err := s.Store.CreateChangeSet(ctx, db.NewChangeSet{Name: strings.TrimSpace(n.Name), Body: n.Body, Kind: kind, Variables: string(vars),
		Concurrency: n.Concurrency, StopAfterFailures: n.StopAfterFailures, CreatedBy: a.UserID, CreatedByName: a.Name, Targets: targets},
		a.audit("changeset.create", map[string]any{"devices": len(n.DeviceIDs)}))
	if err != nil {
		return db.ChangeSet{}, err
	}
	return s.DryRun(ctx, a, c.ID)
}

// DryRun renders the change set for each of its devices: the lines each
// would be sent, or why it cannot be (its platform cannot take a push, a
// template variable it lacks). The set is ready when every device
// rendered, and waits for an approval as long as a restore request does
// (Settings.PendingHours) before it expires.
func (s *Service) DryRun(ctx context.Context, a Actor, id int64) (db.ChangeSet, error) {
	set, err := LoadSettings(ctx, s.Store)
	if err != nil {
		return db.ChangeSet{}, err
	}
	c, err := s.Store.ChangeSet(ctx, id)
	if err != nil {
		return db.ChangeSet{}, err
	}
	targets, err := s.Store.ChangeSetTargets(ctx, id)
	if err != nil {
		return db.ChangeSet{}, err
	}
	var setVars map[string]string
	_ = json.Unmarshal([]byte(c.Variables), &setVars)
	renders := make([]db.TargetRender, len(targets))
	for i, t := range targets {
		renders[i] = db.TargetRender{TargetID: t.ID}
		text, err := s.render(ctx, c, t, setVars)
		if err != nil {
			// An error of its own (the device could not be read) is told
			// as the template's.
			renders[i].Error, renders[i].Reason = err.Error(), RenderTemplate
			var re *RenderError
			if errors.As(err, &re) {
				renders[i].Reason = re.Reason
			}
			continue
		}
		renders[i].Rendered = text
	}
	return s.Store.SetChangeSetRendered(ctx, id, renders, s.now().Add(set.pendingTTL()), a.audit("changeset.dry_run", nil))
}

// render is what one device of a change set would be sent.
func (s *Service) render(ctx context.Context, c db.ChangeSet, t db.ChangeSetTarget, setVars map[string]string) (string, error) {
	dev, err := s.Store.GetDevice(ctx, t.DeviceID)
	if err != nil {
		return "", err
	}
	p, ok := driver.Lookup(dev.Platform)
	if _, can := PusherOf(p); !ok || !can {
		return "", renderErr(RenderNoPush, "%s: platform %s cannot take a push", dev.Name, dev.Platform)
	}
	if dev.ZoneID > db.LocalZone {
		return "", renderErr(RenderRemoteZone, "%s: %w", dev.Name, ErrRemoteZone)
	}
	if !dev.Enabled {
		return "", renderErr(RenderDisabled, "%s: %w", dev.Name, ErrPushDisabled)
	}
	body := c.Body
	if c.Kind == db.ChangeSetTemplate {
		tmpl, err := parseTemplate(c.Body)
		if err != nil {
			return "", err
		}
		vars := map[string]string{}
		for k, v := range setVars {
			vars[k] = v
		}
		var own map[string]string
		_ = json.Unmarshal([]byte(t.Variables), &own)
		for k, v := range own {
			vars[k] = v
		}
		var b bytes.Buffer
		data := map[string]any{"Name": dev.Name, "Host": dev.Host, "Platform": dev.Platform, "Vars": vars}
		if err := tmpl.Execute(&b, data); err != nil {
			return "", renderErr(RenderTemplate, "%s: %s", dev.Name, strings.TrimPrefix(err.Error(), "template: change set: "))
		}
		body = b.String()
	}
	lines := pushLines(body)
	if len(lines) == 0 {
		return "", renderErr(RenderNothing, "%s: nothing to send", dev.Name)
	}
	text := strings.Join(lines, "\n") + "\n"
	if Merges(p) {
		// Sent line by line as a merge is: a banner or a certificate
		// would arrive broken.
		if b := Blocks(p, text); len(b) > 0 {
			return "", renderErr(RenderBlock, "%s: %s of the lines to send %s: %s; %w", dev.Name, b[0].Lines(), are(b[0]), b[0].Reason(), ErrPushBlock)
		}
	}
	return text, nil
}

func parseTemplate(body string) (*template.Template, error) {
	return template.New("change set").Option("missingkey=error").Parse(body)
}

// pushLines are the lines of a rendered snippet to send: blank lines and
// trailing spaces dropped, indentation kept (it says the sub-mode).
func pushLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimRight(l, " \t\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// ApproveChangeSet approves a ready change set (four eyes as for
// restores) and starts it.
func (s *Service) ApproveChangeSet(ctx context.Context, a Actor, id int64, note string) (db.ChangeSet, error) {
	set, err := LoadSettings(ctx, s.Store)
	if err != nil {
		return db.ChangeSet{}, err
	}
	c, err := s.Store.ChangeSet(ctx, id)
	if err != nil {
		return db.ChangeSet{}, err
	}
	if set.FourEyes && !otherPerson(a, c.CreatedBy) {
		return db.ChangeSet{}, ErrFourEyes
	}
	if _, err := s.Store.ApproveChangeSet(ctx, id, db.Decision{UserID: a.UserID, Name: a.Name, Note: strings.TrimSpace(note)},
		s.now().Add(set.approvedTTL()), a.audit("changeset.approve", nil)); err != nil {
		return db.ChangeSet{}, err
	}
	return s.Store.StartChangeSet(ctx, id, nil)
}

// CancelChangeSet stops a change set: devices not started are skipped.
func (s *Service) CancelChangeSet(ctx context.Context, a Actor, id int64, reason string) (db.ChangeSet, error) {
	return s.Store.CancelChangeSet(ctx, id, nil, strings.TrimSpace(reason), a.audit("changeset.cancel", nil))
}

// RejectChangeSet refuses a change set waiting to run (ready, or
// approved and not started), with a note: it is cancelled, its devices
// skipped, and the decision names who rejected it, which the event
// config.push_finished tells. Four eyes do not apply: its writer may
// say no to it as well. A set that runs or ended is refused
// (*db.ErrChangeSetState); one that runs is cancelled, not rejected.
func (s *Service) RejectChangeSet(ctx context.Context, a Actor, id int64, note string) (db.ChangeSet, error) {
	// The store moves only a ready or approved set, in the move itself:
	// an approval meanwhile wins.
	return s.Store.CancelChangeSet(ctx, id, &db.Decision{UserID: a.UserID, Name: a.Name, Note: strings.TrimSpace(note)}, "",
		a.audit("changeset.reject", nil))
}

// Rejected reports whether c was rejected (RejectChangeSet).
func Rejected(c db.ChangeSet) bool {
	return c.State == db.ChangeSetCancelled && c.Decision == db.DecisionRejected
}

// runChangeSets queues the next devices of each running change set, up
// to its concurrency, stops one with too many failures and ends those
// whose devices all ran.
func (d *Dispatcher) runChangeSets(ctx context.Context) error {
	sets, _, err := d.Store.ListChangeSets(ctx, db.ChangeSetFilter{States: []string{db.ChangeSetRunning}, Limit: 500})
	if err != nil {
		return err
	}
	for _, c := range sets {
		targets, err := d.Store.ChangeSetTargets(ctx, c.ID)
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, t := range targets {
			counts[t.State]++
		}
		if c.StopAfterFailures > 0 && counts[db.TargetFailed]+counts[db.TargetInterrupted] >= c.StopAfterFailures {
			if _, err := d.Store.FinishChangeSet(ctx, c.ID, db.ChangeSetStopped,
				fmt.Sprintf("stopped after %d failed devices", counts[db.TargetFailed]+counts[db.TargetInterrupted]), nil); err != nil {
				d.Log.Warn("stopping a change set failed", "change_set_id", c.ID, "err", err)
			}
			continue
		}
		active := counts[db.TargetQueued] + counts[db.TargetRunning]
		if counts[db.TargetPending] == 0 && active == 0 {
			if _, err := d.Store.FinishChangeSet(ctx, c.ID, db.ChangeSetDone, "", nil); err != nil {
				d.Log.Warn("ending a change set failed", "change_set_id", c.ID, "err", err)
			}
			continue
		}
		for _, t := range targets {
			if active >= c.Concurrency {
				break
			}
			if t.State != db.TargetPending {
				continue
			}
			_, enq, err := d.Store.QueueChangeSetTarget(ctx, t.ID, d.now())
			if err != nil {
				d.Log.Warn("queuing a change set's device failed", "change_set_id", c.ID, "target_id", t.ID, "err", err)
				continue
			}
			if enq.Busy == nil {
				active++
			}
		}
	}
	d.Engine.Poke()
	return nil
}

// PushRunner runs push jobs (backup.WorkRunner for queue.KindPush).
type PushRunner struct {
	*Runner
}

// RunWork runs the push job c: backup, the lines, save, backup.
func (pr PushRunner) RunWork(ctx context.Context, c queue.Claim) {
	t, err := pr.Store.StartChangeSetTarget(ctx, c.WorkID, c)
	if err != nil {
		pr.Log.Error("starting a push failed", "target_id", c.WorkID, "job_id", c.ID, "err", err)
		return
	}
	end, tr := pr.push(ctx, c, t)
	if ctx.Err() != nil && end.State != db.TargetSucceeded {
		return // interrupted by the engine: state unknown
	}
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if tr != nil {
		segs, _ := tr.Segments()
		out := make([]db.TranscriptSegment, 0, len(segs))
		for _, s := range segs {
			out = append(out, db.TranscriptSegment{Kind: s.Kind, Text: s.Text})
		}
		if _, err := pr.Store.AppendChangeSetTargetTranscript(fctx, t.ID, out); err != nil {
			pr.Log.Warn("recording a push's session failed", "target_id", t.ID, "err", err)
		}
	}
	audit := systemAudit("changeset.push", map[string]any{"change_set_id": t.ChangeSetID, "device_id": t.DeviceID,
		"state": end.State, "reason": end.Reason})
	if _, err := pr.Store.FinishChangeSetTarget(fctx, t.ID, end, &c, audit); err != nil {
		pr.Log.Error("recording a push's end failed", "target_id", t.ID, "err", err)
		return
	}
	pr.countPush(t.DeviceID, end.State)
	pr.Log.Info("push ended", "change_set_id", t.ChangeSetID, "device_id", t.DeviceID, "state", end.State, "reason", end.Reason)
}

func (pr PushRunner) push(ctx context.Context, c queue.Claim, t db.ChangeSetTarget) (db.TargetEnd, *collect.Transcript) {
	fail := func(msg, reason string) db.TargetEnd {
		return db.TargetEnd{State: db.TargetFailed, Error: msg, Reason: reason}
	}
	dev, err := pr.Store.GetDevice(ctx, t.DeviceID)
	if err != nil {
		return fail("reading the device failed: "+err.Error(), ReasonStore), nil
	}
	p, _ := driver.Lookup(dev.Platform)
	pusher, ok := PusherOf(p)
	if !ok || t.Rendered == nil {
		return fail(ErrPushNotSupported.Error(), ReasonNoMethod), nil
	}
	if !dev.Enabled {
		// Disabled since the dry run: nobody wants it written to now.
		return fail("the device was disabled after the dry run; nothing was sent", ReasonNoMethod), nil
	}
	masker := pr.Keys.Device(dev.ID, dev.Platform)
	mask := func(s string) string { return masker.Text(s) }
	pre := pr.Engine.Attempt(ctx, c)
	if err := pr.Store.Queue.RecordAttempt(ctx, c, pre); err != nil {
		return fail("recording the backup before the push failed: "+err.Error(), ReasonStore), nil
	}
	if !pre.Success {
		return fail("the backup before the push failed, nothing was sent: "+pre.Error, ReasonBackupFailed), nil
	}
	target, err := pr.Engine.Target(ctx, dev.ID)
	if err != nil {
		return fail("preparing the login failed: "+err.Error(), ReasonConnect), nil
	}
	tr := transcript(pr.Keys.Device(dev.ID, dev.Platform))
	target.Transcript = tr
	_ = pr.Store.SetChangeSetTargetStage(ctx, t.ID, StageApply)
	sh, err := pr.Open(ctx, target)
	if err != nil {
		return fail("logging in to write failed, nothing was sent: "+mask(err.Error()), ReasonConnect), tr
	}
	defer func() { _ = sh.Close() }()
	pushErr := pusher.Push(ctx, sh, p, pushLines(*t.Rendered))
	// The backup after, whatever happened: it shows what the device runs
	// now, and a push that stopped half way is recorded as the change it
	// made.
	_ = pr.Store.SetChangeSetTargetStage(ctx, t.ID, StageVerify)
	began := time.Now()
	post := pr.Engine.Attempt(ctx, c)
	if id, err := pr.Store.Queue.RecordExtraAttempt(ctx, c, queue.TriggerPush, began, post); err == nil {
		_ = pr.Store.SetChangeSetTargetPostBackup(ctx, t.ID, id)
	}
	if pushErr != nil {
		if r, ok := asRefused(pushErr); ok {
			return fail(fmt.Sprintf("the device refused %q: %s; the lines before it were sent", mask(r.Line), mask(r.Answer)), ReasonRefused), tr
		}
		if isLost(ctx, pushErr) {
			return fail("the session was lost while pushing; what the device took is in the backup after: "+mask(pushErr.Error()), ReasonLost), tr
		}
		return fail(mask(pushErr.Error()), ReasonRefused), tr
	}
	if !post.Success {
		return fail("the lines were sent and saved, but the backup after failed: "+post.Error, ReasonBackupFailed), tr
	}
	return db.TargetEnd{State: db.TargetSucceeded}, tr
}
