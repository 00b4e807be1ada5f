package restores

// Message keys of the restores pages (texts in
// embed/i18n/ui/restores.*.json).
const (
	keyTitleList    = "restores.title"
	keyTitleRestore = "restores.restore.title"
	keyTitleRequest = "restores.request.title"

	keyNoticeRequested = "restores.notice.requested"
	keyNoticeApproved  = "restores.notice.approved"
	keyNoticeRejected  = "restores.notice.rejected"
	keyNoticeCancelled = "restores.notice.cancelled"

	keyErrNotRunning    = "restores.error.not_running"
	keyErrNotSupported  = "restores.error.not_supported"
	keyErrRemoteZone    = "restores.error.remote_zone"
	keyErrDisabled      = "restores.error.disabled"
	keyErrMaskedVersion = "restores.error.masked_version"
	keyErrFourEyes      = "restores.error.four_eyes"
	keyErrBusy          = "restores.error.busy"
	keyErrExpired       = "restores.error.expired"
	keyErrPreviewStale  = "restores.error.preview_stale"
	keyErrOpenRestore   = "restores.error.open_restore"
	keyErrOpenRestoreIs = "restores.error.open_restore_now"
	keyErrState         = "restores.error.state"
	keyErrInvalid       = "restores.error.invalid"
	keyErrNoVersion     = "restores.error.no_version"
	keyErrOtherDevice   = "restores.error.other_device"
	keyErrNoText        = "restores.error.no_text"
	keyErrReasonTooLong = "restores.error.reason_too_long"
	keyErrNoteTooLong   = "restores.error.note_too_long"
	keyErrNoPreview     = "restores.error.no_preview"
	keyErrCancelOwn     = "restores.error.cancel_own"
	keyErrNoLines       = "restores.error.no_lines"
	keyErrLinesNotMerge = "restores.error.lines_not_merge"
	keyErrBadLines      = "restores.error.bad_lines"

	keyBackupPreview  = "restores.backup.preview"
	keyBackupBefore   = "restores.backup.before"
	keyBackupAfter    = "restores.backup.after"
	keyBackupRollback = "restores.backup.rollback"
)

// Message keys of the states, stages, failure reasons and views
// (labels.go maps them).
const (
	keyStatePreviewing     = "restores.state.previewing"
	keyStatePending        = "restores.state.pending"
	keyStateApproved       = "restores.state.approved"
	keyStateQueued         = "restores.state.queued"
	keyStateRunning        = "restores.state.running"
	keyStateSucceeded      = "restores.state.succeeded"
	keyStateRolledBack     = "restores.state.rolled_back"
	keyStateRollbackFailed = "restores.state.rollback_failed"
	keyStateFailed         = "restores.state.failed"
	keyStateRejected       = "restores.state.rejected"
	keyStateCancelled      = "restores.state.cancelled"
	keyStateExpired        = "restores.state.expired"
	keyStateInterrupted    = "restores.state.interrupted"

	keyStagePreBackup      = "restores.stage.pre_backup"
	keyStageCheck          = "restores.stage.check"
	keyStageApply          = "restores.stage.apply"
	keyStageVerify         = "restores.stage.verify"
	keyStageKeep           = "restores.stage.keep"
	keyStageRollback       = "restores.stage.rollback"
	keyStageRollbackVerify = "restores.stage.rollback_verify"

	keyReasonBackupFailed        = "restores.reason.backup_failed"
	keyReasonChangedSincePreview = "restores.reason.changed_since_preview"
	keyReasonNotSupported        = "restores.reason.not_supported"
	keyReasonSessionFailed       = "restores.reason.session_failed"
	keyReasonRefused             = "restores.reason.refused"
	keyReasonSessionLost         = "restores.reason.session_lost"
	keyReasonVerifyMismatch      = "restores.reason.verify_mismatch"
	keyReasonNotConverged        = "restores.reason.not_converged"
	keyReasonKeepFailed          = "restores.reason.keep_failed"
	keyReasonStore               = "restores.reason.store"
	keyReasonCancelled           = "restores.reason.cancelled"
	keyReasonInterrupted         = "restores.reason.interrupted"

	keyViewAll     = "restores.view.all"
	keyViewWaiting = "restores.view.waiting"
	keyViewOpen    = "restores.view.open"
	keyViewEnded   = "restores.view.ended"
)
