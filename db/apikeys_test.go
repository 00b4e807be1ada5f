package db_test

import (
	"errors"
	"slices"
	"testing"

	"backupd/db"
)

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
