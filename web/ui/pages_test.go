package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// fleet is a small inventory in two groups with a backup history.
type fleet struct {
	core, branch int64
}

// seedFleet adds devices and backups relative to the env's clock:
//
//	core-1    Core    reachable    last backup ok (changed 2 h ago)
//	core-2    Core    unreachable  last backup failed 1 h ago
//	core-3    Core    disabled, last backup failed (not "failing": disabled)
//	branch-1  Branch  reachable    last backup failed 30 min ago
//	branch-2  Branch  never backed up
func seedFleet(t *testing.T, e *env) fleet {
	t.Helper()
	ctx := context.Background()
	core, err := e.store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	branch, err := e.store.CreateGroup(ctx, "Branch", nil)
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().UTC()
	device := func(name string, group int64, enabled bool, status string) int64 {
		d, err := e.store.CreateDevice(ctx, db.Device{
			Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
			GroupID: &group, Encoding: "utf-8", Enabled: enabled,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE devices SET status = ? WHERE id = ?`, status, d.ID); err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	n := 0
	backup := func(dev int64, ago time.Duration, ok, changed bool, msg string) {
		n++
		started := now.Add(-ago)
		finished := started.Add(5 * time.Second)
		b := db.Backup{ID: fmt.Sprintf("b%03d", n), DeviceID: dev, StartedAt: started, FinishedAt: &finished,
			Success: ok, Changed: changed, Trigger: queue.TriggerSchedule}
		if msg != "" {
			b.ErrorMessage = &msg
		}
		if err := e.store.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE devices SET last_backup_at = ?, last_backup_success = ? WHERE id = ?`,
			finished.Format(db.TimeFormat), ok, dev); err != nil {
			t.Fatal(err)
		}
	}
	c1 := device("core-1", core.ID, true, db.StatusReachable)
	c2 := device("core-2", core.ID, true, db.StatusUnreachable)
	c3 := device("core-3", core.ID, false, db.StatusUnknown)
	b1 := device("branch-1", branch.ID, true, db.StatusReachable)
	device("branch-2", branch.ID, true, db.StatusUnknown)
	for day := 20; day >= 1; day-- {
		backup(c1, time.Duration(day)*24*time.Hour, true, day == 10, "")
		backup(c2, time.Duration(day)*24*time.Hour, true, false, "")
	}
	backup(c3, 40*24*time.Hour, false, false, "disabled long ago")
	backup(c1, 2*time.Hour, true, true, "")
	backup(c2, 90*time.Minute, false, false, "older failure")
	backup(c2, time.Hour, false, false, "connect 192.0.2.1:22: connection refused")
	backup(b1, 30*time.Minute, false, false, "login: authentication failed <script>")
	return fleet{core: core.ID, branch: branch.ID}
}

var countRE = regexp.MustCompile(`data-count="(\w+)">([\d,]+)<`)

// counts reads the dashboard's figures.
func counts(body string) map[string]string {
	out := map[string]string{}
	for _, m := range countRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func TestDashboardRespectsScope(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.branch)
	e.createUser("nobody", "nobody-password-1", auth.RoleViewer, false)

	admin := e.browser()
	admin.mustLogin("root", "root-password-1")
	p := admin.get("/dashboard")
	expect(t, "admin dashboard", p, http.StatusOK, "")
	want := map[string]string{"total": "5", "reachable": "2", "unreachable": "1", "unknown": "2", "failing": "2", "changed": "1"}
	if got := counts(p.body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("admin counts %v, want %v", got, want)
	}
	expectBody(t, "admin dashboard", p,
		"core-2", "connect 192.0.2.1:22: connection refused", "branch-1",
		"login: authentication failed &lt;script&gt;", // escaped, never markup
		`<svg id="backup-chart"`, `class="seg-ok"`, `class="seg-changed"`, `class="seg-failed"`)
	if strings.Contains(p.body, "older failure") || strings.Contains(p.body, "core-3") || strings.Contains(p.body, "disabled long ago") {
		t.Error("the failing list shows an older message or a disabled device")
	}
	// Newest failure first.
	if i, j := strings.Index(p.body, "branch-1"), strings.Index(p.body, "core-2"); i < 0 || j < 0 || i > j {
		t.Error("failing devices are not newest first")
	}
	// The chart's table: today's row counts one changed success and three
	// failures (one of them the disabled device's is 40 days old, outside).
	today := e.clock.Now().UTC().Format("2006-01-02")
	row := regexp.MustCompile(`<tr><th scope="row">` + today + `</th><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td></tr>`)
	m := row.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no chart row for today (%s)", today)
	}
	// The 2 h, 90 min, 1 h and 30 min backups fall on today unless the
	// test runs just after midnight UTC; only check the total then.
	if m[2] != "1" && e.clock.Now().UTC().Hour() >= 3 {
		t.Errorf("today's chart row %v, want 1 changed", m[1:])
	}
	if bars := strings.Count(p.body, `<g class="bar">`); bars != 30 {
		t.Errorf("chart has %d bars, want 30", bars)
	}

	scoped := e.browser()
	scoped.mustLogin("brancher", "branch-password-1")
	p = scoped.get("/dashboard")
	expect(t, "scoped dashboard", p, http.StatusOK, "")
	want = map[string]string{"total": "2", "reachable": "1", "unreachable": "0", "unknown": "1", "failing": "1", "changed": "0"}
	if got := counts(p.body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scoped counts %v, want %v", got, want)
	}
	if strings.Contains(p.body, "core-") || strings.Contains(p.body, "connection refused") {
		t.Error("a user scoped to Branch sees a Core device")
	}
	expectBody(t, "scoped dashboard", p, "branch-1", `class="seg-failed"`)
	if strings.Contains(p.body, `class="seg-changed"`) {
		t.Error("the scoped chart shows Core's changed configurations")
	}

	none := e.browser()
	none.mustLogin("nobody", "nobody-password-1")
	p = none.get("/dashboard")
	want = map[string]string{"total": "0", "reachable": "0", "unreachable": "0", "unknown": "0", "failing": "0", "changed": "0"}
	if got := counts(p.body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts of a user without groups %v, want %v", got, want)
	}
	expectBody(t, "no groups", p, "No backup finished in the last 30 days")
}

