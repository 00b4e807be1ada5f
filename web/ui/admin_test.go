package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
)

// Passwords of the users the admin tests create.
const (
	bossPassword  = "boss-password-1"
	carolPassword = "carol-password-1"
)

// adminEnv is an env with a fleet, an administrator "boss" signed in, and
// the bootstrap "admin" (also an administrator, never signed in).
func adminEnv(t *testing.T) (*env, fleet, *browser) {
	t.Helper()
	e := newEnv(t)
	f := seedFleet(t, e)
	e.createUser("boss", bossPassword, auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("boss", bossPassword)
	return e, f, b
}

func (e *env) roleID(name string) string {
	e.t.Helper()
	r, err := e.store.RoleByName(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return strconv.FormatInt(r.ID, 10)
}

func (e *env) userID(name string) int64 {
	e.t.Helper()
	u, err := e.store.UserByName(context.Background(), name)
	if err != nil {
		e.t.Fatalf("user %s: %v", name, err)
	}
	return u.ID
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// apiStatus calls the public API with key and returns the status.
func (e *env) apiStatus(key, path string) int {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// session is GET /api/session of a browser.
type sessionJSON struct {
	Username    string   `json:"username"`
	Permissions []string `json:"permissions"`
	AllGroups   bool     `json:"all_groups"`
	GroupIDs    []int64  `json:"group_ids"`
}

func (b *browser) session() (sessionJSON, int) {
	b.e.t.Helper()
	p := b.get("/api/session")
	var s sessionJSON
	if p.status == http.StatusOK {
		if err := json.Unmarshal([]byte(p.body), &s); err != nil {
			b.e.t.Fatal(err)
		}
	}
	return s, p.status
}

// auditJSON is every audit entry, details included, as one text.
func (e *env) auditJSON() string {
	e.t.Helper()
	entries, _, err := e.store.ListAudit(context.Background(), 10000, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(entries)
	return string(b)
}

// lastAudit is the newest web audit entry with action.
func (e *env) lastAudit(action string) db.AuditEntry {
	e.t.Helper()
	entries := e.auditEntries()
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Action == action {
			return entries[i]
		}
	}
	e.t.Fatalf("no %s in the audit log", action)
	return db.AuditEntry{}
}

var (
	secretValue = regexp.MustCompile(`<code id="secret-value">([^<]+)</code>`)
	newKeyValue = regexp.MustCompile(`<code id="new-key">(bkd_[^<]+)</code>`)
)

func TestAdminCreateUserSignsInAndMustChangePassword(t *testing.T) {
	e, f, b := adminEnv(t)
	b.get("/users/new")

	// A typed password, the Operator role, the Core group.
	p := b.post("/users", url.Values{"username": {"carol"}, "password_mode": {"set"}, "password": {carolPassword},
		"confirm": {carolPassword}, "role": {e.roleID(auth.RoleOperator)}, "scope": {"groups"}, "group": {id(f.core)},
		"must_change": {"1"}})
	expect(t, "create carol", p, http.StatusSeeOther, "/users?done=created")
	expectBody(t, "users list", b.get("/users?done=created"), "User created.", `data-user="carol"`, "Core", "Operator")
	u, err := e.store.UserByName(context.Background(), "carol")
	if err != nil {
		t.Fatal(err)
	}
	if !u.MustChangePassword || u.AllGroups || !slices.Equal(u.GroupIDs, []int64{f.core}) || !slices.Equal(u.Roles, []string{auth.RoleOperator}) {
		t.Errorf("carol = %+v", u)
	}
	c := e.browser()
	expect(t, "carol's first sign-in", c.login("carol", carolPassword), http.StatusSeeOther, "/account/password")
	expect(t, "carol before changing", c.get("/dashboard"), http.StatusSeeOther, "/account/password")

	a := e.lastAudit("user.create")
	if a.Username != "boss" || a.TargetID != id(u.ID) || a.Details["username"] != "carol" || a.SessionID == nil {
		t.Errorf("audit entry %+v", a)
	}

	// A generated password is shown on the answer, once.
	b.get("/users/new")
	p = b.post("/users", url.Values{"username": {"dave"}, "password_mode": {"generate"}, "role": {e.roleID(auth.RoleViewer)},
		"scope": {"all"}, "must_change": {"1"}})
	expect(t, "create dave", p, http.StatusOK, "")
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the one-time password page may be cached: %q", p.header.Get("Cache-Control"))
	}
	m := secretValue.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no generated password on the page:\n%s", p.body)
	}
	generated := m[1]
	d := e.browser()
	expect(t, "dave's first sign-in", d.login("dave", generated), http.StatusSeeOther, "/account/password")
	if strings.Contains(b.get("/users").body, generated) || strings.Contains(b.get(fmt.Sprintf("/users/%d", e.userID("dave"))).body, generated) {
		t.Error("the generated password shows again")
	}
	for what, text := range map[string]string{"the log": e.logs.String(), "the audit log": e.auditJSON()} {
		for _, pw := range []string{generated, carolPassword} {
			if strings.Contains(text, pw) {
				t.Errorf("%s holds a password", what)
			}
		}
	}

	// Refusals change nothing and keep what was typed.
	n, _ := e.store.CountUsers(context.Background())
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		says   string
	}{
		{"taken name", url.Values{"username": {"Carol"}, "role": {e.roleID(auth.RoleViewer)}}, http.StatusConflict, "A user named Carol already exists"},
		{"space in name", url.Values{"username": {"bad name"}, "role": {e.roleID(auth.RoleViewer)}}, http.StatusUnprocessableEntity, "without spaces"},
		{"short password", url.Values{"username": {"erin"}, "password_mode": {"set"}, "password": {"short"}, "confirm": {"short"}, "role": {e.roleID(auth.RoleViewer)}}, http.StatusUnprocessableEntity, "at least 10"},
		{"mismatch", url.Values{"username": {"erin"}, "password_mode": {"set"}, "password": {carolPassword}, "confirm": {carolPassword + "x"}, "role": {e.roleID(auth.RoleViewer)}}, http.StatusUnprocessableEntity, "passwords differ"},
		{"no role", url.Values{"username": {"erin"}}, http.StatusUnprocessableEntity, "Choose at least one role"},
		{"unknown group", url.Values{"username": {"erin"}, "role": {e.roleID(auth.RoleViewer)}, "group": {"9999"}}, http.StatusUnprocessableEntity, "no longer exists"},
		{"bad role id", url.Values{"username": {"erin"}, "role": {"x"}}, http.StatusUnprocessableEntity, "Reload the page"},
	} {
		p := b.post("/users", c.form)
		expect(t, c.name, p, c.status, "")
		expectBody(t, c.name, p, c.says, `id="admin-error"`, `value="`+c.form.Get("username")+`"`)
	}
	if after, _ := e.store.CountUsers(context.Background()); after != n {
		t.Errorf("refused creations added %d users", after-n)
	}
}

func TestAdminUserChangesApplyAtOnce(t *testing.T) {
	e, f, b := adminEnv(t)
	carol := e.createUser("carol", carolPassword, auth.RoleViewer, false, f.core)
	c := e.browser()
	c.mustLogin("carol", carolPassword)
	s, _ := c.session()
	if slices.Contains(s.Permissions, "devices.create") || !slices.Equal(s.GroupIDs, []int64{f.core}) {
		t.Fatalf("carol before: %+v", s)
	}
	expectBody(t, "edit form", b.get("/users/"+id(carol)), `name="role" value="`+e.roleID(auth.RoleViewer)+`" checked`,
		`name="group" value="`+id(f.core)+`" checked`)

	p := b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleOperator)}, "scope": {"groups"},
		"group": {id(f.branch)}, "active": {"1"}})
	expect(t, "save carol", p, http.StatusSeeOther, "/users/"+id(carol)+"?done=updated")
	s, status := c.session()
	if status != http.StatusOK || !slices.Contains(s.Permissions, "devices.create") || !slices.Equal(s.GroupIDs, []int64{f.branch}) {
		t.Errorf("carol's session after the change: %d %+v", status, s)
	}
	a := e.lastAudit("user.update")
	if a.TargetID != id(carol) || fmt.Sprint(a.Details["roles"]) != "[Operator]" || a.Details["active"] != true {
		t.Errorf("audit %+v", a.Details)
	}

	// All groups, then back to none: she sees what the scope says.
	b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleOperator)}, "scope": {"all"}, "group": {id(f.branch)}, "active": {"1"}})
	if s, _ := c.session(); !s.AllGroups || len(s.GroupIDs) != 0 {
		t.Errorf("carol with all groups: %+v", s)
	}
	b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleOperator)}, "scope": {"groups"}, "active": {"1"}})
	if s, _ := c.session(); s.AllGroups || len(s.GroupIDs) != 0 {
		t.Errorf("carol with no group: %+v", s)
	}
	expectBody(t, "list", b.get("/users"), "No groups: sees no device")

	// A reset password ends her sessions and must be changed.
	b.get("/users/" + id(carol))
	p = b.post("/users/"+id(carol)+"/password", url.Values{"password_mode": {"set"}, "password": {"carol-new-pass-2"}, "confirm": {"carol-new-pass-2"}})
	expect(t, "reset", p, http.StatusSeeOther, "/users/"+id(carol)+"?done=password")
	if _, status := c.session(); status != http.StatusUnauthorized {
		t.Errorf("carol's session after a reset: %d, want 401", status)
	}
	expect(t, "carol after reset", e.browser().login("carol", "carol-new-pass-2"), http.StatusSeeOther, "/account/password")
	if strings.Contains(e.auditJSON(), "carol-new-pass-2") {
		t.Error("the audit log holds the new password")
	}
}

