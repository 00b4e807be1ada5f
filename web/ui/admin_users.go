package ui

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The users page: who may sign in, with which roles and which device
// groups. Nobody hands out more than they hold: a role is granted only by
// someone holding all its permissions, a group only by someone who sees
// it, and a user is changed only by someone holding everything that user
// holds (else a helpdesk account with users.update could reset an
// administrator's password and become one).

// usersPage is the data of users.html.
type usersPage struct {
	Q      string
	Users  []userRow
	Total  int
	Pager  core.Pager
	Notice string
}

// userRow is a listed user; at most shownGroups group names are listed,
// MoreGroups counts the rest.
type userRow struct {
	db.UserSummary
	MoreGroups int
	Self       bool
}

const shownGroups = 3

var userNotices = map[string]string{
	"created": keyAdminUserCreated, "updated": keyAdminUserUpdated,
	"deleted": keyAdminUserDeleted, "password": keyAdminUserPasswordReset,
}

func (u *UI) users(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	q = core.Truncate(q, core.MaxUsernameBytes)
	n := core.PageNumber(r, maxAdminPage)
	list, total, err := u.Store.UserPage(r.Context(), q, adminPageSize, (n-1)*adminPageSize)
	if err != nil {
		return err
	}
	p := usersPage{Q: q, Total: total, Pager: core.NewPager(r, n, adminPageSize, total), Notice: core.DoneNotice(r, userNotices)}
	self := core.SessionOf(r).UserID
	for _, us := range list {
		row := userRow{UserSummary: us, Self: us.ID == self}
		if len(us.Groups) > shownGroups {
			row.MoreGroups = len(us.Groups) - shownGroups
			row.Groups = us.Groups[:shownGroups]
		}
		p.Users = append(p.Users, row)
	}
	return u.Render(w, r, http.StatusOK, "users.html", keyTitleUsers, p)
}

// userFormPage is the data of users_form.html: a new user (New) or an
// existing one.
type userFormPage struct {
	New      bool
	ID       int64
	Username string
	Self     bool
	// PasswordMode is "generate" or "set" (new users).
	PasswordMode string
	MustChange   bool
	Active       bool
	AllGroups    bool
	Roles        []roleChoice
	Groups       []groupChoice
	// Existing users: what the audit log knows and what this user may do.
	CreatedAt   time.Time
	LastLoginAt *time.Time
	CanEdit     bool
	CanDelete   bool
	// Locked: the user holds more than the signed-in one, who may only
	// look.
	Locked    bool
	MinLength int
	Error     string
	Args      []any
	Notice    string
}

// roleChoice is a role checkbox; Disabled ones the signed-in user may not
// grant. Description is a message key for built-in roles, Text for
// custom ones.
type roleChoice struct {
	ID          int64
	Name        string
	Description string
	Text        string
	Checked     bool
	Disabled    bool
}

// groupChoice is a group checkbox, in tree order; Depth indents it.
type groupChoice struct {
	ID       int64
	Name     string
	Depth    int
	Checked  bool
	Disabled bool
}

func (u *UI) newUserForm(w http.ResponseWriter, r *http.Request) error {
	p := userFormPage{New: true, PasswordMode: "generate", MustChange: true, Active: true}
	// The least role is ticked, as the command line defaults to it.
	var roleIDs []int64
	if viewer, err := u.Store.RoleByName(r.Context(), auth.RoleViewer); err == nil {
		roleIDs = []int64{viewer.ID}
	}
	return u.renderUserForm(w, r, http.StatusOK, p, roleIDs, nil)
}

