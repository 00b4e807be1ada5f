package admin

// Message keys of the settings page's syslog section.
const (
	keySyslogNoticeApplied = "settings.syslog.notice.applied"
	keySyslogNoticeSaved   = "settings.syslog.notice.saved"
	keySyslogErrFormat     = "settings.syslog.error.format"
	keySyslogErrTooMany    = "settings.syslog.error.too_many"

	keySyslogErrNameRequired = "settings.syslog.error.name_required"
	keySyslogErrNameTooLong  = "settings.syslog.error.name_too_long"
	keySyslogErrNameTaken    = "settings.syslog.error.name_taken"
	keySyslogErrEmpty        = "settings.syslog.error.pattern_empty"
	keySyslogErrTooLong      = "settings.syslog.error.pattern_too_long"
	keySyslogErrInvalid      = "settings.syslog.error.pattern_invalid"
	keySyslogErrMatchesEmpty = "settings.syslog.error.pattern_matches_empty"
)
