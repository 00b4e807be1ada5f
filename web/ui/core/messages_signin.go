package core

// Message keys of signing out at a single sign-on provider (texts in
// embed/i18n/ui/sso.*.json).
const (
	keyTitleSignOut = "title.sign_out"
)
