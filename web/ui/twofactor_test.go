package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/identity/ldapdir"
	"backupd/internal/testldap"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
)

// enrolTOTP gives user id a confirmed second factor, as the account page
// would, and returns its secret and recovery codes.
func (e *env) enrolTOTP(id int64) (secret string, codes []string) {
	e.t.Helper()
	ctx := context.Background()
	key, err := auth.NewTOTPKey("user")
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.BeginTOTPEnrolment(ctx, id, e.sealer.Seal(key.Secret, auth.TOTPSecretPurpose)); err != nil {
		e.t.Fatal(err)
	}
	codes, hashes := auth.NewRecoveryCodes()
	if err := e.store.ConfirmTOTP(ctx, id, 0, hashes, time.Now()); err != nil {
		e.t.Fatal(err)
	}
	return key.Secret, codes
}

// code is the TOTP code of secret at the server's clock.
func (e *env) code(secret string) string {
	e.t.Helper()
	c, err := auth.TOTPCode(secret, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// wrongCode is a six-digit code that is no code of secret's window now
// (the codes of the steps around it, computed as the app does).
func (e *env) wrongCode(secret string) string {
	e.t.Helper()
	window := map[string]bool{}
	for _, d := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		c, err := auth.TOTPCode(secret, e.clock.Now().Add(d))
		if err != nil {
			e.t.Fatal(err)
		}
		window[c] = true
	}
	for n := 0; n < 10; n++ {
		if c := fmt.Sprintf("%06d", (n*7919+12345)%1000000); !window[c] {
			return c
		}
	}
	e.t.Fatal("no wrong code found")
	return ""
}

// pendingLogin signs in with the password and expects to be sent to the
// step at loc.
func (b *browser) pendingLogin(t *testing.T, username, password, loc string) {
	t.Helper()
	expect(t, "password of "+username, b.login(username, password), http.StatusSeeOther, loc)
	b.get(loc) // the step's page, for its CSRF token
}

// auditDetails is the details of the newest web entry with action, as
// JSON with sorted keys.
func auditDetails(t *testing.T, e *env, action string) string {
	t.Helper()
	d, err := json.Marshal(lastAudit(t, e, action).Details)
	if err != nil {
		t.Fatal(err)
	}
	return string(d)
}

// A right password for a user with a second factor opens a session that
// reaches nothing but the code page and sign-out, for five minutes; the
// right code replaces it with a new session, which is the sign-in.
func TestTwoFactorSignIn(t *testing.T) {
	e := newEnv(t)
	id := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	secret, _ := e.enrolTOTP(id)
	b := e.browser()

	b.get("/login?next=%2Fdevices")
	p := b.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}, "next": {"/devices"}})
	expect(t, "right password", p, http.StatusSeeOther, "/login/2fa?next=%2Fdevices")
	pendingCookie := b.cookie("backupd_session")
	if pendingCookie == nil {
		t.Fatal("no session cookie for the pending sign-in")
	}
	var pending string
	var expires string
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT pending, expires_at FROM web_sessions`).Scan(&pending, &expires); err != nil {
		t.Fatal(err)
	}
	exp, _ := db.ParseTime(expires)
	if pending != db.PendingTOTP || exp.After(e.clock.Now().Add(5*time.Minute+time.Second)) {
		t.Errorf("pending session: pending %q, expires %s (now %s); want totp within 5 minutes", pending, exp, e.clock.Now().UTC())
	}
	if countAudit(e, "session.login") != 0 {
		t.Error("session.login recorded before the second factor")
	}

	// Nothing but the step: pages send there, the internal API refuses.
	for _, path := range []string{"/", "/devices", "/dashboard", "/users", "/account/password", "/account/2fa"} {
		expect(t, "pending GET "+path, b.get(path), http.StatusSeeOther, "/login/2fa")
	}
	for _, path := range []string{"/api/session", "/api/jobs"} {
		p := b.get(path)
		expect(t, "pending GET "+path, p, http.StatusForbidden, "")
		expectBody(t, path, p, `"SIGN_IN_INCOMPLETE"`)
	}
	p = b.get("/login/2fa?next=%2Fdevices")
	expect(t, "code page", p, http.StatusOK, "")
	expectBody(t, "code page", p, "Enter your code", `name="code"`, `value="/devices"`, `id="cancel-sign-in"`)
	if strings.Contains(p.body, `id="sidenav"`) || strings.Contains(p.body, `id="sign-out"`) {
		t.Error("the code page shows the signed-in frame")
	}

	wrong := e.wrongCode(secret)
	p = b.post("/login/2fa", url.Values{"code": {wrong}, "next": {"/devices"}})
	expect(t, "wrong code", p, http.StatusUnauthorized, "")
	expectBody(t, "wrong code", p, "That code is not right")
	if d := auditDetails(t, e, "session.login_failed"); d != `{"method":"password","reason":"wrong_code"}` {
		t.Errorf("failure audited with %s", d)
	}

	right := e.code(secret)
	p = b.post("/login/2fa", url.Values{"code": {right[:3] + " " + right[3:]}, "next": {"/devices"}})
	expect(t, "right code", p, http.StatusSeeOther, "/devices")
	done := b.cookie("backupd_session")
	if done == nil || done.Value == pendingCookie.Value {
		t.Fatal("the session id did not change when the second factor was given")
	}
	expect(t, "devices after sign-in", b.get("/devices"), http.StatusOK, "")
	expect(t, "code page after sign-in", b.get("/login/2fa"), http.StatusSeeOther, "/")
	if n := e.sessionCount(); n != 1 {
		t.Errorf("%d sessions after sign-in, want 1 (the pending one replaced)", n)
	}
	old := e.browser()
	old.jar.SetCookies(mustURL(e.srv.URL), []*http.Cookie{{Name: "backupd_session", Value: pendingCookie.Value}})
	expect(t, "the pending cookie after sign-in", old.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")

	login := lastAudit(t, e, "session.login")
	if d := auditDetails(t, e, "session.login"); d != `{"method":"password","second_factor":"totp"}` || login.Username != "alice" ||
		login.SessionID == nil || *login.SessionID != auth.SessionID(done.Value)[:16] {
		t.Errorf("session.login = %+v, details %s", login, d)
	}
	for _, leak := range []string{secret, right, wrong} {
		if strings.Contains(e.auditJSON(), leak) {
			t.Errorf("the audit log holds a code or the secret (%s)", leak)
		}
	}
	if strings.Contains(e.logs.String(), secret) {
		t.Error("the server log holds the secret")
	}

	// Sign-out is reachable while pending and ends the session.
	b2 := e.browser()
	b2.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "cancel", b2.post("/logout", nil), http.StatusSeeOther, "/login?out=1")
	expect(t, "after cancel", b2.get("/login/2fa"), http.StatusSeeOther, "/login?next=%2Flogin%2F2fa")

	// A pending session ends after five minutes.
	b3 := e.browser()
	b3.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	e.clock.Advance(5*time.Minute + time.Second)
	expect(t, "expired pending session", b3.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther,
		"/login?ended=1")
}

// A code is good once: the same code again (a second sign-in within its
// window, say) is refused as replayed; the next one works.
func TestTwoFactorReplayedCodeRefused(t *testing.T) {
	e := newEnv(t)
	id := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	secret, _ := e.enrolTOTP(id)
	code := e.code(secret)
	b := e.browser()
	b.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "first use", b.post("/login/2fa", url.Values{"code": {code}}), http.StatusSeeOther, "/")

	eve := e.browserFrom("127.0.0.2")
	eve.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	p := eve.post("/login/2fa", url.Values{"code": {code}})
	expect(t, "replayed code", p, http.StatusUnauthorized, "")
	expectBody(t, "replayed code", p, "has been used already")
	if d := auditDetails(t, e, "session.login_failed"); d != `{"method":"password","reason":"replayed_code"}` {
		t.Errorf("replay audited with %s", d)
	}
	e.clock.Advance(30 * time.Second)
	expect(t, "the next code", eve.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther, "/")
}

// Ten wrong codes lock the second factor for five minutes: 429 with
// Retry-After, and the right code is refused unchecked until the lock
// passes; then it works.
func TestTwoFactorLockout(t *testing.T) {
	e := newEnv(t)
	id := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	secret, _ := e.enrolTOTP(id)
	b := e.browser()
	b.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	wrong := e.wrongCode(secret)
	for i := 1; i < auth.TOTPMaxFailures; i++ {
		expect(t, fmt.Sprintf("wrong code %d", i), b.post("/login/2fa", url.Values{"code": {wrong}}), http.StatusUnauthorized, "")
	}
	p := b.post("/login/2fa", url.Values{"code": {wrong}})
	expect(t, "the tenth wrong code", p, http.StatusTooManyRequests, "")
	expectBody(t, "locked", p, "Too many wrong codes. Try again in 5 minutes")
	if ra, _ := strconv.Atoi(p.header.Get("Retry-After")); ra < 290 || ra > 300 {
		t.Errorf("Retry-After %q, want about 300", p.header.Get("Retry-After"))
	}

	// Locked: the right code is not even checked.
	e.clock.Advance(time.Minute)
	p = b.post("/login/2fa", url.Values{"code": {e.code(secret)}})
	expect(t, "right code while locked", p, http.StatusTooManyRequests, "")
	if ra, _ := strconv.Atoi(p.header.Get("Retry-After")); ra < 230 || ra > 240 {
		t.Errorf("Retry-After %q while locked, want about 240", p.header.Get("Retry-After"))
	}
	if d := auditDetails(t, e, "session.login_failed"); d != `{"method":"password","reason":"locked"}` {
		t.Errorf("refusal while locked audited with %s", d)
	}
	if n := countAudit(e, "session.login_failed"); n != auth.TOTPMaxFailures+1 {
		t.Errorf("%d failures audited, want %d", n, auth.TOTPMaxFailures+1)
	}
	if st, _ := e.store.TOTPState(context.Background(), id); st.LastStep != 0 {
		t.Errorf("a code was accepted while locked (last step %d)", st.LastStep)
	}

	// After the lock (the pending session is gone by then: sign in
	// again), the right code works.
	e.clock.Advance(4*time.Minute + time.Second)
	b.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "right code after the lock", b.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther, "/")
	if st, _ := e.store.TOTPState(context.Background(), id); st.Failures != 0 {
		t.Errorf("failures after a right code: %d", st.Failures)
	}
}

// A recovery code stands in for the app's code once, typed any way.
func TestTwoFactorRecoveryCodeOnce(t *testing.T) {
	e := newEnv(t)
	id := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	_, codes := e.enrolTOTP(id)
	typed := strings.ToUpper(strings.ReplaceAll(codes[4], "-", " "))
	b := e.browser()
	b.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "recovery code", b.post("/login/2fa", url.Values{"code": {typed}}), http.StatusSeeOther, "/")
	if d := auditDetails(t, e, "session.login"); d != `{"method":"password","second_factor":"recovery_code"}` {
		t.Errorf("sign-in audited with %s", d)
	}
	p := b.get("/account/2fa")
	expect(t, "account page", p, http.StatusOK, "")
	expectBody(t, "account page", p, `id="twofa-codes-left">9`)

	b2 := e.browser()
	b2.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "the recovery code again", b2.post("/login/2fa", url.Values{"code": {codes[4]}}), http.StatusUnauthorized, "")
	if d := auditDetails(t, e, "session.login_failed"); d != `{"method":"password","reason":"wrong_recovery_code"}` {
		t.Errorf("reuse audited with %s", d)
	}
	expect(t, "another recovery code", b2.post("/login/2fa", url.Values{"code": {codes[5]}}), http.StatusSeeOther, "/")
	if strings.Contains(e.auditJSON(), codes[4]) || strings.Contains(e.logs.String(), codes[4]) {
		t.Error("a recovery code was logged")
	}
}

var (
	secretText = regexp.MustCompile(`<code id="twofa-secret">([A-Z2-7 ]+)</code>`)
	codeItem   = regexp.MustCompile(`<li><code>([0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4})</code></li>`)
)

// pageSecret is the secret the enrolment page shows as text.
func pageSecret(t *testing.T, p page) string {
	t.Helper()
	m := secretText.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the enrolment page shows no secret:\n%s", p.body)
	}
	return strings.ReplaceAll(m[1], " ", "")
}

// A role that requires a second factor sends its holders without one
// to set it up before anything else; finishing it is the sign-in.
func TestTwoFactorRequiredByRoleForcesEnrolment(t *testing.T) {
	e := newEnv(t)
	admin := adminBrowser(t, e)
	e.createUser("bob", "bob-password-12", auth.RoleOperator, true)
	op, err := e.store.RoleByName(context.Background(), auth.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	p := admin.get("/roles/" + id(op.ID))
	expectBody(t, "built-in role page", p, `id="role-2fa-form"`, `name="require_2fa"`)
	expect(t, "require 2FA of operators", admin.post("/roles/"+id(op.ID), url.Values{"part": {"two_factor"}, "require_2fa": {"1"}}),
		http.StatusSeeOther, "/roles/"+id(op.ID)+"?done=updated")
	if d := auditDetails(t, e, "role.update"); d != `{"name":"Operator","require_2fa":true}` {
		t.Errorf("role change audited with %s", d)
	}
	expectBody(t, "role page", admin.get("/roles/"+id(op.ID)), `id="require-2fa" checked`)
	// The rest of a built-in role stays read-only.
	expect(t, "built-in role rename", admin.post("/roles/"+id(op.ID), url.Values{"name": {"Op"}}), http.StatusConflict, "")

	// A pending enrolment ends after five minutes like any pending step.
	late := e.browser()
	late.pendingLogin(t, "bob", "bob-password-12", "/account/2fa")
	e.clock.Advance(5*time.Minute + time.Second)
	expect(t, "expired enrolment", late.get("/account/2fa"), http.StatusSeeOther, "/login?ended=1&next=%2Faccount%2F2fa")

	b := e.browser()
	b.get("/login?next=%2Fjobs")
	p = b.post("/login", url.Values{"username": {"bob"}, "password": {"bob-password-12"}, "next": {"/jobs"}})
	expect(t, "password of bob", p, http.StatusSeeOther, "/account/2fa?next=%2Fjobs")
	for _, path := range []string{"/devices", "/", "/login/2fa", "/account/password"} {
		expect(t, "enrolling GET "+path, b.get(path), http.StatusSeeOther, "/account/2fa")
	}
	expect(t, "enrolling GET /api/session", b.get("/api/session"), http.StatusForbidden, "")
	p = b.get("/account/2fa?next=%2Fjobs")
	expect(t, "enrolment page", p, http.StatusOK, "")
	expectBody(t, "enrolment page", p, `id="twofa-forced"`, `<img id="twofa-qr" src="data:image/png;base64,`, `value="/jobs"`)
	secret := pageSecret(t, p)
	if again := pageSecret(t, b.get("/account/2fa")); again != secret {
		t.Error("the secret changed on reload before it was confirmed")
	}
	p = b.post("/account/2fa/confirm", url.Values{"code": {e.wrongCode(secret)}, "next": {"/jobs"}})
	expect(t, "wrong confirming code", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "wrong confirming code", p, "does not match", `id="twofa-secret"`)
	pendingCookie := b.cookie("backupd_session").Value

	p = b.post("/account/2fa/confirm", url.Values{"code": {e.code(secret)}, "next": {"/jobs"}})
	expect(t, "confirm", p, http.StatusOK, "")
	expectBody(t, "confirm", p, "Store these recovery codes now", `href="/jobs" id="twofa-continue"`, `id="sign-out"`)
	codes := codeItem.FindAllStringSubmatch(p.body, -1)
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(codes))
	}
	if b.cookie("backupd_session").Value == pendingCookie {
		t.Error("the session id did not change when the enrolment finished the sign-in")
	}
	expect(t, "jobs after enrolling", b.get("/jobs"), http.StatusOK, "")
	if d := auditDetails(t, e, "session.login"); d != `{"method":"password","second_factor":"totp"}` {
		t.Errorf("sign-in audited with %s", d)
	}
	if d := auditDetails(t, e, "user.2fa_enabled"); d != `{"required":true,"username":"bob"}` {
		t.Errorf("enrolment audited with %s", d)
	}
	// The codes shown work; the second factor cannot be turned off
	// while the role requires it.
	p = b.get("/account/2fa")
	expectBody(t, "account page", p, `id="twofa-required"`)
	if strings.Contains(p.body, `id="disable-form"`) {
		t.Error("the page offers to turn off a required second factor")
	}
	e.clock.Advance(30 * time.Second)
	p = b.post("/account/2fa/disable", url.Values{"code": {e.code(secret)}})
	expect(t, "turn off while required", p, http.StatusConflict, "")
	expectBody(t, "turn off while required", p, "cannot be turned off")

	// Next time bob signs in with a code.
	b2 := e.browser()
	b2.pendingLogin(t, "bob", "bob-password-12", "/login/2fa")
	expect(t, "recovery code from the enrolment", b2.post("/login/2fa", url.Values{"code": {codes[0][1]}}), http.StatusSeeOther, "/")
}

