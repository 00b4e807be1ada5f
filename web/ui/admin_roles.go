package ui

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

// The roles page: the built-in roles (read-only; each start brings them in
// step with the release) and custom ones. A role's permissions are read on
// every request of a session or API key, so a change applies at once to
// everyone holding it. Nobody grants a permission they do not hold, by
// adding it to a role or by taking it away.

// builtinRoleDescriptions are the built-in roles' descriptions in the
// page's language (the stored ones are English).
var builtinRoleDescriptions = map[string]string{
	auth.RoleAdministrator: keyAdminRoleDescAdministrator,
	auth.RoleOperator:      keyAdminRoleDescOperator,
	auth.RoleViewer:        keyAdminRoleDescViewer,
	auth.RoleBackupReader:  keyAdminRoleDescBackupReader,
}

// rolesPage is the data of roles.html.
type rolesPage struct {
	Builtin []roleRow
	Custom  []roleRow
	Max     int
	Notice  string
}

// roleRow is a listed role. Description is a message key (built-in
// roles), Text the typed description (custom ones).
type roleRow struct {
	ID          int64
	Name        string
	Description string
	Text        string
	All         bool
	Summary     []permLine
	Users       int
	// Credentials is how many credentials the role may use one by one.
	Credentials int
}

var roleNotices = map[string]string{
	"created": keyAdminRoleCreated, "updated": keyAdminRoleUpdated, "deleted": keyAdminRoleDeleted,
}

func (u *UI) roles(w http.ResponseWriter, r *http.Request) error {
	roles, err := u.Store.ListRoles(r.Context())
	if err != nil {
		return err
	}
	p := rolesPage{Max: db.MaxRoles, Notice: core.DoneNotice(r, roleNotices)}
	for _, ro := range roles {
		row := roleRow{ID: ro.ID, Name: ro.Name, All: ro.AllPermissions, Summary: permSummary(ro.Permissions), Users: ro.Users,
			Credentials: len(ro.Credentials)}
		if ro.Builtin {
			row.Description = builtinRoleDescriptions[ro.Name]
		}
		if row.Description == "" {
			row.Text = ro.Description
		}
		if ro.Builtin {
			p.Builtin = append(p.Builtin, row)
		} else {
			p.Custom = append(p.Custom, row)
		}
	}
	return u.Render(w, r, http.StatusOK, "roles.html", keyTitleRoles, p)
}

// roleFormPage is the data of roles_form.html: a new role (New), a custom
// role or a built-in one (read-only).
type roleFormPage struct {
	New         bool
	ID          int64
	Name        string
	Description string
	// BuiltinText is a built-in role's description key.
	BuiltinText string
	Builtin     bool
	All         bool
	Grid        []permRow
	// Credentials are the credentials the role may be let use one by
	// one (beside credentials.use, which is all of them).
	Credentials []roleCredential
	CanEdit     bool
	CanDelete   bool
	// Holders are some of the users holding the role, Users how many.
	Holders     []string
	Users       int
	MoreHolders int
	Error       string
	Args        []any
	Notice      string
}

// shownHolders bounds the names a role page lists.
const shownHolders = 10

// roleCredential is one box of the role form's credential list. Disabled
// boxes are those of credentials the user may not use itself: nobody
// grants what they do not hold.
type roleCredential struct {
	ID       int64
	Name     string
	Checked  bool
	Disabled bool
}

// roleCredentials lists every credential for the form, ticking checked;
// the boxes the user may change are those of credentials it may use, when
// it may edit.
func (u *UI) roleCredentials(r *http.Request, checked []int64, editable bool) ([]roleCredential, error) {
	s := core.SessionOf(r)
	all, err := u.Store.DeviceCredentialChoices(r.Context(), db.CredentialScope{All: true})
	if err != nil {
		return nil, err
	}
	out := make([]roleCredential, 0, len(all))
	for _, c := range all {
		out = append(out, roleCredential{ID: c.ID, Name: c.Name, Checked: slices.Contains(checked, c.ID),
			Disabled: !editable || !s.Principal().CanUseCredential(c.ID)})
	}
	return out, nil
}

