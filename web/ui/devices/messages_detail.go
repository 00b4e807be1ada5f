package devices

// Message keys of one device's pages: summary, history, host key and
// address, version and diff.
const (
	keyDetailTitle        = "device.title"
	keyDetailVersionTitle = "device.version.title"
	keyDetailDiffTitle    = "device.diff.title"
	keyDetailLogTitle     = "device.log.title"

	keyDetailBackupQueued    = "device.notice.queued"
	keyDetailFollowJob       = "device.notice.follow_job"
	keyDetailHostKeyAccepted = "device.hostkey.accepted"
	keyDetailHostKeyNothing  = "device.hostkey.error.nothing"
	keyDetailHostKeyMoved    = "device.hostkey.error.moved"

	keyDetailAddressConfirmed = "device.address.confirmed"
	keyDetailAddressNothing   = "device.address.error.nothing"
	keyDetailAddressMoved     = "device.address.error.moved"
	keyDetailCredentialUse    = "device.error.credential_use"

	keyDetailSourceManaged  = "device.source.managed"
	keyDetailSourceDisabled = "device.source.disabled"

	keyDetailBadPageLink = "device.error.page_link"

	keyDetailHistoryBadSince = "device.history.error.since"
	keyDetailHistoryBadUntil = "device.history.error.until"
	keyDetailHistoryBadOrder = "device.history.error.order"
	keyDetailNoTextError     = "device.error.no_text"

	keyDetailTriggerManual   = "device.trigger.manual"
	keyDetailTriggerSchedule = "device.trigger.schedule"
	keyDetailTriggerRetry    = "device.trigger.retry"
	keyDetailTriggerCLI      = "device.trigger.cli"
	keyDetailTriggerSyslog   = "device.trigger.syslog"
	keyDetailTriggerRestore  = "device.trigger.restore"
	keyDetailTriggerPush     = "device.trigger.push"
	keyDetailTriggerOther    = "device.trigger.other"

	keyDetailDurationMS  = "device.duration.ms"
	keyDetailDurationS   = "device.duration.s"
	keyDetailDurationMin = "device.duration.min"

	keyDetailDiffPickTwo    = "device.diff.error.pick_two"
	keyDetailDiffNoPrevious = "device.diff.error.no_previous"
	keyDetailDiffNoText     = "device.diff.error.no_text"

	// Why "Restore this version" is disabled.
	keyVersionRestoreUnsupported = "device.version.restore.unsupported"
	keyVersionRestoreRemote      = "device.version.restore.remote"
	keyVersionRestoreDisabled    = "device.version.restore.disabled"

	// Why the lines of a block cannot be merged one by one: "Lines
	// 12-16: " (or "Line 7: ") and the reason of its kind.
	keyVersionRestoreBlock            = "device.version.restore.block"
	keyVersionRestoreBlockOne         = "device.version.restore.block_one"
	keyVersionRestoreBlockBanner      = "device.version.restore.block_banner"
	keyVersionRestoreBlockCertificate = "device.version.restore.block_certificate"
	keyVersionRestoreBlockKey         = "device.version.restore.block_key"
	keyVersionRestoreBlockMacro       = "device.version.restore.block_macro"
)
