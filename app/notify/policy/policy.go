// Package policy is backupd's event policy: which events a backup's end,
// a reachability check, the stale check, a push of the git mirror, a
// restore's move, a change set's move or an inventory source's sync causes, with the hysteresis that keeps a flapping device from flooding
// a channel. Decide is a pure function of what happened and the
// subject's previous event state; the store (db.Store.SetEventPolicy)
// asks it inside the transaction that records what happened and writes
// the events it returns, so that the outbox stays transactional.
//
// It is a package of its own, importing only db, so that the stores of
// tests (internal/dbtest) can be given it without an import cycle
// through the rest of app/notify.
package policy

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"backupd/db"
	"backupd/db/outbox"
)

// The stage and reason of a reachability check that found the device
// not answering.
const (
	checkStage  = "connect"
	checkReason = "the device did not answer on its port"
)

// pushStage is the stage of the git mirror's push events.
const pushStage = "push"

// syncStage is the stage of the inventory sync events.
const syncStage = "sync"

// InventorySourcesPath is the inventory sources' page in the web
// interface, where the inventory sync events link.
const InventorySourcesPath = "/settings/inventory-sources"

// Decide is the event policy (a db.EventPolicy). The rules:
//
//   - A successful attempt: device.first_backup for the first version,
//     else config.changed when the configuration changed (naming the
//     version before); backup.recovered when failures preceded it (to the
//     rules whose threshold the streak reached). The failure streak
//     ends.
//   - A failed attempt (not cancelled, no retry ahead): the streak grows,
//     and backup.failed goes to the rules whose threshold it just
//     reached, once per streak.
//   - Whenever an attempt or a check learnt whether the device answers:
//     device.unreachable to the rules whose threshold the unanswered ones
//     in a row just reached; device.reachable on the first answer after a
//     streak (to the rules whose threshold it reached).
//   - A host key that changed to one not recorded yet: hostkey.changed.
//   - A device stale for longer than the threshold: backup.stale, once
//     per stale period.
//   - The git mirror's pushes: git.push_failed and git.push_recovered,
//     with the same hysteresis as backup.failed and backup.recovered.
//   - A restore that moved: to pending (its preview taken, it waits
//     for approval) config.restore_requested, naming the preview and the
//     version so that the message may show what the restore would
//     change; to approved, succeeded, rejected or expired the event of
//     that name; to any other end (failed, rolled_back, rollback_failed,
//     interrupted) config.restore_failed, its state saying which. A
//     cancel (by the requester, or of its queued job) and the steps in
//     between (previewing, queued, running) are not told: the person
//     who cancels knows, and nothing happened to the device.
//   - A change set that moved: from a draft to ready (rendered for
//     every device, it waits for approval) config.push_requested; to
//     any end (done, stopped, cancelled, expired) config.push_finished,
//     its state saying which and its counts how the devices fared. A
//     ready set rendered again is not asked again, and the steps in
//     between (approved, running) are not told: the approver knows,
//     and the end follows. Both are system events (no device), one per
//     change set: see outbox.EventPushRequested.
//   - An inventory source's syncs: inventory.sync_failed when one failed
//     (a fetch that failed or was partial changes nothing) and
//     inventory.sync_recovered when one applied after failed ones, with
//     the same hysteresis as git.push_failed and git.push_recovered: a
//     source failing every hour tells a rule once per streak, when the
//     failures in a row reach its threshold. System events, naming the
//     source and linking to the inventory sources' settings.
func Decide(in db.EventInput) (db.EventDecision, error) {
	set := 0
	for _, p := range []bool{in.Attempt != nil, in.Check != nil, in.Stale != nil, in.GitPush != nil, in.Restore != nil, in.ChangeSet != nil,
		in.InventorySync != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return db.EventDecision{}, errors.New("event policy: the input must be one attempt, check, stale check, push, restore, change set move or inventory sync")
	}
	d := decision{in: in, next: in.Prev}
	switch {
	case in.Attempt != nil:
		d.attempt(*in.Attempt)
	case in.Check != nil:
		d.reachability(in.Check.Reachable, checkStage, checkReason)
	case in.Stale != nil:
		d.stale(*in.Stale)
	case in.GitPush != nil:
		d.gitPush(*in.GitPush)
	case in.Restore != nil:
		d.restore(*in.Restore)
	case in.ChangeSet != nil:
		d.changeSet(*in.ChangeSet)
	case in.InventorySync != nil:
		d.inventorySync(*in.InventorySync)
	}
	return db.EventDecision{Events: d.events, Next: d.next}, nil
}

var _ db.EventPolicy = Decide

// decision collects the events of one input, in order, and the state
// they leave.
type decision struct {
	in     db.EventInput
	events []db.DecidedEvent
	next   db.EventState
}