// formCredentials reads the "credential" boxes; ok is false when one is
// not an id.
func formCredentials(r *http.Request) (ids []int64, ok bool) {
	for _, v := range r.PostForm["credential"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, false
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, true
}

// ungrantableCredential returns the first credential in the difference
// of before and after that s may not use, 0 when none.
func ungrantableCredential(s *core.Session, before, after []int64) int64 {
	for _, list := range [][]int64{before, after} {
		for _, id := range list {
			if slices.Contains(before, id) != slices.Contains(after, id) && !s.Principal().CanUseCredential(id) {
				return id
			}
		}
	}
	return 0
}

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

func (u *UI) newRoleForm(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	p := roleFormPage{New: true, CanEdit: true}
	p.Grid = permGrid(func(string) bool { return false }, s.Can)
	var err error
	if p.Credentials, err = u.roleCredentials(r, nil, true); err != nil {
		return err
	}
	return u.Render(w, r, http.StatusOK, "roles_form.html", keyTitleRoleNew, p)
}

// loadRolePage is the form of an existing role as it stands.
func (u *UI) loadRolePage(r *http.Request, id int64) (roleFormPage, db.Role, error) {
	s := core.SessionOf(r)
	ro, err := u.Store.RoleByID(r.Context(), id)
	if err != nil {
		return roleFormPage{}, ro, err
	}
	p := roleFormPage{ID: ro.ID, Name: ro.Name, Description: ro.Description, Builtin: ro.Builtin, All: ro.AllPermissions}
	if ro.Builtin {
		p.BuiltinText = builtinRoleDescriptions[ro.Name]
	} else {
		p.CanEdit = s.Can("roles.update")
		p.CanDelete = s.Can("roles.delete")
	}
	if p.Holders, err = u.Store.RoleHolders(r.Context(), id, shownHolders); err != nil {
		return p, ro, err
	}
	roles, err := u.Store.ListRoles(r.Context())
	if err != nil {
		return p, ro, err
	}
	if i := slices.IndexFunc(roles, func(x db.RoleSummary) bool { return x.ID == id }); i >= 0 {
		p.Users = roles[i].Users
	}
	p.MoreHolders = max(p.Users-len(p.Holders), 0)
	p.Grid = u.roleGrid(s, ro.AllPermissions, ro.Permissions, p.CanEdit)
	if p.Credentials, err = u.roleCredentials(r, ro.Credentials, p.CanEdit); err != nil {
		return p, ro, err
	}
	return p, ro, nil
}

// roleGrid ticks perms (all of them for an all-permissions role); the
// boxes the user may change are those it holds, when it may edit.
func (u *UI) roleGrid(s *core.Session, all bool, perms []string, editable bool) []permRow {
	return permGrid(
		func(p string) bool { return all || slices.Contains(perms, p) },
		func(p string) bool { return editable && s.Can(p) })
}

func (u *UI) roleForm(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	p, _, err := u.loadRolePage(r, id)
	if err != nil {
		return err
	}
	p.Notice = core.DoneNotice(r, roleNotices)
	return u.Render(w, r, http.StatusOK, "roles_form.html", keyTitleRoleEdit, p)
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

// ungrantable returns the first permission in the difference of before
// and after that s does not hold, "" when none.
func ungrantable(s *core.Session, before, after []string) string {
	for _, p := range auth.Permissions {
		if slices.Contains(before, p) != slices.Contains(after, p) && !s.Can(p) {
			return p
		}
	}
	return ""
}

func (u *UI) createRole(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	s := core.SessionOf(r)
	name, description, perms, msg, args := readRole(r)
	creds, credsOK := formCredentials(r)
	if !credsOK && msg == "" {
		msg = keyAdminErrBadForm
	}
	p := roleFormPage{New: true, CanEdit: true, Name: core.Truncate(name, 4*core.MaxNameChars), Description: core.Truncate(description, 4*maxDescriptionChars)}
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
	if bad := ungrantable(s, nil, perms); bad != "" {
		return fail(http.StatusForbidden, keyAdminErrPermAboveYou, bad)
	}
	if bad := ungrantableCredential(s, nil, creds); bad != 0 {
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

func (u *UI) updateRole(w http.ResponseWriter, r *http.Request) error {
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
		return &core.PageError{Status: http.StatusConflict, Message: keyAdminErrBuiltinRole}
	}
	name, description, perms, msg, args := readRole(r)
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
	for _, perm := range ro.Permissions {
		if auth.IsPermission(perm) && !s.Can(perm) && !slices.Contains(perms, perm) {
			perms = append(perms, perm)
		}
	}
	if bad := ungrantable(s, ro.Permissions, perms); bad != "" {
		return fail(http.StatusForbidden, keyAdminErrPermAboveYou, bad)
	}
	// Likewise the credentials the user may not use keep their state.
	for _, c := range ro.Credentials {
		if !s.Principal().CanUseCredential(c) && !slices.Contains(creds, c) {
			creds = append(creds, c)
		}
	}
	slices.Sort(creds)
	if bad := ungrantableCredential(s, ro.Credentials, creds); bad != 0 {
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

func (u *UI) deleteRole(w http.ResponseWriter, r *http.Request) error {
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
func (u *UI) credentialsExist(r *http.Request, ids []int64) (bool, error) {
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
