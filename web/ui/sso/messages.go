package sso

// Message keys of single sign-on (texts in embed/i18n/ui/sso.*.json;
// the sign-in page's own in core.*.json).
const (
	keyTitleLogin = "title.login"

	keyDisabled     = "sso.error.disabled"
	keyUnreachable  = "sso.error.unreachable"
	keyBusy         = "sso.error.busy"
	keyStale        = "sso.error.stale"
	keyDenied       = "sso.error.denied"
	keyVerify       = "sso.error.verify"
	keyClaims       = "sso.error.claims"
	keyNotMapped    = "sso.error.not_mapped"
	keyLocalAccount = "sso.error.local_account"
	keyUserDisabled = "sso.error.user_disabled"
	keyOtherPerson  = "sso.error.other_person"
)
