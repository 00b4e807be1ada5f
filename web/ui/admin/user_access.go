package admin

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// What the user forms send about roles, scope and passwords, checked
// against what the signed-in user may hand out.

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
func (u *handlers) readAccess(ctx context.Context, r *http.Request) (in userInput, msg string, args []any, err error) {
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
		if !s.Principal().CanGrantRole(roles[i].Role) {
			return in, keyAdminErrRoleAboveYou, []any{roles[i].Name}, nil
		}
	}
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return in, "", nil, err
	}
	scope := s.Scope()
	if in.allGroups && !scope.All {
		return in, keyAdminErrScopeAboveYou, nil, nil
	}
	for _, id := range in.groupIDs {
		if _, ok := tree.Group(id); !ok {
			return in, keyAdminErrUnknownGroup, nil, nil
		}
		if !tree.Covers(scope, id) {
			return in, keyAdminErrScopeAboveYou, nil, nil
		}
	}
	return in, "", nil, nil
}

// roleNames names roleIDs, for the audit log.
func (u *handlers) roleNames(ctx context.Context, roleIDs []int64) ([]string, error) {
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

// idList is ids for the audit log: an empty list rather than null.
func idList(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}
