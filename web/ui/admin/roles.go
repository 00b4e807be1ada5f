package admin

import (
	"net/http"
	"slices"
	"strconv"

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

func (u *handlers) roles(w http.ResponseWriter, r *http.Request) error {
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
	// Require2FA: the role's holders (local accounts) must use a second
	// factor. A built-in role, read-only otherwise, may still be given
	// the rule (CanSet2FA) in a form of its own.
	Require2FA bool
	CanSet2FA  bool
	Error      string
	Args       []any
	Notice     string
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
func (u *handlers) roleCredentials(r *http.Request, checked []int64, editable bool) ([]roleCredential, error) {
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

func (u *handlers) newRoleForm(w http.ResponseWriter, r *http.Request) error {
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
func (u *handlers) loadRolePage(r *http.Request, id int64) (roleFormPage, db.Role, error) {
	s := core.SessionOf(r)
	ro, err := u.Store.RoleByID(r.Context(), id)
	if err != nil {
		return roleFormPage{}, ro, err
	}
	p := roleFormPage{ID: ro.ID, Name: ro.Name, Description: ro.Description, Builtin: ro.Builtin, All: ro.AllPermissions,
		Require2FA: ro.Require2FA}
	if ro.Builtin {
		p.BuiltinText = builtinRoleDescriptions[ro.Name]
		p.CanSet2FA = s.Can("roles.update")
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
func (u *handlers) roleGrid(s *core.Session, all bool, perms []string, editable bool) []permRow {
	return permGrid(
		func(p string) bool { return all || slices.Contains(perms, p) },
		func(p string) bool { return editable && s.Can(p) })
}

func (u *handlers) roleForm(w http.ResponseWriter, r *http.Request) error {
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
