package core

// Message keys used from Go code. Every string literal in a messages*.go
// file of web/ui and its rooms is a key of the catalogs
// (embed/i18n/ui/*.json), and the translation test reads them from there;
// templates name their keys themselves. Go code elsewhere names keys
// through these constants only. Each room keeps its keys in its own
// messages*.go; the ones here are the core's own, and (exported) those
// several rooms share.
const (
	keyReasonConnect            = "reason.connect"
	keyReasonAuth               = "reason.auth"
	keyReasonHostKeyChanged     = "reason.host_key_changed"
	keyReasonTimeout            = "reason.timeout"
	keyReasonEnable             = "reason.enable"
	keyReasonOutputTooLarge     = "reason.output_too_large"
	keyReasonProtocol           = "reason.protocol"
	keyReasonRefused            = "reason.address_refused"
	keyReasonAddressUnconfirmed = "reason.address_unconfirmed"
	keyReasonNoCredential       = "reason.no_credential"
	keyReasonConfig             = "reason.config"
	keyReasonEmpty              = "reason.empty"
	keyReasonInterrupted        = "reason.interrupted"
	keyReasonCancelled          = "reason.cancelled"

	keyTitleError     = "title.error"
	keyTitleForbidden = "title.forbidden"

	keyRoleAdministrator = "role.name.administrator"
	keyRoleOperator      = "role.name.operator"
	keyRoleViewer        = "role.name.viewer"
	keyRoleBackupReader  = "role.name.backup_reader"
	keyTitleNotFound     = "title.not_found"

	keyNavOverview  = "nav.group.overview"
	keyNavInventory = "nav.group.inventory"
	keyNavBackups   = "nav.group.backups"
	keyNavAdmin     = "nav.group.admin"

	keyNavDashboard     = "nav.dashboard"
	keyNavJobs          = "nav.jobs"
	keyNavSearch        = "nav.search"
	keyNavChanges       = "nav.changes"
	keyNavDevices       = "nav.devices"
	keyNavGroups        = "nav.groups"
	keyNavCredentials   = "nav.credentials"
	keyNavTemplates     = "nav.templates"
	keyNavSchedules     = "nav.schedules"
	keyNavRules         = "nav.rules"
	keyNavUsers         = "nav.users"
	keyNavRoles         = "nav.roles"
	keyNavAPIKeys       = "nav.api_keys"
	keyNavAudit         = "nav.audit"
	keyNavSettings      = "nav.settings"
	keyNavNotifications = "nav.notifications"
	keyNavPlatforms     = "nav.platforms"
	keyNavCollectors    = "nav.collectors"
	keyNavRestores      = "nav.restores"
	keyNavChangeSets    = "nav.changesets"

	keyErrNotFound    = "error.not_found"
	keyErrForbidden   = "error.forbidden"
	keyErrCSRF        = "error.csrf"
	keyErrTooLarge    = "error.too_large"
	keyErrInternal    = "error.internal"
	keyErrBadLanguage = "error.bad_language"

	// KeyPasswordTooShort, KeyPasswordTooLong and KeyPasswordMismatch
	// refuse a new password, one's own or another user's.
	KeyPasswordTooShort = "password.error.too_short"
	KeyPasswordTooLong  = "password.error.too_long"
	KeyPasswordMismatch = "password.error.mismatch"

	keyTargetNoDevices      = "schedules.error.no_devices"
	keyTargetTooManyDevices = "schedules.error.too_many_devices"
	keyTargetUnknownDevices = "schedules.error.unknown_devices"

	// KeyListSep joins the items of a list written out in a sentence
	// ("Core, Campus").
	KeyListSep = "schedules.list_separator"
)
