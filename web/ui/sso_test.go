package ui_test

import (
	"context"
	"encoding/base64"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/identity/oidc"
	"backupd/db"
	"backupd/internal/dbtest"
	"backupd/internal/testoidc"
)

// The provider's people: alice is in netops (mapped to Operator), bob
// in guests (mapped to nothing), carol shares her name with a local
// account.
var ssoUsers = []testoidc.User{
	{Subject: "s-alice", Username: "alice", Password: "alice-at-idp", Name: "Alice Example", Groups: []string{"netops"}},
	{Subject: "s-bob", Username: "bob", Password: "bob-at-idp", Groups: []string{"guests"}},
	{Subject: "s-carol", Username: "carol", Password: "carol-at-idp", Groups: []string{"netops"}},
}

// ssoEnv is the server with single sign-on to a real provider on
// 127.0.0.1, netops mapped to the Operator role on every device group.
func ssoEnv(t *testing.T) (*env, *testoidc.Provider) {
	t.Helper()
	e := newEnv(t)
	idp := testoidc.Start(t, ssoUsers, []testoidc.Client{{ID: "backupd", Secret: "s3cret",
		RedirectURIs:           []string{e.srv.URL + oidc.CallbackPath},
		PostLogoutRedirectURIs: []string{e.srv.URL + "/login?out=1"}}})
	e.putOIDC(db.OIDCSettings{Enabled: true, Name: "Test IdP", Issuer: idp.Issuer, ClientID: "backupd",
		ClientSecret: e.sealer.Seal("s3cret", db.OIDCSecretPurpose), ExternalURL: e.srv.URL,
		Mappings: []db.GroupMapping{{Group: "netops", RoleIDs: []int64{e.ssoRoleID(auth.RoleOperator)}, AllGroups: true}}})
	return e, idp
}

