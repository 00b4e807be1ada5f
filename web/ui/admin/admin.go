// Package admin is the room of who may do what and how the appliance is
// set: users (their roles and device groups), roles (their permissions
// and the credentials they may use), API keys, the audit log, and the
// settings page (retention, the syslog trigger, the git mirror, outbound
// connections, restores, and facts about the server and its nodes). Nobody hands
// out more than they hold: a role is granted, a permission or credential
// put in a role or a key, and a user changed only by someone who holds
// all of it (app/auth's Principal says who holds what).
package admin

import (
	"net/http"

	"backupd/web/ui/core"
)

// handlers are the administration pages.
type handlers struct{ *core.UI }

// Mount registers users, roles, API keys, the audit log and the settings
// page on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathUsers, "users.view", u.users)
	mux.Handle("GET /users/new", u.Page("users.create", u.newUserForm))
	mux.Handle("POST /users", u.Page("users.create", u.createUser))
	mux.Handle("GET /users/{id}", u.Page("users.view", u.userForm))
	mux.Handle("POST /users/{id}", u.Page("users.update", u.updateUser))
	mux.Handle("POST /users/{id}/password", u.Page("users.update", u.resetUserPassword))
	mux.Handle("POST /users/{id}/2fa/reset", u.Page("users.update", u.resetUserTwoFactor))
	mux.Handle("POST /users/{id}/delete", u.Page("users.delete", u.deleteUser))

	u.MountPage(mux, "GET "+core.PathRoles, "roles.view", u.roles)
	mux.Handle("GET /roles/new", u.Page("roles.create", u.newRoleForm))
	mux.Handle("POST /roles", u.Page("roles.create", u.createRole))
	mux.Handle("GET /roles/{id}", u.Page("roles.view", u.roleForm))
	mux.Handle("POST /roles/{id}", u.Page("roles.update", u.updateRole))
	mux.Handle("POST /roles/{id}/delete", u.Page("roles.delete", u.deleteRole))

	u.MountPage(mux, "GET "+core.PathAPIKeys, "api_keys.view", u.apiKeys)
	mux.Handle("POST /api-keys", u.Page("api_keys.create", u.createAPIKey))
	mux.Handle("POST /api-keys/{id}/revoke", u.Page("api_keys.delete", u.revokeAPIKey))

	u.MountPage(mux, "GET "+core.PathAudit, "audit.view", u.auditLog)

	u.MountPage(mux, "GET "+core.PathSettings, "settings.view", u.settings)
	mux.Handle("POST /settings/retention", u.Page("settings.update", u.saveRetention))
	mux.Handle("POST /settings/retention/apply", u.Page("backups.delete", u.applyRetention))
	mux.Handle("POST /settings/syslog", u.Page("settings.update", u.saveSyslogPatterns))
	mux.Handle("POST /settings/git", u.Page("settings.update", u.saveGit))
	mux.Handle("POST /settings/outbound", u.Page("settings.update", u.saveOutbound))
	mux.Handle("POST /settings/secrets", u.Page("settings.update", u.saveSecrets))
	mux.Handle("POST /settings/restore", u.Page("settings.update", u.saveRestore))
	mux.Handle("GET "+pathSecretsReport, u.Page("settings.view", u.secretsReport))
	mux.Handle("GET "+pathSignIn, u.Page("settings.view", u.signInSettings))
	mux.Handle("POST "+pathSignIn+"/ldap", u.Page("settings.update", u.saveLDAP))
	mux.Handle("POST "+pathSignIn+"/ldap/test", u.Page("settings.update", u.testLDAP))
	mux.Handle("POST "+pathSignIn+"/ldap/sync", u.Page("settings.update", u.syncNow))
	mux.Handle("POST "+pathSignIn+"/oidc", u.Page("settings.update", u.saveOIDC))
	mux.Handle("POST "+pathSignIn+"/mappings", u.Page("settings.update", u.saveMapping))
	// Changing or running an inventory source also needs devices.create,
	// devices.update and every device group (canEditInventory).
	mux.Handle("GET "+pathInventorySources, u.Page("settings.view", u.inventorySources))
	mux.Handle("GET "+pathInventorySources+"/new", u.Page("settings.update", u.newInventorySource))
	mux.Handle("POST "+pathInventorySources, u.Page("settings.update", u.createInventorySource))
	mux.Handle("GET "+pathInventorySources+"/{id}", u.Page("settings.update", u.editInventorySource))
	mux.Handle("POST "+pathInventorySources+"/{id}", u.Page("settings.update", u.updateInventorySource))
	mux.Handle("POST "+pathInventorySources+"/{id}/delete", u.Page("settings.update", u.deleteInventorySource))
	mux.Handle("POST "+pathInventorySources+"/{id}/dry-run", u.Page("settings.update", u.dryRunInventorySource))
	mux.Handle("POST "+pathInventorySources+"/{id}/sync", u.Page("settings.update", u.syncInventorySource))
}

// Length limit of the administration forms' descriptions (as the
// public API's); names are held to core.MaxNameChars.
const maxDescriptionChars = 2000

// Admin lists show this many rows a page.
const adminPageSize = 50

// maxAdminPage bounds the page number a link may ask for, and with it the
// rows a request may skip.
const maxAdminPage = 10000
