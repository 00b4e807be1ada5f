// Package outbox is the notification outbox: the events recorded (in the
// transaction of what caused them) and their deliveries, one event to one
// channel, which the delivery worker claims, batches into messages and
// marks sent or failed until they settle. Which events happen and which
// channels they go to is decided above it (app/notify/policy, and the
// rules package db matches); the outbox keeps them and hands them out.
package outbox

import (
	"errors"
	"slices"
	"time"

	"backupd/db/engine"
)

// Outbox is the deliveries of one database.
type Outbox struct {
	e *engine.DB
	d engine.Dialect
}

// New is the outbox on e.
func New(e *engine.DB) *Outbox { return &Outbox{e: e, d: e.Dialect} }

// EventKind names what happened.
type EventKind string

// The event kinds.
const (
	EventConfigChanged     EventKind = "config.changed"
	EventFirstBackup       EventKind = "device.first_backup"
	EventBackupFailed      EventKind = "backup.failed"
	EventBackupRecovered   EventKind = "backup.recovered"
	EventDeviceUnreachable EventKind = "device.unreachable"
	EventDeviceReachable   EventKind = "device.reachable"
	EventHostKeyChanged    EventKind = "hostkey.changed"
	EventBackupStale       EventKind = "backup.stale"
	// Restore events: a configuration restore of a device moved to a
	// state people act on or want to know of. They are device events
	// (rules on groups or devices match them by the restore's device).
	// config.restore_failed covers every end other than success
	// (failed, rolled_back, rollback_failed, interrupted): the payload's
	// state says which.
	EventRestoreRequested EventKind = "config.restore_requested"
	EventRestoreApproved  EventKind = "config.restore_approved"
	EventRestoreSucceeded EventKind = "config.restore_succeeded"
	EventRestoreFailed    EventKind = "config.restore_failed"
	EventRestoreRejected  EventKind = "config.restore_rejected"
	EventRestoreExpired   EventKind = "config.restore_expired"
	// System events: about the server, not a device (DeviceID 0). Only
	// rules of scope "all" match them.
	EventGitPushFailed    EventKind = "git.push_failed"
	EventGitPushRecovered EventKind = "git.push_recovered"
	// Change set events: a change set (commands pushed to many devices)
	// is ready and waits for approval, or ended (done, stopped after too
	// many failed devices, cancelled, expired; the payload's state says
	// which, its counts how its devices fared). They are system events
	// too: a change set spans many devices, and an approver wants one
	// message per change set, not one per device, nor one per rule
	// whose groups hold some of its devices (a rule of a user who sees
	// only some of those devices must not name the set). The devices'
	// own news is their own events: each push takes backups (trigger
	// push) that cause config.changed as any backup does.
	EventPushRequested EventKind = "config.push_requested"
	EventPushFinished  EventKind = "config.push_finished"
	// Inventory sync events: a sync of an inventory source (a NetBox,
	// an HTTP JSON inventory) failed and changed nothing, or succeeded
	// again after failures. System events: a source feeds many devices,
	// and its failure is about the source, not one of them.
	EventInventorySyncFailed    EventKind = "inventory.sync_failed"
	EventInventorySyncRecovered EventKind = "inventory.sync_recovered"
)

// EventKinds lists every kind, in the order the UI shows them.
var EventKinds = []EventKind{EventConfigChanged, EventFirstBackup, EventBackupFailed, EventBackupRecovered,
	EventDeviceUnreachable, EventDeviceReachable, EventHostKeyChanged, EventBackupStale,
	EventRestoreRequested, EventRestoreApproved, EventRestoreSucceeded, EventRestoreFailed, EventRestoreRejected,
	EventRestoreExpired, EventGitPushFailed, EventGitPushRecovered, EventPushRequested, EventPushFinished,
	EventInventorySyncFailed, EventInventorySyncRecovered}

// System reports whether k is about the server (or a change set of many
// devices, or an inventory source) rather than one device: only rules of scope "all" match it.
func (k EventKind) System() bool {
	switch k {
	case EventGitPushFailed, EventGitPushRecovered, EventPushRequested, EventPushFinished,
		EventInventorySyncFailed, EventInventorySyncRecovered:
		return true
	}
	return false
}

// Valid reports whether k is a known kind.
func (k EventKind) Valid() bool { return slices.Contains(EventKinds, k) }

// Delivery states.
const (
	DeliveryPending = "pending" // not tried yet
	DeliverySending = "sending" // leased by a worker
	DeliveryFailed  = "failed"  // last attempt failed; tried again at NextAttemptAt
	DeliverySent    = "sent"
	DeliveryGaveUp  = "gave_up"
)

// DeliveryLease is how long a claimed delivery stays with its worker;
// past it (the worker died) another worker may claim it.
const DeliveryLease = 5 * time.Minute

// DeliveryMaxAge is how long a failing delivery is retried, from when
// its event was recorded; a retry due later gives up instead.
const DeliveryMaxAge = 24 * time.Hour

// ErrNotLeased is returned when marking a delivery the caller no longer
// holds (its lease expired and another worker took it, or it was already
// settled).
var ErrNotLeased = errors.New("delivery is not leased by this worker")

