package admin

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// Creating, changing and deleting a role: nobody grants a permission or
// a credential they do not hold, by adding it or by taking it away.

// idDiff is what after adds to before, and what it takes away.
func idDiff(before, after []int64) (added, removed []int64) {
	added, removed = []int64{}, []int64{}
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, id)
		}
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			removed = append(removed, id)
		}
	}
	return added, removed
}

// readRole reads the name, description and permissions of the role form.
// A refusal is a message key with arguments.
func readRole(r *http.Request) (name, description string, perms []string, msg string, args []any) {
	name = strings.TrimSpace(r.PostFormValue("name"))
	description = strings.TrimSpace(r.PostFormValue("description"))
	perms, ok := formPermissions(r)
	switch {
	case !ok:
		return name, description, nil, keyAdminErrBadForm, nil
	case name == "" || core.NameLength(name) > core.MaxNameChars:
		return name, description, perms, keyAdminErrRoleName, []any{core.MaxNameChars}
	case core.NameLength(description) > maxDescriptionChars:
		return name, description, perms, keyAdminErrDescription, []any{maxDescriptionChars}
	}
	return name, description, perms, "", nil
}

func (u *handlers) createRole(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	s := core.SessionOf(r)
	name, description, perms, msg, args := readRole(r)
	creds, credsOK := formCredentials(r)
	if !credsOK && msg == "" {
		msg = keyAdminErrBadForm
	}
	require2FA := r.PostFormValue("require_2fa") != ""
	p := roleFormPage{New: true, CanEdit: true, Name: core.Truncate(name, 4*core.MaxNameChars), Description: core.Truncate(description, 4*maxDescriptionChars),
		Require2FA: require2FA}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		p.Grid = u.roleGrid(s, false, perms, true)
		var err error
		if p.Credentials, err = u.roleCredentials(r, creds, true); err != nil {
			return err
		}
		return u.Render(w, r, status, "roles_form.html", keyTitleRoleNew, p)
	}
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	if bad := s.Principal().Ungrantable(nil, perms); bad != "" {
		return fail(http.StatusForbidden, keyAdminErrPermAboveYou, bad)
	}
	if bad := s.Principal().UngrantableCredential(nil, creds); bad != 0 {
		return fail(http.StatusForbidden, keyAdminErrCredentialAboveYou, bad)
	}
	if len(creds) > 0 {
		if ok, err := u.credentialsExist(r, creds); err != nil {
			return err
		} else if !ok {
			return fail(http.StatusConflict, keyAdminErrCredentialGone)
		}
	}
	id, err := u.Store.CreateRole(r.Context(), name, description, perms)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyAdminErrRoleExists, name)
	case errors.Is(err, db.ErrTooManyRoles):
		return fail(http.StatusConflict, keyAdminErrTooManyRoles, db.MaxRoles)
	case err != nil:
		return err
	}
	details := map[string]any{"name": name, "permissions": orEmpty(perms)}
	if require2FA {
		// A second statement: should it fail, the role exists without
		// holders yet, and the form says so.
		if err := u.Store.SetRoleRequire2FA(r.Context(), id, true); err != nil {
			return err
		}
		details["require_2fa"] = true
	}
	if len(creds) > 0 {
		// A second transaction: should it fail, the role exists with
		// fewer grants, never more.
		if err := u.Store.SetRoleCredentials(r.Context(), id, creds); err != nil {
			return err
		}
		details["credentials"] = creds
	}
	u.Audit(r, "role.create", "role", id, details)
	core.RedirectDone(w, r, "/roles/"+strconv.FormatInt(id, 10), "created")
	return nil
}

