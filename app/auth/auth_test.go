package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openStore opens a migrated, bootstrapped store in a temporary directory
// and returns it with the admin's one-time password.
func openStore(t *testing.T) (*db.Store, string) {
	t.Helper()
	ctx := context.Background()
	s := dbtest.Open(t)
	pw, err := auth.Bootstrap(ctx, s)
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	return s, pw
}

// createUser adds a user holding the named roles.
func createUser(t *testing.T, s *db.Store, name string, allGroups bool, groups []int64, roles ...string) int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for _, r := range roles {
		role, err := s.RoleByName(ctx, r)
		if err != nil {
			t.Fatalf("role %q: %v", r, err)
		}
		ids = append(ids, role.ID)
	}
	id, err := s.CreateUser(ctx, db.NewUser{Username: name, PasswordHash: "x", AllGroups: allGroups, RoleIDs: ids, GroupIDs: groups})
	if err != nil {
		t.Fatalf("CreateUser(%q): %v", name, err)
	}
	return id
}

// createKey stores a fresh key for userID and returns it with its id.
func createKey(t *testing.T, s *db.Store, userID int64, perms []string, expiresAt *string) (string, int64) {
	t.Helper()
	key, prefix, hash := auth.NewAPIKey()
	id, err := s.CreateAPIKey(context.Background(), db.APIKey{
		UserID: userID, Name: "test", Prefix: prefix, Hash: hash,
		Narrowed: perms != nil, Permissions: perms, ExpiresAt: expiresAt,
	})
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	return key, id
}

func userID(t *testing.T, s *db.Store, name string) int64 {
	t.Helper()
	u, err := s.UserByName(context.Background(), name)
	if err != nil {
		t.Fatalf("UserByName(%q): %v", name, err)
	}
	return u.ID
}

// held lists which of the catalogue's permissions p holds.
func held(p *auth.Principal) []string {
	var out []string
	for _, perm := range auth.Permissions {
		if p.Can(perm) {
			out = append(out, perm)
		}
	}
	return out
}

func TestPasswordHashAndVerify(t *testing.T) {
	hash, err := auth.HashPassword("correct horse battery")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if !strings.HasPrefix(hash, "$argon2id$") {
		t.Errorf("hash %q is not an argon2id PHC string", hash)
	}
	if strings.Contains(hash, "correct horse") {
		t.Fatal("hash contains the password")
	}
	ok, err := auth.VerifyPassword(hash, "correct horse battery")
	if err != nil || !ok {
		t.Fatalf("VerifyPassword(right) = %v, %v; want true", ok, err)
	}
	for _, wrong := range []string{"", "correct horse batter", "correct horse battery ", "Correct horse battery"} {
		ok, err := auth.VerifyPassword(hash, wrong)
		if err != nil || ok {
			t.Errorf("VerifyPassword(%q) = %v, %v; want false, nil", wrong, ok, err)
		}
	}
	again, err := auth.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if again == hash {
		t.Error("two hashes of one password are equal; the salt is not random")
	}
	for _, bad := range []string{"", "plain", "$2a$10$abcdefghijklmnopqrstuv", "$argon2id$v=19$m=x$salt$key", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"} {
		if ok, err := auth.VerifyPassword(bad, "x"); ok || err == nil {
			t.Errorf("VerifyPassword on malformed hash %q = %v, %v; want false and an error", bad, ok, err)
		}
	}
}

func TestRandomPassword(t *testing.T) {
	a, b := auth.RandomPassword(), auth.RandomPassword()
	if a == b {
		t.Fatal("two random passwords are equal")
	}
	if len(a) < auth.MinPasswordLength {
		t.Fatalf("random password %q is shorter than the minimum %d", a, auth.MinPasswordLength)
	}
}

