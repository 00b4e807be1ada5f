package identity_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"backupd/app/identity"
	"backupd/app/identity/ldapdir"
	"backupd/db"
	"backupd/internal/testkit"
	"backupd/internal/testldap"
)

// syncFixture is a store whose LDAP settings point at a real slapd, with
// netops (nested: alice through core-team; dave directly) mapped to
// Operator on every device group and viewers (bob) to Viewer.
type syncFixture struct {
	ctx      context.Context
	store    *db.Store
	dir      *testldap.Server
	syncer   identity.Syncer
	operator db.Role
	viewer   db.Role
}

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	ctx := context.Background()
	store, sealer, _ := testkit.OpenData(t)
	srv := testldap.Start(t)
	f := &syncFixture{ctx: ctx, store: store, dir: srv,
		syncer: identity.Syncer{Store: store, Sealer: sealer, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	preset, _ := ldapdir.Preset("openldap")
	set := srv.Settings(preset)
	if _, _, err := identity.SaveLDAP(ctx, store, sealer, set, identity.Secret{Value: srv.ServicePassword}); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.operator, err = store.RoleByName(ctx, "Operator"); err != nil {
		t.Fatal(err)
	}
	if f.viewer, err = store.RoleByName(ctx, "Viewer"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []db.GroupMapping{
		{Group: "netops", RoleIDs: []int64{f.operator.ID}, AllGroups: true},
		{Group: testldap.GroupDN("viewers"), RoleIDs: []int64{f.viewer.ID}},
	} {
		if err := identity.AddMapping(ctx, store, db.UserLDAP, m); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// signIn signs a directory user in as the web page does: the directory
// checks the password, the mappings give the roles.
func (f *syncFixture) signIn(t *testing.T, username, password string) db.User {
	t.Helper()
	set, err := f.store.LDAPConfig(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := identity.OpenLDAP(set, f.syncer.Sealer)
	if err != nil {
		t.Fatal(err)
	}
	e, err := d.Authenticate(f.ctx, username, password)
	if err != nil {
		t.Fatalf("%s signs in: %v", username, err)
	}
	u, _, _, err := identity.Provision(f.ctx, f.store, identity.Identity{Source: db.UserLDAP, ExternalID: e.DN,
		Username: e.Username, Groups: e.GroupKeys()}, set.Mappings)
	if err != nil {
		t.Fatalf("%s provisioned: %v", username, err)
	}
	return u
}

func (f *syncFixture) user(t *testing.T, name string) db.User {
	t.Helper()
	u, err := f.store.UserByName(f.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A user whose group is taken out of the mapped one loses sessions and keys at the next
// sync, with an audit entry; a user given a group gains its role; one
// deleted from the directory is disabled; the others are left alone.
func TestSyncFollowsTheDirectory(t *testing.T) {
	f := newSyncFixture(t)
	alice := f.signIn(t, "alice", testldap.AlicePassword)
	bob := f.signIn(t, "bob", testldap.BobPassword)
	f.signIn(t, "dave", testldap.DavePassword)
	if !slices.Equal(alice.Roles, []string{"Operator"}) || !alice.AllGroups || !slices.Equal(bob.Roles, []string{"Viewer"}) {
		t.Fatalf("first sign-in: alice %v/%v, bob %v", alice.Roles, alice.AllGroups, bob.Roles)
	}
	key, err := f.store.CreateAPIKey(f.ctx, db.APIKey{UserID: alice.ID, Name: "script", Prefix: "bk_synctest", Hash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.CreateWebSession(f.ctx, db.WebSession{ID: "alice-session", UserID: alice.ID, CSRFSecret: "c",
		CreatedAt: time.Now(), LastSeenAt: time.Now(), ExpiresAt: time.Now().AddDate(0, 0, 1)}); err != nil {
		t.Fatal(err)
	}

	// Nothing changed in the directory: nothing changes here.
	rep, err := f.syncer.Sync(f.ctx)
	if err != nil || rep != (identity.SyncReport{Checked: 3}) {
		t.Fatalf("quiet sync: %+v %v", rep, err)
	}

	f.dir.RemoveMember(t, testldap.GroupDN("netops"), testldap.GroupDN("core-team"))
	f.dir.AddMember(t, testldap.GroupDN("netops"), testldap.UserDN("bob"))
	f.dir.Delete(t, testldap.UserDN("dave"))
	rep, err = f.syncer.Sync(f.ctx)
	if err != nil || rep != (identity.SyncReport{Checked: 3, Changed: 1, Disabled: 2}) {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if a := f.user(t, "alice"); a.Active {
		t.Fatal("alice, in no mapped group, is still active")
	}
	if _, err := f.store.WebSessionByID(f.ctx, "alice-session"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("alice's session after the sync: %v", err)
	}
	if k, err := f.store.APIKeyByID(f.ctx, key); err != nil || k.RevokedAt == nil {
		t.Fatalf("alice's key after the sync: %+v %v", k, err)
	}
	if b := f.user(t, "bob"); !b.Active || !slices.Equal(b.Roles, []string{"Operator", "Viewer"}) || !b.AllGroups {
		t.Fatalf("bob after joining netops: %+v", b)
	}
	if d := f.user(t, "dave"); d.Active {
		t.Fatal("dave, deleted from the directory, is still active")
	}
	reasons := map[string]string{}
	entries, _, err := f.store.ListAudit(f.ctx, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Action == "user.directory_disabled" && e.Interface == identity.AuditInterface {
			reasons[e.Username] = e.Details["reason"].(string)
			if e.Username == "alice" && (e.Details["sessions_ended"] != float64(1) || e.Details["keys_revoked"] != float64(1)) {
				t.Errorf("alice's audit entry: %v", e.Details)
			}
		}
	}
	if reasons["alice"] != "no_mapped_group" || reasons["dave"] != "not_in_directory" || len(reasons) != 2 {
		t.Fatalf("audit reasons: %v", reasons)
	}

	// Back in the group, alice signs in again; her revoked key stays so.
	f.dir.AddMember(t, testldap.GroupDN("netops"), testldap.GroupDN("core-team"))
	if a := f.signIn(t, "alice", testldap.AlicePassword); !a.Active {
		t.Fatal("alice back in netops is not active")
	}
	if k, _ := f.store.APIKeyByID(f.ctx, key); k.RevokedAt == nil {
		t.Fatal("the revoked key came back")
	}
}

// A directory that does not answer, or a configuration that suddenly
// finds nobody, changes nothing; LDAP turned off disables every
// directory user.
func TestSyncChangesNothingWhenInDoubt(t *testing.T) {
	f := newSyncFixture(t)
	for _, u := range [][2]string{{"alice", testldap.AlicePassword}, {"bob", testldap.BobPassword}, {"dave", testldap.DavePassword}} {
		f.signIn(t, u[0], u[1])
	}
	active := func() int {
		n := 0
		users, err := f.store.DirectoryUsers(f.ctx, db.UserLDAP)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			if u.Active {
				n++
			}
		}
		return n
	}
	change := func(edit func(*db.LDAPSettings)) {
		t.Helper()
		var s db.LDAPSettings
		if err := f.store.UpdateSetting(f.ctx, db.SettingLDAP, &s, func(bool) error { edit(&s); return nil }); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing listens on the address any more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "ldaps://" + ln.Addr().String()
	ln.Close()
	good, _ := f.store.LDAPConfig(f.ctx)
	change(func(s *db.LDAPSettings) { s.URL = closed })
	if _, err := f.syncer.Sync(f.ctx); !errors.Is(err, ldapdir.ErrUnavailable) || active() != 3 {
		t.Fatalf("directory down: %v, %d active", err, active())
	}

	// A filter that finds nobody would disable everyone: refused.
	change(func(s *db.LDAPSettings) {
		s.URL = good.URL
		s.UserFilter = "(&(objectClass=inetOrgPerson)(uid={username})(description=nobody-has-this))"
	})
	if _, err := f.syncer.Sync(f.ctx); !errors.Is(err, identity.ErrTooManyGone) || active() != 3 {
		t.Fatalf("filter finding nobody: %v, %d active", err, active())
	}

	change(func(s *db.LDAPSettings) { s.UserFilter, s.Enabled = good.UserFilter, false })
	if rep, err := f.syncer.Sync(f.ctx); err != nil || rep.Disabled != 3 || active() != 0 {
		t.Fatalf("LDAP turned off: %+v %v, %d active", rep, err, active())
	}
}