// An administrator resets a user's second factor (a lost phone): the
// user's sessions end and it signs in with its password alone.
func TestTwoFactorAdminReset(t *testing.T) {
	e := newEnv(t)
	admin := adminBrowser(t, e)
	alice := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	secret, _ := e.enrolTOTP(alice)
	ab := e.browser()
	ab.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "alice signs in", ab.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther, "/")

	p := admin.get("/users")
	if m := regexp.MustCompile(`(?s)<tr data-user="alice">.*?<td class="user-2fa"><span class="admin-badge admin-badge-ok">On</span>`).FindString(p.body); m == "" {
		t.Errorf("the users list does not show alice's second factor as on:\n%s", p.body)
	}
	p = admin.get("/users/" + id(alice))
	expectBody(t, "user page", p, `id="user-2fa"><span class="admin-badge admin-badge-ok">On</span>`, `action="/users/`+id(alice)+`/2fa/reset"`)

	// Someone without users.update may not.
	e.createUser("vic", "vic-password-12", auth.RoleViewer, true)
	vb := e.browser()
	vb.mustLogin("vic", "vic-password-12")
	vb.get("/account/password")
	expect(t, "viewer resets", vb.post("/users/"+id(alice)+"/2fa/reset", nil), http.StatusForbidden, "")

	expect(t, "reset", admin.post("/users/"+id(alice)+"/2fa/reset", nil), http.StatusSeeOther, "/users/"+id(alice)+"?done=2fa_reset")
	if d := auditDetails(t, e, "user.2fa_reset"); d != `{"sessions_ended":true,"username":"alice","was_enabled":true}` {
		t.Errorf("reset audited with %s", d)
	}
	expect(t, "alice's session after the reset", ab.get("/dashboard"), http.StatusSeeOther, "/login?ended=1&next=%2Fdashboard")
	if st, _ := e.store.TOTPState(context.Background(), alice); st.Enabled() || st.Secret != nil {
		t.Errorf("second factor after the reset: %+v", st)
	}
	expectBody(t, "user page after reset", admin.get("/users/"+id(alice)+"?done=2fa_reset"), "Second factor reset.",
		`id="user-2fa"><span class="admin-badge admin-badge-off">Off</span>`)
	ab.mustLogin("alice", "alice-password-1")

	// One's own is not reset here.
	root, _ := e.store.UserByName(context.Background(), "root")
	e.enrolTOTP(root.ID)
	p = admin.post("/users/"+id(root.ID)+"/2fa/reset", nil)
	expect(t, "reset one's own", p, http.StatusConflict, "")
	if st, _ := e.store.TOTPState(context.Background(), root.ID); !st.Enabled() {
		t.Error("an administrator reset its own second factor from the users page")
	}
}