func (u *handlers) updateRole(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	s := core.SessionOf(r)
	p, ro, err := u.loadRolePage(r, id)
	if err != nil {
		return err
	}
	if ro.Builtin {
		if r.PostFormValue("part") == "two_factor" {
			return u.saveRoleTwoFactor(w, r, ro)
		}
		return &core.PageError{Status: http.StatusConflict, Message: keyAdminErrBuiltinRole}
	}
	name, description, perms, msg, args := readRole(r)
	p.Require2FA = r.PostFormValue("require_2fa") != ""
	creds, credsOK := formCredentials(r)
	if !credsOK && msg == "" {
		msg = keyAdminErrBadForm
	}
	p.Name, p.Description = core.Truncate(name, 4*core.MaxNameChars), core.Truncate(description, 4*maxDescriptionChars)
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		p.Grid = u.roleGrid(s, false, perms, true)
		var err error
		if p.Credentials, err = u.roleCredentials(r, creds, true); err != nil {
			return err
		}
		return u.Render(w, r, status, "roles_form.html", keyTitleRoleEdit, p)
	}
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	// Boxes the user may not change are sent by nobody (they are
	// disabled): they keep their state.
	perms, creds = s.Principal().KeepUngrantable(ro, perms, creds)
	if bad := s.Principal().Ungrantable(ro.Permissions, perms); bad != "" {
		return fail(http.StatusForbidden, keyAdminErrPermAboveYou, bad)
	}
	if bad := s.Principal().UngrantableCredential(ro.Credentials, creds); bad != 0 {
		return fail(http.StatusForbidden, keyAdminErrCredentialAboveYou, bad)
	}
	if ok, err := u.credentialsExist(r, creds); err != nil {
		return err
	} else if !ok {
		return fail(http.StatusConflict, keyAdminErrCredentialGone)
	}
	err = u.Store.UpdateRole(r.Context(), id, name, description, perms)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyAdminErrRoleExists, name)
	case errors.Is(err, db.ErrBuiltinRole):
		return fail(http.StatusConflict, keyAdminErrBuiltinRole)
	case err != nil:
		return err
	}
	var added, removed []string
	for _, perm := range auth.Permissions {
		was, is := slices.Contains(ro.Permissions, perm), slices.Contains(perms, perm)
		if is && !was {
			added = append(added, perm)
		}
		if was && !is {
			removed = append(removed, perm)
		}
	}
	details := map[string]any{"name": name, "added": orEmpty(added), "removed": orEmpty(removed)}
	if name != ro.Name {
		details["old_name"] = ro.Name
	}
	if p.Require2FA != ro.Require2FA {
		if err := u.Store.SetRoleRequire2FA(r.Context(), id, p.Require2FA); err != nil {
			return err
		}
		details["require_2fa"] = p.Require2FA
	}
	if credsAdded, credsRemoved := idDiff(ro.Credentials, creds); len(credsAdded)+len(credsRemoved) > 0 {
		if err := u.Store.SetRoleCredentials(r.Context(), id, creds); err != nil {
			return err
		}
		details["credentials_added"], details["credentials_removed"] = credsAdded, credsRemoved
	}
	u.Audit(r, "role.update", "role", id, details)
	core.RedirectDone(w, r, "/roles/"+strconv.FormatInt(id, 10), "updated")
	return nil
}

// saveRoleTwoFactor sets whether a built-in role's holders must use a
// second factor: the one thing of a built-in role that may change, as
// its permissions are what most needs guarding.
func (u *handlers) saveRoleTwoFactor(w http.ResponseWriter, r *http.Request, ro db.Role) error {
	on := r.PostFormValue("require_2fa") != ""
	if on != ro.Require2FA {
		if err := u.Store.SetRoleRequire2FA(r.Context(), ro.ID, on); err != nil {
			return err
		}
		u.Audit(r, "role.update", "role", ro.ID, map[string]any{"name": ro.Name, "require_2fa": on})
	}
	core.RedirectDone(w, r, "/roles/"+strconv.FormatInt(ro.ID, 10), "updated")
	return nil
}

func (u *handlers) deleteRole(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	p, ro, err := u.loadRolePage(r, id)
	if err != nil {
		return err
	}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.Render(w, r, status, "roles_form.html", keyTitleRoleEdit, p)
	}
	switch err := u.Store.DeleteRole(r.Context(), id); {
	case errors.Is(err, db.ErrBuiltinRole):
		return fail(http.StatusConflict, keyAdminErrBuiltinRole)
	case errors.Is(err, db.ErrRoleInUse):
		return fail(http.StatusConflict, keyAdminErrRoleInUse, p.Users)
	case err != nil:
		return err
	}
	u.Audit(r, "role.delete", "role", id, map[string]any{"name": ro.Name, "permissions": orEmpty(ro.Permissions)})
	core.RedirectDone(w, r, "/roles", "deleted")
	return nil
}

// credentialsExist reports whether every credential of ids exists.
func (u *handlers) credentialsExist(r *http.Request, ids []int64) (bool, error) {
	all, err := u.Store.DeviceCredentialChoices(r.Context(), db.CredentialScope{IDs: ids})
	if err != nil {
		return false, err
	}
	return len(all) == len(ids), nil
}

// orEmpty is a list for the audit log: empty rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
