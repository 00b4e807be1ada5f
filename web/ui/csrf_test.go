package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"backupd/app/auth"
)

// TestCSRFRefusals checks that every state-changing request without the
// session's token, or from another origin, is refused with a 403 that
// says what to do — and changes nothing.
func TestCSRFRefusals(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	b.get("/dashboard")
	token := b.csrf

	send := func(method, path string, form url.Values, header map[string]string) page {
		t.Helper()
		req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return b.do(req)
	}
	same := map[string]string{"Origin": e.srv.URL}
	cases := []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"no token", url.Values{}, same},
		{"wrong token", url.Values{"csrf": {"x" + token}}, same},
		{"another session's token", url.Values{"csrf": {otherToken(t, e)}}, same},
		{"pre-session token on a signed-in form", url.Values{"csrf": {b.cookie("backupd_csrf").Value}}, same},
		{"other Origin", url.Values{"csrf": {token}}, map[string]string{"Origin": "https://evil.example"}},
		{"null Origin", url.Values{"csrf": {token}}, map[string]string{"Origin": "null"}},
		{"other Referer", url.Values{"csrf": {token}}, map[string]string{"Referer": "https://evil.example/page"}},
		{"cross-site fetch", url.Values{"csrf": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": e.srv.URL}},
		{"same-site fetch", url.Values{"csrf": {token}}, map[string]string{"Sec-Fetch-Site": "same-site"}},
	}
	for _, c := range cases {
		for _, path := range []string{"/logout", "/account/password"} {
			p := send(http.MethodPost, path, c.form, c.header)
			expect(t, c.name+" POST "+path, p, http.StatusForbidden, "")
			expectBody(t, c.name, p, "reload the page")
		}
	}
	if n := e.sessionCount(); n != 2 {
		t.Fatalf("%d sessions after refused sign-outs, want 2 (alice and the other one)", n)
	}

	// The internal API takes the token in X-CSRF-Token and answers in the
	// error envelope.
	api := func(header map[string]string) page {
		t.Helper()
		req, _ := http.NewRequest(http.MethodDelete, e.srv.URL+"/api/session", nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return b.do(req)
	}
	for name, h := range map[string]map[string]string{
		"no header":     {"Origin": e.srv.URL},
		"wrong header":  {"Origin": e.srv.URL, "X-CSRF-Token": "nope"},
		"other origin":  {"Origin": "http://evil.example", "X-CSRF-Token": token},
		"form field":    {"Origin": e.srv.URL, "Content-Type": "application/json"},
		"other referer": {"Referer": "http://evil.example/", "X-CSRF-Token": token},
	} {
		p := api(h)
		expect(t, "DELETE /api/session, "+name, p, http.StatusForbidden, "")
		var env struct {
			Error struct{ Code, Message, RequestID string }
		}
		if err := json.Unmarshal([]byte(p.body), &env); err != nil || env.Error.Code != "CSRF_REJECTED" || !strings.Contains(env.Error.Message, "X-CSRF-Token") {
			t.Errorf("DELETE /api/session, %s: body %s, want error code CSRF_REJECTED naming the header", name, p.body)
		}
	}
	expect(t, "DELETE /api/session with the token", api(map[string]string{"Origin": e.srv.URL, "X-CSRF-Token": token}), http.StatusNoContent, "")
	if n := e.sessionCount(); n != 1 {
		t.Fatalf("%d sessions after the API sign-out, want 1", n)
	}

	// The sign-in form needs its pre-session token too (no login CSRF).
	anon := e.browser()
	anon.get("/login")
	p := anon.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}, "csrf": {""}})
	expect(t, "sign-in without token", p, http.StatusForbidden, "")
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/login", strings.NewReader(url.Values{
		"username": {"alice"}, "password": {"alice-password-1"}, "csrf": {anon.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	expect(t, "sign-in from another origin", anon.do(req), http.StatusForbidden, "")
	fresh := e.browser()
	p = fresh.post("/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}, "csrf": {anon.csrf}})
	expect(t, "sign-in with another browser's token", p, http.StatusForbidden, "")
	if strings.Contains(e.logs.String(), token) {
		t.Error("a CSRF token reached the log")
	}
}

// otherToken signs in a second session and returns its token.
func otherToken(t *testing.T, e *env) string {
	t.Helper()
	o := e.browser()
	o.mustLogin("alice", "alice-password-1")
	o.get("/dashboard")
	return o.csrf
}

func TestInternalAPINeedsASessionNeverAKey(t *testing.T) {
	e := newEnv(t)
	uid := e.createUser("alice", "alice-password-1", auth.RoleViewer, false)
	key, prefix, hash := auth.NewAPIKey()
	if _, err := e.store.CreateAPIKey(t.Context(), dbKey(uid, prefix, hash)); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.header.Set("X-API-Key", key)
	p := b.get("/api/session")
	expect(t, "GET /api/session with an API key", p, http.StatusUnauthorized, "")
	expectBody(t, "key on /api/", p, `"code":"UNAUTHORIZED"`, "/api/v1")
	// The same key works on the public API.
	expect(t, "GET /api/v1/groups with the key", b.get("/api/v1/groups"), http.StatusOK, "")

	b.header.Del("X-API-Key")
	b.mustLogin("alice", "alice-password-1")
	p = b.get("/api/session")
	expect(t, "GET /api/session signed in", p, http.StatusOK, "")
	var info struct {
		Username    string   `json:"username"`
		Permissions []string `json:"permissions"`
		AllGroups   bool     `json:"all_groups"`
		GroupIDs    []int64  `json:"group_ids"`
	}
	if err := json.Unmarshal([]byte(p.body), &info); err != nil {
		t.Fatal(err)
	}
	if info.Username != "alice" || len(info.Permissions) != 7 || info.AllGroups || info.GroupIDs == nil {
		t.Errorf("GET /api/session = %+v, want alice with the Viewer's 7 permissions and no group", info)
	}
	// The session cookie is never accepted on the public API.
	expect(t, "GET /api/v1/groups with the cookie only", b.get("/api/v1/groups"), http.StatusUnauthorized, "")
	// Unknown internal paths answer in JSON.
	p = b.get("/api/nothing")
	expect(t, "GET /api/nothing", p, http.StatusNotFound, "")
	expectBody(t, "GET /api/nothing", p, `"code":"RESOURCE_NOT_FOUND"`)
}

// A form too large to read for its token is answered 413, saying so,
// not as a missing token.
func TestOversizedFormIsTooLargeNotCSRF(t *testing.T) {
	e := newEnv(t)
	e.createUser("alice", "alice-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("alice", "alice-password-1")
	b.get("/account/password")
	p := b.post("/account/password", url.Values{"current": {strings.Repeat("x", 2<<20)}})
	expect(t, "2 MiB form", p, http.StatusRequestEntityTooLarge, "")
}
