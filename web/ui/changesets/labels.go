package changesets

import (
	"backupd/app/restore"
	"backupd/db"
	"backupd/db/queue"
)

// setStateKeys name each state of a change set.
var setStateKeys = map[string]string{
	db.ChangeSetDraft:     keyStateDraft,
	db.ChangeSetReady:     keyStateReady,
	db.ChangeSetApproved:  keyStateApproved,
	db.ChangeSetRunning:   keyStateRunning,
	db.ChangeSetDone:      keyStateDone,
	db.ChangeSetStopped:   keyStateStopped,
	db.ChangeSetCancelled: keyStateCancelled,
	db.ChangeSetExpired:   keyStateExpired,
}

// setBadges are the CSS classes of a change set's state badge.
var setBadges = map[string]string{
	db.ChangeSetDraft:     "device-badge-bad",
	db.ChangeSetReady:     "device-badge-changed",
	db.ChangeSetApproved:  "device-badge-running",
	db.ChangeSetRunning:   "device-badge-running",
	db.ChangeSetDone:      "device-badge-ok",
	db.ChangeSetStopped:   "device-badge-bad",
	db.ChangeSetCancelled: "device-badge-off",
	db.ChangeSetExpired:   "device-badge-off",
}

// targetStateKeys name each state of a change set's device.
var targetStateKeys = map[string]string{
	db.TargetPending:     keyTargetPending,
	db.TargetQueued:      keyTargetQueued,
	db.TargetRunning:     keyTargetRunning,
	db.TargetSucceeded:   keyTargetSucceeded,
	db.TargetFailed:      keyTargetFailed,
	db.TargetSkipped:     keyTargetSkipped,
	db.TargetInterrupted: keyTargetInterrupted,
}

// targetBadges are the CSS classes of a device's state badge (the
// page's script keeps the same map).
var targetBadges = map[string]string{
	db.TargetPending:     "device-badge-off",
	db.TargetQueued:      "device-badge-running",
	db.TargetRunning:     "device-badge-running",
	db.TargetSucceeded:   "device-badge-ok",
	db.TargetFailed:      "device-badge-bad",
	db.TargetSkipped:     "device-badge-off",
	db.TargetInterrupted: "device-badge-bad",
}

// stageKeys name the steps of a running push (PushRunner): the backup
// before (no stage yet), the lines, the backup after.
var stageKeys = map[string]string{
	"":                  keyStageBefore,
	restore.StageApply:  keyStageApply,
	restore.StageVerify: keyStageAfter,
}

// reasonKeys say, in the page's language, why a device's push did not
// succeed; its error (the device's or the run's own words) follows.
var reasonKeys = map[string]string{
	restore.ReasonBackupFailed: keyReasonBackupFailed,
	restore.ReasonNoMethod:     keyReasonNotSupported,
	restore.ReasonConnect:      keyReasonSessionFailed,
	restore.ReasonRefused:      keyReasonRefused,
	restore.ReasonLost:         keyReasonSessionLost,
	restore.ReasonStore:        keyReasonStore,
	queue.ReasonCancelled:      keyReasonCancelled,
	queue.ReasonInterrupted:    keyReasonInterrupted,
}

// viewKeys name the list's views.
var viewKeys = map[string]string{
	viewAll:     keyViewAll,
	viewWaiting: keyViewWaiting,
	viewRunning: keyViewRunning,
	viewEnded:   keyViewEnded,
}

// setStateKey is the message key of a change set's state; an unknown
// one (a newer release's) reads as stopped rather than as a raw name.
func setStateKey(state string) string {
	if k, ok := setStateKeys[state]; ok {
		return k
	}
	return keyStateStopped
}

// targetStateKey is the message key of a device's state, an unknown one
// read as failed.
func targetStateKey(state string) string {
	if k, ok := targetStateKeys[state]; ok {
		return k
	}
	return keyTargetFailed
}