func (e *env) putOIDC(s db.OIDCSettings) {
	e.t.Helper()
	if err := e.store.PutSetting(context.Background(), db.SettingOIDC, s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) oidcSettings() db.OIDCSettings {
	e.t.Helper()
	s, err := e.store.OIDCConfig(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// ssoRoleID is the id of the role name.
func (e *env) ssoRoleID(name string) int64 {
	e.t.Helper()
	r, err := e.store.RoleByName(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return r.ID
}

// ssoStart follows "Sign in with …" to the provider, signs in there and
// returns the callback (path and query) the provider sends the browser
// back to, not yet followed.
func ssoStart(t *testing.T, b *browser, idp *testoidc.Provider, next, user, password string) string {
	t.Helper()
	start := "/login/oidc"
	if next != "" {
		start += "?next=" + url.QueryEscape(next)
	}
	p := b.get(start)
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, idp.Issuer+"/") {
		t.Fatalf("GET %s: %d to %q, want 303 to the provider\n%s", start, p.status, loc, p.body)
	}
	c := ssoStateCookie(b)
	if c == nil || c.Value == "" {
		t.Fatal("no state cookie after the start")
	}
	// For the callback only, never to script, not on cross-site
	// subrequests, ten minutes.
	set := p.header.Get("Set-Cookie")
	for _, want := range []string{"Path=/login/oidc", "Max-Age=600", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(set, want) {
			t.Fatalf("state cookie %q lacks %s", set, want)
		}
	}
	back, err := idp.SignIn(loc, user, password)
	if err != nil {
		t.Fatalf("sign in as %s at the provider: %v", user, err)
	}
	if !strings.HasPrefix(back.String(), b.e.srv.URL+oidc.CallbackPath+"?") {
		t.Fatalf("the provider sent the browser to %s, want backupd's callback", back)
	}
	return back.RequestURI()
}

// ssoStateCookie is the state cookie the browser holds for the callback.
func ssoStateCookie(b *browser) *http.Cookie {
	u, _ := url.Parse(b.e.srv.URL + oidc.CallbackPath)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == "backupd_oidc_state" {
			return c
		}
	}
	return nil
}

// ssoLogin signs user in through the provider and checks it lands on
// next.
func ssoLogin(t *testing.T, b *browser, idp *testoidc.Provider, next, user, password string) {
	t.Helper()
	cb := ssoStart(t, b, idp, next, user, password)
	want := next
	if want == "" {
		want = "/"
	}
	expect(t, "callback of "+user, b.get(cb), http.StatusSeeOther, want)
}

func TestSSOSignInOpensAnOIDCSessionWithTheMappedRole(t *testing.T) {
	e, idp := ssoEnv(t)
	b := e.browser()
	cb := ssoStart(t, b, idp, "/settings", "alice", "alice-at-idp")
	expect(t, "callback", b.get(cb), http.StatusSeeOther, "/settings")

	// Operator (from netops) sees the settings, not the users.
	expect(t, "settings as alice", b.get("/settings"), http.StatusOK, "")
	expect(t, "users as alice", b.get("/users"), http.StatusForbidden, "")
	u, err := e.store.UserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if u.Source != db.UserOIDC || u.ExternalID != idp.Issuer+" s-alice" || !u.Active {
		t.Fatalf("alice = source %q, external id %q, active %v", u.Source, u.ExternalID, u.Active)
	}
	var method string
	var sealed []byte
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT method, idp_token FROM web_sessions WHERE user_id = ?`, u.ID).Scan(&method, &sealed); err != nil {
		t.Fatal(err)
	}
	idToken, err := e.sealer.Open(sealed, oidc.IDTokenPurpose)
	if method != db.SessionOIDC || err != nil || strings.Count(idToken, ".") != 2 || strings.Contains(string(sealed), idToken) {
		t.Fatalf("session method %q, ID token sealed: %v (%d bytes)", method, err, len(sealed))
	}
	a := e.lastAudit("session.login")
	if a.Username != "alice" || a.Details["method"] != "oidc" || a.Details["provider"] != "Test IdP" || a.Details["created"] != true {
		t.Fatalf("audit session.login = %+v", a)
	}
	// Nothing of the exchange reaches the log.
	q, _ := url.ParseQuery(strings.SplitN(cb, "?", 2)[1])
	for what, secret := range map[string]string{"code": q.Get("code"), "state": q.Get("state"), "ID token": idToken,
		"ID token signature": idToken[strings.LastIndex(idToken, ".")+1:], "client secret": "s3cret"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("the server log holds the %s", what)
		}
	}
}

func TestSSOCallbackWithAUsedStateIsRefused(t *testing.T) {
	e, idp := ssoEnv(t)
	b := e.browser()
	cb := ssoStart(t, b, idp, "", "alice", "alice-at-idp")
	state := ssoStateCookie(b).Value
	expect(t, "callback", b.get(cb), http.StatusSeeOther, "/")
	if ssoStateCookie(b) != nil {
		t.Fatal("the state cookie outlived the callback")
	}
	tokens := idp.Requests(testoidc.TokenPath)

	// The same callback again, cookie and all, from another browser: the
	// state was taken.
	again := e.browser()
	u, _ := url.Parse(e.srv.URL + "/login/oidc")
	again.jar.SetCookies(u, []*http.Cookie{{Name: "backupd_oidc_state", Value: state, Path: "/login/oidc"}})
	p := again.get(cb)
	expect(t, "replayed callback", p, http.StatusBadRequest, "")
	expectBody(t, "replayed callback", p, "This sign-in link was already used or has expired; start again.", `id="sign-in-oidc"`, `id="username"`)
	if again.cookie("backupd_session") != nil {
		t.Fatal("the replayed callback opened a session")
	}
	if n := idp.Requests(testoidc.TokenPath); n != tokens {
		t.Fatalf("the replay reached the token endpoint (%d requests, were %d)", n, tokens)
	}
	a := e.lastAudit("session.login_failed")
	if a.Details["method"] != "oidc" || a.Details["provider"] != "Test IdP" || a.Details["reason"] != "state_used" {
		t.Fatalf("audit = %+v", a)
	}

	// Without the cookie the state of a fresh sign-in is refused too: it
	// belongs to the browser that began it.
	cb = ssoStart(t, e.browser(), idp, "", "alice", "alice-at-idp")
	p = e.browser().get(cb)
	expect(t, "callback in another browser", p, http.StatusBadRequest, "")
	expectBody(t, "callback in another browser", p, "This sign-in link was already used or has expired")
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "no_state_cookie" {
		t.Fatalf("audit = %+v", a)
	}
}

func TestSSOExpiredStateIsRefused(t *testing.T) {
	e, idp := ssoEnv(t)
	b := e.browser()
	cb := ssoStart(t, b, idp, "", "alice", "alice-at-idp")
	e.clock.Advance(11 * time.Minute) // past the ten minutes a sign-in may take
	p := b.get(cb)
	expect(t, "late callback", p, http.StatusBadRequest, "")
	expectBody(t, "late callback", p, "This sign-in link was already used or has expired; start again.")
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "state_expired" {
		t.Fatalf("audit = %+v", a)
	}
}

func TestSSOUserInNoMappedGroupIsRefusedAndDisabled(t *testing.T) {
	e, idp := ssoEnv(t)
	// While guests gave Viewer, bob signed in …
	s := e.oidcSettings()
	s.Mappings = append(s.Mappings, db.GroupMapping{Group: "guests", RoleIDs: []int64{e.ssoRoleID(auth.RoleViewer)}, AllGroups: true})
	e.putOIDC(s)
	bob := e.browser()
	ssoLogin(t, bob, idp, "", "bob", "bob-at-idp")
	expect(t, "devices as bob", bob.get("/devices"), http.StatusOK, "")

	// … then the mapping went: his next sign-in is refused, and the user
	// (with the session he still had) is disabled.
	s.Mappings = s.Mappings[:1]
	e.putOIDC(s)
	b := e.browser()
	cb := ssoStart(t, b, idp, "", "bob", "bob-at-idp")
	p := b.get(cb)
	expect(t, "unmapped bob", p, http.StatusForbidden, "")
	expectBody(t, "unmapped bob", p, "Your account at Test IdP is in no group that gives access to backupd.")
	if b.cookie("backupd_session") != nil {
		t.Fatal("an unmapped person got a session")
	}
	u, err := e.store.UserByName(context.Background(), "bob")
	if err != nil || u.Active {
		t.Fatalf("bob after the refusal: active %v (%v), want disabled", u.Active, err)
	}
	expect(t, "bob's old session", bob.get("/devices"), http.StatusSeeOther, "/login?ended=1&next=%2Fdevices")
	a := e.lastAudit("session.login_failed")
	if a.Details["reason"] != "not_mapped" || a.Details["disabled"] != true || a.Username != "bob" {
		t.Fatalf("audit = %+v", a)
	}

	// A person never seen is refused without a user being made.
	s.Mappings = nil
	e.putOIDC(s)
	b = e.browser()
	p = b.get(ssoStart(t, b, idp, "", "alice", "alice-at-idp"))
	expect(t, "alice with no mappings", p, http.StatusForbidden, "")
	if _, err := e.store.UserByName(context.Background(), "alice"); err == nil {
		t.Fatal("an unmapped first sign-in made a user")
	}
}

func TestSSOLocalAccountNameIsRefused(t *testing.T) {
	e, idp := ssoEnv(t)
	e.createUser("carol", "carol-local-pw", auth.RoleViewer, true)
	b := e.browser()
	cb := ssoStart(t, b, idp, "", "carol", "carol-at-idp")
	p := b.get(cb)
	expect(t, "carol through the provider", p, http.StatusForbidden, "")
	expectBody(t, "carol through the provider", p, "A local account already uses the name carol, so the sign-in through Test IdP was refused.")
	if b.cookie("backupd_session") != nil {
		t.Fatal("the provider's carol got a session")
	}
	u, err := e.store.UserByName(context.Background(), "carol")
	if err != nil || u.Source != db.UserLocal || !u.Active {
		t.Fatalf("local carol after: source %q active %v (%v)", u.Source, u.Active, err)
	}
	a := e.lastAudit("session.login_failed")
	if a.Details["reason"] != "local_account" || a.UserID == nil || *a.UserID != u.ID {
		t.Fatalf("audit = %+v", a)
	}
	// The local account still signs in with its password.
	e.browser().mustLogin("carol", "carol-local-pw")
}

func TestSSOLogoutEndsTheProviderSession(t *testing.T) {
	e, idp := ssoEnv(t)
	b := e.browser()
	ssoLogin(t, b, idp, "/dashboard", "alice", "alice-at-idp")
	b.get("/dashboard")
	// A form's redirect to another origin is against the pages' CSP: a
	// page moves on (Refresh) to the provider's end-session endpoint.
	p := b.post("/logout", nil)
	loc, ok := strings.CutPrefix(p.header.Get("Refresh"), "0; url=")
	if p.status != http.StatusOK || !ok || !strings.HasPrefix(loc, idp.Issuer+"/end_session?") {
		t.Fatalf("sign-out: %d Refresh %q, want 200 moving on to the provider's end-session endpoint", p.status, p.header.Get("Refresh"))
	}
	expectBody(t, "sign-out page", p, "You have signed out of backupd", `id="continue-sign-out" href="`+html.EscapeString(loc)+`"`)
	if strings.Contains(p.body, `id="sign-out"`) {
		t.Fatal("the sign-out page shows the signed-in header")
	}
	u, _ := url.Parse(loc)
	if q := u.Query(); q.Get("id_token_hint") == "" || q.Get("post_logout_redirect_uri") != e.srv.URL+"/login?out=1" || q.Get("client_id") != "backupd" {
		t.Fatalf("end-session query %v", q)
	}
	if n := e.sessionCount(); n != 0 {
		t.Fatalf("%d sessions after sign-out, want 0", n)
	}
	expect(t, "a page after sign-out", b.get("/dashboard"), http.StatusSeeOther, "")
	// The provider takes the hint and sends the browser back.
	back, err := idp.EndSession(loc)
	if err != nil || back.String() != e.srv.URL+"/login?out=1" {
		t.Fatalf("the provider sends the browser to %v (%v), want the sign-in page", back, err)
	}

	// A password session still signs out to the sign-in page.
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	pw := e.browser()
	pw.mustLogin("root", "root-password-1")
	pw.get("/dashboard")
	expect(t, "password sign-out", pw.post("/logout", nil), http.StatusSeeOther, "/login?out=1")
}

func TestSSOStateCookieIsSecureOverTLS(t *testing.T) {
	e, _ := ssoEnv(t)
	tlsSrv := httptest.NewTLSServer(e.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	b := e.browser()
	b.client.Transport = tlsSrv.Client().Transport
	plain := e.srv.URL
	e.srv.URL = tlsSrv.URL
	t.Cleanup(func() { e.srv.URL = plain })

	p := b.get("/login/oidc")
	expect(t, "start over TLS", p, http.StatusSeeOther, "")
	var state *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "backupd_oidc_state" {
			state = c
		}
	}
	if state == nil || !state.Secure || !state.HttpOnly {
		t.Fatalf("state cookie over TLS: %+v, want Secure and HttpOnly", state)
	}
}

func TestSSOLoginPageButton(t *testing.T) {
	e, _ := ssoEnv(t)
	p := e.browser().get("/login?next=%2Fdevices")
	expectBody(t, "sign-in page", p, `id="sign-in-oidc" href="/login/oidc?next=%2Fdevices">Sign in with Test IdP</a>`,
		"Or sign in with a local account:", `id="username"`, `id="password"`)
	zh := e.browser()
	zh.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "sign-in page in Chinese", zh.get("/login"), `id="sign-in-oidc" href="/login/oidc">使用 Test IdP 登录</a>`, "或使用本地账户登录")

	s := e.oidcSettings()
	s.Enabled = false
	e.putOIDC(s)
	p = e.browser().get("/login")
	if strings.Contains(p.body, "sign-in-oidc") {
		t.Fatal("the button shows while single sign-on is off")
	}
	p = e.browser().get("/login/oidc")
	expect(t, "start while off", p, http.StatusNotFound, "")
	expectBody(t, "start while off", p, "Single sign-on is not turned on.")
}

func TestSSORefusalsAreClearPages(t *testing.T) {
	e, idp := ssoEnv(t)

	// The person cancels at the provider: it sends the error back.
	b := e.browser()
	cb := ssoStart(t, b, idp, "", "alice", "alice-at-idp")
	q, _ := url.ParseQuery(strings.SplitN(cb, "?", 2)[1])
	p := b.get("/login/oidc/callback?" + url.Values{"state": {q.Get("state")}, "error": {"access_denied"},
		"error_description": {"<b>the user said no</b>"}}.Encode())
	expect(t, "provider error", p, http.StatusUnauthorized, "")
	expectBody(t, "provider error", p, "Test IdP did not sign you in (it answered “access_denied”).")
	if strings.Contains(p.body, "the user said no") {
		t.Fatal("the provider's error description is shown")
	}
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "provider_error" || a.Details["error"] != "access_denied" {
		t.Fatalf("audit = %+v", a)
	}

	// A tampered ID token.
	idp.RewriteIDToken(func(raw string) string {
		parts := strings.Split(raw, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sig[0] ^= 0xff
		return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	})
	b = e.browser()
	p = b.get(ssoStart(t, b, idp, "", "alice", "alice-at-idp"))
	expect(t, "tampered token", p, http.StatusUnauthorized, "")
	expectBody(t, "tampered token", p, "The answer from Test IdP could not be verified, so you are not signed in.")
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "invalid_token" {
		t.Fatalf("audit = %+v", a)
	}
	if b.cookie("backupd_session") != nil {
		t.Fatal("a tampered token opened a session")
	}
	idp.RewriteIDToken(nil)

	// The provider unreachable: the start says so, no 500.
	s := e.oidcSettings()
	s.Issuer = "http://127.0.0.1:1"
	e.putOIDC(s)
	p = e.browser().get("/login/oidc")
	expect(t, "unreachable provider", p, http.StatusBadGateway, "")
	expectBody(t, "unreachable provider", p, "Test IdP cannot be reached or is not set up correctly", `id="password"`)
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "provider_unreachable" {
		t.Fatalf("audit = %+v", a)
	}
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Fatalf("a refusal logged an error:\n%s", e.logs.String())
	}
}

// A user an administrator disabled stays disabled whatever the provider
// says, and an existing single sign-on user is never taken over by
// another subject under the same name (nor disabled by one in no mapped
// group).
func TestSSODisabledOrOtherSubjectIsRefused(t *testing.T) {
	e, idp := ssoEnv(t)
	ctx := context.Background()
	ssoLogin(t, e.browser(), idp, "", "alice", "alice-at-idp")
	if err := e.store.SetUserActive(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	p := b.get(ssoStart(t, b, idp, "", "alice", "alice-at-idp"))
	expect(t, "disabled alice", p, http.StatusForbidden, "")
	expectBody(t, "disabled alice", p, "An administrator disabled the backupd user alice")
	if u, _ := e.store.UserByName(ctx, "alice"); u.Active {
		t.Fatal("signing in through the provider undid an administrator's disabling")
	}
	if err := e.store.SetUserActive(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}

	// The user's recorded subject is someone else's now.
	if _, err := dbtest.Poke(t, e.store).Exec(`UPDATE users SET external_id = ? WHERE username = 'alice'`, idp.Issuer+" s-other"); err != nil {
		t.Fatal(err)
	}
	b = e.browser()
	p = b.get(ssoStart(t, b, idp, "", "alice", "alice-at-idp"))
	expect(t, "alice under another subject", p, http.StatusForbidden, "")
	expectBody(t, "alice under another subject", p, "belongs to another person at Test IdP")
	if a := e.lastAudit("session.login_failed"); a.Details["reason"] != "other_subject" {
		t.Fatalf("audit = %+v", a.Details)
	}
	if u, _ := e.store.UserByName(ctx, "alice"); !u.Active || u.ExternalID != idp.Issuer+" s-other" {
		t.Fatalf("the other subject changed alice: %+v", u)
	}
}
