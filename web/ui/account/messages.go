package account

// Message keys of the sign-in, password and home pages (texts in
// embed/i18n/ui/core.*.json).
const (
	keyTitleHome     = "title.home"
	keyTitleLogin    = "title.login"
	keyTitlePassword = "title.password"

	keyLoginMissing   = "login.error.missing"
	keyLoginFailed    = "login.error.failed"
	keyLoginLockedSec = "login.error.locked_seconds"
	keyLoginLockedMin = "login.error.locked_minutes"
	keyLoginEnded     = "login.notice.ended"
	keyLoginOut       = "login.notice.signed_out"
	// keyLoginDirectoryDown is in embed/i18n/ui/signin.*.json.
	keyLoginDirectoryDown = "login.error.directory_down"
	keyPasswordExternal   = "password.error.external"

	keyPasswordWrongCurrent = "password.error.current"
	keyPasswordSame         = "password.error.same"
	keyPasswordChanged      = "password.notice.changed"
)