// One's own second factor on the account page: set up, new recovery
// codes (the old ones void), and off, each with a code.
func TestTwoFactorAccountPage(t *testing.T) {
	e := newEnv(t)
	alice := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	expectBody(t, "password page", b.get("/account/password"), `href="/account/2fa" id="twofa-link"`)
	p := b.get("/account/2fa")
	expect(t, "account page", p, http.StatusOK, "")
	expectBody(t, "account page", p, `id="twofa-off"`, `id="twofa-qr"`, `id="sidenav"`)
	secret := pageSecret(t, p)
	p = b.post("/account/2fa/confirm", url.Values{"code": {e.code(secret)}})
	expect(t, "confirm", p, http.StatusOK, "")
	first := codeItem.FindAllStringSubmatch(p.body, -1)
	if len(first) != 10 {
		t.Fatalf("%d codes shown", len(first))
	}
	if d := auditDetails(t, e, "user.2fa_enabled"); d != `{"required":false,"username":"alice"}` {
		t.Errorf("enabled audited with %s", d)
	}
	// The confirming code was spent: it does not sign in.
	b2 := e.browser()
	b2.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "the confirming code at sign-in", b2.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusUnauthorized, "")

	p = b.get("/account/2fa")
	expectBody(t, "enabled", p, `id="twofa-state"`, `id="twofa-codes-left">10`, `id="regenerate-form"`, `id="disable-form"`)
	p = b.post("/account/2fa/recovery-codes", url.Values{"code": {e.wrongCode(secret)}})
	expect(t, "new codes with a wrong code", p, http.StatusUnprocessableEntity, "")
	if d := auditDetails(t, e, "user.2fa_failed"); d != `{"change":"regenerate","reason":"wrong_code"}` {
		t.Errorf("failure audited with %s", d)
	}
	e.clock.Advance(30 * time.Second)
	p = b.post("/account/2fa/recovery-codes", url.Values{"code": {e.code(secret)}})
	expect(t, "new codes", p, http.StatusOK, "")
	second := codeItem.FindAllStringSubmatch(p.body, -1)
	if len(second) != 10 || second[0][1] == first[0][1] {
		t.Fatalf("new codes: %v", second)
	}
	lastAudit(t, e, "user.2fa_recovery_regenerated")
	expect(t, "an old recovery code", b2.post("/login/2fa", url.Values{"code": {first[1][1]}}), http.StatusUnauthorized, "")
	expect(t, "a new recovery code", b2.post("/login/2fa", url.Values{"code": {second[1][1]}}), http.StatusSeeOther, "/")

	e.clock.Advance(30 * time.Second)
	expect(t, "off", b.post("/account/2fa/disable", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther, "/account/2fa?done=disabled")
	lastAudit(t, e, "user.2fa_disabled")
	if st, _ := e.store.TOTPState(context.Background(), alice); st.Enabled() {
		t.Error("still on")
	}
	b.mustLogin("alice", "alice-password-1")
}

