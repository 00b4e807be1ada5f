package changesets

// Message keys of the change sets pages (texts in
// embed/i18n/ui/changesets.*.json).
const (
	keyTitleList   = "changesets.title"
	keyTitleNew    = "changesets.new.title"
	keyTitleSet    = "changesets.set.title"
	keyTitleDevice = "changesets.device.title"

	keyNoticeCreated   = "changesets.notice.created"
	keyNoticeDryRun    = "changesets.notice.dry_run"
	keyNoticeApproved  = "changesets.notice.approved"
	keyNoticeRejected  = "changesets.notice.rejected"
	keyNoticeCancelled = "changesets.notice.cancelled"

	keyErrNotRunning  = "changesets.error.not_running"
	keyErrFourEyes    = "changesets.error.four_eyes"
	keyErrExpired     = "changesets.error.expired"
	keyErrState       = "changesets.error.state"
	keyErrInvalid     = "changesets.error.invalid"
	keyErrNoteTooLong = "changesets.error.note_too_long"
	keyErrCancelOwn   = "changesets.error.cancel_own"

	keyErrNameRequired    = "changesets.error.name_required"
	keyErrNameTooLong     = "changesets.error.name_too_long"
	keyErrBodyRequired    = "changesets.error.body_required"
	keyErrBodyTooLong     = "changesets.error.body_too_long"
	keyErrBodyRefused     = "changesets.error.body_refused"
	keyErrTemplate        = "changesets.error.template"
	keyErrVarsTooLong     = "changesets.error.vars_too_long"
	keyErrVarsLine        = "changesets.error.vars_line"
	keyErrVarsKey         = "changesets.error.vars_key"
	keyErrVarsTwice       = "changesets.error.vars_twice"
	keyErrNoDevices       = "changesets.error.no_devices"
	keyErrTooManyDevices  = "changesets.error.too_many_devices"
	keyErrUnknownDevices  = "changesets.error.unknown_devices"
	keyErrUnknownGroup    = "changesets.error.unknown_group"
	keyErrGroupEmpty      = "changesets.error.group_empty"
	keyErrConcurrency     = "changesets.error.concurrency"
	keyErrStopAfter       = "changesets.error.stop_after"
	keyErrDevicesTooLong  = "changesets.error.devices_too_long"
	keyErrStoreRefusedSet = "changesets.error.store_refused"

	keyRenderNoPush   = "changesets.render.no_push"
	keyRenderRemote   = "changesets.render.remote_zone"
	keyRenderDisabled = "changesets.render.disabled"
	keyRenderBlock    = "changesets.render.block"
	keyRenderNothing  = "changesets.render.nothing"
	keyRenderTemplate = "changesets.render.template"
	keyRenderPending  = "changesets.render.pending"
)

// Message keys of the states, stages, failure reasons and views
// (labels.go maps them).
const (
	keyStateDraft     = "changesets.state.draft"
	keyStateReady     = "changesets.state.ready"
	keyStateApproved  = "changesets.state.approved"
	keyStateRunning   = "changesets.state.running"
	keyStateDone      = "changesets.state.done"
	keyStateStopped   = "changesets.state.stopped"
	keyStateCancelled = "changesets.state.cancelled"
	keyStateExpired   = "changesets.state.expired"

	keyTargetPending     = "changesets.target.pending"
	keyTargetQueued      = "changesets.target.queued"
	keyTargetRunning     = "changesets.target.running"
	keyTargetSucceeded   = "changesets.target.succeeded"
	keyTargetFailed      = "changesets.target.failed"
	keyTargetSkipped     = "changesets.target.skipped"
	keyTargetInterrupted = "changesets.target.interrupted"

	keyStageBefore = "changesets.stage.before"
	keyStageApply  = "changesets.stage.apply"
	keyStageAfter  = "changesets.stage.after"

	keyReasonBackupFailed  = "changesets.reason.backup_failed"
	keyReasonNotSupported  = "changesets.reason.not_supported"
	keyReasonSessionFailed = "changesets.reason.session_failed"
	keyReasonRefused       = "changesets.reason.refused"
	keyReasonSessionLost   = "changesets.reason.session_lost"
	keyReasonStore         = "changesets.reason.store"
	keyReasonCancelled     = "changesets.reason.cancelled"
	keyReasonInterrupted   = "changesets.reason.interrupted"

	keyViewAll     = "changesets.view.all"
	keyViewWaiting = "changesets.view.waiting"
	keyViewRunning = "changesets.view.running"
	keyViewEnded   = "changesets.view.ended"
)
