package ui

// Message keys of the schedules, change-detection rules and settings
// pages (texts in embed/i18n/ui/settings.*.json).
const (
	keySettingsNodeLeader   = "settings.nodes.leader"
	keySettingsNodeFollower = "settings.nodes.follower"
	keySettingsNodeStopped  = "settings.nodes.stopped"
	keySettingsNodeSilent   = "settings.nodes.silent"

	keySchedTitle     = "schedules.title"
	keySchedTitleNew  = "schedules.title_new"
	keySchedTitleEdit = "schedules.title_edit"

	keySchedNoticeCreated  = "schedules.notice.created"
	keySchedNoticeUpdated  = "schedules.notice.updated"
	keySchedNoticeDeleted  = "schedules.notice.deleted"
	keySchedNoticeEnabled  = "schedules.notice.enabled"
	keySchedNoticeDisabled = "schedules.notice.disabled"

	keySchedTargetAllSummary  = "schedules.summary.all"
	keySchedTargetGroups      = "schedules.summary.groups"
	keySchedTargetGroupsMore  = "schedules.summary.groups_more"
	keySchedTargetGroupCount  = "schedules.summary.group_count"
	keySchedTargetDeviceCount = "schedules.summary.device_count"

	keySchedErrName        = "schedules.error.name"
	keySchedErrCron        = "schedules.error.cron"
	keySchedErrZone        = "schedules.error.timezone"
	keySchedErrSpread      = "schedules.error.spread"
	keySchedErrTarget      = "schedules.error.target"
	keySchedSpreadNumber   = "schedules.error.spread_number"
	keySchedNoGroups       = "schedules.error.no_groups"
	keySchedNoDevices      = "schedules.error.no_devices"
	keySchedTooManyDevices = "schedules.error.too_many_devices"
	keySchedUnknownDevices = "schedules.error.unknown_devices"
	keySchedNameTaken      = "schedules.error.name_taken"
	keySchedTargetGone     = "schedules.error.target_gone"
	keySchedPreviewInvalid = "schedules.preview.invalid"

	keySchedDescEveryMinute  = "schedules.desc.every_minute"
	keySchedDescEveryMinutes = "schedules.desc.every_minutes"
	keySchedDescHourly       = "schedules.desc.hourly"
	keySchedDescEveryHours   = "schedules.desc.every_hours"
	keySchedDescDaily        = "schedules.desc.daily"
	keySchedDescWeekly       = "schedules.desc.weekly"
	keySchedDescMonthly      = "schedules.desc.monthly"
	keySchedDescDayRange     = "schedules.desc.day_range"

	keyRulesTitle         = "rules.title"
	keyRulesTitleEdit     = "rules.title_edit"
	keyRulesNoticeAdded   = "rules.notice.added"
	keyRulesNoticeUpdated = "rules.notice.updated"
	keyRulesNoticeDeleted = "rules.notice.deleted"
	keyRulesChanged       = "rules.error.changed"
	keyRulesTooMany       = "rules.error.too_many"
	keyRuleInvalid        = "rules.error.invalid"
	keyRuleDescTooLong    = "rules.error.description_too_long"
	keyRulesTryTooLarge   = "rules.try.error.too_large"
	keyRulesTryPlatform   = "rules.try.error.platform"
	keyRulesTryPattern    = "rules.try.error.pattern"
	keyRulesByBuiltin     = "rules.try.by_builtin"
	keyRulesByUser        = "rules.try.by_user"
	keyRulesByCandidate   = "rules.try.by_candidate"

	keySettingsTitle         = "settings.title"
	keySettingsNoticeSaved   = "settings.notice.saved"
	keySettingsNoticeApplied = "settings.notice.applied"
	keySettingsNoticePartial = "settings.notice.partial"
	keySettingsKeepLastRange = "settings.error.keep_last"
	keySettingsKeepDaysRange = "settings.error.keep_days"
	keySettingsRetentionBusy = "settings.error.retention_busy"
)

// Weekday names by time.Weekday: short in lists of fire times, long in
// descriptions of a schedule.
var (
	keySchedDayShort = [7]string{
		"schedules.day_short.sun", "schedules.day_short.mon", "schedules.day_short.tue", "schedules.day_short.wed",
		"schedules.day_short.thu", "schedules.day_short.fri", "schedules.day_short.sat",
	}
	keySchedDayLong = [7]string{
		"schedules.day.sun", "schedules.day.mon", "schedules.day.tue", "schedules.day.wed",
		"schedules.day.thu", "schedules.day.fri", "schedules.day.sat",
	}
)

// Message keys of the settings page's outbound connections section.
const (
	keyOutboundNoticeSaved = "settings.outbound.notice.saved"
	keyOutboundErrInvalid  = "settings.outbound.error.invalid"
	keyOutboundErrTooMany  = "settings.outbound.error.too_many"
)
