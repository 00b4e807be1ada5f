package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/db"
	"backupd/internal/testldap"
)

// Sign-in set up headless against a real slapd: flags and environment
// variables, secrets from files (sealed, never shown), mappings, a test
// of a user, a sync, clear refusals naming the flags; a directory user
// has no password for `user passwd` to set.
func TestSignInCommands(t *testing.T) {
	data := storeDir(t)
	srv := testldap.Start(t)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pw := filepath.Join(dir, "bind")
	if err := os.WriteFile(ca, srv.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pw, []byte(srv.ServicePassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// Refused: plain LDAP without saying so, a filter without {username}.
	mustFail(t, call{}, []string{"the settings were not saved", "--ldap-security:", "--ldap-user-filter:"},
		"signin", "ldap", "--data", data, "--ldap-enabled", "--ldap-url", "ldap://127.0.0.1:1", "--ldap-security", "ldaps",
		"--ldap-base-dn", srv.BaseDN, "--ldap-user-filter", "(uid=alice)", "--ldap-username-attr", "uid", "--ldap-group-mode", "memberof")

	// The URL and the timeout from the environment, the rest from flags.
	mustRun(t, call{env: []string{"BACKUPD_LDAP_URL=" + srv.LDAPSURL, "BACKUPD_LDAP_TIMEOUT=4s"}},
		"signin", "ldap", "--data", data, "--ldap-enabled", "--ldap-preset", "openldap", "--ldap-security", "ldaps",
		"--ldap-ca-cert-file", ca, "--ldap-bind-dn", srv.ServiceDN, "--ldap-bind-password-file", pw, "--ldap-base-dn", srv.BaseDN)
	mustRun(t, call{}, "signin", "map", "--data", data, "ldap", "netops", "--role", "Operator", "--all-groups")
	mustFail(t, call{}, []string{`no role "Wizard"`}, "signin", "map", "--data", data, "ldap", "lab", "--role", "Wizard")
	mustFail(t, call{}, []string{"mapped already"}, "signin", "map", "--data", data, "ldap", "NetOps", "--role", "Viewer")
	mustFail(t, call{}, []string{"ldap or oidc"}, "signin", "map", "--data", data, "kerberos", "x", "--role", "Viewer")

	show := mustRun(t, call{}, "signin", "show", "--data", data)
	for _, want := range []string{srv.LDAPSURL, "(stored, sealed)", "4s", `map ldap "netops" → Operator; all device groups`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("signin show lacks %q:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout+show.stderr, srv.ServicePassword) {
		t.Fatal("signin show prints the service password")
	}

	test := mustRun(t, call{}, "signin", "test", "--data", data, "alice")
	for _, want := range []string{"ok     service bind", "dn: " + testldap.UserDN("alice"), "group: netops", "roles: Operator (from netops)"} {
		if !strings.Contains(test.stdout, want) {
			t.Errorf("signin test alice lacks %q:\n%s", want, test.stdout)
		}
	}
	carol := mustRun(t, call{}, "signin", "test", "--data", data, "carol")
	if !strings.Contains(carol.stdout, "in no mapped group, this user cannot sign in") {
		t.Errorf("signin test carol:\n%s", carol.stdout)
	}

	// A directory user: the sync keeps it while netops holds it, and
	// user passwd has no password of its to set.
	s := openStore(t, data)
	ctx := context.Background()
	op, err := s.RoleByName(ctx, "Operator")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SyncDirectoryUser(ctx, db.DirectoryUser{Source: db.UserLDAP, ExternalID: testldap.UserDN("alice"),
		Username: "alice", RoleIDs: []int64{op.ID}, AllGroups: true}); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, call{}, "signin", "sync", "--data", data); !strings.Contains(r.stdout, "checked 1, changed 0, disabled 0") {
		t.Errorf("signin sync: %s", r)
	}
	mustFail(t, call{stdin: "a-new-password-1\n"}, []string{"alice signs in through the LDAP directory"},
		"user", "passwd", "--data", data, "alice")
	mustRun(t, call{}, "signin", "unmap", "--data", data, "ldap", "netops")
	if r := mustRun(t, call{}, "signin", "sync", "--data", data); !strings.Contains(r.stdout, "checked 1, changed 0, disabled 1") {
		t.Errorf("signin sync after unmapping: %s", r)
	}
	if u, _ := s.UserByName(ctx, "alice"); u.Active {
		t.Fatal("alice is active in no mapped group")
	}

	entries, _, err := s.ListAudit(ctx, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Interface == "cli" {
			seen[e.Action] = true
		}
		if e.Interface == "cli" && e.TargetID == db.SettingLDAP && e.Details["url"] == srv.LDAPSURL &&
			(e.Details["bind_password_changed"] != true || e.Details["user_filter"] == nil) {
			t.Errorf("the cli audit of the LDAP settings: %v", e.Details)
		}
	}
	for _, a := range []string{"settings.update", "signin.mapping_add", "signin.mapping_delete"} {
		if !seen[a] {
			t.Errorf("no cli audit entry %s: %v", a, seen)
		}
	}

	// Single sign-on from flags: refused field by field, then saved.
	mustFail(t, call{}, []string{"--oidc-issuer:", "--oidc-external-url:"}, "signin", "oidc", "--data", data, "--oidc-enabled",
		"--oidc-issuer", "ftp://idp.example", "--oidc-client-id", "backupd", "--oidc-external-url", "backupd.example.com")
	secret := filepath.Join(dir, "oidc")
	if err := os.WriteFile(secret, []byte("client-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, call{}, "signin", "oidc", "--data", data, "--oidc-enabled", "--oidc-name", "Keycloak",
		"--oidc-issuer", "https://sso.example.com/realms/net", "--oidc-client-id", "backupd",
		"--oidc-client-secret-file", secret, "--oidc-external-url", "https://backupd.example.com/")
	if !strings.Contains(r.stdout, "https://backupd.example.com/login/oidc/callback") {
		t.Errorf("signin oidc: %s", r)
	}
	if o, err := s.OIDCConfig(ctx); err != nil || len(o.ClientSecret) == 0 || strings.Contains(string(o.ClientSecret), "client-s3cret") {
		t.Fatalf("stored client secret: %v", err)
	}
}