func TestAPIKeyFormat(t *testing.T) {
	key, prefix, hash := auth.NewAPIKey()
	if !regexp.MustCompile(`^bkd_[0-9a-f]{10}_[A-Za-z0-9_-]{43}$`).MatchString(key) {
		t.Fatalf("key %q does not match bkd_<10 hex>_<43 base64url>", key)
	}
	if !strings.HasPrefix(key, auth.KeyScheme+prefix+"_") {
		t.Fatalf("key %q does not start with scheme+prefix %q", key, prefix)
	}
	if got, ok := auth.APIKeyPrefix(key); !ok || got != prefix {
		t.Fatalf("APIKeyPrefix(new key) = %q, %v; want %q, true", got, ok, prefix)
	}
	if string(hash) != string(auth.HashAPIKey(key)) || len(hash) != 32 {
		t.Fatal("NewAPIKey's hash is not HashAPIKey of the key")
	}
	if string(auth.HashAPIKey(key+"x")) == string(hash) {
		t.Fatal("different keys hash alike")
	}
	key2, prefix2, _ := auth.NewAPIKey()
	if key2 == key || prefix2 == prefix {
		t.Fatal("two new keys share a key or prefix")
	}
}

func TestAPIKeyPrefixRejectsGarbage(t *testing.T) {
	good, _, _ := auth.NewAPIKey()
	// The secret is base64url, so it may itself start with "_"; then
	// "no separator" below would be a well-formed key after all.
	secretPart := "A" + good[len("bkd_0123456789_")+1:]
	for name, key := range map[string]string{
		"empty":             "",
		"scheme only":       "bkd_",
		"no secret":         "bkd_0123456789",
		"no separator":      "bkd_0123456789" + secretPart,
		"short prefix":      "bkd_012345678_" + secretPart,
		"long prefix":       "bkd_0123456789a_" + secretPart,
		"short secret":      "bkd_0123456789_" + secretPart[:20],
		"wrong scheme":      "bkx_0123456789_" + secretPart,
		"upper scheme":      "BKD_0123456789_" + secretPart,
		"bearer":            "Bearer " + good,
		"too long":          good + strings.Repeat("A", 100),
		"random words":      "let me in",
		"whitespace around": " " + good,
	} {
		if p, ok := auth.APIKeyPrefix(key); ok {
			t.Errorf("%s: APIKeyPrefix(%q) = %q, true; want rejected", name, key, p)
		}
	}
}