// renderUserForm fills the role and group choices (roleIDs and groupIDs
// ticked) and renders the form.
func (u *UI) renderUserForm(w http.ResponseWriter, r *http.Request, status int, p userFormPage, roleIDs, groupIDs []int64) error {
	s := core.SessionOf(r)
	roles, err := u.Store.ListRoles(r.Context())
	if err != nil {
		return err
	}
	editable := p.New || p.CanEdit
	for _, ro := range roles {
		c := roleChoice{ID: ro.ID, Name: ro.Name, Checked: slices.Contains(roleIDs, ro.ID),
			Disabled: !editable || !canGrantRole(s, ro.Role)}
		if ro.Builtin {
			c.Description = builtinRoleDescriptions[ro.Name]
		}
		if c.Description == "" {
			c.Text = ro.Description
		}
		p.Roles = append(p.Roles, c)
	}
	tree, err := u.loadGroupTree(r.Context())
	if err != nil {
		return err
	}
	scope := s.Scope()
	for _, g := range tree.ordered() {
		p.Groups = append(p.Groups, groupChoice{ID: g.ID, Name: g.Name, Depth: min(g.Depth, maxIndent),
			Checked: slices.Contains(groupIDs, g.ID), Disabled: !editable || !tree.covers(scope, g.ID)})
	}
	p.MinLength = auth.MinPasswordLength
	title := keyTitleUserNew
	if !p.New {
		title = keyTitleUserEdit
	}
	return u.Render(w, r, status, "users_form.html", title, p)
}

// maxIndent is the deepest indentation the group picker draws.
const maxIndent = 6

// userInput is what the create and edit forms send about roles and
// scope.
type userInput struct {
	roleIDs   []int64
	allGroups bool
	groupIDs  []int64
}

// readAccess reads and checks roles and scope: known roles the user may
// grant, at least one; groups the user sees. A refusal is a message key
// with its arguments.
func (u *UI) readAccess(ctx context.Context, r *http.Request) (in userInput, msg string, args []any, err error) {
	s := core.SessionOf(r)
	roleIDs, ok := core.FormIDs(r, "role")
	groupIDs, ok2 := core.FormIDs(r, "group")
	if !ok || !ok2 {
		return in, keyAdminErrBadForm, nil, nil
	}
	in = userInput{roleIDs: roleIDs, allGroups: r.PostFormValue("scope") == "all", groupIDs: groupIDs}
	if in.allGroups {
		in.groupIDs = nil
	}
	if len(roleIDs) == 0 {
		return in, keyAdminErrNoRole, nil, nil
	}
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return in, "", nil, err
	}
	for _, id := range roleIDs {
		i := slices.IndexFunc(roles, func(ro db.RoleSummary) bool { return ro.ID == id })
		if i < 0 {
			return in, keyAdminErrUnknownRole, nil, nil
		}
		if !canGrantRole(s, roles[i].Role) {
			return in, keyAdminErrRoleAboveYou, []any{roles[i].Name}, nil
		}
	}
	tree, err := u.loadGroupTree(ctx)
	if err != nil {
		return in, "", nil, err
	}
	scope := s.Scope()
	if in.allGroups && !scope.All {
		return in, keyAdminErrScopeAboveYou, nil, nil
	}
	for _, id := range in.groupIDs {
		if _, ok := tree.byID[id]; !ok {
			return in, keyAdminErrUnknownGroup, nil, nil
		}
		if !tree.covers(scope, id) {
			return in, keyAdminErrScopeAboveYou, nil, nil
		}
	}
	return in, "", nil, nil
}

// roleNames names roleIDs, for the audit log.
func (u *UI) roleNames(ctx context.Context, roleIDs []int64) ([]string, error) {
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, ro := range roles {
		if slices.Contains(roleIDs, ro.ID) {
			names = append(names, ro.Name)
		}
	}
	return names, nil
}

// validUsername applies the CLI's rule: 1 to 128 characters, no spaces.
func validUsername(name string) bool {
	return name != "" && core.NameLength(name) <= core.MaxUsernameBytes && len(name) <= core.MaxUsernameBytes &&
		!strings.ContainsAny(name, " \t\r\n")
}

