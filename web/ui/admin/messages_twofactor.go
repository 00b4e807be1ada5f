package admin

// Message keys of the second factor on the users and roles pages (texts
// in embed/i18n/ui/twofactor.*.json).
const (
	keyAdmin2FAReset   = "admin.users.2fa.notice_reset"
	keyAdminErr2FASelf = "admin.users.2fa.error_self"
)
