package auth_test

import (
	"context"
	"slices"
	"testing"

	"backupd/app/auth"
	"backupd/db"
)

// Who may use a credential: administrators and operators every one
// (credentials.use), a custom role's holders the ones it lists, through
// the web interface and their unnarrowed keys; a narrowed key only
// through credentials.use in its list; a viewer none.
func TestCredentialUse(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	mk := func(name string) int64 {
		c, err := s.CreateCredential(ctx, db.Credential{Name: name, Username: "u"})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	core, edge := mk("core"), mk("edge")
	role, err := s.CreateRole(ctx, "Edge techs", "", []string{"devices.view", "devices.update"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRoleCredentials(ctx, role, []int64{edge}); err != nil {
		t.Fatal(err)
	}
	tech := createUser(t, s, "tech", true, nil, "Edge techs")
	op := createUser(t, s, "op", true, nil, auth.RoleOperator)
	viewer := createUser(t, s, "viewer", true, nil, auth.RoleViewer)

	session := func(uid int64, name string) *auth.Principal {
		g, err := s.UserGrants(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		return auth.UserPrincipal(uid, name, true, nil, g)
	}
	key := func(uid int64, perms []string) *auth.Principal {
		k, _ := createKey(t, s, uid, perms, nil)
		p, err := keys.Authenticate(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	admin := userID(t, s, auth.AdminUsername)
	for _, c := range []struct {
		who        string
		p          *auth.Principal
		core, edge bool
		scope      db.CredentialScope
	}{
		{"admin session", session(admin, "admin"), true, true, db.CredentialScope{All: true}},
		{"operator session", session(op, "op"), true, true, db.CredentialScope{All: true}},
		{"operator key narrowed to credentials.use", key(op, []string{"devices.update", "credentials.use"}), true, true, db.CredentialScope{All: true}},
		{"operator key narrowed without it", key(op, []string{"devices.update"}), false, false, db.CredentialScope{IDs: []int64{}}},
		{"tech session", session(tech, "tech"), false, true, db.CredentialScope{IDs: []int64{edge}}},
		{"tech key", key(tech, nil), false, true, db.CredentialScope{IDs: []int64{edge}}},
		{"tech key narrowed", key(tech, []string{"devices.update"}), false, false, db.CredentialScope{IDs: []int64{}}},
		{"viewer session", session(viewer, "viewer"), false, false, db.CredentialScope{IDs: []int64{}}},
		{"nobody", nil, false, false, db.CredentialScope{}},
	} {
		if got := c.p.CanUseCredential(core); got != c.core {
			t.Errorf("%s may use core: %v, want %v", c.who, got, c.core)
		}
		if got := c.p.CanUseCredential(edge); got != c.edge {
			t.Errorf("%s may use edge: %v, want %v", c.who, got, c.edge)
		}
		if got := c.p.CredentialScope(); got.All != c.scope.All || !slices.Equal(got.IDs, c.scope.IDs) {
			t.Errorf("%s credential scope = %+v, want %+v", c.who, got, c.scope)
		}
	}
}