// readNewPassword reads a password form: generated (returned, to be shown
// once) or typed, following auth.CheckNewPassword.
func readNewPassword(r *http.Request) (password string, generated bool, msg string, args []any) {
	if r.PostFormValue("password_mode") != "set" {
		return auth.RandomPassword(), true, "", nil
	}
	pw := r.PostFormValue("password")
	switch {
	case auth.CheckNewPassword(pw) != nil:
		return "", false, core.KeyPasswordTooShort, []any{auth.MinPasswordLength}
	case len(pw) > core.MaxPasswordBytes:
		return "", false, core.KeyPasswordTooLong, []any{core.MaxPasswordBytes}
	case pw != r.PostFormValue("confirm"):
		return "", false, core.KeyPasswordMismatch, nil
	}
	return pw, false, "", nil
}

// secretPage is the data of users_secret.html: a generated password,
// shown on this one answer and never again.
type secretPage struct {
	ID       int64
	Username string
	Password string
	Reset    bool
}

func (u *UI) createUser(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	ctx := r.Context()
	username := strings.TrimSpace(r.PostFormValue("username"))
	p := userFormPage{New: true, Username: core.Truncate(username, 4*core.MaxUsernameBytes), PasswordMode: "generate",
		MustChange: r.PostFormValue("must_change") != "", Active: true, AllGroups: r.PostFormValue("scope") == "all"}
	if r.PostFormValue("password_mode") == "set" {
		p.PasswordMode = "set"
	}
	roleIDs, _ := core.FormIDs(r, "role")
	groupIDs, _ := core.FormIDs(r, "group")
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.renderUserForm(w, r, status, p, roleIDs, groupIDs)
	}
	if !validUsername(username) {
		return fail(http.StatusUnprocessableEntity, keyAdminErrUsername, core.MaxUsernameBytes)
	}
	password, generated, msg, args := readNewPassword(r)
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	in, msg, args, err := u.readAccess(ctx, r)
	if err != nil {
		return err
	}
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	id, err := u.Store.CreateUser(ctx, db.NewUser{Username: username, PasswordHash: hash, AllGroups: in.allGroups,
		MustChangePassword: p.MustChange, RoleIDs: in.roleIDs, GroupIDs: in.groupIDs})
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyAdminErrUserExists, username)
	case errors.Is(err, db.ErrNotFound):
		// A group deleted while the form was open.
		return fail(http.StatusUnprocessableEntity, keyAdminErrUnknownGroup)
	case err != nil:
		return err
	}
	names, err := u.roleNames(ctx, in.roleIDs)
	if err != nil {
		return err
	}
	u.Audit(r, "user.create", "user", id, map[string]any{
		"username": username, "roles": names, "all_groups": in.allGroups, "groups": idList(in.groupIDs),
		"must_change_password": p.MustChange, "generated_password": generated,
	})
	if generated {
		return u.Render(w, r, http.StatusOK, "users_secret.html", keyTitleUserPassword,
			secretPage{ID: id, Username: username, Password: password})
	}
	core.RedirectDone(w, r, "/users", "created")
	return nil
}

// managed is a user as the signed-in one may see and change it.
type managed struct {
	user db.User
	// manageable: the signed-in user holds every permission and group of
	// this one.
	manageable bool
	roleIDs    []int64
}

func (u *UI) loadManaged(ctx context.Context, s *core.Session, id int64) (managed, error) {
	user, err := u.Store.UserByID(ctx, id)
	if err != nil {
		return managed{}, err
	}
	m := managed{user: user}
	grants, err := u.Store.UserGrants(ctx, id)
	if err != nil {
		return m, err
	}
	roles, err := u.Store.ListRoles(ctx)
	if err != nil {
		return m, err
	}
	for _, ro := range roles {
		if slices.Contains(user.Roles, ro.Name) {
			m.roleIDs = append(m.roleIDs, ro.ID)
		}
	}
	tree, err := u.loadGroupTree(ctx)
	if err != nil {
		return m, err
	}
	m.manageable = holdsEvery(s, grants) && tree.coversAll(s.Scope(), user.AllGroups, user.GroupIDs)
	return m, nil
}

