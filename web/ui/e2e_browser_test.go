package ui_test

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/devsim"
	assets "backupd/embed"
)

// TestEndToEndInChromium is the walk of issue 5 in a real browser against
// the real server (with its backup engine) on 127.0.0.1 and a simulated
// Cisco switch:
//
//  1. admin signs in with the initial password, is made to change it and
//     lands on the dashboard;
//  2. creates the groups Lab and Branch, a credential holding the
//     simulator's login and the device "lab-sw" on the simulator's port;
//  3. backs it up with "Back up now", follows the jobs page until the job
//     is done and sees one good version in the history;
//  4. after the simulator's configuration changes, backs up again, sees two
//     versions, the newer one marked changed, and their diff side by side;
//  5. views a version's text;
//  6. creates an API key, uses it on GET /api/v1/devices, and does not see
//     it again on the keys page;
//  7. switches to Chinese;
//  8. creates the scoped operator "branchop" (Branch only) in the users
//     page, who after the forced password change sees branch-sw and not
//     lab-sw, gets the 403 page for lab-sw, and no admin pages in the menu;
//  9. every page is opened and screenshotted, in English and Chinese, as
//     admin and as the operator: none is an error page, none shows a raw
//     message key, each runs its script and stylesheet, and the console
//     stays free of errors and CSP violations.
//
// Screenshots (NN-page-lang-role.png) go to UI_SCREENSHOT_DIR when set.
// Without Chromium it skips, except under CI=true, where it fails.
func TestEndToEndInChromium(t *testing.T) {
	started := time.Now()
	e := newEnv(t)
	b := newTab(t, e, 150*time.Second, 1280, 900)
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "lab-sw", Username: "netbackup",
		Password: "sim-lab-password-1", SSHAddr: "127.0.0.1:0", ConfigSize: devsim.MinConfigSize, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	_, simPort, _ := net.SplitHostPort(sim.SSHAddr())

	// 1. Sign in with the initial password; change it; the dashboard.
	b.open("/")
	if p := b.path(); p != "/login" {
		t.Fatalf("/ led to %s, want /login", p)
	}
	b.signIn("admin", e.adminPassword)
	b.run("forced change", chromedp.WaitVisible(chromedp.CSS("#password-forced")))
	if p := b.path(); p != "/account/password" {
		t.Fatalf("sign-in with the initial password led to %s", p)
	}
	const adminPassword = "end-to-end-admin-password-1"
	b.changePassword(e.adminPassword, adminPassword)
	b.run("dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	if p := b.path(); p != "/dashboard" {
		t.Fatalf("after the change the browser is at %s, want /dashboard", p)
	}

	// 2. Groups, a credential and the device, through their forms.
	for _, name := range []string{"Lab", "Branch"} {
		b.open("/groups")
		b.typeIn("#group-name", name)
		b.submit("create group "+name, "#group-create-submit")
		b.run("group "+name+" listed", chromedp.WaitVisible(chromedp.CSS("#groups-notice")))
	}
	groups := invGroups(t, e)
	lab, branch := groups["Lab"], groups["Branch"]
	if lab.ID == 0 || branch.ID == 0 {
		t.Fatalf("after the forms the groups are %v", groups)
	}
	b.open("/credentials/new")
	b.typeIn("#cred-name", "Lab login")
	b.typeIn("#cred-username", sim.Username())
	b.typeIn("#cred-password", sim.Password())
	b.submit("create credential", "#credential-submit")
	b.open("/devices")
	b.submit("new device", "#device-new")
	b.typeIn("#d-name", "lab-sw")
	b.typeIn("#d-host", "127.0.0.1")
	b.chooseLabel("#d-platform", "Cisco IOS")
	b.chooseLabel("#d-group", "Lab")
	b.chooseLabel("#d-login", "SSH")
	b.typeIn("#d-port", simPort)
	b.chooseLabel("#d-credential", "Lab login")
	if b.eval(`String(document.getElementById("d-enabled").checked)`) != "true" {
		b.run("enable", chromedp.Click(chromedp.CSS("#d-enabled")))
	}
	b.submit("create device", "#device-save")
	b.run("device created", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	dev := devicesByName(t, e, "lab-sw")
	if dev.Host != "127.0.0.1" || strconv.Itoa(dev.Port) != simPort || dev.Platform != "cisco_ios" ||
		dev.GroupID == nil || *dev.GroupID != lab.ID || dev.CredentialID == nil || !dev.Enabled {
		t.Fatalf("the form saved %+v", dev)
	}
	devPath := "/devices/" + id(dev.ID)
	b.submit("open the device", `#devices-table tbody a[href="`+devPath+`"]`)

	// 3. Back up now; follow the jobs page; one good version.
	b.submit("back up now", "#device-backup-now")
	b.run("backup queued", chromedp.WaitVisible(chromedp.CSS("#device-notice")))
	b.followJob(1)
	b.submit("back to the device", `#jobs-rows tr:first-child a[data-field="device"]`)
	if p := b.path(); p != devPath {
		t.Fatalf("the job's device link led to %s, want %s", p, devPath)
	}
	if got := b.eval(`Array.from(document.querySelectorAll("#history-table tbody tr"), tr =>
		tr.querySelector(".device-badge-ok") ? "ok" : tr.querySelector(".device-result").textContent.trim()).join(",")`); got != "ok" {
		t.Fatalf("after one backup the history reads %q, want one good version", got)
	}

	// 4. The configuration changes; back up again; two versions, a diff.
	sim.Mutate(7)
	b.submit("back up again", "#device-backup-now")
	b.followJob(2)
	b.submit("back to the device", `#jobs-rows tr:first-child a[data-field="device"]`)
	if got := b.eval(`Array.from(document.querySelectorAll("#history-table tbody tr"), tr =>
		(tr.querySelector(".device-badge-ok") ? "ok" : "not-ok") + (tr.querySelector(".device-badge-changed") ? "+changed" : "")).join(",")`); !regexp.MustCompile(`^ok\+changed,ok(\+changed)?$`).MatchString(got) {
		t.Fatalf("after the change the history reads %q, want the newer version changed and the older good", got)
	}
	b.submit("compare", "#history-compare")
	b.run("diff", chromedp.WaitVisible(chromedp.CSS("#diff-table.device-diff-split")))
	diffPath := b.eval(`location.pathname + location.search`)
	if got := b.eval(`String(Array.from(document.querySelectorAll("#diff-table tbody tr")).some(tr =>
		tr.children.length === 4 && tr.children[1].matches(".diff-del:not(.diff-noise)") && tr.children[3].matches(".diff-add:not(.diff-noise)")))`); got != "true" {
		t.Errorf("the diff shows no removed line beside an added one; counts: %s", b.eval(`document.getElementById("diff-counts").textContent`))
	}

	// 5. A version's text.
	b.submit("open the newer version", "#diff-to")
	b.run("version", chromedp.WaitVisible(chromedp.CSS("#config-text")))
	versionPath := b.path()
	text := b.eval(`document.getElementById("config-text").textContent`)
	if !strings.Contains(text, "hostname lab-sw") || strings.Count(text, "\n") < 20 {
		t.Errorf("the version shows %d lines without the hostname:\n%.500s", strings.Count(text, "\n"), text)
	}

	// 6. An API key, shown once, used from Go.
	b.open("/api-keys")
	b.typeIn("#key-name", "end-to-end")
	b.submit("create key", "#create-key")
	key := b.eval(`document.getElementById("new-key").textContent.trim()`)
	if names := e2eAPIDevices(t, e.srv.URL, key); !strings.Contains(names, "lab-sw") {
		t.Errorf("GET /api/v1/devices with the new key lists %q, want lab-sw", names)
	}
	b.open("/api-keys")
	if strings.Contains(b.eval(`document.documentElement.outerHTML`), key) {
		t.Error("the keys page shows the key again")
	}

	// 7. Chinese.
	b.open("/devices")
	b.setLang("zh")
	zh := e2eCatalog(t, "zh")
	if got := b.eval(`document.querySelector("h1").textContent.trim()`); got != zh["devices.heading"] {
		t.Errorf("the Chinese devices heading reads %q, want %q", got, zh["devices.heading"])
	}
	if got := b.eval(`document.querySelector('.sidenav a[aria-current="page"]').textContent.trim()`); got != zh["nav.devices"] {
		t.Errorf("the Chinese menu entry reads %q, want %q", got, zh["nav.devices"])
	}
	b.checkPage("devices in Chinese", "zh")

	// 9 (admin). Every page, in both languages.
	admin := e2ePages(devPath, versionPath, diffPath)
	b.walk(admin, "zh", "admin", func(p e2ePage) string { return p.admin })
	b.setLang("en")
	b.walk(admin, "en", "admin", func(p e2ePage) string { return p.admin })

	// 8. The scoped operator, created through the users page.
	branchDev := devicesLoopback(t, e, "branch-sw", &branch.ID, true)
	b.open("/users/new")
	b.typeIn("#username", "branchop")
	// The form ticks a default role; the operator holds Operator alone.
	operator := e.roleID("Operator")
	for _, v := range strings.Fields(b.eval(`Array.from(document.querySelectorAll('#roles input[name="role"]:checked'), i => i.value).join(" ")`)) {
		if v != operator {
			b.run("untick role "+v, chromedp.Click(chromedp.CSS(`#roles input[value="`+v+`"]`)))
		}
	}
	b.run("role and scope",
		chromedp.Click(chromedp.CSS(`#roles input[value="`+operator+`"]`)),
		chromedp.Click(chromedp.CSS("#scope-groups")),
		chromedp.Click(chromedp.CSS(`#scope input[name="group"][value="`+id(branch.ID)+`"]`)))
	if got := b.eval(`Array.from(document.querySelectorAll('#roles input:checked, #scope input:checked'), i => i.name + "=" + i.value).join(" ")`); got != "role="+operator+" scope=groups group="+id(branch.ID) {
		t.Fatalf("the new user's roles and scope are %q", got)
	}
	b.submit("create user", "#create-user")
	opPassword := b.eval(`document.getElementById("secret-value").textContent.trim()`)
	if opPassword == "" {
		t.Fatal("the users page showed no password for the new user")
	}
	b.submit("sign out", "#sign-out")
	b.run("signed out", chromedp.WaitVisible(chromedp.CSS("#username")))
	b.signIn("branchop", opPassword)
	b.run("operator's forced change", chromedp.WaitVisible(chromedp.CSS("#password-forced")))
	const opNewPassword = "branch-operator-password-1"
	b.changePassword(opPassword, opNewPassword)
	b.run("operator's dashboard", chromedp.WaitVisible(chromedp.CSS("#device-counts")))
	b.open("/devices")
	if got := b.eval(`Array.from(document.querySelectorAll("#devices-table tbody th a"), a => a.textContent.trim()).join(",")`); got != "branch-sw" {
		t.Errorf("the operator's devices list shows %q, want only branch-sw", got)
	}
	for _, path := range []string{"/users", "/roles", "/audit"} {
		if n := b.eval(`String(document.querySelectorAll('.sidenav a[href="` + path + `"]').length)`); n != "0" {
			t.Errorf("the operator's menu offers %s", path)
		}
	}
	if n := b.eval(`String(document.querySelectorAll('.sidenav a[href="/devices"]').length)`); n != "1" {
		t.Error("the operator's menu lacks the devices page")
	}
	// The browser reports the 403 it is meant to get as a failed load.
	b.allow(func(m chromedp.ConsoleMessage) bool {
		return strings.Contains(m.Text, "status of 403") && strings.HasSuffix(m.URL, devPath)
	})
	if st := b.open(devPath); st != http.StatusForbidden {
		t.Errorf("the operator opens lab-sw's page: status %d, want 403", st)
	}
	if b.eval(`String(!!document.getElementById("error-title"))`) != "true" || strings.Contains(b.eval(`document.querySelector("main").innerText`), "lab-sw") {
		t.Errorf("lab-sw's page for the operator is not the 403 page:\n%s", b.eval(`document.querySelector("main").innerText`))
	}

	// 9 (operator). The operator's pages, in both languages.
	branchPath := "/devices/" + id(branchDev)
	b.walk(e2ePages(branchPath, "", ""), "en", "operator", func(p e2ePage) string { return p.operator })
	b.setLang("zh")
	b.walk(e2ePages(branchPath, "", ""), "zh", "operator", func(p e2ePage) string { return p.operator })

	b.checkConsole()
	for _, bad := range []string{"page failed", "render error page"} {
		if strings.Contains(e.logs.String(), bad) {
			t.Errorf("the server logged %q:\n%s", bad, e.logs.String())
		}
	}
	t.Logf("end-to-end walk took %s", time.Since(started).Round(100*time.Millisecond))
}

// e2ePage is one page of the screenshot walk: its number and name in the
// file names, and its address for the admin and for the scoped operator
// ("" where that user has no such page).
type e2ePage struct {
	n               int
	name            string
	admin, operator string
}

// e2ePages lists every page of the interface. device is the device page
// to show; version and diff are pages of its history (admin only).
func e2ePages(device, version, diff string) []e2ePage {
	both := func(n int, name, path string) e2ePage { return e2ePage{n, name, path, path} }
	return []e2ePage{
		both(1, "dashboard", "/dashboard"),
		both(2, "devices", "/devices"),
		both(3, "device-new", "/devices/new"),
		both(4, "device-import", "/devices/import"),
		both(5, "device-detail", device),
		{6, "version", version, ""},
		{7, "diff", diff, ""},
		both(8, "groups", "/groups"),
		both(9, "credentials", "/credentials"),
		both(10, "credential-form", "/credentials/new"),
		both(11, "templates", "/templates"),
		both(12, "template-form", "/templates/new"),
		both(13, "schedules", "/schedules"),
		both(14, "schedule-form", "/schedules/new"),
		both(15, "rules", "/rules"),
		both(16, "settings", "/settings"),
		both(17, "jobs", "/jobs"),
		both(18, "search", "/search?q=hostname"),
		{19, "users", "/users", ""},
		{20, "user-form", "/users/new", ""},
		{21, "roles", "/roles", ""},
		{22, "role-form", "/roles/new", ""},
		both(23, "api-keys", "/api-keys"),
		{24, "audit", "/audit", ""},
	}
}

// followJob goes to the jobs page through the menu and waits, without
// reloading, until the page shows that the backup just started has
// finished (n backups finished in the last hour); the "finished" view
// then lists it first, with a link to the version it saved.
func (b *tab) followJob(n int) {
	b.t.Helper()
	b.submit("open the jobs page", `.sidenav a[href="/jobs"]`)
	b.waitFor("the jobs page updates itself", `document.getElementById("jobs-live").dataset.live === "live"`, 10*time.Second)
	b.eval(`(window.e2eMark = "kept", "")`)
	b.waitFor(fmt.Sprintf("backup %d finishes on the jobs page", n), fmt.Sprintf(`(() => {
		const count = name => document.querySelector('#job-counts [data-count="' + name + '"]').textContent;
		return count("queued") === "0" && count("running") === "0" && count("finished_last_hour") === "%d" &&
			!document.querySelector("#jobs-rows tr");
	})()`, n), 30*time.Second)
	if b.eval(`String(window.e2eMark)`) != "kept" {
		b.t.Error("the jobs page reloaded instead of updating itself")
	}
	b.submit("finished jobs", `.jobs-tabs a:nth-child(2)`)
	row := `#jobs-rows tr:first-child`
	if got := b.eval(`(() => {
		const tr = document.querySelector("` + row + `");
		if (!tr) return "no row";
		return tr.querySelector('[data-field="device"]').textContent + " " + tr.dataset.state + " " +
			(tr.querySelector('[data-field="result"] a') || {pathname: "no version"}).pathname.replace(/[^/]+$/, "ID");
	})()`); !regexp.MustCompile(`^lab-sw succeeded /devices/[0-9]+/versions/ID$`).MatchString(got) {
		b.t.Fatalf("the newest finished job reads %q, want lab-sw succeeded with its version; the page shows:\n%s", got, b.shows())
	}
}

// e2eFacts is what checkPage reads from a page.
type e2eFacts struct {
	H1       string `json:"h1"`
	Error    bool   `json:"error"`
	Scripted bool   `json:"scripted"`
	BG       string `json:"bg"`
	Lang     string `json:"lang"`
	// Main is the page's own text, configurations left out.
	Main string   `json:"main"`
	Nav  string   `json:"nav"`
	Raw  []string `json:"raw"`
}

// e2eFactsJS reads the facts. A raw message key is a visible text, or a
// title / placeholder / label / confirmation, that reads like
// "devices.form.name", or a fmt error such as "%!d(". Code, preformatted
// text and diff lines are left out, there and in the page's text (main):
// audit actions and permissions show as such, and configurations are
// the devices' own text.
const e2eFactsJS = `(() => {
	const key = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;
	const raw = [];
	const skip = el => !el || el.closest("code, pre, kbd, samp, script, style, template, datalist, #diff-table td");
	const test = (s, where) => {
		s = (s || "").trim();
		if (s && (key.test(s) || s.includes("%!"))) raw.push(where + ": " + s);
	};
	const main = document.querySelector("main");
	const own = [];
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		if (skip(n.parentElement)) continue;
		test(n.nodeValue, n.parentElement.tagName.toLowerCase());
		if (main && main.contains(n)) own.push(n.nodeValue);
	}
	for (const el of document.querySelectorAll("*")) {
		if (skip(el)) continue;
		for (const a of el.attributes) {
			if (["title", "placeholder", "aria-label", "alt", "data-confirm", "data-copied", "data-copy-failed", "data-empty", "data-add"].includes(a.name) || a.name.startsWith("data-text-")) {
				test(a.value, el.tagName.toLowerCase() + "[" + a.name + "]");
			}
		}
	}
	test(document.title, "title");
	const h1 = document.querySelector("main h1");
	const nav = document.querySelector(".sidenav");
	return {
		h1: h1 ? h1.textContent.trim() : "",
		error: !!document.getElementById("error-title"),
		scripted: document.documentElement.classList.contains("js"),
		bg: getComputedStyle(document.documentElement).backgroundColor,
		lang: document.documentElement.lang,
		main: own.join(" ").replace(/\s+/g, " "),
		nav: nav ? nav.innerText : "",
		raw: raw,
	};
})()`

// checkPage fails unless the page is a working page of the interface in
// lang: a heading and no error page, its script and stylesheet applied,
// the menu and content in that language, no raw message key.
func (b *tab) checkPage(what, lang string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	f, err := chromedp.Run(ctx, chromedp.Evaluate[e2eFacts](e2eFactsJS))
	if err != nil {
		b.t.Fatalf("%s: read the page: %v", what, err)
	}
	switch {
	case f.Error:
		b.t.Errorf("%s: error page %q:\n%s", what, f.H1, f.Main)
	case f.H1 == "":
		b.t.Errorf("%s: no heading:\n%s", what, b.shows())
	}
	if !f.Scripted {
		b.t.Errorf("%s: app.js did not run", what)
	}
	if f.BG != "rgb(244, 246, 249)" {
		b.t.Errorf("%s: page background %s; app.css not applied", what, f.BG)
	}
	for _, r := range f.Raw {
		b.t.Errorf("%s: shows a raw message key or format error: %s", what, r)
	}
	if lang == "zh" {
		if f.Lang != "zh-CN" || !hasHan(f.Nav) || !hasHan(f.Main) {
			b.t.Errorf("%s: not in Chinese (<html lang=%q>); menu %q; page:\n%.300s", what, f.Lang, f.Nav, f.Main)
		}
	} else if f.Lang != "en" || hasHan(f.Main) || hasHan(f.Nav) {
		b.t.Errorf("%s: not in English (<html lang=%q>); menu %q; page:\n%.300s", what, f.Lang, f.Nav, f.Main)
	}
}

// walk opens each page that has an address for this user, checks it and
// saves a full-page screenshot NN-page-lang-role.png.
func (b *tab) walk(pages []e2ePage, lang, role string, path func(e2ePage) string) {
	b.t.Helper()
	for _, p := range pages {
		addr := path(p)
		if addr == "" {
			continue
		}
		name := fmt.Sprintf("%02d-%s-%s-%s", p.n, p.name, lang, role)
		if st := b.open(addr); st >= 400 {
			b.t.Errorf("%s (%s): status %d", name, addr, st)
		}
		b.checkPage(name+" "+addr, lang)
		b.shot(name)
	}
}

// e2eAPIDevices lists the device names GET /api/v1/devices gives the key.
func e2eAPIDevices(t *testing.T, base, key string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/api/v1/devices", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /api/v1/devices: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/devices with the key %q: %d %s", key, res.StatusCode, body)
	}
	var list struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("GET /api/v1/devices: %v in %s", err, body)
	}
	var names []string
	for _, d := range list.Items {
		names = append(names, d.Name)
	}
	return strings.Join(names, ",")
}

// e2eCatalog is the web interface's texts in lang, by key.
func e2eCatalog(t *testing.T, lang string) map[string]string {
	t.Helper()
	files, err := fs.Glob(assets.I18n, "i18n/ui/*."+lang+".json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s catalog (%v)", lang, err)
	}
	out := map[string]string{}
	for _, f := range files {
		raw, err := fs.ReadFile(assets.I18n, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return out
}