func TestBootstrapCreatesRolesAndAdminOnce(t *testing.T) {
	ctx := context.Background()
	s, pw := openStore(t)
	if pw == "" {
		t.Fatal("first Bootstrap returned no admin password")
	}
	for _, r := range auth.BuiltinRoles {
		if _, err := s.RoleByName(ctx, r.Name); err != nil {
			t.Errorf("built-in role %q: %v", r.Name, err)
		}
	}
	admin, err := s.UserByName(ctx, auth.AdminUsername)
	if err != nil {
		t.Fatalf("admin user: %v", err)
	}
	if ok, err := auth.VerifyPassword(admin.PasswordHash, pw); err != nil || !ok {
		t.Fatalf("admin password does not verify: %v, %v", ok, err)
	}
	if !admin.MustChangePassword || !admin.AllGroups || !admin.Active {
		t.Errorf("admin: must_change=%v all_groups=%v active=%v; want all true", admin.MustChangePassword, admin.AllGroups, admin.Active)
	}
	if len(admin.Roles) != 1 || admin.Roles[0] != auth.RoleAdministrator {
		t.Errorf("admin roles = %v, want [%s]", admin.Roles, auth.RoleAdministrator)
	}
	pw2, err := auth.Bootstrap(ctx, s)
	if err != nil {
		t.Fatalf("second Bootstrap: %v", err)
	}
	if pw2 != "" {
		t.Error("second Bootstrap returned a password; it must create the admin only once")
	}
	if n, err := s.CountUsers(ctx); err != nil || n != 1 {
		t.Errorf("users after second Bootstrap = %d, %v; want 1", n, err)
	}
	// Bootstrap restores a built-in role somebody tampered with.
	viewer, _ := s.RoleByName(ctx, auth.RoleViewer)
	if _, err := dbtest.Poke(t, s).ExecContext(ctx, `INSERT INTO role_permissions (role_id, permission) VALUES (?, 'users.delete')`, viewer.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Bootstrap(ctx, s); err != nil {
		t.Fatal(err)
	}
	uid := createUser(t, s, "v", false, nil, auth.RoleViewer)
	g, err := s.UserGrants(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	if g.Permissions["users.delete"] {
		t.Error("Bootstrap left an extra permission on a built-in role")
	}
}

func TestEffectivePermissions(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())

	adminKey, _ := createKey(t, s, userID(t, s, auth.AdminUsername), nil, nil)
	p, err := keys.Authenticate(ctx, adminKey)
	if err != nil {
		t.Fatalf("admin key: %v", err)
	}
	if got := held(p); len(got) != len(auth.Permissions) {
		t.Errorf("admin key holds %d of %d permissions: %v", len(got), len(auth.Permissions), got)
	}
	if p.Username != auth.AdminUsername || !p.AllGroups || p.KeyID == 0 {
		t.Errorf("admin principal = %+v", p)
	}

	op := createUser(t, s, "op", true, nil, auth.RoleOperator)
	full, _ := createKey(t, s, op, nil, nil)
	narrow, _ := createKey(t, s, op, []string{"groups.view", "users.view"}, nil)
	empty, _ := createKey(t, s, op, []string{}, nil)

	p, err = keys.Authenticate(ctx, full)
	if err != nil {
		t.Fatalf("operator key: %v", err)
	}
	for _, perm := range []string{"groups.view", "groups.create", "devices.delete", "backups.create"} {
		if !p.Can(perm) {
			t.Errorf("operator's unnarrowed key lacks %s", perm)
		}
	}
	for _, perm := range []string{"users.view", "roles.update", "settings.update", "backups.delete", "not.a.permission"} {
		if p.Can(perm) {
			t.Errorf("operator's unnarrowed key holds %s, which the Operator role lacks", perm)
		}
	}

	p, err = keys.Authenticate(ctx, narrow)
	if err != nil {
		t.Fatalf("narrowed key: %v", err)
	}
	if got := held(p); len(got) != 1 || got[0] != "groups.view" {
		t.Errorf("narrowed key [groups.view users.view] of an Operator holds %v, want only [groups.view] (key ∩ owner)", got)
	}

	p, err = keys.Authenticate(ctx, empty)
	if err != nil {
		t.Fatalf("empty narrowed key: %v", err)
	}
	if got := held(p); len(got) != 0 {
		t.Errorf("key narrowed to nothing holds %v", got)
	}

	var nilPrincipal *auth.Principal
	if nilPrincipal.Can("groups.view") {
		t.Error("a nil principal holds a permission")
	}
}

func TestDemotingOwnerDemotesKeyAtOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	op := createUser(t, s, "op", true, nil, auth.RoleOperator)
	full, _ := createKey(t, s, op, nil, nil)
	narrow, _ := createKey(t, s, op, []string{"groups.view", "backups.view"}, nil)

	for _, k := range []string{full, narrow} {
		p, err := keys.Authenticate(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Can("groups.view") {
			t.Fatal("key lacks groups.view before the demotion")
		}
	}

	if _, err := dbtest.Poke(t, s).ExecContext(ctx, `UPDATE user_roles SET role_id = (SELECT id FROM roles WHERE name = ?) WHERE user_id = ?`,
		auth.RoleBackupReader, op); err != nil {
		t.Fatalf("demote: %v", err)
	}

	for name, k := range map[string]string{"full": full, "narrowed": narrow} {
		p, err := keys.Authenticate(ctx, k)
		if err != nil {
			t.Fatalf("%s key after demotion: %v", name, err)
		}
		if got := held(p); len(got) != 1 || got[0] != "backups.view" {
			t.Errorf("%s key after demotion to Backup reader holds %v, want [backups.view]", name, got)
		}
	}

	// With no role at all, the key authenticates but may do nothing.
	if _, err := dbtest.Poke(t, s).ExecContext(ctx, `DELETE FROM user_roles WHERE user_id = ?`, op); err != nil {
		t.Fatal(err)
	}
	p, err := keys.Authenticate(ctx, full)
	if err != nil {
		t.Fatal(err)
	}
	if got := held(p); len(got) != 0 {
		t.Errorf("key of a user without roles holds %v", got)
	}
}

func TestRefusedKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	op := createUser(t, s, "op", true, nil, auth.RoleOperator)

	t.Run("inactive owner", func(t *testing.T) {
		u := createUser(t, s, "gone", true, nil, auth.RoleOperator)
		k, _ := createKey(t, s, u, nil, nil)
		if _, err := keys.Authenticate(ctx, k); err != nil {
			t.Fatalf("before deactivation: %v", err)
		}
		if err := s.SetUserActive(ctx, "gone", false); err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("key of an inactive owner: err = %v, want ErrUnauthorized", err)
		}
		if err := s.SetUserActive(ctx, "gone", true); err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Authenticate(ctx, k); err != nil {
			t.Fatalf("after reactivation: %v", err)
		}
	})

	t.Run("revoked", func(t *testing.T) {
		k, id := createKey(t, s, op, nil, nil)
		if _, err := keys.Authenticate(ctx, k); err != nil {
			t.Fatalf("before revocation: %v", err)
		}
		if err := s.RevokeAPIKey(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := keys.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("revoked key: err = %v, want ErrUnauthorized", err)
		}
		if err := s.RevokeAPIKey(ctx, 999999); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("revoke missing key: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("wrong secret with right prefix", func(t *testing.T) {
		k, _ := createKey(t, s, op, nil, nil)
		last := k[len(k)-1]
		swap := byte('A')
		if last == 'A' {
			swap = 'B'
		}
		forged := k[:len(k)-1] + string(swap)
		if _, err := keys.Authenticate(ctx, forged); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("forged secret: err = %v, want ErrUnauthorized", err)
		}
		if _, err := keys.Authenticate(ctx, k); err != nil {
			t.Fatalf("the real key: %v", err)
		}
	})

	t.Run("unknown prefix", func(t *testing.T) {
		k, _, _ := auth.NewAPIKey() // never stored
		if _, err := keys.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("unknown key: err = %v, want ErrUnauthorized", err)
		}
	})

	t.Run("malformed", func(t *testing.T) {
		for _, k := range []string{"", "garbage", "bkd_", "bkd_short_x"} {
			if _, err := keys.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthorized) {
				t.Errorf("Authenticate(%q): err = %v, want ErrUnauthorized", k, err)
			}
		}
	})

	t.Run("expired", func(t *testing.T) {
		past := time.Now().UTC().Add(-time.Minute).Format(db.TimeFormat)
		k, _ := createKey(t, s, op, nil, &past)
		if _, err := keys.Authenticate(ctx, k); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("expired key: err = %v, want ErrUnauthorized", err)
		}
		future := time.Now().UTC().Add(time.Hour).Format(db.TimeFormat)
		k2, _ := createKey(t, s, op, nil, &future)
		if _, err := keys.Authenticate(ctx, k2); err != nil {
			t.Fatalf("key expiring in an hour: %v", err)
		}
	})
}

