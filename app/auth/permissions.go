// Package auth holds users, roles, permissions, API keys and passwords.
package auth

import "slices"

// Permission names an action a role may allow, "resource.action".
type Permission = string

// PermCredentialsUse lets a user use every credential: attach it to a
// device, or send a device's credential to a new address (host, port,
// login method or zone). A role may instead grant the use of listed
// credentials (db.SetRoleCredentials); see Principal.CanUseCredential.
const PermCredentialsUse = "credentials.use"

// PermRevealSecrets lets a user see the secrets inside configurations
// (passwords, keys, communities) that the web pages, the CLI and, when
// the administrator asks, the public API otherwise mask (app/redact).
// Each reveal is audited.
const PermRevealSecrets = "configs.reveal_secrets"

// PermRestore lets a user request that a stored version be put back on a
// device (a restore), within the user's device groups.
const PermRestore = "configs.restore"

// PermApprove lets a user approve or reject restores and change sets:
// nothing changes a device's configuration before someone holding it
// agreed.
const PermApprove = "configs.approve"

// PermPush lets a user create change sets: commands to send to many
// devices.
const PermPush = "configs.push"

// The permission catalogue. Anything not listed here is not a permission.
var Permissions = []Permission{
	"groups.view", "groups.create", "groups.update", "groups.delete",
	"credentials.view", "credentials.create", "credentials.update", "credentials.delete", PermCredentialsUse,
	"templates.view", "templates.create", "templates.update", "templates.delete",
	"devices.view", "devices.create", "devices.update", "devices.delete",
	"backups.view", "backups.create", "backups.delete",
	PermRevealSecrets, PermRestore, PermApprove, PermPush,
	"dashboard.view",
	"api_keys.view", "api_keys.create", "api_keys.delete",
	"users.view", "users.create", "users.update", "users.delete",
	"roles.view", "roles.create", "roles.update", "roles.delete",
	"schedules.view", "schedules.create", "schedules.update", "schedules.delete",
	"settings.view", "settings.update",
	"audit.view",
}

// IsPermission reports whether p is in the catalogue.
func IsPermission(p string) bool { return slices.Contains(Permissions, p) }

// Role names of the built-in roles.
const (
	RoleAdministrator = "Administrator"
	RoleOperator      = "Operator"
	RoleViewer        = "Viewer"
	RoleBackupReader  = "Backup reader"
)

// BuiltinRole describes a role created on every fresh install.
type BuiltinRole struct {
	Name           string
	Description    string
	AllPermissions bool
	Permissions    []Permission
}

// BuiltinRoles are created on first start and kept in step on upgrades:
// a permission added to one here is granted to its holders on every
// install that upgrades. Only the Administrator, who holds every
// permission, may change configurations on devices (configs.restore,
// configs.approve, configs.push) until an administrator grants them.
var BuiltinRoles = []BuiltinRole{
	{
		Name:           RoleAdministrator,
		Description:    "Every permission, including ones added by later releases.",
		AllPermissions: true,
	},
	{
		Name:        RoleOperator,
		Description: "Runs the inventory and backups day to day; cannot manage users, roles or settings.",
		Permissions: []Permission{
			"groups.view", "groups.create", "groups.update", "groups.delete",
			"credentials.view", "credentials.create", "credentials.update", "credentials.delete", PermCredentialsUse,
			"templates.view", "templates.create", "templates.update", "templates.delete",
			"devices.view", "devices.create", "devices.update", "devices.delete",
			"backups.view", "backups.create",
			"dashboard.view",
			"api_keys.view", "api_keys.create", "api_keys.delete",
			"schedules.view", "schedules.create", "schedules.update", "schedules.delete",
			"settings.view",
		},
	},
	{
		Name:        RoleViewer,
		Description: "Reads the inventory, backups and dashboard; changes nothing.",
		Permissions: []Permission{
			"groups.view", "credentials.view", "templates.view", "devices.view",
			"backups.view", "dashboard.view", "schedules.view",
		},
	},
	{
		Name:        RoleBackupReader,
		Description: "Reads backup history and configuration text only.",
		Permissions: []Permission{"backups.view"},
	},
}
