package identity_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"backupd/app/identity"
	"backupd/db"
	"backupd/internal/dbtest"
)

func TestResolveAddsUp(t *testing.T) {
	maps := []db.GroupMapping{
		{Group: "cn=netops,ou=groups,dc=example,dc=test", RoleIDs: []int64{2}, GroupIDs: []int64{7}},
		{Group: "Viewers", RoleIDs: []int64{3}, GroupIDs: []int64{5, 7}},
		{Group: "lab", RoleIDs: []int64{4}, AllGroups: true},
	}
	a := identity.Resolve(maps, []string{"CN=NetOps, OU=Groups, DC=example, DC=test", "viewers", "other"})
	if !slices.Equal(a.RoleIDs, []int64{2, 3}) || a.AllGroups || !slices.Equal(a.GroupIDs, []int64{5, 7}) || len(a.Matched) != 2 {
		t.Fatalf("netops+viewers = %+v", a)
	}
	if a := identity.Resolve(maps, []string{"viewers", "LAB"}); !a.AllGroups || a.GroupIDs != nil || !slices.Equal(a.RoleIDs, []int64{3, 4}) {
		t.Fatalf("viewers+lab = %+v", a)
	}
	if a := identity.Resolve(maps, []string{"cn=netops"}); len(a.RoleIDs) != 0 || len(a.Matched) != 0 {
		t.Fatalf("a name that is only a prefix matched: %+v", a)
	}
	if a := identity.Resolve(nil, []string{"viewers"}); len(a.RoleIDs) != 0 {
		t.Fatalf("no mappings gave %+v", a)
	}
}

func TestProvisionAndRevoke(t *testing.T) {
	store := dbtest.Open(t)
	ctx := context.Background()
	if err := store.EnsureRole(ctx, db.Role{Name: "Viewer", Permissions: []string{"devices.view"}}); err != nil {
		t.Fatal(err)
	}
	viewer, err := store.RoleByName(ctx, "Viewer")
	if err != nil {
		t.Fatal(err)
	}
	maps := []db.GroupMapping{{Group: "viewers", RoleIDs: []int64{viewer.ID}}}
	id := identity.Identity{Source: db.UserOIDC, ExternalID: "https://idp.example sub-1", Username: "ann", Groups: []string{"viewers"}}
	u, _, ch, err := identity.Provision(ctx, store, id, maps)
	if err != nil || !ch.Created || !slices.Equal(u.Roles, []string{"Viewer"}) {
		t.Fatalf("provision: %+v %+v %v", u, ch, err)
	}
	id.Groups = []string{"other"}
	if _, _, _, err := identity.Provision(ctx, store, id, maps); !errors.Is(err, identity.ErrNotMapped) {
		t.Fatalf("unmapped: %v", err)
	}
	if _, _, found, err := identity.Revoke(ctx, store, identity.Identity{Source: db.UserLDAP, Username: "ann"}); err != nil || found {
		t.Fatalf("revoke from another source found the user: %v %v", found, err)
	}
	other := id
	other.ExternalID = "https://idp.example sub-2"
	if _, _, found, err := identity.Revoke(ctx, store, other); err != nil || found {
		t.Fatalf("another subject under ann's name revoked her: %v %v", found, err)
	}
	if _, _, found, err := identity.Revoke(ctx, store, id); err != nil || !found {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if u, err := store.UserByName(ctx, "ann"); err != nil || u.Active {
		t.Fatalf("after revoke: %+v %v", u, err)
	}
}
