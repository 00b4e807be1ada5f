package schedules

// Message keys of the schedules and change-detection rules pages (texts
// in embed/i18n/ui/settings.*.json).
const (
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
