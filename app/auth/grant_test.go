package auth_test

import (
	"slices"
	"testing"

	"backupd/app/auth"
	"backupd/db"
)

// A helpdesk account holding user and role rights but not everything
// can hand out only what it holds, and can change only users holding no
// more than it does.
func TestNobodyGrantsMoreThanTheyHold(t *testing.T) {
	helpdesk := auth.UserPrincipal(5, "helpdesk", true, nil, db.Grants{
		Permissions: map[string]bool{"users.view": true, "users.update": true, "roles.update": true, "devices.view": true},
		Credentials: map[int64]bool{7: true},
	})
	admin := auth.UserPrincipal(1, "admin", true, nil, db.Grants{All: true})

	for _, c := range []struct {
		name string
		role db.Role
		want bool
	}{
		{"a role of its own rights", db.Role{Permissions: []string{"devices.view", "users.view"}, Credentials: []int64{7}}, true},
		{"a role with one right more", db.Role{Permissions: []string{"devices.view", "devices.delete"}}, false},
		{"a role with another credential", db.Role{Permissions: []string{"devices.view"}, Credentials: []int64{8}}, false},
		{"the administrators' role", db.Role{AllPermissions: true}, false},
		{"a name no longer a permission", db.Role{Permissions: []string{"devices.view", "reports.view"}}, true},
	} {
		if got := helpdesk.CanGrantRole(c.role); got != c.want {
			t.Errorf("%s: CanGrantRole = %v, want %v", c.name, got, c.want)
		}
		if !admin.CanGrantRole(c.role) {
			t.Errorf("%s: the administrator may not grant it", c.name)
		}
	}

	if helpdesk.HoldsGrants(db.Grants{All: true}) || !admin.HoldsGrants(db.Grants{All: true}) {
		t.Error("HoldsGrants of every permission")
	}
	if !helpdesk.HoldsGrants(db.Grants{Permissions: map[string]bool{"devices.view": true}, Credentials: map[int64]bool{7: true}}) {
		t.Error("the helpdesk does not hold a viewer's grants it has")
	}
	if helpdesk.HoldsGrants(db.Grants{Credentials: map[int64]bool{9: true}}) {
		t.Error("the helpdesk holds a credential it may not use")
	}

	// Taking a right away from a role is granting as much as adding it.
	if got := helpdesk.Ungrantable([]string{"devices.view", "backups.delete"}, []string{"devices.view"}); got != "backups.delete" {
		t.Errorf("removing backups.delete: Ungrantable = %q", got)
	}
	if got := helpdesk.Ungrantable([]string{"devices.view"}, []string{"devices.view", "users.view"}); got != "" {
		t.Errorf("adding a right it holds: Ungrantable = %q", got)
	}
	if got := helpdesk.UngrantableCredential([]int64{7, 9}, []int64{7}); got != 9 {
		t.Errorf("removing credential 9: UngrantableCredential = %d", got)
	}
	if got := helpdesk.UngrantableCredential(nil, []int64{7}); got != 0 {
		t.Errorf("adding credential 7: UngrantableCredential = %d", got)
	}
}

// What a principal may not change of a role stays as the role has it,
// whatever was asked.
func TestKeepUngrantable(t *testing.T) {
	helpdesk := auth.UserPrincipal(5, "helpdesk", true, nil, db.Grants{
		Permissions: map[string]bool{"devices.view": true, "users.view": true},
		Credentials: map[int64]bool{7: true},
	})
	role := db.Role{Permissions: []string{"devices.view", "backups.delete", "reports.view"}, Credentials: []int64{7, 9}}
	// Asked: drop everything, add users.view and credential 8.
	perms, creds := helpdesk.KeepUngrantable(role, []string{"users.view"}, []int64{8})
	if !slices.Equal(perms, []string{"users.view", "backups.delete"}) {
		t.Errorf("permissions %v, want users.view and the kept backups.delete", perms)
	}
	if !slices.Equal(creds, []int64{8, 9}) {
		t.Errorf("credentials %v, want 8 and the kept 9", creds)
	}
	if helpdesk.Ungrantable(role.Permissions, perms) != "" {
		t.Error("the kept permissions still count as a change")
	}
}
