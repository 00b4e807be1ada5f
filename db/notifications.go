package db

import (
	"errors"
	"slices"
)

// The storage side of notifications: channels (where to send), rules
// (which events of which devices go to which channels), and the events'
// recording in the transaction of the backup result that caused them
// (events.go). The events and their deliveries, and the delivery worker's
// queue, are package outbox's.

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

// Bounds of what the notification tables hold.
const (
	MaxNotificationNameLen = 100
	MaxChannelConfigBytes  = 16 << 10
	MaxChannelSecretBytes  = 16 << 10 // a webhook's custom header values are sealed with its key
	MaxRuleThreshold       = 1000
	MaxRuleTargets         = 1000 // groups, devices or channels of one rule
	// MaxDeliveryLog bounds one read of a channel's delivery log.
	MaxDeliveryLog = 1000
)

// ErrChannelInUse refuses to delete a channel that rules still send to.
var ErrChannelInUse = errors.New("channel is used by notification rules")

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