func TestPrincipalGroupScope(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	g1, err := s.CreateGroup(ctx, "g1", nil)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.CreateGroup(ctx, "g2", nil)
	if err != nil {
		t.Fatal(err)
	}
	scoped := createUser(t, s, "scoped", false, []int64{g2.ID, g1.ID}, auth.RoleViewer)
	k, _ := createKey(t, s, scoped, nil, nil)
	p, err := keys.Authenticate(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if p.AllGroups || len(p.GroupIDs) != 2 || p.GroupIDs[0] != g1.ID || p.GroupIDs[1] != g2.ID {
		t.Errorf("scoped principal: all=%v groups=%v, want false [%d %d]", p.AllGroups, p.GroupIDs, g1.ID, g2.ID)
	}
	none := createUser(t, s, "none", false, nil, auth.RoleViewer)
	k2, _ := createKey(t, s, none, nil, nil)
	p, err = keys.Authenticate(ctx, k2)
	if err != nil {
		t.Fatal(err)
	}
	if p.AllGroups || len(p.GroupIDs) != 0 {
		t.Errorf("unscoped principal: all=%v groups=%v, want none", p.AllGroups, p.GroupIDs)
	}
}

func lastUsed(t *testing.T, s *db.Store) map[int64]*string {
	t.Helper()
	ks, err := s.ListAPIKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]*string{}
	for _, k := range ks {
		out[k.ID] = k.LastUsedAt
	}
	return out
}

