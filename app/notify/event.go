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
// git.push_failed and git.push_recovered. It never carries a password; the
// configuration diff only where the rule allows it, since a configuration
// may hold secrets.
type Event struct {
	Schema  string    `json:"schema"`  // always Schema
	ID      string    `json:"id"`      // event id (outbox id, decimal), stable across retries
	Kind    string    `json:"event"`   // config.changed, backup.failed, …
	At      time.Time `json:"at"`      // when it happened, UTC
	Trigger string    `json:"trigger"` // schedule | manual | syslog | retry | api | cli | check
	// Device is nil (absent) only for system events, which are about
	// the server rather than a device: git.push_failed, git.push_recovered.
	Device  *Device  `json:"device,omitempty"`
	Backup  *Backup  `json:"backup,omitempty"`
	Failure *Failure `json:"failure,omitempty"`
	Diff    *Diff    `json:"diff,omitempty"`
	Stale   *Stale   `json:"stale,omitempty"`
	Git     *Git     `json:"git,omitempty"`
	// URL links to the event's page in the web interface (the diff, or
	// the device), when the server knows its public URL.
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

// Envelope is the body of a webhook delivery: one or more events (more
// than one is a digest), always in a list, so that a receiver has one
// shape to parse. DeliveryID is the same on every retry of the delivery,
// so that a receiver can drop a duplicate.
type Envelope struct {
	Schema     string  `json:"schema"`
	DeliveryID string  `json:"delivery_id"`
	Events     []Event `json:"events"`
}
