package account

// Message keys of signing in with a second factor and of one's own
// second-factor page (texts in embed/i18n/ui/twofactor.*.json).
const (
	keyTitleLogin2FA   = "title.login_2fa"
	keyTitleAccount2FA = "title.account_2fa"

	key2FAMissing        = "twofactor.error.missing"
	key2FAWrong          = "twofactor.error.wrong"
	key2FAReplayed       = "twofactor.error.replayed"
	key2FAConfirmWrong   = "twofactor.error.confirm_wrong"
	key2FARequiredStays  = "twofactor.error.required_stays"
	key2FANotLocal       = "twofactor.error.not_local"
	key2FANoticeDisabled = "twofactor.notice.disabled"
	key2FALockedSec      = "twofactor.error.locked_seconds"
	key2FALockedMin      = "twofactor.error.locked_minutes"
)
