package ui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
	"backupd/web"
)

func TestLoginBadThenGoodThenLogout(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()

	expect(t, "GET / signed out", b.get("/"), http.StatusSeeOther, "/login")
	expect(t, "GET /dashboard signed out", b.get("/dashboard"), http.StatusSeeOther, "/login?next=%2Fdashboard")

	p := b.login("alice", "wrong-password")
	expect(t, "wrong password", p, http.StatusUnauthorized, "")
	expectBody(t, "wrong password", p, "Wrong username or password", `value="alice"`)
	if b.cookie("backupd_session") != nil {
		t.Fatal("a refused sign-in set a session cookie")
	}
	expect(t, "missing password", b.post("/login", url.Values{"username": {"alice"}}), http.StatusUnprocessableEntity, "")
	expect(t, "unknown user", b.post("/login", url.Values{"username": {"nobody"}, "password": {"whatever-1234"}}), http.StatusUnauthorized, "")

	// The page asked for before signing in is where sign-in leads.
	b.get("/login?next=%2Fdashboard")
	p = b.post("/login", url.Values{"username": {"ALICE"}, "password": {"alice-password-1"}, "next": {"/dashboard"}})
	expect(t, "good password", p, http.StatusSeeOther, "/dashboard")
	var sc *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "backupd_session" {
			sc = c
		}
	}
	if sc == nil {
		t.Fatal("no session cookie after sign-in")
	}
	if !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode || sc.Path != "/" || sc.Secure {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Lax, Path=/, not Secure over plain HTTP", sc)
	}
	// Only the token's hash is stored.
	sum := sha256.Sum256([]byte(sc.Value))
	var id string
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT id FROM web_sessions`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != hex.EncodeToString(sum[:]) || strings.Contains(id, sc.Value) {
		t.Errorf("stored session id %q is not the SHA-256 of the cookie", id)
	}
	p = b.get("/dashboard")
	expect(t, "dashboard signed in", p, http.StatusOK, "")
	expectBody(t, "dashboard", p, "alice", `aria-current="page"`)

	// Sign-out deletes the session on the server: the old cookie, replayed
	// by someone who copied it, no longer opens anything.
	stolen := e.browser()
	stolen.jar.SetCookies(mustURL(e.srv.URL), []*http.Cookie{{Name: "backupd_session", Value: sc.Value}})
	expect(t, "copied cookie before sign-out", stolen.get("/dashboard"), http.StatusOK, "")
	expect(t, "sign out", b.post("/logout", nil), http.StatusSeeOther, "/login?out=1")
	if n := e.sessionCount(); n != 0 {
		t.Fatalf("%d sessions left after sign-out", n)
	}
	expect(t, "copied cookie after sign-out", stolen.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
	expect(t, "dashboard after sign-out", b.get("/dashboard"), http.StatusSeeOther, "/login?next=%2Fdashboard")

	// Every outcome is audited, never with the password.
	entries := e.auditEntries()
	want := []struct{ action, user, reason string }{
		{"session.login_failed", "alice", "wrong_password"},
		{"session.login_failed", "", "unknown_user"},
		{"session.login", "alice", ""},
		{"session.logout", "alice", ""},
	}
	if len(entries) != len(want) {
		t.Fatalf("audit has %d web entries, want %d: %+v", len(entries), len(want), entries)
	}
	for i, w := range want {
		got := entries[i]
		reason, _ := got.Details["reason"].(string)
		if got.Action != w.action || got.Username != w.user || reason != w.reason || got.RequestID == "" || got.RemoteAddr == "" {
			t.Errorf("audit entry %d = %+v, want %s by %q (reason %q) with request id and address", i, got, w.action, w.user, w.reason)
		}
		if w.action != "session.login_failed" && (got.SessionID == nil || len(*got.SessionID) != 16) {
			t.Errorf("audit entry %d names no session", i)
		}
	}
	var n int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM audit_log WHERE lower(details) LIKE '%password-1%' OR lower(details) LIKE '%wrong-password%'
		OR lower(username) LIKE '%nobody%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the audit log holds a password or an unknown username")
	}
	if strings.Contains(e.logs.String(), "alice-password-1") || strings.Contains(e.logs.String(), "wrong-password") {
		t.Error("the server log holds a password")
	}
}

func TestLoginRotatesSessionID(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	first := b.cookie("backupd_session").Value
	// Signing in again on the same browser (a fixed or stale cookie, say)
	// replaces its session with a new one.
	b.mustLogin("alice", "alice-password-1")
	second := b.cookie("backupd_session").Value
	if first == second {
		t.Fatal("the session id did not change at sign-in")
	}
	if n := e.sessionCount(); n != 1 {
		t.Fatalf("%d sessions after signing in twice on one browser, want 1", n)
	}
	old := e.browser()
	old.jar.SetCookies(mustURL(e.srv.URL), []*http.Cookie{{Name: "backupd_session", Value: first}})
	expect(t, "previous session", old.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
}

func TestSessionIdleAndAbsoluteExpiry(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	lastSeen := func() string {
		var s string
		if err := dbtest.Peek(t, e.store).QueryRow(`SELECT last_seen_at FROM web_sessions`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("idle", func(t *testing.T) {
		b := e.browser()
		b.mustLogin("alice", "alice-password-1")
		seen := lastSeen()
		// Activity within a minute is not written again.
		e.clock.Advance(30 * time.Second)
		expect(t, "after 30 s", b.get("/dashboard"), http.StatusOK, "")
		if lastSeen() != seen {
			t.Error("last_seen_at written twice within a minute")
		}
		e.clock.Advance(11 * time.Hour)
		expect(t, "after 11 h idle", b.get("/dashboard"), http.StatusOK, "")
		if lastSeen() == seen {
			t.Error("last_seen_at not written after 11 hours")
		}
		e.clock.Advance(12*time.Hour + time.Minute)
		p := b.get("/dashboard")
		expect(t, "after 12 h idle", p, http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
		if e.sessionCount() != 0 {
			t.Error("an idle-expired session was not deleted")
		}
		p = b.get("/login?ended=1")
		expectBody(t, "login after expiry", p, "Your session has ended")
	})

	t.Run("absolute", func(t *testing.T) {
		b := e.browser()
		b.mustLogin("alice", "alice-password-1")
		// Busy every 11 hours, it still ends seven days after sign-in.
		for elapsed := time.Duration(0); elapsed+11*time.Hour < 7*24*time.Hour; elapsed += 11 * time.Hour {
			e.clock.Advance(11 * time.Hour)
			expect(t, "busy session", b.get("/dashboard"), http.StatusOK, "")
		}
		e.clock.Advance(11 * time.Hour)
		expect(t, "after 7 days", b.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
	})

	t.Run("disabled user", func(t *testing.T) {
		b := e.browser()
		b.mustLogin("alice", "alice-password-1")
		if err := e.store.SetUserActive(context.Background(), "alice", false); err != nil {
			t.Fatal(err)
		}
		expect(t, "disabled user's session", b.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
		p := b.login("alice", "alice-password-1")
		expect(t, "disabled user's sign-in", p, http.StatusUnauthorized, "")
		if err := e.store.SetUserActive(context.Background(), "alice", true); err != nil {
			t.Fatal(err)
		}
	})

	// Sessions that ended while nobody came back are deleted at the next
	// sign-in.
	t.Run("pruned", func(t *testing.T) {
		idle := e.browser()
		idle.mustLogin("alice", "alice-password-1")
		e.clock.Advance(13 * time.Hour)
		e.browser().mustLogin("alice", "alice-password-1")
		if n := e.sessionCount(); n != 1 {
			t.Errorf("%d sessions after a sign-in, want only the new one", n)
		}
	})
}

func TestLoginThrottling(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser() // from 127.0.0.1
	for i := 1; i <= 4; i++ {
		expect(t, "failure", b.login("alice", "nope-nope-nope"), http.StatusUnauthorized, "")
	}
	// The fifth failure locks the username from this address for 30
	// seconds and says so.
	p := b.login("alice", "nope-nope-nope")
	expect(t, "fifth failure", p, http.StatusTooManyRequests, "")
	expectBody(t, "fifth failure", p, "Try again in 30 seconds")
	if got := p.header.Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After %q, want 30", got)
	}
	// While locked, even the right password is refused, unchecked, from
	// that address.
	p = e.browser().login("alice", "alice-password-1")
	expect(t, "right password from the locked address", p, http.StatusTooManyRequests, "")
	expectBody(t, "right password from the locked address", p, "Too many failed sign-ins")
	failures := 0
	for _, a := range e.auditEntries() {
		if a.Action == "session.login_failed" {
			failures++
		}
	}
	if failures != 5 {
		t.Errorf("%d failed sign-ins audited, want 5 (locked attempts are not checked)", failures)
	}

	// The real user, from another address, is not locked out by someone
	// else's guesses.
	other := e.browserFrom("127.0.0.2")
	p = other.login("alice", "alice-password-1")
	expect(t, "right password from another address", p, http.StatusSeeOther, "/")
	var from string
	for _, a := range e.auditEntries() {
		if a.Action == "session.login" {
			from = a.RemoteAddr
		}
	}
	if from != "127.0.0.2" {
		t.Errorf("the sign-in was audited from %q, want 127.0.0.2", from)
	}
	// ... nor is a wrong password from there locked by the other's count.
	expect(t, "one failure from another address", e.browserFrom("127.0.0.2").login("alice", "nope-nope-nope"), http.StatusUnauthorized, "")

	e.clock.Advance(31 * time.Second)
	// One more failure from the guessing address doubles its lock.
	p = b.login("alice", "nope-nope-nope")
	expect(t, "failure after the lock", p, http.StatusTooManyRequests, "")
	expectBody(t, "failure after the lock", p, "Try again in 60 seconds")
	e.clock.Advance(61 * time.Second)
	p = b.login("alice", "alice-password-1")
	expect(t, "right password after the lock", p, http.StatusSeeOther, "/")

	// Success forgets the failures of the username from this address.
	b2 := e.browser()
	expect(t, "failure after success", b2.login("alice", "nope-nope-nope"), http.StatusUnauthorized, "")
}

// Guessing from many addresses at once trips the backstop per username:
// a short lock, for every address, once far more failures than one
// address may make have been counted.
func TestLoginThrottlingBackstopAcrossAddresses(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	// 100 failures in all: 4 from each of 25 addresses, none of them
	// locked on its own.
	for i := range 25 {
		b := e.browserFrom(fmt.Sprintf("127.0.1.%d", i+1))
		for j := 1; j <= 4; j++ {
			p := b.login("alice", "nope-nope-nope")
			if i == 24 && j == 4 {
				expect(t, "the hundredth failure", p, http.StatusTooManyRequests, "")
				expectBody(t, "the hundredth failure", p, "Try again in 60 seconds")
				continue
			}
			expect(t, "failure", p, http.StatusUnauthorized, "")
		}
	}
	p := e.browserFrom("127.0.0.2").login("alice", "alice-password-1")
	expect(t, "right password during the backstop lock", p, http.StatusTooManyRequests, "")
	e.clock.Advance(61 * time.Second)
	p = e.browserFrom("127.0.0.2").login("alice", "alice-password-1")
	expect(t, "right password after the backstop lock", p, http.StatusSeeOther, "/")
}

func TestLoginThrottlingPerAddress(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	// Twenty failures from one address over many usernames lock the
	// address: the twentieth already answers 429.
	for i := 1; i < 20; i++ {
		expect(t, "failure", b.login("user"+string(rune('a'+i)), "nope-nope-nope"), http.StatusUnauthorized, "")
	}
	p := b.login("someone", "nope-nope-nope")
	expect(t, "twentieth failure", p, http.StatusTooManyRequests, "")
	p = b.login("alice", "alice-password-1")
	expect(t, "a good sign-in from the locked address", p, http.StatusTooManyRequests, "")
	expectBody(t, "locked address", p, "Try again in")
}

func TestForcedPasswordChange(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	p := b.login("admin", e.adminPassword)
	expect(t, "initial password", p, http.StatusSeeOther, "/account/password")
	firstSession := b.cookie("backupd_session").Value

	// Every page leads to the change; the internal API refuses business.
	for _, path := range []string{"/", "/dashboard", "/nowhere"} {
		got := b.get(path)
		if path == "/nowhere" {
			expect(t, "unknown page", got, http.StatusNotFound, "")
			continue
		}
		expect(t, path+" before the change", got, http.StatusSeeOther, "/account/password")
	}
	p = b.get("/account/password")
	expect(t, "change page", p, http.StatusOK, "")
	expectBody(t, "change page", p, "temporary password", `id="password-forced"`)
	if strings.Contains(p.body, `class="sidenav"`) {
		t.Error("the forced change page shows the navigation")
	}
	p = b.get("/api/session")
	expect(t, "GET /api/session", p, http.StatusOK, "")
	expectBody(t, "GET /api/session", p, `"must_change_password":true`)

	const newPW = "a-new-admin-password"
	cases := []struct {
		name                  string
		current, next, repeat string
		want                  string
		field                 string // the one marked
	}{
		{"wrong current", "not-it-at-all", newPW, newPW, "current password is not right", "current"},
		{"too short", e.adminPassword, "short", "short", "at least 10 characters", "new"},
		{"mismatch", e.adminPassword, newPW, newPW + "x", "two new passwords differ", "confirm"},
		{"same", e.adminPassword, e.adminPassword, e.adminPassword, "is the current one", "new"},
	}
	for _, c := range cases {
		p := b.post("/account/password", url.Values{"current": {c.current}, "new": {c.next}, "confirm": {c.repeat}})
		expect(t, c.name, p, http.StatusUnprocessableEntity, "")
		expectBody(t, c.name, p, c.want)
		// The field at fault is marked; nothing typed comes back.
		if n := strings.Count(p.body, `aria-invalid="true"`); n != 1 || !regexp.MustCompile(`id="`+c.field+`"[^>]*aria-invalid="true"`).MatchString(p.body) {
			t.Errorf("%s: %d fields marked, want %s alone", c.name, n, c.field)
		}
		for _, typed := range []string{c.current, c.next, c.repeat} {
			if strings.Contains(p.body, `value="`+typed+`"`) {
				t.Errorf("%s: the page sends a typed password back", c.name)
			}
		}
	}
	// Another browser signed in with the old password is signed out by
	// the change.
	other := e.browser()
	expect(t, "second sign-in", other.login("admin", e.adminPassword), http.StatusSeeOther, "/account/password")

	p = b.post("/account/password", url.Values{"current": {e.adminPassword}, "new": {newPW}, "confirm": {newPW}})
	expect(t, "change", p, http.StatusSeeOther, "/")
	if b.cookie("backupd_session").Value == firstSession {
		t.Error("the session id did not change with the password")
	}
	expect(t, "dashboard after the change", b.get("/dashboard"), http.StatusOK, "")
	expect(t, "other browser after the change", other.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
	if n := e.sessionCount(); n != 1 {
		t.Errorf("%d sessions after the change, want 1", n)
	}
	u, err := e.store.UserByName(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	if u.MustChangePassword {
		t.Error("must_change_password still set")
	}
	if ok, _ := auth.VerifyPassword(u.PasswordHash, newPW); !ok {
		t.Error("the new password does not verify")
	}
	var audited bool
	for _, a := range e.auditEntries() {
		audited = audited || a.Action == "user.password"
	}
	if !audited {
		t.Error("the password change is not audited")
	}

	// A password reset by an administrator signs the user out and forces
	// a change again at the next sign-in.
	hash, _ := auth.HashPassword("reset-by-admin-1")
	if err := e.store.ResetPassword(context.Background(), u.ID, hash, true, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, "after a reset", b.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
	expect(t, "sign-in after a reset", b.login("admin", "reset-by-admin-1"), http.StatusSeeOther, "/account/password")
	expect(t, "dashboard after a reset", b.get("/dashboard"), http.StatusSeeOther, "/account/password")
}

func TestPasswordChangeFromAccountPage(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	p := b.get("/account/password")
	expect(t, "account page", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="password-forced"`) {
		t.Error("a voluntary change says it is forced")
	}
	p = b.post("/account/password", url.Values{"current": {"alice-password-1"}, "new": {"alice-password-2"}, "confirm": {"alice-password-2"}})
	expect(t, "change", p, http.StatusSeeOther, "/account/password?changed=1")
	expectBody(t, "changed", b.get("/account/password?changed=1"), "has been changed")
	b2 := e.browser()
	expect(t, "old password", b2.login("alice", "alice-password-1"), http.StatusUnauthorized, "")
	b2.mustLogin("alice", "alice-password-2")
}

func mustURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return u
}

func TestUnreadablePasswordHashIsAWrongPassword(t *testing.T) {
	e := newEnv(t)
	if _, err := e.store.CreateUser(context.Background(), db.NewUser{Username: "legacy", PasswordHash: "$2a$10$notargon"}); err != nil {
		t.Fatal(err)
	}
	p := e.browser().login("legacy", "any-password-1")
	expect(t, "sign-in with an unreadable hash", p, http.StatusUnauthorized, "")
	expectBody(t, "unreadable hash", p, "Wrong username or password")
}

func TestCookiesAreSecureOverTLS(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	tlsSrv := httptest.NewTLSServer(e.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	b := e.browser()
	b.client.Transport = tlsSrv.Client().Transport
	plain := e.srv.URL
	e.srv.URL = tlsSrv.URL // the browser's requests and Origin go to the TLS server
	t.Cleanup(func() { e.srv.URL = plain })

	p := b.get("/login")
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if !c.Secure {
			t.Errorf("cookie %s over TLS is not Secure", c.Name)
		}
	}
	p = b.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}})
	expect(t, "sign-in over TLS", p, http.StatusSeeOther, "/")
	var session *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "backupd_session" {
			session = c
		}
	}
	if session == nil || !session.Secure || !session.HttpOnly {
		t.Fatalf("session cookie over TLS: %+v, want Secure and HttpOnly", session)
	}
	// Over TLS, a plain-HTTP Origin of the same host is another origin.
	expect(t, "dashboard over TLS", b.get("/dashboard"), http.StatusOK, "")
	req, _ := http.NewRequest(http.MethodPost, tlsSrv.URL+"/logout", strings.NewReader(url.Values{"csrf": {b.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", strings.Replace(tlsSrv.URL, "https://", "http://", 1))
	expect(t, "sign-out from the http origin", b.do(req), http.StatusForbidden, "")
	expect(t, "sign-out from the https origin", b.post("/logout", nil), http.StatusSeeOther, "/login?out=1")
}

// Behind a TLS-terminating proxy the server speaks plain HTTP: the proxy
// named with --trusted-proxy (here 127.0.0.2) says the client came over
// HTTPS and who the client is; anyone else saying so is not believed.
func TestTrustedProxyHTTPSAndClientAddress(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	proxies, err := web.ParseProxies([]string{"127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	behind := httptest.NewServer(web.TrustProxies(e.srv.Config.Handler, proxies))
	t.Cleanup(behind.Close)
	plain := e.srv.URL
	e.srv.URL = behind.URL
	t.Cleanup(func() { e.srv.URL = plain })

	sessionCookie := func(p page) *http.Cookie {
		for _, c := range (&http.Response{Header: p.header}).Cookies() {
			if c.Name == "backupd_session" {
				return c
			}
		}
		t.Fatal("no session cookie")
		return nil
	}
	// Through the trusted proxy, as from a client at 198.51.100.7 over
	// HTTPS: the browser sees https://, keeps Secure cookies and says so
	// in Origin.
	proxied := e.browserFrom("127.0.0.2")
	proxied.client.Jar = httpsJar{proxied.jar}
	proxied.header.Set("X-Forwarded-Proto", "https")
	proxied.header.Set("X-Forwarded-For", "198.51.100.7")
	proxied.header.Set("Origin", strings.Replace(behind.URL, "http://", "https://", 1))
	p := proxied.get("/login")
	if got := p.header.Get("Strict-Transport-Security"); got != web.HSTS {
		t.Errorf("through the trusted proxy over https: Strict-Transport-Security %q, want %q", got, web.HSTS)
	}
	p = proxied.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}})
	expect(t, "sign-in through the proxy", p, http.StatusSeeOther, "/")
	if c := sessionCookie(p); !c.Secure {
		t.Error("the session cookie is not Secure although the trusted proxy says the client came over HTTPS")
	}
	var from string
	for _, a := range e.auditEntries() {
		if a.Action == "session.login" {
			from = a.RemoteAddr
		}
	}
	if from != "198.51.100.7" {
		t.Errorf("sign-in through the proxy audited from %q, want the client 198.51.100.7", from)
	}

	// A client talking to the server directly says the same: not believed.
	direct := e.browser()
	direct.header.Set("X-Forwarded-Proto", "https")
	direct.header.Set("X-Forwarded-For", "198.51.100.7")
	p = direct.get("/login")
	if got := p.header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("an untrusted peer's X-Forwarded-Proto brought Strict-Transport-Security %q", got)
	}
	p = direct.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}})
	expect(t, "direct sign-in", p, http.StatusSeeOther, "/")
	if c := sessionCookie(p); c.Secure {
		t.Error("an untrusted peer's X-Forwarded-Proto made the cookie Secure")
	}
	entries := e.auditEntries()
	for _, a := range entries {
		if a.Action == "session.login" && a.RemoteAddr != "198.51.100.7" && a.RemoteAddr != "127.0.0.1" {
			t.Errorf("a sign-in audited from %q", a.RemoteAddr)
		}
	}

	// Guesses from one client behind the proxy lock that client only.
	attacker := e.browserFrom("127.0.0.2")
	attacker.header.Set("X-Forwarded-For", "198.51.100.66")
	for i := 1; i <= 5; i++ {
		attacker.login("alice", "nope-nope-nope")
	}
	expect(t, "the guessing client", attacker.login("alice", "alice-password-1"), http.StatusTooManyRequests, "")
	user := e.browserFrom("127.0.0.2")
	user.header.Set("X-Forwarded-For", "198.51.100.8")
	expect(t, "another client behind the same proxy", user.login("alice", "alice-password-1"), http.StatusSeeOther, "/")
}

// httpsJar keeps cookies as a browser on https:// would: the proxy in
// front speaks TLS, so Secure cookies come back.
type httpsJar struct{ http.CookieJar }

func (j httpsJar) SetCookies(u *url.URL, cs []*http.Cookie) {
	v := *u
	v.Scheme = "https"
	j.CookieJar.SetCookies(&v, cs)
}

func (j httpsJar) Cookies(u *url.URL) []*http.Cookie {
	v := *u
	v.Scheme = "https"
	return j.CookieJar.Cookies(&v)
}