func TestFlushRecordsLastUse(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	admin := userID(t, s, auth.AdminUsername)
	used, usedID := createKey(t, s, admin, nil, nil)
	_, idleID := createKey(t, s, admin, nil, nil)

	start := time.Now().UTC().Truncate(time.Second)
	if _, err := keys.Authenticate(ctx, used); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(t, s)[usedID]; got != nil {
		t.Fatalf("last_used_at written on the request path (%s); it should wait for Flush", *got)
	}
	if err := keys.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	got := lastUsed(t, s)
	if got[usedID] == nil {
		t.Fatal("Flush did not record last_used_at of the used key")
	}
	at, err := db.ParseTime(*got[usedID])
	if err != nil {
		t.Fatalf("last_used_at %q: %v", *got[usedID], err)
	}
	if at.Before(start) || at.After(time.Now().UTC().Add(time.Second)) {
		t.Errorf("last_used_at %s is not the time of use (test started %s)", at, start)
	}
	if got[idleID] != nil {
		t.Errorf("unused key got last_used_at %s", *got[idleID])
	}
	// Nothing pending: a second Flush writes nothing and does not fail.
	if err := keys.Flush(ctx); err != nil {
		t.Fatalf("empty Flush: %v", err)
	}
}

func TestRunFlushesOnStop(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	keys := auth.NewKeyAuthenticator(s, quietLog())
	k, id := createKey(t, s, userID(t, s, auth.AdminUsername), nil, nil)
	if _, err := keys.Authenticate(ctx, k); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		keys.Run(runCtx, time.Hour) // the ticker never fires in this test
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if lastUsed(t, s)[id] == nil {
		t.Fatal("Run did not flush last_used_at when stopping")
	}
}

// Nodes starting together on one empty store all bootstrap it: every one
// starts, one admin exists, and exactly one of them got its password.
func TestBootstrapConcurrentNodes(t *testing.T) {
	ctx := context.Background()
	first := dbtest.Open(t)
	handles := []*db.Store{first, dbtest.Reopen(t, first), dbtest.Reopen(t, first), dbtest.Reopen(t, first)}
	start := make(chan struct{})
	passwords := make([]string, len(handles))
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			<-start
			passwords[i], errs[i] = auth.Bootstrap(ctx, h)
		})
	}
	close(start)
	wg.Wait()
	given := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: Bootstrap: %v", i, err)
		}
		if passwords[i] != "" {
			given++
		}
	}
	if given != 1 {
		t.Errorf("%d nodes returned an initial admin password, want exactly 1", given)
	}
	if n, err := first.CountUsers(ctx); err != nil || n != 1 {
		t.Errorf("users after concurrent Bootstrap = %d, %v; want 1", n, err)
	}
	for _, r := range auth.BuiltinRoles {
		role, err := first.RoleByName(ctx, r.Name)
		if err == nil {
			role, err = first.RoleByID(ctx, role.ID)
		}
		if err != nil {
			t.Errorf("built-in role %s: %v", r.Name, err)
			continue
		}
		if !r.AllPermissions && len(role.Permissions) != len(r.Permissions) {
			t.Errorf("role %s has %d permissions, want %d", r.Name, len(role.Permissions), len(r.Permissions))
		}
	}
}