// The local second factor is for local accounts: a directory account's
// own source asks for its second factor. alice signs in through a real
// slapd while her role requires a second factor: no step is owed, and
// her account page offers none.
func TestTwoFactorNotForDirectoryAccounts(t *testing.T) {
	e := newEnv(t)
	srv := testldap.Start(t)
	ctx := context.Background()
	op, _ := e.store.RoleByName(ctx, auth.RoleOperator)
	if err := e.store.SetRoleRequire2FA(ctx, op.ID, true); err != nil {
		t.Fatal(err)
	}
	preset, _ := ldapdir.Preset("openldap")
	set := srv.Settings(preset)
	set.BindPassword = e.sealer.Seal(srv.ServicePassword, db.LDAPBindPurpose)
	set.Mappings = []db.GroupMapping{{Group: "netops", RoleIDs: []int64{op.ID}, AllGroups: true}}
	if err := e.store.PutSetting(ctx, db.SettingLDAP, set); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.mustLogin("alice", testldap.AlicePassword)
	p := b.get("/account/2fa")
	expectBody(t, "account page", p, `id="twofa-not-local"`)
	if strings.Contains(p.body, `id="twofa-qr"`) {
		t.Error("a directory account is offered the local second factor")
	}
	expect(t, "confirm", b.post("/account/2fa/confirm", url.Values{"code": {"123456"}}), http.StatusConflict, "")
}