func TestPermissionsHidePagesAndRefuseThem(t *testing.T) {
	e := newEnv(t)
	e.createUser("reader", "reader-password-1", auth.RoleBackupReader, true)
	b := e.browser()
	b.mustLogin("reader", "reader-password-1")
	p := b.get("/dashboard")
	expect(t, "dashboard without dashboard.view", p, http.StatusForbidden, "")
	expectBody(t, "forbidden", p, "Ask an administrator")
	if strings.Contains(p.body, `href="/dashboard"`) {
		t.Error("the navigation shows a page the user may not open")
	}
	// Home sends each user to the first page it may open: the jobs page
	// for a backup reader.
	expect(t, "reader home", b.get("/"), http.StatusSeeOther, "/jobs")
	if p = b.get("/jobs"); strings.Contains(p.body, `href="/devices"`) || !strings.Contains(p.body, `href="/search"`) {
		t.Error("a backup reader's navigation must show jobs and search, and not devices")
	}

	// A role that opens no page gets a home page that says so.
	if err := e.store.EnsureRole(context.Background(), db.Role{Name: "Trigger only", Permissions: []string{"backups.create"}}); err != nil {
		t.Fatal(err)
	}
	e.createUser("trigger", "trigger-password-1", "Trigger only", true)
	tb := e.browser()
	tb.mustLogin("trigger", "trigger-password-1")
	p = tb.get("/")
	expect(t, "home without pages", p, http.StatusOK, "")
	expectBody(t, "home", p, "Welcome, trigger", "do not open any page")

	v := e.browser()
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v.mustLogin("viewer", "viewer-password-1")
	expect(t, "viewer home", v.get("/"), http.StatusSeeOther, "/dashboard")
	expectBody(t, "viewer nav", v.get("/dashboard"), `<a href="/dashboard" aria-current="page">Dashboard</a>`)
}

var wantHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	seedFleet(t, e)
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b := e.browser()
	check := func(what string, p page, cache string) {
		t.Helper()
		for k, v := range wantHeaders {
			if got := p.header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", what, k, got, v)
			}
		}
		if got := p.header.Get("Cache-Control"); got != cache {
			t.Errorf("%s: Cache-Control %q, want %q", what, got, cache)
		}
	}
	check("GET /login", b.get("/login"), "no-store")
	check("POST /login refused", b.post("/login", url.Values{"username": {"alice"}, "password": {"wrong-wrong"}}), "no-store")
	check("GET / signed out", b.get("/"), "no-store")
	b.mustLogin("alice", "alice-password-1")
	dash := b.get("/dashboard")
	check("GET /dashboard", dash, "no-store")
	check("GET /account/password", b.get("/account/password"), "no-store")
	check("unknown page", b.get("/no/such/page"), "no-store")
	check("GET /api/session", b.get("/api/session"), "no-store")

	// No inline script or style anywhere: every page passes its own CSP.
	for _, bad := range []string{"<script>", "style=", "<style", "onclick", "onload", "javascript:"} {
		if strings.Contains(dash.body, bad) {
			t.Errorf("the dashboard holds %q, which the CSP blocks", bad)
		}
	}
	// Static files are served, typed and cached for good (their URLs carry
	// a content hash).
	for _, asset := range regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`).FindAllStringSubmatch(dash.body, -1) {
		p := b.get(strings.ReplaceAll(asset[1], "&amp;", "&"))
		if p.status != http.StatusOK {
			t.Errorf("GET %s: %d", asset[1], p.status)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(p.header.Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s: headers %v", asset[1], p.header)
		}
	}
	expect(t, "static directory listing", b.get("/static/"), http.StatusNotFound, "")
	expect(t, "unknown static file", b.get("/static/nope.js"), http.StatusNotFound, "")
}

func TestLanguageNegotiation(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		accept, want string
	}{
		{"", "en"},
		{"en-US,en;q=0.9", "en"},
		{"zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"},
		{"zh", "zh-CN"},
		{"fr-FR, zh;q=0.5, en;q=0.3", "zh-CN"},
		{"de-DE", "en"},
		{"garbage;;;q=x", "en"},
	}
	for _, c := range cases {
		b := e.browser()
		if c.accept != "" {
			b.header.Set("Accept-Language", c.accept)
		}
		p := b.get("/login")
		if !strings.Contains(p.body, `<html lang="`+c.want+`">`) {
			t.Errorf("Accept-Language %q: want <html lang=%q>", c.accept, c.want)
		}
		if c.want == "zh-CN" {
			expectBody(t, "Chinese sign-in page", p, "登录 backupd", "用户名", "密码")
		} else {
			expectBody(t, "English sign-in page", p, "Sign in to backupd")
		}
	}

	// The switcher sets the lang cookie, which beats Accept-Language, and
	// goes back where it was — on this site only.
	b := e.browser()
	b.header.Set("Accept-Language", "en")
	b.get("/login")
	p := b.post("/lang", url.Values{"lang": {"zh"}, "next": {"/login?next=%2Fdashboard"}})
	expect(t, "switch to Chinese", p, http.StatusSeeOther, "/login?next=%2Fdashboard")
	if c := b.cookie("lang"); c == nil || c.Value != "zh" {
		t.Fatalf("lang cookie %v, want zh", c)
	}
	expectBody(t, "after the switch", b.get("/login"), `<html lang="zh-CN">`, "登录")
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", ""} {
		p := b.post("/lang", url.Values{"lang": {"en"}, "next": {next}})
		expect(t, "switch with next "+next, p, http.StatusSeeOther, "/")
	}
	expect(t, "unknown language", b.post("/lang", url.Values{"lang": {"xx"}}), http.StatusBadRequest, "")
	expect(t, "switch without token", b.post("/lang", url.Values{"lang": {"zh"}, "csrf": {""}}), http.StatusForbidden, "")

	// Signed in, every page follows the choice.
	e.createUser("alice", "alice-password-1", auth.RoleOperator, true)
	b.mustLogin("alice", "alice-password-1")
	b.post("/lang", url.Values{"lang": {"zh"}, "next": {"/dashboard"}})
	expectBody(t, "Chinese dashboard", b.get("/dashboard"), `<html lang="zh-CN">`, "仪表盘", "退出登录", "近 30 天每日备份")
}
