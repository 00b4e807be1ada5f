package db

import (
	"errors"
	"slices"
	"time"
)

// The storage side of notifications: channels (where to send), rules
// (which events of which devices go to which channels), the outbox (the
// events, recorded in the transaction of the backup result that caused
// them) and deliveries (one event to one channel, sent once).

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
	// System events: about the server, not a device (DeviceID 0). Only
	// rules of scope "all" match them.
	EventGitPushFailed    EventKind = "git.push_failed"
	EventGitPushRecovered EventKind = "git.push_recovered"
)

// EventKinds lists every kind, in the order the UI shows them.
var EventKinds = []EventKind{EventConfigChanged, EventFirstBackup, EventBackupFailed, EventBackupRecovered,
	EventDeviceUnreachable, EventDeviceReachable, EventHostKeyChanged, EventBackupStale,
	EventGitPushFailed, EventGitPushRecovered}

// System reports whether k is about the server rather than a device.
func (k EventKind) System() bool { return k == EventGitPushFailed || k == EventGitPushRecovered }

// Valid reports whether k is a known kind.
func (k EventKind) Valid() bool { return slices.Contains(EventKinds, k) }

// TriggerCheck is the trigger of events that periodic checks (reachability,
// staleness) find rather than a backup.
const TriggerCheck = "check"

// TriggerGitPush is the trigger of the git mirror's push events.
const TriggerGitPush = "git_push"

// Channel types.
const (
	ChannelWebhook    = "webhook"
	ChannelSlack      = "slack"
	ChannelMattermost = "mattermost"
	ChannelTeams      = "teams"
	ChannelChat       = "chat"
	ChannelEmail      = "email"
)

// ChannelTypes lists the channel types.
var ChannelTypes = []string{ChannelWebhook, ChannelSlack, ChannelMattermost, ChannelTeams, ChannelChat, ChannelEmail}

// Rule scopes.
const (
	RuleScopeAll     = "all"
	RuleScopeGroups  = "groups"
	RuleScopeDevices = "devices"
)

// Delivery states.
const (
	DeliveryPending = "pending" // not tried yet
	DeliverySending = "sending" // leased by a worker
	DeliveryFailed  = "failed"  // last attempt failed; tried again at NextAttemptAt
	DeliverySent    = "sent"
	DeliveryGaveUp  = "gave_up"
)

// Bounds of what the notification tables hold.
const (
	MaxNotificationNameLen = 100
	MaxChannelConfigBytes  = 16 << 10
	MaxChannelSecretBytes  = 16 << 10 // a webhook's custom header values are sealed with its key
	MaxRuleThreshold       = 1000
	MaxRuleTargets         = 1000 // groups, devices or channels of one rule
	// DeliveryLease is how long a claimed delivery stays with its worker;
	// past it (the worker died) another worker may claim it.
	DeliveryLease = 5 * time.Minute
	// DeliveryMaxAge is how long a failing delivery is retried, from when
	// its event was recorded; a retry due later gives up instead.
	DeliveryMaxAge = 24 * time.Hour
	// MaxDeliveryLog bounds one read of a channel's delivery log.
	MaxDeliveryLog = 1000
)

// Notification errors.
var (
	ErrChannelInUse = errors.New("channel is used by notification rules")
	// ErrNotLeased is returned when marking a delivery the caller no
	// longer holds (its lease expired and another worker took it, or it
	// was already settled).
	ErrNotLeased = errors.New("delivery is not leased by this worker")
)

// ErrInvalidField is a value the store refuses; Field names it.
type ErrInvalidField struct {
	Field   string
	Message string
}

func (e *ErrInvalidField) Error() string { return e.Field + ": " + e.Message }

// uniqueIDs sorts ids and drops repeats.
func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}
