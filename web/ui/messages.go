package ui

// Message keys used from Go code. Every string literal in a messages*.go
// file is a key of the catalogs (embed/i18n/ui/*.json), and the
// translation test reads them from there; templates name their keys
// themselves. Go code elsewhere in the package names keys through these
// constants only. Each area of the interface may keep its keys in its own
// messages_<area>.go.
const (
	keyTitleHome     = "title.home"
	keyTitleLogin    = "title.login"
	keyTitlePassword = "title.password"
	keyTitleDash     = "title.dashboard"
	keyTitleError    = "title.error"
	keyTitleNotFound = "title.not_found"

	keyNavOverview  = "nav.group.overview"
	keyNavInventory = "nav.group.inventory"
	keyNavBackups   = "nav.group.backups"
	keyNavAdmin     = "nav.group.admin"

	keyNavDashboard   = "nav.dashboard"
	keyNavJobs        = "nav.jobs"
	keyNavSearch      = "nav.search"
	keyNavDevices     = "nav.devices"
	keyNavGroups      = "nav.groups"
	keyNavCredentials = "nav.credentials"
	keyNavTemplates   = "nav.templates"
	keyNavSchedules   = "nav.schedules"
	keyNavRules       = "nav.rules"
	keyNavUsers       = "nav.users"
	keyNavRoles       = "nav.roles"
	keyNavAPIKeys     = "nav.api_keys"
	keyNavAudit       = "nav.audit"
	keyNavSettings    = "nav.settings"

	keyLoginMissing   = "login.error.missing"
	keyLoginFailed    = "login.error.failed"
	keyLoginLockedSec = "login.error.locked_seconds"
	keyLoginLockedMin = "login.error.locked_minutes"
	keyLoginEnded     = "login.notice.ended"
	keyLoginOut       = "login.notice.signed_out"

	keyPasswordWrongCurrent = "password.error.current"
	keyPasswordTooShort     = "password.error.too_short"
	keyPasswordTooLong      = "password.error.too_long"
	keyPasswordMismatch     = "password.error.mismatch"
	keyPasswordSame         = "password.error.same"
	keyPasswordChanged      = "password.notice.changed"

	keyErrNotFound    = "error.not_found"
	keyErrForbidden   = "error.forbidden"
	keyErrCSRF        = "error.csrf"
	keyErrTooLarge    = "error.too_large"
	keyErrInternal    = "error.internal"
	keyErrBadLanguage = "error.bad_language"
)
