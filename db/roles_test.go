package db_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"backupd/db"
)

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