// editPage is the form of an existing user as it stands.
func (u *UI) editPage(r *http.Request, m managed) userFormPage {
	s := core.SessionOf(r)
	self := m.user.ID == s.UserID
	p := userFormPage{
		ID: m.user.ID, Username: m.user.Username, Self: self, Active: m.user.Active,
		AllGroups: m.user.AllGroups, MustChange: m.user.MustChangePassword,
		CanEdit:   s.Can("users.update") && m.manageable,
		CanDelete: s.Can("users.delete") && m.manageable && !self,
		Locked:    !m.manageable && (s.Can("users.update") || s.Can("users.delete")),
	}
	p.CreatedAt, _ = db.ParseTime(m.user.CreatedAt)
	// The page shows without it when the audit log cannot be read.
	if t, err := u.Store.LastSignIn(r.Context(), m.user.ID); err == nil {
		p.LastLoginAt = t
	}
	return p
}

func (u *UI) userForm(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	m, err := u.loadManaged(r.Context(), core.SessionOf(r), id)
	if err != nil {
		return err
	}
	p := u.editPage(r, m)
	p.Notice = core.DoneNotice(r, userNotices)
	return u.renderUserForm(w, r, http.StatusOK, p, m.roleIDs, m.user.GroupIDs)
}

// updateUser sets roles, scope and whether the user may sign in. Nobody
// deactivates themselves, and the last active administrator stays.
func (u *UI) updateUser(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	ctx := r.Context()
	m, err := u.loadManaged(ctx, core.SessionOf(r), id)
	if err != nil {
		return err
	}
	if !m.manageable {
		return &core.PageError{Status: http.StatusForbidden, Message: keyAdminErrUserAboveYou}
	}
	p := u.editPage(r, m)
	p.Active = r.PostFormValue("active") != ""
	p.AllGroups = r.PostFormValue("scope") == "all"
	roleIDs, _ := core.FormIDs(r, "role")
	groupIDs, _ := core.FormIDs(r, "group")
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.renderUserForm(w, r, status, p, roleIDs, groupIDs)
	}
	if p.Self && !p.Active {
		return fail(http.StatusConflict, keyAdminErrSelfDeactivate)
	}
	in, msg, args, err := u.readAccess(ctx, r)
	if err != nil {
		return err
	}
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	err = u.Store.UpdateUserAccess(ctx, id, db.UserAccess{RoleIDs: in.roleIDs, AllGroups: in.allGroups,
		GroupIDs: in.groupIDs, Active: p.Active})
	switch {
	case errors.Is(err, db.ErrLastAdmin):
		return fail(http.StatusConflict, keyAdminErrLastAdmin)
	case errors.Is(err, db.ErrNotFound):
		// A role or group deleted while the form was open.
		return fail(http.StatusUnprocessableEntity, keyAdminErrUnknownGroup)
	case err != nil:
		return err
	}
	names, err := u.roleNames(ctx, in.roleIDs)
	if err != nil {
		return err
	}
	details := map[string]any{"username": m.user.Username, "roles": names, "all_groups": in.allGroups,
		"groups": idList(in.groupIDs), "active": p.Active}
	if m.user.Active && !p.Active {
		details["sessions_ended"] = true
	}
	u.Audit(r, "user.update", "user", id, details)
	core.RedirectDone(w, r, "/users/"+strconv.FormatInt(id, 10), "updated")
	return nil
}

