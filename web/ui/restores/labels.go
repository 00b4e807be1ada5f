package restores

import (
	"backupd/app/restore"
	"backupd/db"
	"backupd/db/queue"
)

// stateKeys name each state of a restore.
var stateKeys = map[string]string{
	db.RestorePreviewing:     keyStatePreviewing,
	db.RestorePending:        keyStatePending,
	db.RestoreApproved:       keyStateApproved,
	db.RestoreQueued:         keyStateQueued,
	db.RestoreRunning:        keyStateRunning,
	db.RestoreSucceeded:      keyStateSucceeded,
	db.RestoreRolledBack:     keyStateRolledBack,
	db.RestoreRollbackFailed: keyStateRollbackFailed,
	db.RestoreFailed:         keyStateFailed,
	db.RestoreRejected:       keyStateRejected,
	db.RestoreCancelled:      keyStateCancelled,
	db.RestoreExpired:        keyStateExpired,
	db.RestoreInterrupted:    keyStateInterrupted,
}

// stageKeys name each stage of a running restore.
var stageKeys = map[string]string{
	restore.StagePreBackup:  keyStagePreBackup,
	restore.StageCheck:      keyStageCheck,
	restore.StageApply:      keyStageApply,
	restore.StageVerify:     keyStageVerify,
	restore.StageKeep:       keyStageKeep,
	restore.StageUndo:       keyStageRollback,
	restore.StageUndoVerify: keyStageRollbackVerify,
}

// reasonKeys say, in the page's language, why a restore did not
// succeed; its error (the device's or the run's own words, in English)
// follows.
var reasonKeys = map[string]string{
	restore.ReasonBackupFailed: keyReasonBackupFailed,
	restore.ReasonDrift:        keyReasonChangedSincePreview,
	restore.ReasonNoMethod:     keyReasonNotSupported,
	restore.ReasonConnect:      keyReasonSessionFailed,
	restore.ReasonRefused:      keyReasonRefused,
	restore.ReasonLost:         keyReasonSessionLost,
	restore.ReasonMismatch:     keyReasonVerifyMismatch,
	restore.ReasonNotConverged: keyReasonNotConverged,
	restore.ReasonKeep:         keyReasonKeepFailed,
	restore.ReasonStore:        keyReasonStore,
	queue.ReasonCancelled:      keyReasonCancelled,
	queue.ReasonInterrupted:    keyReasonInterrupted,
}

// viewKeys name the list's views.
var viewKeys = map[string]string{
	viewAll:     keyViewAll,
	viewWaiting: keyViewWaiting,
	viewOpen:    keyViewOpen,
	viewEnded:   keyViewEnded,
}
