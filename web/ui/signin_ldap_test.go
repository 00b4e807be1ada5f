package ui_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
	"backupd/internal/testldap"
)

// ldapForm is the LDAP section of Settings → Sign-in for srv, OpenLDAP's
// schema, the service account's password typed.
func ldapForm(srv *testldap.Server) url.Values {
	return url.Values{"enabled": {"1"}, "preset": {"openldap"}, "url": {srv.LDAPSURL}, "security": {"ldaps"},
		"ca_cert": {string(srv.CAPEM)}, "bind_dn": {srv.ServiceDN}, "bind_password": {srv.ServicePassword},
		"base_dn": {srv.BaseDN}, "user_filter": {"(&(objectClass=inetOrgPerson)(uid={username}))"},
		"username_attr": {"uid"}, "group_mode": {"memberof"}, "group_filter": {"(objectClass=groupOfNames)"},
		"group_member_attr": {"member"}, "timeout": {"5s"}, "sync_interval": {"15m"}}
}

// roleID is the id of a role by name.
func roleID(t *testing.T, e *env, name string) string {
	t.Helper()
	r, err := e.store.RoleByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(r.ID, 10)
}

// The whole LDAP sign-in through the web interface against a real slapd:
// an administrator sets the directory up and maps groups, tests a user,
// and then directory users sign in with the roles their (nested) groups
// give; wrong passwords, a user in no mapped group and an injected name
// are refused; a local account's name is never the directory's; a group
// removed in the directory ends the user's sessions and keys at the sync;
// with the directory down, local accounts still sign in.
func TestLDAPSignIn(t *testing.T) {
	e := newEnv(t)
	srv := testldap.Start(t)
	ctx := context.Background()
	admin := adminBrowser(t, e)
	core, err := e.store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}

	admin.get("/settings/sign-in")
	p := admin.post("/settings/sign-in/ldap", ldapForm(srv))
	expect(t, "save LDAP", p, http.StatusSeeOther, "/settings/sign-in?done=ldap#ldap")
	a := lastAudit(t, e, "settings.update")
	if a.TargetID != db.SettingLDAP || a.Details["bind_password_changed"] != true || strings.Contains(auditText(t, a), srv.ServicePassword) {
		t.Fatalf("audit of the LDAP settings: %+v", a)
	}
	set, err := e.store.LDAPConfig(ctx)
	if err != nil || !set.Enabled || len(set.BindPassword) == 0 || strings.Contains(string(set.BindPassword), srv.ServicePassword) {
		t.Fatalf("stored settings: %+v %v", set, err)
	}
	page := admin.get("/settings/sign-in")
	expectBody(t, "settings page", page, `id="ldap-form"`, "A value is stored (sealed)", srv.LDAPSURL)
	if strings.Contains(page.body, srv.ServicePassword) {
		t.Fatal("the settings page shows the service password")
	}

	// netops (alice through core-team, dave) → Operator on every group;
	// viewers (bob) → Viewer on Core.
	for _, m := range []url.Values{
		{"source": {"ldap"}, "action": {"add"}, "group_name": {"netops"}, "role": {roleID(t, e, auth.RoleOperator)}, "scope": {"all"}},
		{"source": {"ldap"}, "action": {"add"}, "group_name": {testldap.GroupDN("viewers")}, "role": {roleID(t, e, auth.RoleViewer)},
			"scope": {"groups"}, "group": {strconv.FormatInt(core.ID, 10)}},
	} {
		admin.get("/settings/sign-in")
		expect(t, "add mapping", admin.post("/settings/sign-in/mappings", m), http.StatusSeeOther, "/settings/sign-in?done=mapping_added#ldap-mappings")
	}
	if a := lastAudit(t, e, "signin.mapping_add"); a.Details["group"] != testldap.GroupDN("viewers") {
		t.Fatalf("mapping audit: %+v", a.Details)
	}
	admin.get("/settings/sign-in")
	p = admin.post("/settings/sign-in/mappings", url.Values{"source": {"ldap"}, "action": {"add"}, "group_name": {"NETOPS"},
		"role": {roleID(t, e, auth.RoleViewer)}, "scope": {"all"}})
	expect(t, "mapping a group twice", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "mapping a group twice", p, "This group is mapped already")

	// Test: alice's groups, the nested one included, and her role.
	admin.get("/settings/sign-in")
	p = admin.post("/settings/sign-in/ldap/test", url.Values{"username": {"alice"}})
	expect(t, "test alice", p, http.StatusOK, "")
	expectBody(t, "test alice", p, `id="ldap-test-report"`, testldap.UserDN("alice"), ">netops<", ">core-team<", "Would sign in with:", "Operator")
	admin.get("/settings/sign-in")
	p = admin.post("/settings/sign-in/ldap/test", url.Values{"username": {"carol"}})
	expectBody(t, "test carol", p, ">lab<", "In no mapped group")

	expectBody(t, "login page with LDAP on", e.browser().get("/login"), `id="login-directory"`)

	// alice signs in with her directory password: a directory user with
	// the mapped role, no password kept.
	alice := e.browser()
	alice.mustLogin("alice", testldap.AlicePassword)
	u, err := e.store.UserByName(ctx, "alice")
	if err != nil || u.Source != db.UserLDAP || u.ExternalID != testldap.UserDN("alice") || u.PasswordHash != "" ||
		!u.AllGroups || len(u.Roles) != 1 || u.Roles[0] != auth.RoleOperator {
		t.Fatalf("alice after sign-in: %+v %v", u, err)
	}
	if a := lastAudit(t, e, "session.login"); a.Username != "alice" || a.Details["method"] != "ldap" ||
		a.Details["provider"] != strings.TrimPrefix(srv.LDAPSURL, "ldaps://") {
		t.Fatalf("sign-in audit: %+v", a)
	}
	if a := lastAudit(t, e, "user.directory_created"); a.Username != "alice" || a.Details["groups"] == nil {
		t.Fatalf("creation audit: %+v", a)
	}
	expect(t, "alice opens devices", alice.get("/devices"), http.StatusOK, "")
	expect(t, "alice has no password page", alice.get("/account/password"), http.StatusConflict, "")

	// The administrator sees where alice signs in, and has no password
	// of hers to reset.
	userPage := "/users/" + strconv.FormatInt(u.ID, 10)
	p = admin.get(userPage)
	expectBody(t, "alice's user page", p, `id="user-external"`, "signs in through the LDAP directory")
	if strings.Contains(p.body, `id="reset-form"`) {
		t.Fatal("alice's page offers a password reset")
	}
	expect(t, "reset alice's password", admin.post(userPage+"/password", url.Values{"password_mode": {"generate"}}), http.StatusConflict, "")
	expectBody(t, "users list", admin.get("/users"), `title="Signs in through the LDAP directory">LDAP</span>`)

	bob := e.browser()
	bob.mustLogin("bob", testldap.BobPassword)
	if u, _ := e.store.UserByName(ctx, "bob"); u.AllGroups || len(u.GroupIDs) != 1 || u.GroupIDs[0] != core.ID {
		t.Fatalf("bob's scope: %+v", u)
	}

	// Refusals: each a 401 with the same words, the reason in the audit log.
	for _, c := range []struct{ user, pw, reason string }{
		{"alice", "not-her-password", "wrong_password"},
		{"nobody", "whatever-pass", "wrong_password"},
		{"carol", testldap.CarolPassword, "no_mapped_group"},
		{"*)(uid=*", testldap.AlicePassword, "wrong_password"},
		{"ali*", testldap.AlicePassword, "wrong_password"},
	} {
		b := e.browserFrom("127.0.0.3")
		p := b.login(c.user, c.pw)
		expect(t, "sign-in of "+c.user, p, http.StatusUnauthorized, "")
		expectBody(t, "sign-in of "+c.user, p, "Wrong username or password")
		if a := lastAudit(t, e, "session.login_failed"); a.Details["reason"] != c.reason || a.Details["method"] != "ldap" {
			t.Fatalf("%s: audit %+v, want reason %s", c.user, a.Details, c.reason)
		}
	}
	if _, err := e.store.UserByName(ctx, "carol"); err == nil {
		t.Fatal("carol, in no mapped group, was created")
	}

	// A local account keeps its name: dave's directory password does not
	// sign in as the local dave, and the local dave stays local.
	e.createUser("dave", "local-dave-password", auth.RoleViewer, false)
	p = e.browserFrom("127.0.0.4").login("dave", testldap.DavePassword)
	expect(t, "directory dave over local dave", p, http.StatusUnauthorized, "")
	e.browser().mustLogin("dave", "local-dave-password")
	if u, _ := e.store.UserByName(ctx, "dave"); u.Source != db.UserLocal {
		t.Fatalf("local dave became %s", u.Source)
	}

	// alice's group leaves netops in the directory: at the sync she loses
	// her session and her API key.
	if _, err := e.store.CreateAPIKey(ctx, dbKey(u.ID, "bk_aliceky", []byte("h"))); err != nil {
		t.Fatal(err)
	}
	srv.RemoveMember(t, testldap.GroupDN("netops"), testldap.GroupDN("core-team"))
	admin.get("/settings/sign-in")
	p = admin.post("/settings/sign-in/ldap/sync", nil)
	expectBody(t, "sync now", p, `id="ldap-sync-result"`, "2 users checked, 0 changed, 1 disabled")
	if got := alice.get("/devices"); got.status != http.StatusSeeOther || !strings.HasPrefix(got.header.Get("Location"), "/login") {
		t.Fatalf("alice after the sync: %d %s", got.status, got.header.Get("Location"))
	}
	var live int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM api_keys WHERE user_id = ? AND revoked_at IS NULL`, u.ID).Scan(&live); err != nil || live != 0 {
		t.Fatalf("alice's live keys after the sync: %d %v", live, err)
	}
	entries, _, _ := e.store.ListAudit(ctx, 20, 0)
	found := false
	for _, en := range entries {
		if en.Action == "user.directory_disabled" && en.Username == "alice" && en.Interface == "system" {
			found = en.Details["reason"] == "no_mapped_group" && en.Details["keys_revoked"] == float64(1)
		}
	}
	if !found {
		t.Fatal("no audit entry says alice was disabled by the sync")
	}

	// The directory goes away: its users get a clear 503, the local
	// administrator still signs in (break-glass).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "ldaps://" + ln.Addr().String()
	ln.Close()
	f := ldapForm(srv)
	f.Set("url", down)
	f.Del("bind_password")
	admin.get("/settings/sign-in")
	expect(t, "directory elsewhere", admin.post("/settings/sign-in/ldap", f), http.StatusSeeOther, "")
	p = e.browserFrom("127.0.0.5").login("bob", testldap.BobPassword)
	expect(t, "bob with the directory down", p, http.StatusServiceUnavailable, "")
	expectBody(t, "bob with the directory down", p, "The directory does not answer")
	if a := lastAudit(t, e, "session.login_failed"); a.Details["reason"] != "directory_unavailable" {
		t.Fatalf("audit: %+v", a.Details)
	}
	e.browserFrom("127.0.0.5").mustLogin("root", "root-password-1")
	if set, _ := e.store.LDAPConfig(ctx); len(set.BindPassword) == 0 {
		t.Fatal("saving without a password typed dropped the stored one")
	}
	expectBody(t, "break-glass list", admin.get("/settings/sign-in"), `id="breakglass-admins"`, "<code>root</code>", "<code>admin</code>")
}

// Changing sign-in decides who gets in with which roles: a settings
// editor without users.create/users.update, or one who could not grant
// a mapped role, is refused, and sees the page read-only; a bad setting
// is refused field by field in both languages and stores nothing.
func TestSignInSettingsGuarded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin := adminBrowser(t, e)
	if err := e.store.EnsureRole(ctx, db.Role{Name: "Settings editor", Permissions: []string{"settings.view", "settings.update"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.EnsureRole(ctx, db.Role{Name: "User manager", Permissions: []string{"settings.view", "settings.update",
		"users.view", "users.create", "users.update", "roles.view", "devices.view"}}); err != nil {
		t.Fatal(err)
	}
	e.createUser("sally", "sally-password", "Settings editor", true)
	e.createUser("ursula", "ursula-password", "User manager", true)

	// The administrator maps a group to Administrator.
	admin.get("/settings/sign-in")
	expect(t, "map admins", admin.post("/settings/sign-in/mappings", url.Values{"source": {"oidc"}, "action": {"add"},
		"group_name": {"net-admins"}, "role": {roleID(t, e, auth.RoleAdministrator)}, "scope": {"all"}}), http.StatusSeeOther, "")

	srv := testldap.Start(t)
	for _, who := range []struct{ name, pw, why string }{
		{"sally", "sally-password", "needs the permissions settings.update, users.create and users.update"},
		{"ursula", "ursula-password", "beyond your own"},
	} {
		b := e.browser()
		b.mustLogin(who.name, who.pw)
		p := b.get("/settings/sign-in")
		expect(t, who.name+" views", p, http.StatusOK, "")
		if strings.Contains(p.body, `id="ldap-save"`) || strings.Contains(p.body, `id="oidc-mapping-form"`) {
			t.Errorf("%s sees the forms editable", who.name)
		}
		for path, form := range map[string]url.Values{
			"/settings/sign-in/ldap":     ldapForm(srv),
			"/settings/sign-in/mappings": {"source": {"ldap"}, "action": {"add"}, "group_name": {"x"}, "role": {roleID(t, e, auth.RoleViewer)}, "scope": {"all"}},
			"/settings/sign-in/oidc":     {"enabled": {"1"}, "name": {"Evil"}, "issuer": {"https://idp.example"}, "client_id": {"c"}, "external_url": {"https://b.example"}},
		} {
			p := b.post(path, form)
			expect(t, who.name+" posts "+path, p, http.StatusForbidden, "")
			expectBody(t, who.name+" posts "+path, p, who.why)
		}
	}
	if set, _ := e.store.LDAPConfig(ctx); set.URL != "" {
		t.Fatal("a refused editor changed the LDAP settings")
	}

	// Bad settings: refused field by field, nothing stored, in Chinese too.
	f := ldapForm(srv)
	f.Set("url", "ldap://127.0.0.1:1")
	f.Set("user_filter", "(uid=alice)")
	f.Set("timeout", "soon")
	admin.get("/settings/sign-in")
	p := admin.post("/settings/sign-in/ldap", f)
	expect(t, "bad timeout", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad timeout", p, `id="err-timeout"`, "Write a duration such as 10s")
	f.Set("timeout", "5s")
	p = admin.post("/settings/sign-in/ldap", f)
	expect(t, "bad LDAP settings", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad LDAP settings", p, "Nothing was saved", `id="err-security"`, `id="err-user_filter"`, "{username}", `value="(uid=alice)"`)
	admin.header.Set("Cookie", "lang=zh")
	p = admin.post("/settings/sign-in/ldap", f)
	admin.header.Del("Cookie")
	expectBody(t, "bad LDAP settings (zh)", p, "未保存任何内容")
	if set, _ := e.store.LDAPConfig(ctx); set.URL != "" {
		t.Fatal("refused settings were stored")
	}
	// Without CSRF: refused.
	f = ldapForm(srv)
	f.Set("csrf", "forged")
	expect(t, "LDAP settings without CSRF", admin.post("/settings/sign-in/ldap", f), http.StatusForbidden, "")
}