// payload is what every event of the input's device names.
func (d *decision) payload(kind outbox.EventKind) outbox.EventPayload {
	dev := d.in.Device
	return outbox.EventPayload{Kind: kind, At: d.in.At.UTC(), Trigger: d.in.Trigger, DeviceID: dev.ID,
		DeviceName: dev.Name, DeviceHost: dev.Host, DevicePlatform: dev.Platform, GroupID: dev.GroupID}
}

func (d *decision) add(p outbox.EventPayload, test db.ThresholdTest, count int) *db.DecidedEvent {
	d.events = append(d.events, db.DecidedEvent{Payload: p, Threshold: test, Count: count})
	return &d.events[len(d.events)-1]
}

func (d *decision) attempt(a db.AttemptEnd) {
	o := a.Outcome
	ofAttempt := func(kind outbox.EventKind) outbox.EventPayload {
		p := d.payload(kind)
		p.BackupID = a.BackupID
		return p
	}
	failed := !o.Success && !o.Cancelled && o.RetryAt == nil
	switch {
	case o.Success:
		switch {
		case o.First:
			d.add(ofAttempt(outbox.EventFirstBackup), db.AnyThreshold, 0)
		case o.Changed:
			d.add(ofAttempt(outbox.EventConfigChanged), db.AnyThreshold, 0).WithPreviousGood = true
		}
		if n := d.in.Prev.ConsecutiveFailures; n > 0 {
			p := ofAttempt(outbox.EventBackupRecovered)
			p.Failure = &outbox.EventFailure{Consecutive: n}
			d.add(p, db.ThresholdWasReached, n)
		}
		d.next.ConsecutiveFailures = 0
	case failed:
		n := d.in.Prev.ConsecutiveFailures + 1
		p := ofAttempt(outbox.EventBackupFailed)
		p.Failure = &outbox.EventFailure{Stage: o.Reason, Reason: o.Error, Consecutive: n}
		d.add(p, db.ThresholdReached, n)
		d.next.ConsecutiveFailures = n
	}
	if o.Reachable != nil {
		d.reachability(*o.Reachable, o.Reason, o.Error)
	}
	if o.PendingHostKey != nil && !bytes.Equal(o.PendingHostKey, d.in.Device.PendingHostKey) {
		d.add(ofAttempt(outbox.EventHostKeyChanged), db.AnyThreshold, 0)
	}
}

// reachability follows whether the device answered; stage and reason
// say why it did not.
func (d *decision) reachability(reachable bool, stage, reason string) {
	if reachable {
		if n := d.in.Prev.Unreachable; n > 0 {
			p := d.payload(outbox.EventDeviceReachable)
			p.Failure = &outbox.EventFailure{Consecutive: n}
			d.add(p, db.ThresholdWasReached, n)
		}
		d.next.Unreachable = 0
		return
	}
	n := d.in.Prev.Unreachable + 1
	p := d.payload(outbox.EventDeviceUnreachable)
	p.Failure = &outbox.EventFailure{Stage: stage, Reason: reason, Consecutive: n}
	d.add(p, db.ThresholdReached, n)
	d.next.Unreachable = n
}

func (d *decision) stale(c db.StaleCheck) {
	if c.Period == d.in.Prev.StaleNotifiedFor {
		return // told about this period already
	}
	since := c.CreatedAt
	if c.LastGoodAt != nil {
		since = *c.LastGoodAt
	}
	if !since.Before(d.in.At.Add(-c.Threshold)) {
		return
	}
	p := d.payload(outbox.EventBackupStale)
	p.Stale = &outbox.EventStale{LastGoodAt: c.LastGoodAt, ThresholdSeconds: int64(c.Threshold / time.Second)}
	d.add(p, db.AnyThreshold, 0)
	d.next.StaleNotifiedFor = c.Period
}

func (d *decision) gitPush(g db.GitPushEnd) {
	p := outbox.EventPayload{At: d.in.At.UTC(), Trigger: d.in.Trigger, Git: &outbox.EventGit{Remote: g.Remote, Attempts: g.Attempts}}
	if g.OK {
		if n := d.in.Prev.ConsecutiveFailures; n > 0 {
			p.Kind, p.Failure = outbox.EventGitPushRecovered, &outbox.EventFailure{Stage: pushStage, Consecutive: n}
			d.add(p, db.ThresholdWasReached, n)
		}
		d.next.ConsecutiveFailures = 0
		return
	}
	n := d.in.Prev.ConsecutiveFailures + 1
	p.Kind, p.Failure = outbox.EventGitPushFailed, &outbox.EventFailure{Stage: pushStage, Reason: g.Error, Consecutive: n}
	d.add(p, db.ThresholdReached, n)
	d.next.ConsecutiveFailures = n
}

