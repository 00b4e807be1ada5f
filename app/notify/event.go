package notify

import "time"

// Schema names the version of the event payload; a change that breaks a
// receiver gets a new version.
const Schema = "backupd.event/v1"

// Event is one thing that happened to one device, as receivers see it in
// the webhook payload (JSON, snake_case). Optional parts are present only
// for the kinds they belong to: Backup for config.changed,
// device.first_backup and backup.recovered; Failure for backup.failed and
// device.unreachable; Diff for config.changed when the rule includes
// diffs; Stale for backup.stale; Failure and Git (no Device) for
// git.push_failed and git.push_recovered; Restore for the
// config.restore_* events, with Backup (and Diff, where the rule
// includes diffs) for config.restore_requested: what the restore would
// change; ChangeSet (no Device) for the system events
// config.push_requested and config.push_finished; Failure and
// InventorySource (no Device) for the system events
// inventory.sync_failed and inventory.sync_recovered. It never carries a
// password, nor a change set's commands, nor an inventory source's token; the configuration diff only
// where the rule allows it, since a configuration may hold secrets.
type Event struct {
	Schema  string    `json:"schema"`  // always Schema
	ID      string    `json:"id"`      // event id (outbox id, decimal), stable across retries
	Kind    string    `json:"event"`   // config.changed, backup.failed, …
	At      time.Time `json:"at"`      // when it happened, UTC
	Trigger string    `json:"trigger"` // schedule | manual | syslog | retry | api | cli | check | restore …
	// Device is nil (absent) only for system events, which are about
	// the server or many devices rather than one: git.push_failed,
	// git.push_recovered, config.push_requested, config.push_finished,
	// inventory.sync_failed, inventory.sync_recovered.
	Device  *Device  `json:"device,omitempty"`
	Backup  *Backup  `json:"backup,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
	Diff    *Diff    `json:"diff,omitempty"`
	Stale   *Stale   `json:"stale,omitempty"`
	Git     *Git     `json:"git,omitempty"`
	Restore *Restore `json:"restore,omitempty"`
	// ChangeSet is the change set of config.push_requested and
	// config.push_finished.
	ChangeSet *ChangeSet `json:"change_set,omitempty"`
	// InventorySource is the source of inventory.sync_failed and
	// inventory.sync_recovered.
	InventorySource *InventorySource `json:"inventory_source,omitempty"`
	// URL links to the event's page in the web interface (the diff, the
	// restore, the change set, the inventory sources, or the device),
	// when the server knows its public URL.
	URL string `json:"url,omitempty"`
}

// Device names the device an event is about. GroupPath lists its group
// and the groups above it, root first.
type Device struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Host      string   `json:"host"`
	Platform  string   `json:"platform"`
	GroupPath []string `json:"group_path"`
}

// Backup is the version an event is about and, for a change, the one
// before it. LinesAdded and LinesRemoved count the diff's lines, noise
// included.
type Backup struct {
	ID           string    `json:"id"`
	PreviousID   string    `json:"previous_id,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	LinesAdded   int       `json:"lines_added"`
	LinesRemoved int       `json:"lines_removed"`
}

// Failure says where and why a backup or a check failed. Reason is the
// secret-free message the store keeps; Consecutive counts the failures
// in a row, this one included.
type Failure struct {
	Stage       string `json:"stage"`
	Reason      string `json:"reason"`
	Consecutive int    `json:"consecutive"`
}

// Stale is a device without a good backup for longer than the threshold.
// LastGoodAt is nil when the device never had one.
type Stale struct {
	LastGoodAt       *time.Time `json:"last_good_at"`
	ThresholdSeconds int64      `json:"threshold_seconds"`
}

// Git is the git mirror's remote, without credentials, and how many
// tries the push took (git.push_failed, git.push_recovered).
type Git struct {
	Remote   string `json:"remote"`
	Attempts int    `json:"attempts"`
}

// Restore is the configuration restore a config.restore_* event is
// about. State is where it moved: pending (config.restore_requested),
// approved, succeeded, rejected, expired, or for config.restore_failed
// one of failed (the device was not changed), rolled_back (it was put
// back and verified), rollback_failed and interrupted (its state is not
// known). Reason and DecisionNote are what the requester and the
// approver typed; Error is secret-free and never configuration text.
// VersionAt is when the version was backed up (absent once it is gone);
// Path is the restore's page, also without --public-url.
type Restore struct {
	ID           int64      `json:"id"`
	State        string     `json:"state"`
	VersionID    string     `json:"version_id"`
	VersionAt    *time.Time `json:"version_at,omitempty"`
	RequestedBy  string     `json:"requested_by"`
	Reason       string     `json:"reason,omitempty"`
	DecidedBy    string     `json:"decided_by,omitempty"`
	DecisionNote string     `json:"decision_note,omitempty"`
	Stage        string     `json:"stage,omitempty"`
	Error        string     `json:"error,omitempty"`
	ErrorReason  string     `json:"error_reason,omitempty"`
	Path         string     `json:"path"`
}

// ChangeSet is the change set (commands pushed to many devices) a
// config.push_* event is about. State is ready (config.push_requested:
// it waits for approval) or how it ended (config.push_finished): done
// (every device was tried), stopped (after too many failed devices),
// cancelled or expired. ApprovedBy, or RejectedBy for a set cancelled
// by a rejection, with DecisionNote, name who decided; Reason is why it
// stopped or was cancelled. It never holds the set's commands, what they
// rendered to for a device, or a session's transcript (they may hold
// secrets): Path, the set's page, shows them to those allowed.
type ChangeSet struct {
	ID           int64            `json:"id"`
	Name         string           `json:"name"`
	State        string           `json:"state"`
	CreatedBy    string           `json:"created_by"`
	ApprovedBy   string           `json:"approved_by,omitempty"`
	RejectedBy   string           `json:"rejected_by,omitempty"`
	DecisionNote string           `json:"decision_note,omitempty"`
	Reason       string           `json:"reason,omitempty"`
	Devices      int              `json:"devices"`
	Counts       *ChangeSetCounts `json:"counts,omitempty"`
	Path         string           `json:"path"`
}

// ChangeSetCounts is how the devices of an ended change set fared
// (config.push_finished). Skipped counts those never pushed to; Running
// those still running when it was cancelled (they run to their end).
type ChangeSetCounts struct {
	Succeeded   int `json:"succeeded"`
	Failed      int `json:"failed"`
	Skipped     int `json:"skipped"`
	Interrupted int `json:"interrupted"`
	Running     int `json:"running"`
}

// InventorySource is the inventory source (a NetBox, an HTTP JSON
// inventory) an inventory.sync_* event is about: its id, name and kind
// (netbox, http). Path is the inventory sources' settings page. The
// sync's error is the event's Failure.Reason, worded with the source's
// token and header values scrubbed out.
type InventorySource struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// Envelope is the body of a webhook delivery: one or more events (more
// than one is a digest), always in a list, so that a receiver has one
// shape to parse. DeliveryID is the same on every retry of the delivery,
// so that a receiver can drop a duplicate.
type Envelope struct {
	Schema     string  `json:"schema"`
	DeliveryID string  `json:"delivery_id"`
	Events     []Event `json:"events"`
}