// Every new form refuses a request without the session's CSRF token, and
// a cross-site one, and changes nothing.
func TestTwoFactorFormsNeedCSRF(t *testing.T) {
	e := newEnv(t)
	admin := adminBrowser(t, e)
	alice := e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	secret, _ := e.enrolTOTP(alice)
	op, _ := e.store.RoleByName(context.Background(), auth.RoleOperator)

	pending := e.browser()
	pending.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	signedIn := e.browser()
	signedIn.pendingLogin(t, "alice", "alice-password-1", "/login/2fa")
	expect(t, "sign in", signedIn.post("/login/2fa", url.Values{"code": {e.code(secret)}}), http.StatusSeeOther, "/")
	signedIn.get("/account/2fa")
	e.clock.Advance(30 * time.Second)

	for _, c := range []struct {
		b    *browser
		path string
		form url.Values
	}{
		{pending, "/login/2fa", url.Values{"code": {e.code(secret)}}},
		{signedIn, "/account/2fa/confirm", url.Values{"code": {e.code(secret)}}},
		{signedIn, "/account/2fa/recovery-codes", url.Values{"code": {e.code(secret)}}},
		{signedIn, "/account/2fa/disable", url.Values{"code": {e.code(secret)}}},
		{admin, "/users/" + id(alice) + "/2fa/reset", url.Values{}},
		{admin, "/roles/" + id(op.ID), url.Values{"part": {"two_factor"}, "require_2fa": {"1"}}},
	} {
		for name, form := range map[string]url.Values{"no token": {"csrf": {""}}, "wrong token": {"csrf": {"forged"}}} {
			for k, v := range c.form {
				form[k] = v
			}
			expect(t, c.path+" with "+name, c.b.post(c.path, form), http.StatusForbidden, "")
		}
		// The right token from another site.
		c.b.header.Set("Origin", "https://evil.example")
		form := url.Values{"csrf": {c.b.csrf}}
		for k, v := range c.form {
			form[k] = v
		}
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+c.path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		expect(t, c.path+" cross-site", c.b.do(req), http.StatusForbidden, "")
		c.b.header.Del("Origin")
	}
	st, _ := e.store.TOTPState(context.Background(), alice)
	if !st.Enabled() || st.RecoveryCodesLeft != 10 {
		t.Errorf("refused requests changed the second factor: %+v", st)
	}
	if r, _ := e.store.RoleByID(context.Background(), op.ID); r.Require2FA {
		t.Error("a refused request changed the role")
	}
	expect(t, "the pending session is still pending", pending.get("/devices"), http.StatusSeeOther, "/login/2fa")
}