// EventPayload is what the outbox keeps of an event: the facts needed to
// render it when it is sent. Never a secret, never configuration text (a
// diff is rendered at send time from BackupID and PreviousBackupID).
type EventPayload struct {
	Kind     EventKind `json:"kind"`
	At       time.Time `json:"at"`
	Trigger  string    `json:"trigger"`
	DeviceID int64     `json:"device_id"`
	// The device as it was when the event happened (it may be renamed or
	// deleted before the event is sent).
	DeviceName     string `json:"device_name"`
	DeviceHost     string `json:"device_host"`
	DevicePlatform string `json:"device_platform"`
	GroupID        *int64 `json:"group_id,omitempty"`
	// GroupPath names the device's group and its ancestors, root first.
	GroupPath []string `json:"group_path,omitempty"`
	// BackupID is the attempt that caused the event; PreviousBackupID the
	// good version a change is against.
	BackupID         string          `json:"backup_id,omitempty"`
	PreviousBackupID string          `json:"previous_backup_id,omitempty"`
	Failure          *EventFailure   `json:"failure,omitempty"`
	Stale            *EventStale     `json:"stale,omitempty"`
	Git              *EventGit       `json:"git,omitempty"`
	Restore          *EventRestore   `json:"restore,omitempty"`
	ChangeSet        *EventChangeSet `json:"change_set,omitempty"`
	Inventory        *EventInventory `json:"inventory_source,omitempty"`
}

// EventInventory is the inventory source an inventory.sync_* event is
// about, as it was when it synced. Its error (the sync's, in Failure)
// is worded by the fetchers with the token and header values scrubbed
// out; the source's token and configuration never reach an event.
type EventInventory struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Path is the inventory sources' page in the web interface
	// ("/settings/inventory-sources").
	Path string `json:"path"`
}

// EventRestore is the restore a config.restore_* event is about, as it
// was when it moved. Reason and DecisionNote are what people typed when
// they asked and decided; Error is the runner's message, masked before
// it was stored: none of it is configuration text.
type EventRestore struct {
	ID    int64  `json:"id"`
	State string `json:"state"`
	// VersionID is the version (backup) the restore puts back.
	VersionID    string `json:"version_id"`
	RequestedBy  string `json:"requested_by"`
	Reason       string `json:"reason,omitempty"`
	DecidedBy    string `json:"decided_by,omitempty"`
	DecisionNote string `json:"decision_note,omitempty"`
	// Stage is the step a run ended at; Error and ErrorReason why it
	// did not succeed.
	Stage       string `json:"stage,omitempty"`
	Error       string `json:"error,omitempty"`
	ErrorReason string `json:"error_reason,omitempty"`
	// Path is the restore's page in the web interface ("/restores/12").
	Path string `json:"path"`
}

// EventChangeSet is the change set a config.push_* event is about, as
// it was when it moved. It names the set and never holds its body, what
// it rendered for a device or a session's transcript: those may hold
// secrets, and Path leads to them for those allowed to see them.
// Reason and DecisionNote are what people typed (or the runner's own
// words for a stop): none of it is configuration text.
type EventChangeSet struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	State     string `json:"state"`
	CreatedBy string `json:"created_by"`
	// ApprovedBy is who approved it; RejectedBy who cancelled it with a
	// decision (a rejection), DecisionNote what they wrote.
	ApprovedBy   string `json:"approved_by,omitempty"`
	RejectedBy   string `json:"rejected_by,omitempty"`
	DecisionNote string `json:"decision_note,omitempty"`
	// Reason is why it stopped or was cancelled.
	Reason string `json:"reason,omitempty"`
	// Devices is how many devices it has; Counts (config.push_finished)
	// how they fared.
	Devices int                   `json:"devices"`
	Counts  *EventChangeSetCounts `json:"counts,omitempty"`
	// Path is the change set's page in the web interface
	// ("/change-sets/12").
	Path string `json:"path"`
}

// EventChangeSetCounts is how the devices of an ended change set fared.
// Skipped counts the devices never pushed to (skipped, or not started
// when the set ended); Running those still running when it was
// cancelled (they run to their end).
type EventChangeSetCounts struct {
	Succeeded   int `json:"succeeded"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	Interrupted int `json:"interrupted"`
	Running     int `json:"running"`
}

// EventGit is the git mirror's remote (without credentials) and how many
// tries the push took, for git.push_failed and git.push_recovered.
type EventGit struct {
	Remote   string `json:"remote"`
	Attempts int    `json:"attempts"`
}

// EventFailure is why a backup failed (or a device is unreachable), and
// for how many attempts in a row.
type EventFailure struct {
	Stage       string `json:"stage"`
	Reason      string `json:"reason"`
	Consecutive int    `json:"consecutive"`
}

// EventStale is how long a device has gone without a good backup.
type EventStale struct {
	LastGoodAt       *time.Time `json:"last_good_at,omitempty"` // nil: never
	ThresholdSeconds int64      `json:"threshold_seconds"`
}

func backupTime(t time.Time) string { return t.UTC().Format(engine.BackupTimeFormat) }

func scanID(row engine.Scanner) (int64, error) {
	var id int64
	return id, row.Scan(&id)
}