func TestAdminDeactivateEndsSessionsAndKeys(t *testing.T) {
	e, _, b := adminEnv(t)
	carol := e.createUser("carol", carolPassword, auth.RoleOperator, true)
	c := e.browser()
	c.mustLogin("carol", carolPassword)
	c.get("/api-keys")
	p := c.post("/api-keys", url.Values{"name": {"carol's script"}})
	expect(t, "carol creates a key", p, http.StatusOK, "")
	key := newKeyValue.FindStringSubmatch(p.body)[1]
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusOK {
		t.Fatalf("carol's key before: %d", got)
	}

	b.get("/users/" + id(carol))
	p = b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleOperator)}, "scope": {"all"}})
	expect(t, "deactivate carol", p, http.StatusSeeOther, "")
	if p := c.get("/dashboard"); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "ended=1") {
		t.Errorf("carol's next page: %d %q, want sent to sign in", p.status, p.header.Get("Location"))
	}
	var n int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM web_sessions WHERE user_id = ?`, carol).Scan(&n); err != nil || n != 0 {
		t.Errorf("carol keeps %d sessions (%v)", n, err)
	}
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusUnauthorized {
		t.Errorf("key of a deactivated user: %d, want 401", got)
	}
	expect(t, "carol signs in", e.browser().login("carol", carolPassword), http.StatusUnauthorized, "")
	if e.lastAudit("user.update").Details["sessions_ended"] != true {
		t.Error("the audit entry does not say the sessions ended")
	}
	expectBody(t, "list", b.get("/users"), "Inactive")
	expectBody(t, "carol's keys as admin", b.get("/api-keys?owner=all"), "Owner inactive")

	b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleOperator)}, "scope": {"all"}, "active": {"1"}})
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusOK {
		t.Errorf("key after reactivation: %d", got)
	}
}

func TestAdminRefusesSelfAndLastAdministrator(t *testing.T) {
	e, _, b := adminEnv(t)
	boss, admin := e.userID("boss"), e.userID("admin")
	adminRole := e.roleID(auth.RoleAdministrator)

	p := b.get("/users/" + id(boss))
	expectBody(t, "own page", p, "you cannot deactivate your own account", "use the account page")
	if strings.Contains(p.body, `id="delete-user"`) || strings.Contains(p.body, `id="reset-password"`) {
		t.Error("one's own page offers delete or reset")
	}
	// The box cannot be unticked; a forged form is refused.
	p = b.post("/users/"+id(boss), url.Values{"role": {adminRole}, "scope": {"all"}})
	expect(t, "self-deactivation", p, http.StatusConflict, "")
	expectBody(t, "self-deactivation", p, "You cannot deactivate your own account")
	expect(t, "self-deletion", b.post("/users/"+id(boss)+"/delete", nil), http.StatusConflict, "")
	expect(t, "self-reset", b.post("/users/"+id(boss)+"/password", url.Values{"password_mode": {"generate"}}), http.StatusConflict, "")

	// With "admin" gone, boss is the last active administrator and may not
	// give up the role.
	expect(t, "deactivate admin", b.post("/users/"+id(admin), url.Values{"role": {adminRole}, "scope": {"all"}}), http.StatusSeeOther, "")
	p = b.post("/users/"+id(boss), url.Values{"role": {e.roleID(auth.RoleViewer)}, "scope": {"all"}, "active": {"1"}})
	expect(t, "last admin demotes itself", p, http.StatusConflict, "")
	expectBody(t, "last admin", p, "At least one active user must keep the Administrator role")
	u, _ := e.store.UserByID(context.Background(), boss)
	if !slices.Equal(u.Roles, []string{auth.RoleAdministrator}) || !u.Active {
		t.Errorf("boss after refusals: %+v", u)
	}
	if s, _ := b.session(); len(s.Permissions) != len(auth.Permissions) {
		t.Error("boss lost permissions")
	}

	// Deleting the inactive one is fine; its keys go too.
	key, prefix, hash := auth.NewAPIKey()
	if _, err := e.store.CreateAPIKey(context.Background(), dbKey(admin, prefix, hash)); err != nil {
		t.Fatal(err)
	}
	b.get("/users/" + id(admin))
	expect(t, "delete admin", b.post("/users/"+id(admin)+"/delete", nil), http.StatusSeeOther, "/users?done=deleted")
	if _, err := e.store.UserByID(context.Background(), admin); err == nil {
		t.Error("admin still exists")
	}
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusUnauthorized {
		t.Errorf("key of a deleted user: %d", got)
	}
	if a := e.lastAudit("user.delete"); a.Details["username"] != "admin" {
		t.Errorf("audit %+v", a)
	}
	expect(t, "delete unknown", b.post("/users/9999/delete", nil), http.StatusNotFound, "")
	expect(t, "bad id", b.get("/users/x"), http.StatusNotFound, "")
}

// A user who may manage users but is no administrator cannot make anyone
// (itself included) more powerful than itself, nor touch an
// administrator.
func TestAdminNoEscalation(t *testing.T) {
	e, f, b := adminEnv(t)
	b.get("/roles/new")
	p := b.post("/roles", url.Values{"name": {"Helpdesk"}, "perm": {"users.view", "users.create", "users.update", "users.delete", "devices.view", "roles.view", "roles.update"}})
	expect(t, "create helpdesk role", p, http.StatusSeeOther, "")
	helpRole := e.roleID("Helpdesk")
	hid := e.createUser("help", "help-password-1", "Helpdesk", false, f.branch)
	h := e.browser()
	h.mustLogin("help", "help-password-1")

	p = h.get("/users/new")
	expect(t, "new user form", p, http.StatusOK, "")
	if !strings.Contains(p.body, `value="`+e.roleID(auth.RoleAdministrator)+`" disabled`) || !strings.Contains(p.body, `value="`+id(f.core)+`" disabled`) {
		t.Error("the form offers a role or group the helpdesk cannot grant")
	}
	n, _ := e.store.CountUsers(context.Background())
	for name, form := range map[string]url.Values{
		"administrator role": {"username": {"evil"}, "role": {e.roleID(auth.RoleAdministrator)}},
		"all groups":         {"username": {"evil"}, "role": {helpRole}, "scope": {"all"}},
		"other group":        {"username": {"evil"}, "role": {helpRole}, "group": {id(f.core)}},
	} {
		expect(t, name, h.post("/users", form), http.StatusUnprocessableEntity, "")
	}
	if after, _ := e.store.CountUsers(context.Background()); after != n {
		t.Error("a refused creation added a user")
	}
	p = h.post("/users/"+id(hid), url.Values{"role": {e.roleID(auth.RoleAdministrator)}, "group": {id(f.branch)}, "active": {"1"}})
	expect(t, "promote itself", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "promote itself", p, "You cannot grant the role Administrator")

	boss := id(e.userID("boss"))
	p = h.get("/users/" + boss)
	expect(t, "view boss", p, http.StatusOK, "")
	expectBody(t, "view boss", p, `id="user-locked"`)
	if strings.Contains(p.body, `id="save-user"`) || strings.Contains(p.body, `id="reset-password"`) || strings.Contains(p.body, `id="delete-user"`) {
		t.Error("the helpdesk is offered changes to an administrator")
	}
	for path, form := range map[string]url.Values{
		"/users/" + boss:               {"role": {helpRole}, "group": {id(f.branch)}},
		"/users/" + boss + "/password": {"password_mode": {"generate"}},
		"/users/" + boss + "/delete":   nil,
	} {
		p := h.post(path, form)
		expect(t, "POST "+path, p, http.StatusForbidden, "")
		expectBody(t, path, p, "holds permissions or device groups you do not hold")
	}
	// Nor can it add a permission it lacks to its own role.
	p = h.post("/roles/"+helpRole, url.Values{"name": {"Helpdesk"}, "perm": {"users.view", "roles.view", "roles.update", "settings.update"}})
	expect(t, "add settings.update to its role", p, http.StatusForbidden, "")
	expectBody(t, "add a permission", p, "You do not hold the permission settings.update")
	if s, _ := h.session(); slices.Contains(s.Permissions, "settings.update") {
		t.Error("the helpdesk gave itself settings.update")
	}
}

func TestAdminCustomRoles(t *testing.T) {
	e, _, b := adminEnv(t)
	carol := e.createUser("carol", carolPassword, auth.RoleViewer, true)
	c := e.browser()
	c.mustLogin("carol", carolPassword)

	p := b.get("/roles")
	expect(t, "roles", p, http.StatusOK, "")
	expectBody(t, "roles", p, "Built-in roles", "Every permission, including ones later releases add", "Backup reader", "No custom roles yet.")
	p = b.get("/roles/new")
	// Every resource has a translated row label.
	for _, raw := range []string{"groups", "api_keys", "audit", "backups", "settings"} {
		if strings.Contains(p.body, `<th scope="row">`+raw+`</th>`) {
			t.Errorf("the grid shows the raw resource %q", raw)
		}
	}
	if got := strings.Count(p.body, `name="perm"`); got != len(auth.Permissions) {
		t.Errorf("the grid has %d boxes, want %d", got, len(auth.Permissions))
	}

	p = b.post("/roles", url.Values{"name": {"Auditor"}, "description": {"Reads the log"}, "perm": {"audit.view", "users.view"}})
	expect(t, "create", p, http.StatusSeeOther, "")
	rid := e.roleID("Auditor")
	expectBody(t, "created", b.get("/roles/"+rid+"?done=created"), "Role created.", `value="audit.view" checked`)
	expectBody(t, "list", b.get("/roles"), `data-role="Auditor"`, "Reads the log")
	if a := e.lastAudit("role.create"); a.Details["name"] != "Auditor" {
		t.Errorf("audit %+v", a)
	}

	for name, c := range map[string]struct {
		form   url.Values
		status int
	}{
		"taken name":    {url.Values{"name": {"viewer"}}, http.StatusConflict},
		"blank name":    {url.Values{"name": {"  "}}, http.StatusUnprocessableEntity},
		"unknown perm":  {url.Values{"name": {"X"}, "perm": {"root.everything"}}, http.StatusUnprocessableEntity},
		"too long name": {url.Values{"name": {strings.Repeat("n", 129)}}, http.StatusUnprocessableEntity},
	} {
		expect(t, name, b.post("/roles", c.form), c.status, "")
	}

	// Given to carol, then changed: her session follows at once.
	b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleViewer), rid}, "scope": {"all"}, "active": {"1"}})
	if s, _ := c.session(); !slices.Contains(s.Permissions, "audit.view") {
		t.Fatalf("carol with Auditor lacks audit.view: %v", s.Permissions)
	}
	expect(t, "carol opens the audit log", c.get("/audit"), http.StatusOK, "")
	p = b.post("/roles/"+rid, url.Values{"name": {"Auditor"}, "perm": {"users.view"}})
	expect(t, "update", p, http.StatusSeeOther, "/roles/"+rid+"?done=updated")
	if s, _ := c.session(); slices.Contains(s.Permissions, "audit.view") {
		t.Error("carol keeps audit.view after the role lost it")
	}
	expect(t, "carol opens the audit log", c.get("/audit"), http.StatusForbidden, "")
	if a := e.lastAudit("role.update"); fmt.Sprint(a.Details["removed"]) != "[audit.view]" {
		t.Errorf("audit %+v", a.Details)
	}

	// In use: refused, with who holds it.
	p = b.post("/roles/"+rid+"/delete", nil)
	expect(t, "delete in use", p, http.StatusConflict, "")
	expectBody(t, "delete in use", p, "held by 1 users", "carol")
	b.post("/users/"+id(carol), url.Values{"role": {e.roleID(auth.RoleViewer)}, "scope": {"all"}, "active": {"1"}})
	expect(t, "delete", b.post("/roles/"+rid+"/delete", nil), http.StatusSeeOther, "/roles?done=deleted")
	if _, err := e.store.RoleByName(context.Background(), "Auditor"); err == nil {
		t.Error("the role survived")
	}

	// Built-in roles are read-only.
	viewer := e.roleID(auth.RoleViewer)
	p = b.get("/roles/" + viewer)
	expectBody(t, "built-in", p, `id="role-builtin"`, "<fieldset class=\"admin-plain\" disabled>")
	if strings.Contains(p.body, `id="delete-role"`) || strings.Contains(p.body, `id="save-role"`) {
		t.Error("a built-in role offers changes")
	}
	expect(t, "update built-in", b.post("/roles/"+viewer, url.Values{"name": {"Viewer"}, "perm": {"users.delete"}}), http.StatusConflict, "")
	expect(t, "delete built-in", b.post("/roles/"+viewer+"/delete", nil), http.StatusConflict, "")
	r, _ := e.store.RoleByID(context.Background(), mustInt(viewer))
	if slices.Contains(r.Permissions, "users.delete") {
		t.Error("the Viewer role was changed")
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func TestAdminAPIKeyShownOnceWorksAndRevokes(t *testing.T) {
	e, _, b := adminEnv(t)
	e.createUser("carol", carolPassword, auth.RoleOperator, true)
	c := e.browser()
	c.mustLogin("carol", carolPassword)

	p := c.get("/api-keys")
	expect(t, "keys page", p, http.StatusOK, "")
	expectBody(t, "keys page", p, "No API keys yet.", `id="key-form"`, `value="devices.delete"`)
	if strings.Contains(p.body, `value="users.view"`) {
		t.Error("the narrowing grid offers a permission carol lacks")
	}
	expiry := e.clock.Now().AddDate(0, 1, 0).Format(time.DateOnly)
	p = c.post("/api-keys", url.Values{"name": {"backup export"}, "expires": {expiry}})
	expect(t, "create key", p, http.StatusOK, "")
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the key page may be cached: %q", p.header.Get("Cache-Control"))
	}
	m := newKeyValue.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no key on the page:\n%s", p.body)
	}
	key := m[1]
	if strings.Count(p.body, key) != 1 {
		t.Errorf("the key shows %d times on its page", strings.Count(p.body, key))
	}
	expectBody(t, "created", p, "shown only this once", `data-copy="new-key"`)
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusOK {
		t.Errorf("GET /api/v1/groups with the new key: %d", got)
	}
	if got := e.apiStatus(key, "/api/v1/stats"); got != http.StatusOK {
		t.Errorf("GET /api/v1/stats with the new key: %d", got)
	}

	prefix := key[:len("bkd_0123456789")]
	p = c.get("/api-keys")
	expectBody(t, "list", p, "backup export", prefix, "All of the owner")
	for what, text := range map[string]string{"the list": p.body, "the log": e.logs.String(), "the audit log": e.auditJSON()} {
		if strings.Contains(text, key) || strings.Contains(text, key[len(prefix)+1:]) {
			t.Errorf("%s holds the key", what)
		}
	}
	var hash []byte
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT hash FROM api_keys WHERE name = 'backup export'`).Scan(&hash); err != nil || strings.Contains(string(hash), key) {
		t.Errorf("stored hash: %v", err)
	}
	a := e.lastAudit("api_key.create")
	if a.Username != "carol" || a.Details["prefix"] != prefix || a.Details["owner"] != "carol" || a.Details["expires_at"] == nil {
		t.Errorf("audit %+v", a)
	}

	// Narrowed to groups.view: that works, devices are refused.
	p = c.post("/api-keys", url.Values{"name": {"groups only"}, "narrow": {"1"}, "perm": {"groups.view"}})
	expect(t, "narrowed key", p, http.StatusOK, "")
	narrow := newKeyValue.FindStringSubmatch(p.body)[1]
	if got := e.apiStatus(narrow, "/api/v1/groups"); got != http.StatusOK {
		t.Errorf("narrowed key on groups: %d", got)
	}
	if got := e.apiStatus(narrow, "/api/v1/devices"); got != http.StatusForbidden {
		t.Errorf("narrowed key on devices: %d, want 403", got)
	}
	expectBody(t, "list", c.get("/api-keys"), `<code class="admin-tag">groups.view</code>`)

	// Refusals create nothing.
	var before int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM api_keys`).Scan(&before)
	yesterday := e.clock.Now().AddDate(0, 0, -1).Format(time.DateOnly)
	for name, c2 := range map[string]struct {
		form   url.Values
		status int
		says   string
	}{
		"no name":          {url.Values{"name": {""}}, http.StatusUnprocessableEntity, "Give the key a name"},
		"past expiry":      {url.Values{"name": {"x"}, "expires": {yesterday}}, http.StatusUnprocessableEntity, "after today"},
		"bad expiry":       {url.Values{"name": {"x"}, "expires": {"next week"}}, http.StatusUnprocessableEntity, "not a date"},
		"narrowed to none": {url.Values{"name": {"x"}, "narrow": {"1"}}, http.StatusUnprocessableEntity, "at least one permission"},
		"beyond owner":     {url.Values{"name": {"x"}, "narrow": {"1"}, "perm": {"users.delete"}}, http.StatusForbidden, "users.delete"},
	} {
		p := c.post("/api-keys", c2.form)
		expect(t, name, p, c2.status, "")
		expectBody(t, name, p, c2.says)
	}
	var after int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM api_keys`).Scan(&after)
	if after != before {
		t.Errorf("refused forms created %d keys", after-before)
	}

	// Carol sees her keys only; boss sees everyone's and may revoke them.
	bossKey, bp, bh := auth.NewAPIKey()
	bid, err := e.store.CreateAPIKey(context.Background(), dbKey(e.userID("boss"), bp, bh))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.get("/api-keys?owner=all"); strings.Contains(p.body, bp) || strings.Contains(p.body, `id="all-keys"`) {
		t.Error("carol sees boss's key")
	}
	expect(t, "carol revokes boss's key", c.post("/api-keys/"+id(bid)+"/revoke", nil), http.StatusForbidden, "")
	if got := e.apiStatus(bossKey, "/api/v1/groups"); got != http.StatusOK {
		t.Errorf("boss's key after a refused revocation: %d", got)
	}
	p = b.get("/api-keys?owner=all")
	expectBody(t, "all keys", p, bp, "backup export", "carol")

	cid := e.lastAudit("api_key.create").TargetID // the narrowed one
	p = b.post("/api-keys/"+cid+"/revoke", url.Values{"owner": {"all"}})
	expect(t, "boss revokes carol's key", p, http.StatusSeeOther, "/api-keys?owner=all&done=revoked")
	if got := e.apiStatus(narrow, "/api/v1/groups"); got != http.StatusUnauthorized {
		t.Errorf("revoked key: %d, want 401", got)
	}
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusOK {
		t.Errorf("the other key after revoking one: %d", got)
	}
	a = e.lastAudit("api_key.revoke")
	if a.TargetID != cid || a.Username != "boss" || a.Details["owner"] != "carol" {
		t.Errorf("revoke audit %+v", a)
	}
	expectBody(t, "revoked", c.get("/api-keys"), "Revoked")

	// Carol revokes her own.
	c.get("/api-keys")
	var kid int64
	dbtest.Peek(t, e.store).QueryRow(`SELECT id FROM api_keys WHERE name = 'backup export'`).Scan(&kid)
	expect(t, "carol revokes her key", c.post("/api-keys/"+id(kid)+"/revoke", nil), http.StatusSeeOther, "/api-keys?done=revoked")
	if got := e.apiStatus(key, "/api/v1/groups"); got != http.StatusUnauthorized {
		t.Errorf("revoked key: %d, want 401", got)
	}
}