// A custom role takes the rule in its own form, created and changed with
// the rest of it, and the change is audited with the role's.
func TestTwoFactorCustomRoleRule(t *testing.T) {
	e := newEnv(t)
	admin := adminBrowser(t, e)
	admin.get("/roles/new")
	p := admin.post("/roles", url.Values{"name": {"Net admins"}, "perm": {"devices.view"}, "require_2fa": {"1"}})
	expect(t, "create", p, http.StatusSeeOther, "")
	rid := strings.TrimSuffix(strings.TrimPrefix(p.header.Get("Location"), "/roles/"), "?done=created")
	n, err := strconv.ParseInt(rid, 10, 64)
	if err != nil {
		t.Fatalf("created role at %q", p.header.Get("Location"))
	}
	if d := auditDetails(t, e, "role.create"); d != `{"name":"Net admins","permissions":["devices.view"],"require_2fa":true}` {
		t.Errorf("create audited with %s", d)
	}
	if r, _ := e.store.RoleByID(context.Background(), n); !r.Require2FA {
		t.Error("the new role does not require a second factor")
	}
	expectBody(t, "role page", admin.get("/roles/"+rid), `id="require-2fa" checked`)
	expect(t, "rename", admin.post("/roles/"+rid, url.Values{"name": {"Net admin"}, "perm": {"devices.view"}, "require_2fa": {"1"}}),
		http.StatusSeeOther, "/roles/"+rid+"?done=updated")
	if d := auditDetails(t, e, "role.update"); strings.Contains(d, "require_2fa") {
		t.Errorf("an unchanged rule is audited as a change: %s", d)
	}
	expect(t, "rule off", admin.post("/roles/"+rid, url.Values{"name": {"Net admin"}, "perm": {"devices.view"}}),
		http.StatusSeeOther, "/roles/"+rid+"?done=updated")
	if d := auditDetails(t, e, "role.update"); !strings.Contains(d, `"require_2fa":false`) {
		t.Errorf("turning the rule off audited with %s", d)
	}
	if r, _ := e.store.RoleByID(context.Background(), n); r.Require2FA {
		t.Error("the rule stayed on")
	}
}
