package admin

// Message keys of the settings page (texts in
// embed/i18n/ui/settings.*.json).
const (
	keySettingsNodeLeader   = "settings.nodes.leader"
	keySettingsNodeFollower = "settings.nodes.follower"
	keySettingsNodeStopped  = "settings.nodes.stopped"
	keySettingsNodeSilent   = "settings.nodes.silent"

	keySettingsTitle         = "settings.title"
	keySettingsNoticeSaved   = "settings.notice.saved"
	keySettingsNoticeApplied = "settings.notice.applied"
	keySettingsNoticePartial = "settings.notice.partial"
	keySettingsKeepLastRange = "settings.error.keep_last"
	keySettingsKeepDaysRange = "settings.error.keep_days"
	keySettingsRetentionBusy = "settings.error.retention_busy"
)

// Message keys of the settings page's outbound connections section.
const (
	keyOutboundNoticeSaved = "settings.outbound.notice.saved"
	// The secrets section and its report.
	keySecretsNoticeSaved = "settings.secrets.notice.saved"
	keySecretsReportTitle = "settings.secrets.report.title"
	keyOutboundErrInvalid = "settings.outbound.error.invalid"
	keyOutboundErrTooMany = "settings.outbound.error.too_many"
)

// Message keys of the settings page's restores section.
const (
	keyRestoreNoticeSaved   = "settings.restore.notice.saved"
	keyRestorePendingHours  = "settings.restore.error.pending_hours"
	keyRestoreApprovedHours = "settings.restore.error.approved_hours"
)
