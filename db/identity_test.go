package db_test

import (
	"errors"
	"slices"
	"testing"

	"backupd/db"
)

// A directory user is created on first sign-in, brought in step later,
// disabled with its sessions and keys when the directory drops it, and
// never merged with a local account of the same name.
func TestSyncDirectoryUser(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	d := db.DirectoryUser{Source: db.UserLDAP, ExternalID: "uid=ann,ou=people,dc=example,dc=test", Username: "ann",
		RoleIDs: []int64{f.viewer}, GroupIDs: []int64{f.core.ID, 999999}}
	u, ch, err := s.SyncDirectoryUser(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Created || u.Source != db.UserLDAP || u.ExternalID != d.ExternalID || u.PasswordHash != "" || !u.Active ||
		u.SyncedAt == nil || !slices.Equal(u.Roles, []string{"Viewer"}) || !slices.Equal(u.GroupIDs, []int64{f.core.ID}) {
		t.Fatalf("first sign-in: %+v %+v", u, ch)
	}

	// The same again changes nothing; new groups change the access.
	if _, ch, err = s.SyncDirectoryUser(ctx, d); err != nil || ch.Created || ch.Changed {
		t.Fatalf("unchanged sync: %+v %v", ch, err)
	}
	d.RoleIDs, d.AllGroups, d.GroupIDs = []int64{f.admin, f.viewer}, true, nil
	if u, ch, err = s.SyncDirectoryUser(ctx, d); err != nil || !ch.Changed || !u.AllGroups || len(u.Roles) != 2 {
		t.Fatalf("promoted: %+v %+v %v", u, ch, err)
	}

	// Dropped by the directory: inactive, sessions ended, keys revoked.
	key, err := s.CreateAPIKey(ctx, db.APIKey{UserID: u.ID, Name: "k", Prefix: "bk_dirtest", Hash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Writer().Exec(`INSERT INTO web_sessions (id, user_id, csrf_secret, created_at, last_seen_at, expires_at)
		VALUES ('s1', ?, 'c', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', '2099-01-01T00:00:00Z')`, u.ID); err != nil {
		t.Fatal(err)
	}
	r, err := s.DisableDirectoryUser(ctx, u.ID)
	if err != nil || r.Sessions != 1 || r.Keys != 1 {
		t.Fatalf("disable: %+v %v", r, err)
	}
	if k, err := s.APIKeyByID(ctx, key); err != nil || k.RevokedAt == nil || k.UserActive {
		t.Fatalf("key after disable: %+v %v", k, err)
	}
	if f.sessionsOf(u.ID) != 0 {
		t.Fatal("a session survived")
	}
	if r, err := s.DisableDirectoryUser(ctx, u.ID); err != nil || r != (db.Revoked{}) {
		t.Fatalf("second disable: %+v %v", r, err)
	}
	// Back in the directory: active again.
	if u, ch, err = s.SyncDirectoryUser(ctx, d); err != nil || !ch.Reactivated || !u.Active {
		t.Fatalf("back: %+v %+v %v", u, ch, err)
	}
	// An administrator's disabling sticks; a single sign-on user's
	// subject may not change under its name.
	if err := s.SetUserActive(ctx, "ann", false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SyncDirectoryUser(ctx, d); !errors.Is(err, db.ErrUserDisabled) {
		t.Fatalf("sign-in of a user an administrator disabled: %v", err)
	}
	if err := s.SetUserActive(ctx, "ann", true); err != nil {
		t.Fatal(err)
	}
	o := db.DirectoryUser{Source: db.UserOIDC, ExternalID: "https://idp.example sub-1", Username: "otto", RoleIDs: []int64{f.viewer}}
	if _, _, err := s.SyncDirectoryUser(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.ExternalID = "https://idp.example sub-2"
	if _, _, err := s.SyncDirectoryUser(ctx, o); !errors.Is(err, db.ErrOtherPerson) {
		t.Fatalf("another subject under otto's name: %v", err)
	}
	d.ExternalID = "uid=ann,ou=moved,dc=example,dc=test"
	if u, _, err := s.SyncDirectoryUser(ctx, d); err != nil || u.ExternalID != d.ExternalID {
		t.Fatalf("an LDAP entry that moved: %+v %v", u, err)
	}
	if dir, err := s.DirectoryUsers(ctx, db.UserLDAP); err != nil || len(dir) != 1 || dir[0].Username != "ann" {
		t.Fatalf("DirectoryUsers = %+v, %v", dir, err)
	}

	// A local account's name is never taken over, nor disabled by a sync.
	for _, src := range []string{db.UserLDAP, db.UserOIDC} {
		_, _, err := s.SyncDirectoryUser(ctx, db.DirectoryUser{Source: src, Username: "ROOT", RoleIDs: []int64{f.admin}})
		if !errors.Is(err, db.ErrLocalAccount) {
			t.Fatalf("%s sign-in as root: %v, want ErrLocalAccount", src, err)
		}
	}
	if _, _, err := s.SyncDirectoryUser(ctx, db.DirectoryUser{Source: db.UserOIDC, Username: "ann", RoleIDs: []int64{f.viewer}}); !errors.Is(err, db.ErrLocalAccount) {
		t.Fatalf("oidc sign-in as the ldap user: %v", err)
	}
	if r, err := s.DisableDirectoryUser(ctx, f.root); err != nil || r != (db.Revoked{}) {
		t.Fatalf("disable local: %+v %v", r, err)
	}
	if root, err := s.UserByID(ctx, f.root); err != nil || !root.Active || root.Source != db.UserLocal {
		t.Fatalf("root after: %+v %v", root, err)
	}
}