// restoreKinds are the events of the states a restore may move to; the
// states missing are not told.
var restoreKinds = map[string]outbox.EventKind{
	db.RestorePending:        outbox.EventRestoreRequested,
	db.RestoreApproved:       outbox.EventRestoreApproved,
	db.RestoreSucceeded:      outbox.EventRestoreSucceeded,
	db.RestoreFailed:         outbox.EventRestoreFailed,
	db.RestoreRolledBack:     outbox.EventRestoreFailed,
	db.RestoreRollbackFailed: outbox.EventRestoreFailed,
	db.RestoreInterrupted:    outbox.EventRestoreFailed,
	db.RestoreRejected:       outbox.EventRestoreRejected,
	db.RestoreExpired:        outbox.EventRestoreExpired,
}

// restore tells of restore r having moved to r.State. The event names
// what people typed and the runner's masked error, never the outcome
// summary, and never configuration text: a requested restore's preview
// is named by its backups, and rendered (masked, where the rule allows
// a diff) when the message is sent.
func (d *decision) restore(r db.Restore) {
	kind, ok := restoreKinds[r.State]
	if !ok {
		return
	}
	p := d.payload(kind)
	er := &outbox.EventRestore{ID: r.ID, State: r.State, VersionID: r.TargetBackupID, RequestedBy: r.RequestedByName,
		Reason: r.Reason, Path: "/restores/" + strconv.FormatInt(r.ID, 10)}
	if r.DecidedByName != nil {
		er.DecidedBy, er.DecisionNote = *r.DecidedByName, r.DecisionNote
	}
	if kind == outbox.EventRestoreFailed {
		er.Stage = r.Stage
		if r.Error != nil {
			er.Error = *r.Error
		}
		if r.ErrorReason != nil {
			er.ErrorReason = *r.ErrorReason
		}
	}
	if kind == outbox.EventRestoreRequested && r.PreviewBackupID != nil {
		// The change the restore would make: from the device's
		// configuration now (the preview) to the version.
		p.BackupID, p.PreviousBackupID = r.TargetBackupID, *r.PreviewBackupID
	}
	p.Restore = er
	d.add(p, db.AnyThreshold, 0)
}

// changeSet tells of a change set's move: ready from a draft (requested)
// or an end (finished, with how its devices fared). The event names the
// set and the people, never its body, what it rendered for a device or
// a transcript: those may hold secrets, and the set's page shows them to
// those allowed to see them.
func (d *decision) changeSet(m db.ChangeSetMove) {
	c := m.Set
	var kind outbox.EventKind
	switch c.State {
	case db.ChangeSetReady:
		if m.From == db.ChangeSetReady {
			return // rendered again: asked already
		}
		kind = outbox.EventPushRequested
	case db.ChangeSetDone, db.ChangeSetStopped, db.ChangeSetCancelled, db.ChangeSetExpired:
		kind = outbox.EventPushFinished
	default:
		return
	}
	ec := &outbox.EventChangeSet{ID: c.ID, Name: c.Name, State: c.State, CreatedBy: c.CreatedByName, Devices: c.Targets,
		Path: "/change-sets/" + strconv.FormatInt(c.ID, 10)}
	if c.DecidedByName != nil {
		if m.Rejected {
			ec.RejectedBy = *c.DecidedByName
		} else {
			ec.ApprovedBy = *c.DecidedByName
		}
		ec.DecisionNote = c.DecisionNote
	}
	if kind == outbox.EventPushFinished {
		n := m.Counts
		ec.Counts = &outbox.EventChangeSetCounts{Succeeded: n[db.TargetSucceeded], Failed: n[db.TargetFailed],
			Skipped: n[db.TargetSkipped] + n[db.TargetPending], Interrupted: n[db.TargetInterrupted],
			Running: n[db.TargetQueued] + n[db.TargetRunning]}
		if c.Error != nil {
			ec.Reason = *c.Error
		}
	}
	d.add(outbox.EventPayload{Kind: kind, At: d.in.At.UTC(), Trigger: d.in.Trigger, ChangeSet: ec}, db.AnyThreshold, 0)
}

// inventorySync tells of a sync of an inventory source that ended: the
// source (never its token or configuration) and, for a failure, the
// sync's sentence, which the fetchers word with the token and header
// values scrubbed out.
func (d *decision) inventorySync(e db.InventorySyncEnd) {
	src := e.Source
	p := outbox.EventPayload{At: d.in.At.UTC(), Trigger: d.in.Trigger,
		Inventory: &outbox.EventInventory{ID: src.ID, Name: src.Name, Kind: src.Kind, Path: InventorySourcesPath}}
	if e.OK {
		if n := d.in.Prev.ConsecutiveFailures; n > 0 {
			p.Kind, p.Failure = outbox.EventInventorySyncRecovered, &outbox.EventFailure{Stage: syncStage, Consecutive: n}
			d.add(p, db.ThresholdWasReached, n)
		}
		d.next.ConsecutiveFailures = 0
		return
	}
	n := d.in.Prev.ConsecutiveFailures + 1
	p.Kind, p.Failure = outbox.EventInventorySyncFailed, &outbox.EventFailure{Stage: syncStage, Reason: e.Error, Consecutive: n}
	d.add(p, db.ThresholdReached, n)
	d.next.ConsecutiveFailures = n
}
