package db

import (
	"errors"
	"time"

	"backupd/db/outbox"
	"backupd/db/queue"
)

// Which events a backup's end, a reachability check, the stale check, a
// push of the git mirror, a restore's move or a change set's move causes is a product rule,
// and the store does not make it: the application hands the store an
// EventPolicy (app/notify/policy.Decide) once, where it opens it. The
// store loads what the policy needs (the device, its event state), asks
// it, and writes what it decided — the events, their deliveries to the
// channels whose rules match, the subject's new state — in the
// transaction that records what happened, so that the outbox commits or
// rolls back with it.

// EventPolicy decides the events one happening causes. It must be a pure
// function of its input (no I/O, no clock): the store may run it again
// when a transaction is retried.
type EventPolicy func(EventInput) (EventDecision, error)

// ErrNoEventPolicy is the error of recording a happening on a store
// opened without an event policy: its events would be lost silently.
var ErrNoEventPolicy = errors.New("the store has no event policy: the application sets one (SetEventPolicy) before it records backups, checks, pushes, restores or change sets")

// SetEventPolicy sets the policy that decides the store's events. It is
// set once, right after the store is opened and before it is shared.
func (s *Store) SetEventPolicy(p EventPolicy) { s.policy = p }

// decide asks the store's policy; without one it fails.
func (s *Store) decide(in EventInput) (EventDecision, error) {
	if s.policy == nil {
		return EventDecision{}, ErrNoEventPolicy
	}
	return s.policy(in)
}

// EventInput is one happening that may cause events: exactly one of
// Attempt, Check, Stale, GitPush, Restore, ChangeSet and InventorySync
// is set.
type EventInput struct {
	// At is when it happened; Trigger what caused it (the attempt's
	// trigger, TriggerCheck, TriggerGitPush, queue.TriggerRestore).
	At      time.Time
	Trigger string
	// Device is the device it happened to; zero for a push of the git
	// mirror, which is about the server, and for a change set's move,
	// which is about many devices.
	Device EventDevice
	// Prev is the subject's state after the happening before.
	Prev EventState

	Attempt *AttemptEnd
	Check   *ReachabilityCheck
	Stale   *StaleCheck
	GitPush *GitPushEnd
	// Restore is a restore of Device that has just moved: its State is
	// the one it moved to.
	Restore *Restore
	// ChangeSet is a change set that has just moved.
	ChangeSet *ChangeSetMove
	// InventorySync is a sync of an inventory source that has just
	// ended (Prev is the source's state).
	InventorySync *InventorySyncEnd
}

// ChangeSetMove is a change set's move: the set as it now is (its State
// the one it moved to), where it came from, and its targets' states.
// Set.Body and its targets' rendered lines are configuration text: a
// policy never puts them in an event.
type ChangeSetMove struct {
	Set ChangeSet
	// From is the state it left; "" for an expiry (ready or approved).
	From string
	// Rejected: it was cancelled with a decision (Set.DecidedByName is
	// who rejected it, not who approved it).
	Rejected bool
	// Counts is how many of its targets are in each state.
	Counts map[string]int
}

// EventDevice is what events name of their device, and what the policy
// compares an attempt with.
type EventDevice struct {
	ID       int64
	Name     string
	Host     string
	Platform string
	GroupID  *int64
	// PendingHostKey is the changed host key already recorded, waiting
	// for the operator to accept it; nil when there is none.
	PendingHostKey []byte
}

// EventState is what the policy remembers of a device (or of the git
// mirror, or of an inventory source) from one happening to the next: the streaks its hysteresis
// counts.
type EventState struct {
	// ConsecutiveFailures counts the failed backups (for the git mirror:
	// pushes; for an inventory source: syncs) in a row.
	ConsecutiveFailures int
	// Unreachable counts the attempts and checks in a row that found the
	// device not answering on its port.
	Unreachable int
	// StaleNotifiedFor is the StaleCheck.Period the device was last told
	// about being stale ("" when never).
	StaleNotifiedFor string
}

// AttemptEnd is the end of one backup attempt: FinishJob's, or a job
// given up after too many interruptions of the process. Outcome.Text is
// the captured configuration: a policy never puts it in an event.
type AttemptEnd struct {
	BackupID string
	Outcome  queue.Outcome
}

// ReachabilityCheck is the result of the periodic check of whether a
// device answers on its port.
type ReachabilityCheck struct {
	Reachable bool
}

// StaleCheck is the stale check's look at a device without a good
// backup since long enough ago (the store reads only those, and only
// when a rule wants backup.stale).
type StaleCheck struct {
	// Threshold is how long a device may go without a good backup.
	Threshold time.Duration
	// LastGoodAt is the device's last good backup (nil: never), CreatedAt
	// when it was added.
	LastGoodAt *time.Time
	CreatedAt  time.Time
	// Period names the device's stale period as the store keeps it: a
	// new good backup starts a new one.
	Period string
}

// GitPushEnd is how one push of the git mirror ended (after its
// retries). Remote holds no credentials; Error no secret.
type GitPushEnd struct {
	OK       bool
	Error    string
	Remote   string
	Attempts int
}

// EventDecision is what the policy decided: the events to record, in
// order, and the subject's state from now on.
type EventDecision struct {
	Events []DecidedEvent
	Next   EventState
}

// DecidedEvent is one event to record. The store writes it with one
// delivery per channel of the enabled rules of its kind whose scope holds
// its device and whose failure threshold passes Threshold with Count;
// with no such rule it writes nothing.
type DecidedEvent struct {
	Payload   outbox.EventPayload
	Threshold ThresholdTest
	Count     int
	// WithPreviousGood asks the store to name in
	// Payload.PreviousBackupID the device's good version before
	// Payload.BackupID (the version a change is against). The store also
	// fills Payload.GroupPath from Payload.GroupID.
	WithPreviousGood bool
}

// ThresholdTest is how the rules of an event compare their failure
// threshold with the event's Count.
type ThresholdTest int

// The threshold tests (their values are the matching query's).
const (
	// AnyThreshold: every rule of the kind, whatever its threshold.
	AnyThreshold ThresholdTest = iota
	// ThresholdReached: the rules whose threshold is Count, the failures
	// in a row having just reached it (once per streak).
	ThresholdReached
	// ThresholdWasReached: the rules whose threshold is at most Count,
	// the streak that just ended having reached it.
	ThresholdWasReached
)
