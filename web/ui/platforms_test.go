package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
)

// platformForm is the form of an IOS-like custom platform, as a browser
// posts it.
func platformForm(id string) url.Values {
	return url.Values{
		"id": {id}, "name": {"Acme OS"}, "vendor": {"Acme"}, "notes": {"Test platform."},
		"ssh": {"1"}, "telnet": {"1"},
		"prompt": {`^[\w.-]{1,60}[>#]$`}, "pager": {`(?i)--\s?more\s?--$`}, "pager_answer": {" "},
		"paging_off":             {"terminal length 0"},
		"enable_command":         {"enable"},
		"enable_password_prompt": {`(?i)password ?:$`},
		"enable_privileged":      {`#$`},
		"enable_failed":          {`(?i)denied|bad secret`},
		"pre_login_match":        {`(?i)press any key`, ""},
		"pre_login_send":         {`\n`, ""},
		"command_error":          {`^% ?Invalid`},
		"default_commands":       {"show running-config"},
		"strip":                  {`^Building configuration\.\.\.$`},
		"noise":                  {"^! Last configuration change at \n^ntp clock-period \\d+$"},
		"action":                 {"save"},
	}
}

func (b *browser) uploadPlatform(filename, content string, form url.Values) page {
	b.e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", b.csrf)
	for k, vs := range form {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		b.e.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+"/platforms/import", &body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

func platformActions(e *env) []string {
	var out []string
	for _, a := range e.auditEntries() {
		if strings.HasPrefix(a.Action, "platform.") {
			out = append(out, a.Action)
		}
	}
	return out
}

// The Platforms page: built-ins listed read only, a custom platform
// created, shown, edited, exported, imported again, used by a device and
// refused deletion while used; the registry follows every change.
func TestPlatformsPage(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	ctx := context.Background()
	b := adminBrowser(t, e)

	p := b.get("/platforms")
	expect(t, "list", p, http.StatusOK, "")
	expectBody(t, "list", p, `id="builtin-table"`, "<code>cisco_ios</code>", "show running-config", `href="/platforms" aria-current="page"`,
		`id="custom-empty"`, `href="/platforms/cisco_ios/export"`,
		// The aliases imports map to each platform (issue 24).
		`<td class="platform-aliases">iosxr, cisco-xr, ios-xr, ios-xr7, cisco-xr7, ios-exr, cisco-exr</td>`)

	b.get("/platforms/new")
	p = b.post("/platforms", platformForm("custom_acme_os"))
	expect(t, "create", p, http.StatusSeeOther, "/platforms/custom_acme_os?notice=created")
	pl, ok := driver.Lookup("custom_acme_os")
	if !ok || !pl.Custom || pl.Dialogue.Enable != "enable" || len(pl.Noise) != 2 || len(pl.Dialogue.PreLogin) != 1 {
		t.Fatalf("registry after create: %+v %v", pl, ok)
	}
	p = b.get("/platforms/custom_acme_os?notice=created")
	expectBody(t, "detail", p, "Platform created.", `value="custom_acme_os"`, "readonly", `id="platform-test-submit"`,
		html.EscapeString(`^[\w.-]{1,60}[>#]$`))

	// Edit: the ID stays whatever the form says.
	f := platformForm("custom_renamed")
	f.Set("name", "Acme OS 2")
	f.Set("default_commands", "show running-config\nshow version")
	expect(t, "update", b.post("/platforms/custom_acme_os", f), http.StatusSeeOther, "/platforms/custom_acme_os?notice=updated")
	if driver.DefaultCommands("custom_acme_os") != "show running-config\nshow version" {
		t.Fatalf("registry after update: %q", driver.DefaultCommands("custom_acme_os"))
	}
	if _, ok := driver.Lookup("custom_renamed"); ok {
		t.Fatal("an update renamed the platform")
	}

	// Export, then import the file as another platform.
	exp := b.get("/platforms/custom_acme_os/export")
	if exp.status != http.StatusOK || !strings.Contains(exp.header.Get("Content-Disposition"), `filename="custom_acme_os.json"`) {
		t.Fatalf("export: %d %v", exp.status, exp.header)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(exp.body), &doc); err != nil || doc["schema"] != platforms.Schema || doc["name"] != "Acme OS 2" {
		t.Fatalf("export body: %v %s", err, exp.body)
	}
	b.get("/platforms")
	p = b.uploadPlatform("acme.json", exp.body, nil)
	expect(t, "import existing", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "import existing", p, "A platform with the ID custom_acme_os already exists")
	p = b.uploadPlatform("acme.json", strings.Replace(exp.body, "custom_acme_os", "custom_acme_two", 1), nil)
	expect(t, "import", p, http.StatusSeeOther, "/platforms/custom_acme_two?notice=imported")
	if _, ok := driver.Lookup("custom_acme_two"); !ok {
		t.Fatal("imported platform not in the registry")
	}
	b.get("/platforms")
	p = b.uploadPlatform("acme.json", strings.Replace(exp.body, "Acme OS 2", "Acme OS 3", 1), url.Values{"replace": {"1"}})
	expect(t, "import replace", p, http.StatusSeeOther, "/platforms/custom_acme_os?notice=imported")
	if pl, _ := driver.Lookup("custom_acme_os"); pl.Name != "Acme OS 3" {
		t.Fatalf("replace import: name %q", pl.Name)
	}
	// A built-in platform exports as a custom one that imports as it is.
	exp = b.get("/platforms/huawei_vrp/export")
	if !strings.Contains(exp.body, `"id": "custom_huawei_vrp"`) {
		t.Fatalf("built-in export: %s", exp.body)
	}
	b.get("/platforms")
	expect(t, "import built-in export", b.uploadPlatform("vrp.json", exp.body, nil), http.StatusSeeOther, "/platforms/custom_huawei_vrp?notice=imported")

	// Bad files and forms are explained, not stored.
	for _, c := range []struct{ name, body, want string }{
		{"yaml", "id: custom_x\n", "document: not a platform definition (JSON)"},
		{"bad regexp", `{"schema":"backupd.platform/v1","id":"custom_x","name":"X","prompt":"([>#]$","default_commands":["show"]}`,
			"prompt: not a valid regular expression (Go RE2 syntax): missing closing )"},
		{"built-in id", `{"schema":"backupd.platform/v1","id":"cisco_ios","name":"X","prompt":"#$","default_commands":["show"]}`,
			"id: a built-in platform has this ID."},
	} {
		b.get("/platforms")
		p := b.uploadPlatform(c.name+".json", c.body, nil)
		expect(t, c.name, p, http.StatusUnprocessableEntity, "")
		expectBody(t, c.name, p, html.EscapeString(c.want))
	}
	b.get("/platforms/new")
	bad := platformForm("custom_bad")
	bad.Set("prompt", `.*`)
	bad.Set("noise", "(unclosed")
	p = b.post("/platforms", bad)
	expect(t, "bad form", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad form", p, "prompt: matches an empty line", "noise[0]: not a valid regular expression", `value="custom_bad"`)
	if _, err := e.store.GetCustomPlatform(ctx, "custom_bad"); err == nil {
		t.Fatal("a bad definition was stored")
	}

	// A device of the custom platform, created through the device form.
	b.get("/devices/new")
	p = b.post("/devices", url.Values{"name": {"acme-1"}, "host": {"192.0.2.50"}, "platform": {"custom_acme_os"},
		"login_method": {"ssh"}, "port": {"22"}, "encoding": {"utf-8"}, "enabled": {"1"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("device form with a custom platform: %d\n%s", p.status, p.body)
	}
	b.get("/platforms/custom_acme_os")
	p = b.post("/platforms/custom_acme_os/delete", nil)
	expect(t, "delete used", p, http.StatusConflict, "")
	expectBody(t, "delete used", p, "The platform custom_acme_os is used by 1 device(s) and 0 template(s)")
	if _, ok := driver.Lookup("custom_acme_os"); !ok {
		t.Fatal("a refused delete removed the platform from the registry")
	}
	b.get("/platforms/custom_acme_two")
	expect(t, "delete", b.post("/platforms/custom_acme_two/delete", nil), http.StatusSeeOther, "/platforms?notice=deleted")
	if _, ok := driver.Lookup("custom_acme_two"); ok {
		t.Fatal("deleted platform still in the registry")
	}
	want := []string{"platform.create", "platform.update", "platform.import", "platform.import", "platform.import", "platform.delete"}
	if got := platformActions(e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audit %v, want %v", got, want)
	}
	// A platform another process stored (backupd platform import) is
	// loaded when the page is opened.
	cliDoc := strings.Replace(exp.body, "custom_huawei_vrp", "custom_from_cli", 1)
	if _, err := e.store.CreateCustomPlatform(ctx, "custom_from_cli", cliDoc); err != nil {
		t.Fatal(err)
	}
	expectBody(t, "list after a CLI import", b.get("/platforms"), `href="/platforms/custom_from_cli"`)
	if _, ok := driver.Lookup("custom_from_cli"); !ok {
		t.Error("opening the page did not load the stored platform")
	}
	expect(t, "unknown platform", b.get("/platforms/custom_nothing"), http.StatusNotFound, "")
	expect(t, "not a custom id", b.get("/platforms/..%2fetc"), http.StatusNotFound, "")
}

// Every change needs the session's CSRF token and settings.update;
// looking needs settings.view.
func TestPlatformsPermissions(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	b := adminBrowser(t, e)
	b.get("/platforms/new")
	expect(t, "create", b.post("/platforms", platformForm("custom_acme_os")), http.StatusSeeOther, "")

	b.get("/platforms")
	posts := []string{"/platforms", "/platforms/custom_acme_os", "/platforms/custom_acme_os/delete", "/platforms/import"}
	for _, path := range posts {
		f := platformForm("custom_other")
		f.Set("csrf", "")
		expect(t, path+" without token", b.post(path, f), http.StatusForbidden, "")
	}

	e.createUser("op", "op-password-12", auth.RoleOperator, true) // settings.view only
	op := e.browser()
	op.mustLogin("op", "op-password-12")
	p := op.get("/platforms")
	expect(t, "operator looks", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="platform-new"`) || strings.Contains(p.body, `id="platform-import-form"`) {
		t.Errorf("operator is offered changes")
	}
	p = op.get("/platforms/custom_acme_os")
	expect(t, "operator detail", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="platform-test-submit"`) || strings.Contains(p.body, `id="platform-delete"`) {
		t.Errorf("operator is offered test or delete")
	}
	expect(t, "operator export", op.get("/platforms/custom_acme_os/export"), http.StatusOK, "")
	for _, path := range posts {
		f := platformForm("custom_other")
		f.Set("action", "test")
		expect(t, "operator posts "+path, op.post(path, f), http.StatusForbidden, "")
	}
	expect(t, "operator new form", op.get("/platforms/new"), http.StatusForbidden, "")

	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	expect(t, "viewer", v.get("/platforms"), http.StatusForbidden, "")
	expect(t, "viewer export", v.get("/platforms/custom_acme_os/export"), http.StatusForbidden, "")
	if p := v.get("/jobs"); strings.Contains(p.body, `href="/platforms"`) {
		t.Errorf("viewer sees the Platforms entry")
	}
	if pl, _ := driver.Lookup("custom_acme_os"); pl.Name != "Acme OS" {
		t.Fatalf("platform changed without permission: %+v", pl)
	}
	if _, ok := driver.Lookup("custom_other"); ok {
		t.Fatal("a platform was created without permission")
	}
}

const (
	simPassword = "Sim-L0gin-pw"
	simEnable   = "Sim-En4ble-pw"
)

// platformSim starts a simulated Cisco IOS device with an enable
// password on SSH and telnet.
func platformSim(t *testing.T) *devsim.Device {
	t.Helper()
	d, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "acme-lab", Username: "netops",
		Password: simPassword, EnablePassword: simEnable, SSHAddr: "127.0.0.1:0", TelnetAddr: "127.0.0.1:0", Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Test against a device runs a real session with the unsaved form, over
// SSH and telnet, typed in or with a stored device's login, and shows
// the configuration and a transcript without the passwords. Nothing is
// stored; failures are explained on the page.
func TestPlatformsTestAgainstDevice(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	ctx := context.Background()
	sim := platformSim(t)
	b := adminBrowser(t, e)

	check := func(what string, p page) {
		t.Helper()
		expect(t, what, p, http.StatusOK, "")
		expectBody(t, what, p, `id="platform-test-ok"`, "hostname acme-lab", `id="platform-test-transcript"`,
			`<span class="platform-seg platform-seg-sent">`, "show running-config", "********", "The definition was not saved.")
		for _, secret := range []string{simPassword, simEnable} {
			if strings.Contains(p.body, secret) {
				t.Fatalf("%s: the page shows a password", what)
			}
		}
		captured := p.body[strings.Index(p.body, `id="platform-test-text"`):]
		captured = captured[:strings.Index(captured, "</pre>")]
		if !strings.Contains(captured, "hostname acme-lab") || strings.Contains(captured, "Building configuration...") {
			t.Errorf("%s: the cleanup rule was not applied to the captured text", what)
		}
	}
	for _, method := range []string{"ssh", "telnet"} {
		addr := sim.SSHAddr()
		if method == "telnet" {
			addr = sim.TelnetAddr()
		}
		_, port, _ := net.SplitHostPort(addr)
		b.get("/platforms/new")
		f := platformForm("") // no ID yet: a test does not need one
		f.Set("action", "test")
		f.Set("target_host", "127.0.0.1")
		f.Set("target_port", port)
		f.Set("target_method", method)
		f.Set("target_username", "netops")
		f.Set("target_password", simPassword)
		f.Set("target_enable_password", simEnable)
		check(method, b.post("/platforms", f))
	}

	// A stored device: its address, transport and credential.
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "lab", Username: "netops",
		Password:       e.sealer.Seal(simPassword, secret.PurposePassword),
		EnablePassword: e.sealer.Seal(simEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(sim.TelnetAddr())
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "lab-telnet", Host: "127.0.0.1", Port: atoiT(t, port), Platform: "cisco_ios",
		LoginMethod: "telnet", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	p := b.get("/platforms/new")
	expectBody(t, "device choice", p, `<option value="`+itoa(dev.ID)+`">lab-telnet</option>`)
	f := platformForm("custom_acme_os")
	f.Set("action", "test")
	f.Set("target_device", itoa(dev.ID))
	check("stored device", b.post("/platforms", f))

	// Failures are shown on the form, never a server error.
	_, sshPort, _ := net.SplitHostPort(sim.SSHAddr())
	for _, c := range []struct {
		name   string
		change url.Values
		status int
		want   string
	}{
		{"no target", url.Values{}, http.StatusUnprocessableEntity, "Choose a device or type an address"},
		{"bad host", url.Values{"target_host": {"http://x y"}}, http.StatusUnprocessableEntity, "The host is not an IP address"},
		{"bad port", url.Values{"target_host": {"127.0.0.1"}, "target_port": {"99999"}}, http.StatusUnprocessableEntity, "The port must be a number"},
		{"bad definition", url.Values{"target_host": {"127.0.0.1"}, "prompt": {"(("}}, http.StatusUnprocessableEntity, "prompt: not a valid regular expression"},
		{"unknown device", url.Values{"target_device": {"9999"}}, http.StatusUnprocessableEntity, "That device does not exist"},
		{"wrong password", url.Values{"target_host": {"127.0.0.1"}, "target_port": {sshPort}, "target_username": {"netops"},
			"target_password": {"Wrong-pw-123"}}, http.StatusOK, "authentication failed"},
	} {
		b.get("/platforms/new")
		f := platformForm("custom_acme_os")
		f.Set("action", "test")
		for k, v := range c.change {
			f[k] = v
		}
		p := b.post("/platforms", f)
		expect(t, c.name, p, c.status, "")
		expectBody(t, c.name, p, c.want)
		if strings.Contains(p.body, "Wrong-pw-123") || strings.Contains(p.body, simPassword) {
			t.Fatalf("%s: the page shows a password", c.name)
		}
	}
	if list, _ := e.store.ListCustomPlatforms(ctx); len(list) != 0 {
		t.Fatalf("a test stored a platform: %+v", list)
	}
	if _, ok := driver.Lookup("custom_acme_os"); ok {
		t.Fatal("a test installed a platform")
	}
	tests := 0
	for _, a := range platformActions(e) {
		if a == "platform.test" {
			tests++
		}
	}
	if tests != 4 { // the three sessions that ran, the failed login
		t.Errorf("%d platform.test audit entries, want 4", tests)
	}
}

// A device of an operator's group only: another group's device cannot
// be tested against, and without backups.create no stored device can.
func TestPlatformsTestDeviceScope(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	g1, _ := e.store.CreateGroup(ctx, "mine", nil)
	g2, _ := e.store.CreateGroup(ctx, "theirs", nil)
	other, err := e.store.CreateDevice(ctx, db.Device{Name: "other", Host: "127.0.0.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &g2.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// A role with settings.update and backups.create, scoped to one group.
	role, err := e.store.CreateRole(ctx, "platforms", "", []string{"settings.view", "settings.update", "backups.create", "devices.view"})
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := auth.HashPassword("scoped-password-1")
	if _, err := e.store.CreateUser(ctx, db.NewUser{Username: "scoped", PasswordHash: hash, RoleIDs: []int64{role}, GroupIDs: []int64{g1.ID}}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.mustLogin("scoped", "scoped-password-1")
	p := b.get("/platforms/new")
	if strings.Contains(p.body, ">other</option>") {
		t.Error("a device of another group is offered")
	}
	f := platformForm("custom_acme_os")
	f.Set("action", "test")
	f.Set("target_device", itoa(other.ID))
	p = b.post("/platforms", f)
	expect(t, "other group's device", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "other group's device", p, "That device does not exist or is not in your device groups.")

	// A device of a remote zone is reached by its collector, not from here.
	zone, err := e.store.CreateZone(ctx, "far")
	if err != nil {
		t.Fatal(err)
	}
	far, err := e.store.CreateDevice(ctx, db.Device{Name: "far", Host: "127.0.0.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &g1.ID, Encoding: "utf-8", Enabled: true, ZoneID: zone.ID})
	if err != nil {
		t.Fatal(err)
	}
	b.get("/platforms/new")
	f.Set("target_device", itoa(far.ID))
	p = b.post("/platforms", f)
	expect(t, "remote zone's device", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "remote zone's device", p, "That device is in a remote zone")
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// The device CSV import takes a custom platform's ID, and refuses one
// that no platform has.
func TestPlatformsCSVImport(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	b := adminBrowser(t, e)
	b.get("/platforms/new")
	expect(t, "create", b.post("/platforms", platformForm("custom_acme_os")), http.StatusSeeOther, "")

	p := b.get("/devices/import")
	expectBody(t, "accepted platforms", p, "<code>custom_acme_os</code> Acme OS")
	p = b.uploadDevicesCSV("bad.csv", "name,host,platform\nx,192.0.2.9,custom_nothing\n", "")
	expect(t, "unknown custom platform", p, http.StatusUnprocessableEntity, "")
	b.get("/devices/import")
	p = b.uploadDevicesCSV("acme.csv", "name,host,platform,login_method\nacme-1,192.0.2.7,custom_acme_os,telnet\nacme-2,192.0.2.8,custom_acme_os,ssh\n", "")
	if p.status != http.StatusSeeOther {
		t.Fatalf("import with a custom platform: %d\n%s", p.status, p.body)
	}
	list, _, err := e.store.ListDevices(context.Background(), db.Scope{All: true}, db.DeviceFilter{Platform: "custom_acme_os"}, 10, 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("devices of the custom platform: %+v %v", list, err)
	}
	p = b.get("/devices?platform=custom_acme_os")
	expectBody(t, "device list filter", p, "acme-1", "acme-2")
}

// The list of platforms gives the built-ins' notes in the page's
// language.
func TestPlatformNotesInChinese(t *testing.T) {
	e := newEnv(t)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	b.header.Set("Accept-Language", "zh-CN")
	p := b.get("/platforms")
	expectBody(t, "platforms in Chinese", p, "密码以哈希形式显示（service password-encryption）")
	if strings.Contains(p.body, "Passwords are shown hashed (service password-encryption)") {
		t.Error("the Chinese page shows the English note too")
	}
	b.header.Del("Accept-Language")
	expectBody(t, "platforms in English", b.get("/platforms"), "Passwords are shown hashed (service password-encryption)")
}
