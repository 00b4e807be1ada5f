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
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// Refusals of a request or a decision, each a clear sentence for the
// person who asked.
var (
	ErrNotSupported  = errors.New("this device's platform cannot restore a configuration")
	ErrRemoteZone    = errors.New("the device is reached through a remote collector; restores run from the server only")
	ErrDisabled      = errors.New("the device is disabled; enable it to restore")
	ErrMaskedVersion = errors.New("the version holds masked secrets (<secret:…>), not the device's own values; it cannot be put back")
	ErrFourEyes      = errors.New("four eyes are required: someone other than the requester must approve")
	ErrBusy          = errors.New("the device is being changed by a restore or a push; try again once it ends")
)

// Actor is who acts, and how their action is audited.
type Actor struct {
	UserID *int64
	Name   string
	// Audit returns the entry of action (nil: not audited), filled with
	// the interface, session and address of the request.
	Audit func(action string, details map[string]any) *db.AuditEntry
}

func (a Actor) audit(action string, details map[string]any) *db.AuditEntry {
	if a.Audit == nil {
		return nil
	}
	return a.Audit(action, details)
}

// Service takes restore requests and decisions.
type Service struct {
	Store  *db.Store
	Engine *backup.Engine
	Keys   *redact.Keyring
	Log    *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Request asks for a device to be put back on one of its versions: it
// checks that the device can be restored and that the version is one of
// its good backups, records the request and takes a fresh backup for
// the preview (the Dispatcher attaches it). lines are the line numbers
// of the version a merge types (Merges): required for a platform that
// merges, refused for one that replaces the whole configuration.
func (s *Service) Request(ctx context.Context, a Actor, deviceID int64, versionID, reason string, lines []int) (db.Restore, error) {
	dev, err := s.Store.GetDevice(ctx, deviceID)
	if err != nil {
		return db.Restore{}, err
	}
	p, ok := driver.Lookup(dev.Platform)
	if !ok || !p.CanRestore() {
		return db.Restore{}, ErrNotSupported
	}
	if _, ok := MethodOf(p); !ok {
		return db.Restore{}, ErrNotSupported
	}
	if dev.ZoneID > db.LocalZone {
		return db.Restore{}, ErrRemoteZone
	}
	if !dev.Enabled {
		return db.Restore{}, ErrDisabled
	}
	// A device has one open restore: said before anything is queued.
	if open, err := s.Store.OpenRestore(ctx, deviceID); err == nil {
		return db.Restore{}, &db.ErrOpenRestore{ID: open.ID, State: open.State}
	} else if !errors.Is(err, db.ErrNotFound) {
		return db.Restore{}, err
	}
	b, err := s.Store.GetBackup(ctx, versionID)
	if errors.Is(err, db.ErrNotFound) {
		return db.Restore{}, &db.ErrInvalidField{Field: "version", Message: "no such version"}
	}
	if err != nil {
		return db.Restore{}, err
	}
	if b.DeviceID != deviceID {
		return db.Restore{}, &db.ErrInvalidField{Field: "version", Message: "a version of another device"}
	}
	if !b.Success || b.SnapshotHash == nil {
		return db.Restore{}, &db.ErrInvalidField{Field: "version", Message: "a failed backup holds no configuration"}
	}
	text, err := s.Store.SnapshotText(ctx, *b.SnapshotHash)
	if err != nil {
		return db.Restore{}, err
	}
	merge := Merges(p)
	switch {
	case merge && len(lines) == 0:
		return db.Restore{}, ErrNoSelection
	case !merge && len(lines) > 0:
		return db.Restore{}, ErrSelectionNotMerge
	case merge:
		if lines, err = Selection(p, text, lines); err != nil {
			return db.Restore{}, err
		}
		// Only what is typed must hold the device's own values.
		text = PlanText(MergePlan(p, text, lines))
	default:
		lines = nil
	}
	if strings.Contains(text, redact.Marker) {
		return db.Restore{}, ErrMaskedVersion
	}
	// The fresh backup the preview compares with: its job is kept with
	// the request, and the Dispatcher attaches its backup once it ends.
	enq, err := s.Engine.EnqueueFound(ctx, []int64{deviceID}, queue.TriggerRestore)
	if err != nil {
		return db.Restore{}, err
	}
	if len(enq) != 1 || enq[0].JobID == 0 || enq[0].Kind != queue.KindBackup {
		return db.Restore{}, ErrBusy
	}
	opts, _ := json.Marshal(options{PreviewJob: enq[0].JobID})
	return s.Store.CreateRestore(ctx, db.NewRestore{DeviceID: deviceID, TargetBackupID: versionID, Method: p.Restore.Method,
		Options: string(opts), Lines: lines, Reason: strings.TrimSpace(reason), RequestedBy: a.UserID, RequestedByName: a.Name},
		a.audit("restore.request", requestDetails(deviceID, versionID, p.Restore.Method, lines)))
}

// requestDetails are the audit details of a request: a merge names how
// many lines it types.
func requestDetails(deviceID int64, versionID, method string, lines []int) map[string]any {
	d := map[string]any{"device_id": deviceID, "version": versionID, "method": method}
	if lines != nil {
		d["lines"] = len(lines)
	}
	return d
}

// options are a restore's settings, kept with it as JSON.
type options struct {
	// PreviewJob is the backup job whose backup the preview shows.
	PreviewJob int64 `json:"preview_job"`
}

// Approve approves the preview the approver saw (previewHash) and queues
// the restore.
func (s *Service) Approve(ctx context.Context, a Actor, id int64, previewHash, note string) (db.Restore, error) {
	set, err := LoadSettings(ctx, s.Store)
	if err != nil {
		return db.Restore{}, err
	}
	r, err := s.Store.Restore(ctx, id)
	if err != nil {
		return db.Restore{}, err
	}
	if set.FourEyes && !otherPerson(a, r.RequestedBy) {
		return db.Restore{}, ErrFourEyes
	}
	r, err = s.Store.ApproveRestore(ctx, id, db.Decision{UserID: a.UserID, Name: a.Name, Note: strings.TrimSpace(note)},
		previewHash, s.now().Add(set.approvedTTL()), a.audit("restore.approve", map[string]any{"device_id": r.DeviceID}))
	if err != nil {
		return db.Restore{}, err
	}
	return s.queue(ctx, r), nil
}

// otherPerson reports whether a may approve what requester asked for
// with four eyes on: a signed-in person other than the requester. A
// request from the command line (no user) may be approved by any
// signed-in person; the command line itself never approves then, having
// no person to tell apart.
func otherPerson(a Actor, requester *int64) bool {
	return a.UserID != nil && (requester == nil || *a.UserID != *requester)
}

// queue puts an approved restore in the queue, or leaves it approved
// while its device is busy (the Dispatcher tries again).
func (s *Service) queue(ctx context.Context, r db.Restore) db.Restore {
	q, enq, err := s.Store.QueueRestore(ctx, r.ID, s.now(), nil)
	switch {
	case err != nil:
		s.Log.Warn("queuing an approved restore failed; the dispatcher tries again", "restore_id", r.ID, "err", err)
		return r
	case enq.Busy != nil:
		return r
	}
	s.Engine.Poke()
	return q
}

// Reject refuses a pending or approved restore.
func (s *Service) Reject(ctx context.Context, a Actor, id int64, note string) (db.Restore, error) {
	r, err := s.Store.Restore(ctx, id)
	if err != nil {
		return db.Restore{}, err
	}
	return s.Store.RejectRestore(ctx, id, db.Decision{UserID: a.UserID, Name: a.Name, Note: strings.TrimSpace(note)},
		a.audit("restore.reject", map[string]any{"device_id": r.DeviceID}))
}

// Cancel withdraws a restore that has not started.
func (s *Service) Cancel(ctx context.Context, a Actor, id int64) (db.Restore, error) {
	r, err := s.Store.Restore(ctx, id)
	if err != nil {
		return db.Restore{}, err
	}
	return s.Store.CancelRestore(ctx, id, a.audit("restore.cancel", map[string]any{"device_id": r.DeviceID}))
}

// Dispatcher moves restores along on the cluster's leader: it attaches
// previews, queues approved restores whose device was busy and ends the
// requests whose time ran out.
type Dispatcher struct {
	*Service
	// PreviewWait bounds how long a preview's backup may take to appear
	// (default 15 minutes).
	PreviewWait time.Duration
}

// Tick does one round.
func (d *Dispatcher) Tick(ctx context.Context) error {
	set, err := LoadSettings(ctx, d.Store)
	if err != nil {
		return err
	}
	previewing, _, err := d.Store.ListRestores(ctx, db.RestoreFilter{States: []string{db.RestorePreviewing}, Limit: 500})
	if err != nil {
		return err
	}
	for _, r := range previewing {
		d.preview(ctx, r, set)
	}
	approved, _, err := d.Store.ListRestores(ctx, db.RestoreFilter{States: []string{db.RestoreApproved}, Limit: 500})
	if err != nil {
		return err
	}
	for _, r := range approved {
		d.queue(ctx, r)
	}
	if _, err = d.Store.ExpireRestores(ctx, d.now(), nil); err != nil {
		return err
	}
	if err := d.runChangeSets(ctx); err != nil {
		return err
	}
	_, err = d.Store.ExpireChangeSets(ctx, d.now(), nil)
	return err
}

// preview attaches the backup of the request's preview job once it
// ended, or ends a request whose backup failed or never came.
func (d *Dispatcher) preview(ctx context.Context, r db.Restore, set Settings) {
	var o options
	_ = json.Unmarshal([]byte(r.Options), &o)
	fail := func(msg string) {
		if _, err := d.Store.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreFailed, Error: msg, Reason: ReasonBackupFailed}, nil, nil); err != nil {
			d.Log.Warn("ending a restore whose preview failed", "restore_id", r.ID, "err", err)
		}
	}
	jobs, err := d.Store.Queue.GetJobs(ctx, []int64{o.PreviewJob})
	if err != nil {
		return
	}
	if len(jobs) != 1 {
		fail("the backup for the preview is gone; request the restore again")
		return
	}
	j := jobs[0]
	wait := d.PreviewWait
	if wait <= 0 {
		wait = 15 * time.Minute
	}
	requested, _ := time.Parse(db.TimeFormat, r.RequestedAt)
	switch j.State {
	case queue.JobSucceeded:
		b, err := d.Store.GetBackup(ctx, deref(j.BackupID))
		if err != nil || !b.Success || b.SnapshotHash == nil {
			fail("the backup for the preview holds no configuration")
			return
		}
		if _, err := d.Store.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: b.ID, Hash: *b.SnapshotHash,
			ExpiresAt: d.now().Add(set.pendingTTL())}, nil); err != nil {
			d.Log.Warn("attaching a restore's preview failed", "restore_id", r.ID, "err", err)
		}
	case queue.JobFailed, queue.JobCancelled:
		msg := "the backup for the preview failed"
		if j.Error != nil {
			msg += ": " + *j.Error
		}
		fail(msg)
	default:
		if !requested.IsZero() && d.now().Sub(requested) > wait {
			fail(fmt.Sprintf("no backup for the preview within %s", wait))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// NewRunner is the runner of serve: it logs in with collect.OpenShell.
// Its Engine is set once the engine that runs it exists.
func NewRunner(store *db.Store, sealer *secret.Sealer, log *slog.Logger) *Runner {
	return &Runner{Store: store, Keys: redact.NewKeyring(sealer), Log: log,
		Open: OpenShell}
}

// OpenShell logs in to the device for writing (collect.OpenShell), in a
// session that can log in again once the device is back from a reboot
// (a RouterOS restore resets the router).
func OpenShell(ctx context.Context, t collect.Target) (Shell, error) {
	open := func(ctx context.Context) (Shell, error) {
		sh, err := collect.OpenShell(ctx, t)
		if err != nil {
			return nil, err
		}
		return sh, nil
	}
	sh, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return Reconnecting(sh, open), nil
}

// NewDispatcher is the dispatcher of serve's leader.
func NewDispatcher(store *db.Store, sealer *secret.Sealer, engine *backup.Engine, log *slog.Logger) *Dispatcher {
	return &Dispatcher{Service: &Service{Store: store, Engine: engine, Keys: redact.NewKeyring(sealer), Log: log}}
}

// DispatchEvery is how often the leader moves restores along.
const DispatchEvery = 2 * time.Second

// Run ticks until ctx ends; a failing tick is logged and tried again.
func (d *Dispatcher) Run(ctx context.Context) {
	t := time.NewTicker(DispatchEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := d.Tick(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			d.Log.Warn("moving restores along failed; trying again", "err", err)
			failing = true
		case err == nil:
			failing = false
		}
	}
}
