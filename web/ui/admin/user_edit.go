package admin

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// Creating, changing, resetting the password of and deleting a user.

func (u *handlers) createUser(w http.ResponseWriter, r *http.Request) error {
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
	if !in.allGroups && len(in.groupIDs) == 0 {
		// The user's page says they see no device, where it can be fixed.
		core.RedirectDone(w, r, "/users/"+strconv.FormatInt(id, 10), "created")
		return nil
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

func (u *handlers) loadManaged(ctx context.Context, s *core.Session, id int64) (managed, error) {
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
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return m, err
	}
	m.manageable = s.Principal().HoldsGrants(grants) && tree.CoversAll(s.Scope(), user.AllGroups, user.GroupIDs)
	return m, nil
}

// changeable loads the user a change is posted for, refusing (403) one
// above the signed-in user: roles it could not grant, or groups outside
// its scope.
func (u *handlers) changeable(r *http.Request) (managed, error) {
	id, err := core.PathID(r)
	if err != nil {
		return managed{}, err
	}
	if err := r.ParseForm(); err != nil {
		return managed{}, err
	}
	m, err := u.loadManaged(r.Context(), core.SessionOf(r), id)
	if err != nil {
		return m, err
	}
	if !m.manageable {
		return m, &core.PageError{Status: http.StatusForbidden, Message: keyAdminErrUserAboveYou}
	}
	return m, nil
}

// editPage is the form of an existing user as it stands.
func (u *handlers) editPage(r *http.Request, m managed) userFormPage {
	s := core.SessionOf(r)
	self := m.user.ID == s.UserID
	p := userFormPage{
		ID: m.user.ID, Username: m.user.Username, Source: m.user.Source, Self: self, Active: m.user.Active,
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
	if f, err := u.Store.TwoFactorSummaries(r.Context(), []int64{m.user.ID}); err == nil {
		p.TwoFactor = f[m.user.ID]
	}
	p.CanReset2FA = p.CanEdit && !self && p.TwoFactor.Enabled
	return p
}

func (u *handlers) userForm(w http.ResponseWriter, r *http.Request) error {
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
	p.SeesNothing = !m.user.AllGroups && len(m.user.GroupIDs) == 0
	return u.renderUserForm(w, r, http.StatusOK, p, m.roleIDs, m.user.GroupIDs)
}

// updateUser sets roles, scope and whether the user may sign in. Nobody
// deactivates themselves, and the last active administrator stays.
func (u *handlers) updateUser(w http.ResponseWriter, r *http.Request) error {
	m, err := u.changeable(r)
	if err != nil {
		return err
	}
	ctx, id := r.Context(), m.user.ID
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
func (u *handlers) resetUserPassword(w http.ResponseWriter, r *http.Request) error {
	m, err := u.changeable(r)
	if err != nil {
		return err
	}
	ctx, id := r.Context(), m.user.ID
	p := u.editPage(r, m)
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.renderUserForm(w, r, status, p, m.roleIDs, m.user.GroupIDs)
	}
	if p.Self {
		return fail(http.StatusConflict, keyAdminErrSelfReset)
	}
	if m.user.Source != db.UserLocal {
		// Its password is the directory's or the provider's.
		return fail(http.StatusConflict, keyAdminErrExternalPassword)
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

// resetUserTwoFactor clears another user's second factor (a lost
// phone) and ends the user's sessions; it signs in with its password
// next and sets a new one up (at once, when a role requires it). One's
// own is turned off on the account page, where a code of it is asked
// for.
func (u *handlers) resetUserTwoFactor(w http.ResponseWriter, r *http.Request) error {
	m, err := u.changeable(r)
	if err != nil {
		return err
	}
	ctx, id := r.Context(), m.user.ID
	p := u.editPage(r, m)
	if p.Self {
		p.Error = keyAdminErr2FASelf
		return u.renderUserForm(w, r, http.StatusConflict, p, m.roleIDs, m.user.GroupIDs)
	}
	if err := u.Store.ResetTOTP(ctx, id); err != nil {
		return err
	}
	u.Audit(r, "user.2fa_reset", "user", id, map[string]any{
		"username": m.user.Username, "was_enabled": m.user.TOTPEnabled, "sessions_ended": true,
	})
	core.RedirectDone(w, r, "/users/"+strconv.FormatInt(id, 10), "2fa_reset")
	return nil
}

func (u *handlers) deleteUser(w http.ResponseWriter, r *http.Request) error {
	m, err := u.changeable(r)
	if err != nil {
		return err
	}
	ctx, id := r.Context(), m.user.ID
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