// resetUserPassword gives another user a new password (typed or
// generated) that must be changed at the next sign-in, and ends the
// user's sessions. One's own password is changed on the account page,
// where the current one is asked for.
func (u *UI) resetUserPassword(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	ctx := r.Context()
	m, err := u.loadManaged(ctx, core.SessionOf(r), id)
	if err != nil {
		return err
	}
	if !m.manageable {
		return &core.PageError{Status: http.StatusForbidden, Message: keyAdminErrUserAboveYou}
	}
	p := u.editPage(r, m)
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.renderUserForm(w, r, status, p, m.roleIDs, m.user.GroupIDs)
	}
	if p.Self {
		return fail(http.StatusConflict, keyAdminErrSelfReset)
	}
	password, generated, msg, args := readNewPassword(r)
	if msg != "" {
		return fail(http.StatusUnprocessableEntity, msg, args...)
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	if err := u.Store.ResetPassword(ctx, id, hash, true, nil); err != nil {
		return err
	}
	u.Audit(r, "user.password", "user", id, map[string]any{
		"username": m.user.Username, "must_change_password": true, "generated_password": generated, "sessions_ended": true,
	})
	if generated {
		return u.Render(w, r, http.StatusOK, "users_secret.html", keyTitleUserPassword,
			secretPage{ID: id, Username: m.user.Username, Password: password, Reset: true})
	}
	core.RedirectDone(w, r, "/users/"+strconv.FormatInt(id, 10), "password")
	return nil
}

func (u *UI) deleteUser(w http.ResponseWriter, r *http.Request) error {
	id, err := core.PathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	m, err := u.loadManaged(ctx, core.SessionOf(r), id)
	if err != nil {
		return err
	}
	if !m.manageable {
		return &core.PageError{Status: http.StatusForbidden, Message: keyAdminErrUserAboveYou}
	}
	p := u.editPage(r, m)
	fail := func(status int, key string) error {
		p.Error = key
		return u.renderUserForm(w, r, status, p, m.roleIDs, m.user.GroupIDs)
	}
	if p.Self {
		return fail(http.StatusConflict, keyAdminErrSelfDelete)
	}
	switch err := u.Store.DeleteUser(ctx, id); {
	case errors.Is(err, db.ErrLastAdmin):
		return fail(http.StatusConflict, keyAdminErrLastAdmin)
	case err != nil:
		return err
	}
	u.Audit(r, "user.delete", "user", id, map[string]any{"username": m.user.Username})
	core.RedirectDone(w, r, "/users", "deleted")
	return nil
}

// idList is ids for the audit log: an empty list rather than null.
func idList(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// groupTree is every device group, for the scope picker and the checks
// that a scope lies within another.
type groupTree struct {
	groups []db.Group
	byID   map[int64]db.Group
}

func (u *UI) loadGroupTree(ctx context.Context) (groupTree, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return groupTree{}, err
	}
	t := groupTree{groups: groups, byID: map[int64]db.Group{}}
	for _, g := range groups {
		t.byID[g.ID] = g
	}
	return t, nil
}

// covers reports whether scope sees group id (itself or an ancestor is in
// it).
func (t groupTree) covers(scope db.Scope, id int64) bool {
	if scope.All {
		return true
	}
	g, ok := t.byID[id]
	if !ok {
		return false
	}
	for _, sid := range scope.GroupIDs {
		if sg, ok := t.byID[sid]; ok && strings.HasPrefix(g.Path, sg.Path) {
			return true
		}
	}
	return false
}

// coversAll reports whether scope sees everything a user with allGroups
// and groupIDs sees.
func (t groupTree) coversAll(scope db.Scope, allGroups bool, groupIDs []int64) bool {
	if scope.All {
		return true
	}
	if allGroups {
		return false
	}
	for _, id := range groupIDs {
		if !t.covers(scope, id) {
			return false
		}
	}
	return true
}

// ordered is the groups depth first, each parent before its children,
// siblings in their order.
func (t groupTree) ordered() []db.Group {
	children := map[int64][]db.Group{}
	var roots []db.Group
	for _, g := range t.groups {
		if g.ParentID == nil {
			roots = append(roots, g)
		} else {
			children[*g.ParentID] = append(children[*g.ParentID], g)
		}
	}
	out := make([]db.Group, 0, len(t.groups))
	var walk func(gs []db.Group)
	walk = func(gs []db.Group) {
		for _, g := range gs {
			out = append(out, g)
			walk(children[g.ID])
		}
	}
	walk(roots)
	return out
}
