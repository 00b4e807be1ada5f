package admin

// Message keys of the administration pages (users, roles, API keys, audit
// log) used from Go code; texts in embed/i18n/ui/admin.*.json.
const (
	keyTitleUsers         = "admin.title.users"
	keyTitleUserNew       = "admin.title.user_new"
	keyTitleUserEdit      = "admin.title.user_edit"
	keyTitleUserPassword  = "admin.title.user_password"
	keyTitleRoles         = "admin.title.roles"
	keyTitleRoleNew       = "admin.title.role_new"
	keyTitleRoleEdit      = "admin.title.role_edit"
	keyTitleAPIKeys       = "admin.title.api_keys"
	keyTitleAPIKeyCreated = "admin.title.api_key_created"
	keyTitleAudit         = "admin.title.audit"

	keyAdminUserCreated       = "admin.users.notice.created"
	keyAdminUserUpdated       = "admin.users.notice.updated"
	keyAdminUserDeleted       = "admin.users.notice.deleted"
	keyAdminUserPasswordReset = "admin.users.notice.password"
	keyAdminRoleCreated       = "admin.roles.notice.created"
	keyAdminRoleUpdated       = "admin.roles.notice.updated"
	keyAdminRoleDeleted       = "admin.roles.notice.deleted"
	keyAdminKeyRevokedNotice  = "admin.keys.notice.revoked"

	keyAdminErrBadForm        = "admin.error.bad_form"
	keyAdminErrNoRole         = "admin.error.no_role"
	keyAdminErrUnknownRole    = "admin.error.unknown_role"
	keyAdminErrRoleAboveYou   = "admin.error.role_above_you"
	keyAdminErrScopeAboveYou  = "admin.error.scope_above_you"
	keyAdminErrUnknownGroup   = "admin.error.unknown_group"
	keyAdminErrUsername       = "admin.error.username"
	keyAdminErrUserExists     = "admin.error.user_exists"
	keyAdminErrUserAboveYou   = "admin.error.user_above_you"
	keyAdminErrSelfDeactivate = "admin.error.self_deactivate"
	keyAdminErrSelfReset      = "admin.error.self_reset"
	keyAdminErrSelfDelete     = "admin.error.self_delete"
	keyAdminErrLastAdmin      = "admin.error.last_admin"
	keyAdminErrRoleName       = "admin.error.role_name"
	keyAdminErrDescription    = "admin.error.description"
	keyAdminErrPermAboveYou   = "admin.error.perm_above_you"
	keyAdminErrRoleExists     = "admin.error.role_exists"
	keyAdminErrTooManyRoles   = "admin.error.too_many_roles"
	keyAdminErrBuiltinRole    = "admin.error.builtin_role"
	keyAdminErrRoleInUse      = "admin.error.role_in_use"
	keyAdminErrKeyName        = "admin.error.key_name"
	keyAdminErrKeyExpiry      = "admin.error.key_expiry"
	keyAdminErrKeyExpiryPast  = "admin.error.key_expiry_past"
	keyAdminErrKeyNoPerm      = "admin.error.key_no_permission"
	keyAdminErrAuditFrom      = "admin.error.audit_from"
	keyAdminErrAuditTo        = "admin.error.audit_to"

	keyAdminRoleDescAdministrator = "admin.role.desc.administrator"
	keyAdminRoleDescOperator      = "admin.role.desc.operator"
	keyAdminRoleDescViewer        = "admin.role.desc.viewer"
	keyAdminRoleDescBackupReader  = "admin.role.desc.backup_reader"

	keyAdminIfaceWeb = "admin.audit.iface.web"
	keyAdminIfaceAPI = "admin.audit.iface.api"
	keyAdminIfaceCLI = "admin.audit.iface.cli"
	// keyAdminIfaceSystem is in signin.*.json: the directory sync acts
	// on its own.
	keyAdminIfaceSystem = "admin.audit.iface.system"

	keyAdminKeyActive        = "admin.keys.state.active"
	keyAdminKeyRevoked       = "admin.keys.state.revoked"
	keyAdminKeyExpired       = "admin.keys.state.expired"
	keyAdminKeyOwnerInactive = "admin.keys.state.owner_inactive"
)

// adminResourceLabels are the permission grid's row labels: each key is
// "admin.resource." and the resource's name (see resourceLabels).
var adminResourceLabels = []string{
	"admin.resource.groups",
	"admin.resource.credentials",
	"admin.resource.templates",
	"admin.resource.devices",
	"admin.resource.backups",
	"admin.resource.configs",
	"admin.resource.dashboard",
	"admin.resource.api_keys",
	"admin.resource.users",
	"admin.resource.roles",
	"admin.resource.schedules",
	"admin.resource.settings",
	"admin.resource.audit",
}

// adminActionLabels are the grid's column labels: "admin.action." and
// the action's name.
var adminActionLabels = []string{
	"admin.action.view",
	"admin.action.create",
	"admin.action.update",
	"admin.action.delete",
	"admin.action.use",
	"admin.action.reveal_secrets",
	"admin.action.restore",
	"admin.action.approve",
	"admin.action.push",
}

// Refusals of the role form's credential list (role_save.go).
const (
	keyAdminErrCredentialAboveYou = "admin.error.credential_above_you"
	keyAdminErrCredentialGone     = "admin.error.credential_gone"
)
