package admin

// Message keys of the sign-in settings (texts in
// embed/i18n/ui/signin.*.json).
const (
	keySignInTitle = "title.signin"

	keySignInLDAPSaved      = "signin.notice.ldap_saved"
	keySignInOIDCSaved      = "signin.notice.oidc_saved"
	keySignInMappingAdded   = "signin.notice.mapping_added"
	keySignInMappingDeleted = "signin.notice.mapping_deleted"

	keySignInErrPermission    = "signin.error.permission"
	keySignInErrAboveYou      = "signin.error.above_you"
	keySignInErrFields        = "signin.error.fields"
	keySignInErrDuration      = "signin.error.duration"
	keySignInErrTooLong       = "signin.error.too_long"
	keySignInErrNoMapping     = "signin.error.no_mapping"
	keySignInErrMappingGroup  = "signin.error.mapping_group"
	keySignInErrMappingExists = "signin.error.mapping_exists"
	keySignInErrMappingLimit  = "signin.error.mapping_limit"

	keyAdminErrExternalPassword = "admin.users.error.external_password"

	keySignInStepSettings    = "signin.step.settings"
	keySignInStepConnect     = "signin.step.connect"
	keySignInStepServiceBind = "signin.step.service_bind"
	keySignInStepUserSearch  = "signin.step.user_search"
	keySignInStepGroups      = "signin.step.groups"
)