func TestAdminAuditLogFilters(t *testing.T) {
	e, _, b := adminEnv(t)
	ctx := context.Background()
	day := time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)
	place := func(at time.Time) {
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE audit_log SET at = ? WHERE id = (SELECT MAX(id) FROM audit_log)`, at.Format(db.TimeFormat)); err != nil {
			t.Fatal(err)
		}
	}
	// 60 device changes through the API on April 10th, one group change
	// from the command line on April 12th with a detail to escape.
	kid, err := e.store.CreateAPIKey(ctx, dbKey(e.userID("boss"), "abcdef0123", []byte("h")))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if err := e.store.RecordAudit(ctx, db.AuditEntry{Username: "script", KeyID: &kid, Interface: "api", Action: "device.update",
			TargetType: "device", TargetID: id(int64(i + 1)), RequestID: fmt.Sprintf("req-%02d", i),
			Details: map[string]any{"fields": []string{"host"}, "name": fmt.Sprintf("edge-%02d", i)}}); err != nil {
			t.Fatal(err)
		}
		place(day.Add(time.Duration(i) * time.Minute))
	}
	if err := e.store.RecordAudit(ctx, db.AuditEntry{Username: "ops", Interface: "cli", Action: "group.delete",
		TargetType: "group", TargetID: "4", Details: map[string]any{"name": "<b>lab</b>"}}); err != nil {
		t.Fatal(err)
	}
	place(day.Add(48 * time.Hour))

	rows := func(p page) []string {
		t.Helper()
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-action="([^"]+)">`).FindAllStringSubmatch(p.body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	p := b.get("/audit")
	expect(t, "audit", p, http.StatusOK, "")
	if got := rows(p); len(got) != 50 || got[0] != "session.login" {
		t.Fatalf("first page: %d rows, first %v", len(got), got[:min(len(got), 1)])
	}
	expectBody(t, "first page", p, `rel="next"`, "session")
	expectBody(t, "API entries", b.get("/audit?interface=api"), "via API key", "bkd_abcdef0123")

	p = b.get("/audit?action=device.&interface=api")
	if got := rows(p); len(got) != 50 || slices.ContainsFunc(got, func(a string) bool { return a != "device.update" }) {
		t.Errorf("device. filter, page 1: %v", got)
	}
	expectBody(t, "filtered page 1", p, `href="/audit?action=device.&amp;interface=api&amp;page=2"`, "edge-59", "name</dt><dd>edge-59",
		// The target by its recorded name, linked to its page.
		`<a href="/devices/60" class="audit-target">edge-59</a>`)
	p = b.get("/audit?action=device.&interface=api&page=2")
	if got := rows(p); len(got) != 10 {
		t.Errorf("device. filter, page 2: %d rows", len(got))
	}
	expectBody(t, "filtered page 2", p, "edge-00", `href="/audit?action=device.&amp;interface=api"`)
	if strings.Contains(p.body, `rel="next"`) {
		t.Error("the last page links to a next one")
	}

	p = b.get("/audit?user=OPS")
	if got := rows(p); !slices.Equal(got, []string{"group.delete"}) {
		t.Errorf("user filter: %v", got)
	}
	expectBody(t, "escaped", p, "&lt;b&gt;lab&lt;/b&gt;", "Command line",
		`<a href="/groups/4" class="audit-target">&lt;b&gt;lab&lt;/b&gt;</a>`)
	if strings.Contains(p.body, "<b>lab</b>") {
		t.Error("a detail is rendered as markup")
	}
	if got := rows(b.get("/audit?interface=cli")); !slices.Equal(got, []string{"group.delete"}) {
		t.Errorf("interface filter: %v", got)
	}
	if got := rows(b.get("/audit?target=group")); !slices.Equal(got, []string{"group.delete"}) {
		t.Errorf("target filter: %v", got)
	}
	if got := rows(b.get("/audit?from=2026-04-11&to=2026-04-12")); !slices.Equal(got, []string{"group.delete"}) {
		t.Errorf("date range 11th–12th: %v", got)
	}
	if got := rows(b.get("/audit?from=2026-04-10&to=2026-04-10")); len(got) != 50 || got[0] != "device.update" {
		t.Errorf("the 10th: %d rows", len(got))
	}
	if got := rows(b.get("/audit?q=edge-07")); len(got) != 1 {
		t.Errorf("text filter: %v", got)
	}
	if got := rows(b.get("/audit?q=req-07")); len(got) != 1 {
		t.Errorf("request id filter: %v", got)
	}
	p = b.get("/audit?action=nothing.")
	expectBody(t, "no match", p, "No entry matches these filters")
	p = b.get("/audit?from=April")
	expect(t, "bad date", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad date", p, "is not a date", `value="April"`)

	// Changes on the admin pages are there too, with the session.
	b.get("/roles/new")
	b.post("/roles", url.Values{"name": {"Nightly"}, "perm": {"groups.view"}})
	p = b.get("/audit?action=role&user=boss&interface=web")
	if got := rows(p); !slices.Equal(got, []string{"role.create"}) {
		t.Errorf("role entries: %v", got)
	}
	expectBody(t, "role entry", p, "Nightly", "permissions</dt><dd>[&#34;groups.view&#34;]")
}

// Each page is hidden from and refused to users without its permission;
// each form is refused without the CSRF token and changes nothing.
func TestAdminPermissionsAndCSRF(t *testing.T) {
	e, f, b := adminEnv(t)
	e.createUser("op", "op-password-1", auth.RoleOperator, true)
	o := e.browser()
	o.mustLogin("op", "op-password-1")
	p := o.get("/api-keys")
	expect(t, "operator keys", p, http.StatusOK, "")
	for _, link := range []string{`href="/users"`, `href="/roles"`, `href="/audit"`} {
		if strings.Contains(p.body, link) {
			t.Errorf("the operator's navigation shows %s", link)
		}
	}
	expectBody(t, "operator nav", p, `<a href="/api-keys" aria-current="page">`)
	for _, path := range []string{"/users", "/users/new", "/users/1", "/roles", "/roles/new", "/roles/1", "/audit"} {
		expect(t, "operator GET "+path, o.get(path), http.StatusForbidden, "")
	}
	for path, form := range map[string]url.Values{
		"/users": {"username": {"x"}, "role": {e.roleID(auth.RoleViewer)}}, "/users/1": {"role": {"1"}},
		"/users/1/password": {}, "/users/1/delete": {}, "/roles": {"name": {"x"}}, "/roles/1/delete": {},
	} {
		expect(t, "operator POST "+path, o.post(path, form), http.StatusForbidden, "")
	}

	// A reader may look, not change: no buttons, and refused anyway.
	b.get("/roles/new")
	b.post("/roles", url.Values{"name": {"Reader"}, "perm": {"users.view", "roles.view", "audit.view", "api_keys.view"}})
	e.createUser("reader", "reader-password-1", "Reader", true)
	r := e.browser()
	r.mustLogin("reader", "reader-password-1")
	p = r.get("/users")
	expect(t, "reader users", p, http.StatusOK, "")
	expectBody(t, "reader nav", p, `href="/users"`, `href="/roles"`, `href="/audit"`, `href="/api-keys"`)
	if strings.Contains(p.body, `id="new-user"`) {
		t.Error("a reader is offered a new user")
	}
	p = r.get("/users/" + id(e.userID("op")))
	expectBody(t, "reader user page", p, `<fieldset class="admin-plain" disabled>`)
	for _, button := range []string{`id="save-user"`, `id="reset-password"`, `id="delete-user"`} {
		if strings.Contains(p.body, button) {
			t.Errorf("a reader is offered %s", button)
		}
	}
	if p := r.get("/roles"); strings.Contains(p.body, `id="new-role"`) {
		t.Error("a reader is offered a new role")
	}
	if p := r.get("/api-keys"); strings.Contains(p.body, `id="key-form"`) {
		t.Error("a reader without api_keys.create is offered the key form")
	}
	expect(t, "reader creates a key", r.post("/api-keys", url.Values{"name": {"x"}}), http.StatusForbidden, "")
	expect(t, "reader updates a user", r.post("/users/"+id(e.userID("op")), url.Values{"role": {"1"}, "scope": {"all"}}), http.StatusForbidden, "")

	// Without the token, nothing happens.
	carol := e.createUser("carol", carolPassword, auth.RoleViewer, false, f.core)
	rid := e.roleID("Reader")
	kid, err := e.store.CreateAPIKey(context.Background(), dbKey(carol, "0123456789", []byte("h")))
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.auditEntries())
	for path, form := range map[string]url.Values{
		"/users":                            {"username": {"mallory"}, "role": {e.roleID(auth.RoleAdministrator)}, "scope": {"all"}},
		"/users/" + id(carol):               {"role": {e.roleID(auth.RoleAdministrator)}, "scope": {"all"}},
		"/users/" + id(carol) + "/password": {"password_mode": {"generate"}},
		"/users/" + id(carol) + "/delete":   {},
		"/roles":                            {"name": {"Evil"}},
		"/roles/" + rid:                     {"name": {"Evil"}, "perm": {"users.delete"}},
		"/roles/" + rid + "/delete":         {},
		"/api-keys":                         {"name": {"evil"}},
		"/api-keys/" + id(kid) + "/revoke":  {},
	} {
		form.Set("csrf", "")
		p := b.post(path, form)
		expect(t, "no token POST "+path, p, http.StatusForbidden, "")
		expectBody(t, path, p, "reload the page")
	}
	if n := len(e.auditEntries()); n != before {
		t.Errorf("refused forms left %d audit entries", n-before)
	}
	u, _ := e.store.UserByID(context.Background(), carol)
	k, _ := e.store.APIKeyByID(context.Background(), kid)
	if !slices.Equal(u.Roles, []string{auth.RoleViewer}) || k.RevokedAt != nil {
		t.Error("a refused form changed something")
	}
	if _, err := e.store.RoleByName(context.Background(), "Evil"); err == nil {
		t.Error("a refused form created a role")
	}
	for _, path := range []string{"/users", "/users/new", "/roles", "/roles/new", "/api-keys", "/audit", "/users/" + id(carol), "/roles/" + rid} {
		p := b.get(path)
		expect(t, "boss GET "+path, p, http.StatusOK, "")
		for _, bad := range []string{"<script>", "style=", "onclick", "javascript:"} {
			if strings.Contains(p.body, bad) {
				t.Errorf("%s holds %q, which the CSP blocks", path, bad)
			}
		}
	}
}

