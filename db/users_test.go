package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

// adminFixture is a store with an all-permissions role, a small role and
// two users: "root" (administrator) and "val" (viewer, scoped to Core).
type adminFixture struct {
	s                *db.Store
	admin, viewer    int64
	root, val        int64
	core, branch     db.Group
	ctx              context.Context
	sessionsOf       func(user int64) int
	rolesOf, groupsN func(user int64) int
}

func newAdminFixture(t *testing.T) adminFixture {
	t.Helper()
	s := openStore(t)
	ctx := context.Background()
	f := adminFixture{s: s, ctx: ctx}
	for _, r := range []db.Role{
		{Name: "Administrator", Builtin: true, AllPermissions: true},
		{Name: "Viewer", Builtin: true, Permissions: []string{"groups.view", "devices.view"}},
	} {
		if err := s.EnsureRole(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	role := func(name string) int64 {
		r, err := s.RoleByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	f.admin, f.viewer = role("Administrator"), role("Viewer")
	f.core, f.branch = createGroup(t, s, "Core", nil), createGroup(t, s, "Branch", nil)
	user := func(name string, all bool, roles []int64, groups ...int64) int64 {
		id, err := s.CreateUser(ctx, db.NewUser{Username: name, PasswordHash: "x", AllGroups: all, RoleIDs: roles, GroupIDs: groups})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	f.root = user("root", true, []int64{f.admin})
	f.val = user("val", false, []int64{f.viewer}, f.core.ID)
	count := func(query string, id int64) int {
		var n int
		if err := s.Reader().QueryRow(query, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.sessionsOf = func(id int64) int { return count(`SELECT COUNT(*) FROM web_sessions WHERE user_id = ?`, id) }
	f.rolesOf = func(id int64) int { return count(`SELECT COUNT(*) FROM user_roles WHERE user_id = ?`, id) }
	f.groupsN = func(id int64) int { return count(`SELECT COUNT(*) FROM user_groups WHERE user_id = ?`, id) }
	return f
}

func (f adminFixture) session(t *testing.T, user int64, id string) {
	t.Helper()
	now := time.Now().UTC()
	if err := f.s.CreateWebSession(f.ctx, db.WebSession{ID: id, UserID: user, CSRFSecret: "c", CreatedAt: now,
		LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func TestUserAccessNeverLeavesNoAdministrator(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	f.session(t, f.root, "s-root")

	// Deactivating or demoting the only administrator changes nothing.
	for name, a := range map[string]db.UserAccess{
		"deactivate": {RoleIDs: []int64{f.admin}, AllGroups: true, Active: false},
		"demote":     {RoleIDs: []int64{f.viewer}, AllGroups: true, Active: true},
	} {
		if err := s.UpdateUserAccess(ctx, f.root, a); !errors.Is(err, db.ErrLastAdmin) {
			t.Errorf("%s the last administrator: err = %v, want ErrLastAdmin", name, err)
		}
	}
	if err := s.DeleteUser(ctx, f.root); !errors.Is(err, db.ErrLastAdmin) {
		t.Errorf("delete the last administrator: err = %v, want ErrLastAdmin", err)
	}
	u, err := s.UserByID(ctx, f.root)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Active || !slices.Equal(u.Roles, []string{"Administrator"}) || f.sessionsOf(f.root) != 1 {
		t.Fatalf("refused changes left root active=%v roles=%v sessions=%d", u.Active, u.Roles, f.sessionsOf(f.root))
	}

	// With a second administrator, the first may go; its sessions end.
	if err := s.UpdateUserAccess(ctx, f.val, db.UserAccess{RoleIDs: []int64{f.admin, f.viewer}, GroupIDs: []int64{f.branch.ID}, Active: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByID(ctx, f.val); !slices.Equal(got.Roles, []string{"Administrator", "Viewer"}) || !slices.Equal(got.GroupIDs, []int64{f.branch.ID}) {
		t.Fatalf("val after update: roles %v groups %v", got.Roles, got.GroupIDs)
	}
	if err := s.UpdateUserAccess(ctx, f.root, db.UserAccess{RoleIDs: []int64{f.admin}, AllGroups: true, Active: false}); err != nil {
		t.Fatalf("deactivate one of two administrators: %v", err)
	}
	if n := f.sessionsOf(f.root); n != 0 {
		t.Errorf("a deactivated user keeps %d sessions", n)
	}
	if err := s.DeleteUser(ctx, f.val); !errors.Is(err, db.ErrLastAdmin) {
		t.Errorf("delete the last active administrator: err = %v, want ErrLastAdmin", err)
	}
	// An inactive administrator may be deleted; its rows go with it.
	if err := s.DeleteUser(ctx, f.root); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByID(ctx, f.root); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("deleted user: err = %v", err)
	}
	if f.rolesOf(f.root) != 0 {
		t.Error("a deleted user's roles stay behind")
	}
	if err := s.DeleteUser(ctx, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("delete unknown user: err = %v", err)
	}

	// A missing role or group is refused whole.
	for name, a := range map[string]db.UserAccess{
		"role":  {RoleIDs: []int64{f.admin, 9999}, Active: true},
		"group": {RoleIDs: []int64{f.admin}, GroupIDs: []int64{9999}, Active: true},
	} {
		if err := s.UpdateUserAccess(ctx, f.val, a); !errors.Is(err, db.ErrNotFound) || !strings.Contains(err.Error(), "9999") {
			t.Errorf("missing %s: err = %v, want ErrNotFound naming 9999", name, err)
		}
	}
	if f.rolesOf(f.val) != 2 || f.groupsN(f.val) != 1 {
		t.Error("a refused update changed the user")
	}
	if err := s.UpdateUserAccess(ctx, 9999, db.UserAccess{Active: true}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("update unknown user: err = %v", err)
	}
}

func TestUserPage(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	for i := range 5 {
		if _, err := s.CreateUser(ctx, db.NewUser{Username: fmt.Sprintf("op%d", i), PasswordHash: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	login := func(user int64) {
		if err := s.RecordAudit(ctx, db.AuditEntry{UserID: &user, Username: "x", Interface: "web", Action: "session.login", TargetType: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	login(f.val)
	other := f.root
	if err := s.RecordAudit(ctx, db.AuditEntry{UserID: &other, Username: "root", Interface: "web", Action: "session.logout", TargetType: "user"}); err != nil {
		t.Fatal(err)
	}

	users, total, err := s.UserPage(ctx, "", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := func(us []db.UserSummary) (out []string) {
		for _, u := range us {
			out = append(out, u.Username)
		}
		return out
	}
	if total != 7 || !slices.Equal(names(users), []string{"op0", "op1", "op2"}) {
		t.Fatalf("first page %v of %d", names(users), total)
	}
	users, _, err = s.UserPage(ctx, "", 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(users), []string{"op3", "op4", "root"}) {
		t.Fatalf("second page %v", names(users))
	}
	root := users[2]
	if !root.AllGroups || !slices.Equal(root.Roles, []string{"Administrator"}) || root.LastLoginAt != nil {
		t.Errorf("root = %+v; a sign-out is not a sign-in", root)
	}
	users, total, err = s.UserPage(ctx, "VA", 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || len(users) != 1 {
		t.Fatalf("q=VA: %v of %d", names(users), total)
	}
	if at, err := s.LastSignIn(ctx, f.val); err != nil || at == nil {
		t.Errorf("LastSignIn(val) = %v, %v", at, err)
	}
	if at, err := s.LastSignIn(ctx, f.root); err != nil || at != nil {
		t.Errorf("LastSignIn(root) = %v, %v; a sign-out is not a sign-in", at, err)
	}
	val := users[0]
	if val.AllGroups || len(val.Groups) != 1 || val.Groups[0].Name != "Core" || val.LastLoginAt == nil || !val.Active {
		t.Errorf("val = %+v", val)
	}
}
