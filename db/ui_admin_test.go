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

func TestCustomRoles(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	id, err := s.CreateRole(ctx, "Auditor", "reads the log", []string{"audit.view", "users.view"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRole(ctx, "auditor", "", nil); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("same name in other case: err = %v", err)
	}
	if err := s.UpdateRole(ctx, id, "viewer", "", nil); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("rename onto a taken name: err = %v", err)
	}
	if err := s.UpdateRole(ctx, id, "Log reader", "reads", []string{"audit.view"}); err != nil {
		t.Fatal(err)
	}
	r, err := s.RoleByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "Log reader" || r.Description != "reads" || r.Builtin || !slices.Equal(r.Permissions, []string{"audit.view"}) {
		t.Errorf("role after update = %+v", r)
	}
	for name, err := range map[string]error{
		"update": s.UpdateRole(ctx, f.viewer, "Viewer", "", []string{"users.delete"}),
		"delete": s.DeleteRole(ctx, f.admin),
	} {
		if !errors.Is(err, db.ErrBuiltinRole) {
			t.Errorf("%s a built-in role: err = %v", name, err)
		}
	}
	if err := s.UpdateUserAccess(ctx, f.val, db.UserAccess{RoleIDs: []int64{id}, Active: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRole(ctx, id); !errors.Is(err, db.ErrRoleInUse) {
		t.Errorf("delete a held role: err = %v", err)
	}
	if holders, err := s.RoleHolders(ctx, id, 5); err != nil || !slices.Equal(holders, []string{"val"}) {
		t.Errorf("holders = %v, %v", holders, err)
	}
	roles, err := s.ListRoles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 3 || !roles[0].Builtin || roles[2].Name != "Log reader" || roles[2].Users != 1 || !slices.Equal(roles[2].Permissions, []string{"audit.view"}) {
		t.Errorf("roles = %+v", roles)
	}
	if err := s.UpdateUserAccess(ctx, f.val, db.UserAccess{RoleIDs: []int64{f.viewer}, Active: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRole(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RoleByID(ctx, id); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("deleted role: err = %v", err)
	}
	if err := s.DeleteRole(ctx, id); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("delete again: err = %v", err)
	}

	for i := 2; i < db.MaxRoles; i++ {
		if _, err := s.CreateRole(ctx, fmt.Sprint("r", i), "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateRole(ctx, "one too many", "", nil); !errors.Is(err, db.ErrTooManyRoles) {
		t.Errorf("role %d: err = %v", db.MaxRoles+1, err)
	}
}

func TestAPIKeyPage(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	key := func(user int64, prefix string, perms []string) int64 {
		id, err := s.CreateAPIKey(ctx, db.APIKey{UserID: user, Name: prefix, Prefix: prefix, Hash: []byte(prefix),
			Narrowed: perms != nil, Permissions: perms})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	key(f.root, "r1", nil)
	v1 := key(f.val, "v1", []string{"groups.view", "devices.view"})
	key(f.val, "v2", nil)
	mine, total, err := s.APIKeyPage(ctx, f.val, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(mine) != 2 || mine[0].Prefix != "v2" || mine[1].Prefix != "v1" {
		t.Fatalf("val's keys: %+v (%d)", mine, total)
	}
	if !slices.Equal(mine[1].Permissions, []string{"devices.view", "groups.view"}) || mine[0].Permissions != nil {
		t.Errorf("permissions: %v / %v", mine[1].Permissions, mine[0].Permissions)
	}
	all, total, err := s.APIKeyPage(ctx, 0, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(all) != 1 || all[0].Prefix != "r1" || all[0].Username != "root" {
		t.Errorf("all keys, page 2: %+v (%d)", all, total)
	}
	k, err := s.APIKeyByID(ctx, v1)
	if err != nil || k.Username != "val" || k.Prefix != "v1" {
		t.Errorf("APIKeyByID = %+v, %v", k, err)
	}
	if _, err := s.APIKeyByID(ctx, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown key: err = %v", err)
	}
}

func TestSearchAudit(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	keyID, err := s.CreateAPIKey(ctx, db.APIKey{UserID: f.val, Name: "k", Prefix: "abcdef0123", Hash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	record := func(at time.Time, user string, iface, action, target, details string) {
		t.Helper()
		e := db.AuditEntry{Username: user, Interface: iface, Action: action, TargetType: target, TargetID: "7", RequestID: "req-" + action}
		if details != "" {
			e.Details = map[string]any{"name": details}
		}
		if iface == "api" {
			e.KeyID = &keyID
		}
		if err := s.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
		// RecordAudit stamps the wall clock; the test places entries in
		// time itself.
		if _, err := s.Exec(ctx, `UPDATE audit_log SET at = ? WHERE id = (SELECT MAX(id) FROM audit_log)`, at.Format(db.TimeFormat)); err != nil {
			t.Fatal(err)
		}
	}
	record(base, "root", "web", "device.create", "device", "edge-1")
	record(base.Add(1*time.Hour), "val", "api", "device.update", "device", "Edge-2")
	record(base.Add(2*time.Hour), "root", "cli", "user.create", "user", "")
	record(base.Add(24*time.Hour), "ROOT", "web", "devices.odd", "device", "")
	record(base.Add(25*time.Hour), "root", "web", "group.delete", "group", "")

	actions := func(f db.AuditFilter, limit, offset int) (string, bool) {
		t.Helper()
		rs, more, err := s.SearchAudit(ctx, f, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.Action)
		}
		return strings.Join(out, " "), more
	}
	for _, c := range []struct {
		name string
		f    db.AuditFilter
		want string
	}{
		{"all, newest first", db.AuditFilter{}, "group.delete devices.odd user.create device.update device.create"},
		{"action prefix with dot", db.AuditFilter{Action: "device."}, "device.update device.create"},
		{"action prefix without dot", db.AuditFilter{Action: "device"}, "device.update device.create"},
		{"exact action", db.AuditFilter{Action: "device.update"}, "device.update"},
		{"username any case", db.AuditFilter{Username: "Root"}, "group.delete devices.odd user.create device.create"},
		{"interface", db.AuditFilter{Interface: "cli"}, "user.create"},
		{"target type", db.AuditFilter{TargetType: "group"}, "group.delete"},
		{"from", db.AuditFilter{From: base.Add(24 * time.Hour)}, "group.delete devices.odd"},
		{"from to", db.AuditFilter{From: base.Add(time.Hour), To: base.Add(24 * time.Hour)}, "user.create device.update"},
		{"text in details, any case", db.AuditFilter{Text: "edge"}, "device.update device.create"},
		{"request id", db.AuditFilter{Text: "req-user.create"}, "user.create"},
		{"combined", db.AuditFilter{Username: "root", Action: "device", Interface: "web"}, "device.create"},
		{"nothing", db.AuditFilter{Action: "nothing"}, ""},
	} {
		if got, more := actions(c.f, 50, 0); got != c.want || more {
			t.Errorf("%s: %q (more %v), want %q", c.name, got, more, c.want)
		}
	}
	if got, more := actions(db.AuditFilter{}, 2, 0); got != "group.delete devices.odd" || !more {
		t.Errorf("page 1 of 2: %q more=%v", got, more)
	}
	if got, more := actions(db.AuditFilter{}, 2, 4); got != "device.create" || more {
		t.Errorf("last page: %q more=%v", got, more)
	}
	rs, _, err := s.SearchAudit(ctx, db.AuditFilter{Interface: "api"}, 50, 0)
	if err != nil || len(rs) != 1 || rs[0].KeyPrefix != "abcdef0123" || rs[0].Details["name"] != "Edge-2" {
		t.Errorf("api entry = %+v, %v", rs, err)
	}

	// The newest-first walk follows the time index (with the action
	// first when one action is asked for); no sort of the whole selection,
	// whatever the filters.
	for _, where := range []string{"1=1", "a.at >= ? AND a.action = ?", "a.username = ? COLLATE NOCASE AND a.interface = ?"} {
		args := []any{}
		if where != "1=1" {
			args = []any{"2026", "x"}
		}
		plan := ""
		rows, err := s.Reader().Query(`EXPLAIN QUERY PLAN SELECT a.id FROM audit_log a LEFT JOIN api_keys k ON k.id = a.key_id
			WHERE `+where+` ORDER BY a.at DESC, a.id DESC LIMIT 51 OFFSET 0`, args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan += detail + "\n"
		}
		rows.Close()
		if !strings.Contains(plan, "audit_log_at") && !strings.Contains(plan, "audit_log_action (action=? AND at>?)") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("WHERE %s: the query plan does not walk the time index:\n%s", where, plan)
		}
	}
}