// A user given neither every group nor any group sees no device: the
// creation leads to the user's page, which says so, and says it until a
// group is chosen. A user with a group is not warned.
func TestAdminUserWithoutGroupsIsWarned(t *testing.T) {
	e, f, b := adminEnv(t)
	b.get("/users/new")
	p := b.post("/users", url.Values{"username": {"erin"}, "password_mode": {"set"}, "password": {carolPassword},
		"confirm": {carolPassword}, "role": {e.roleID(auth.RoleViewer)}, "scope": {"groups"}})
	u, err := e.store.UserByName(context.Background(), "erin")
	if err != nil {
		t.Fatal(err)
	}
	page := "/users/" + id(u.ID)
	expect(t, "create erin without groups", p, http.StatusSeeOther, page+"?done=created")
	expectBody(t, "erin's page", b.get(page+"?done=created"), "User created.", `id="admin-sees-nothing"`, "sees no device")

	p = b.post(page, url.Values{"role": {e.roleID(auth.RoleViewer)}, "scope": {"groups"}, "group": {id(f.core)}, "active": {"1"}})
	expect(t, "give erin Core", p, http.StatusSeeOther, page+"?done=updated")
	if body := b.get(page).body; strings.Contains(body, `id="admin-sees-nothing"`) {
		t.Error("erin is still said to see nothing with Core chosen")
	}
	p = b.post("/users", url.Values{"username": {"fred"}, "password_mode": {"set"}, "password": {carolPassword},
		"confirm": {carolPassword}, "role": {e.roleID(auth.RoleViewer)}, "scope": {"all"}})
	expect(t, "create fred with every group", p, http.StatusSeeOther, "/users?done=created")
}

// The built-in roles are named in the page's language; a custom role's
// name is shown as typed in either.
func TestBuiltinRoleNamesTranslated(t *testing.T) {
	e, _, b := adminEnv(t)
	if _, err := e.store.CreateRole(context.Background(), "NOC night shift", "", []string{"devices.view"}); err != nil {
		t.Fatal(err)
	}
	b.header.Set("Accept-Language", "zh-CN")
	for _, path := range []string{"/roles", "/users", "/users/new"} {
		p := b.get(path)
		expect(t, path, p, http.StatusOK, "")
		if !strings.Contains(p.body, "管理员") {
			t.Errorf("%s in Chinese does not name the Administrator role 管理员", path)
		}
		if strings.Contains(p.body, ">Administrator<") {
			t.Errorf("%s in Chinese names a built-in role in English", path)
		}
	}
	expectBody(t, "roles in Chinese", b.get("/roles"), "NOC night shift", "运维人员", "只读用户", "备份查阅者")
	b.header.Del("Accept-Language")
	expectBody(t, "roles in English", b.get("/roles"), ">Administrator<", ">Backup reader<")
}
