package ui_test

import (
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
)

// restoringDefinition is an IOS-like custom platform that restores with
// configure replace, every restore field set.
func restoringDefinition(id string) platforms.Definition {
	return platforms.Definition{
		Schema: platforms.Schema, ID: id, Name: "Acme XE", Vendor: "Acme",
		Prompt: `^[\w.-]{1,60}[>#]$`, PagingOff: []string{"terminal length 0"}, CommandError: `^% ?Invalid`,
		DefaultCommands: []string{"show running-config"},
		Restore: &platforms.Restore{
			Method:         "ios_configure_replace",
			ConfigEnter:    []string{"configure terminal"},
			ConfigExit:     []string{"end"},
			Save:           []string{"write memory", "copy running-config nvram:backup"},
			ApplyError:     `[Rr]ollback aborted|^% Invalid input|^%Error`,
			ConfirmMinutes: &platforms.ConfirmMinutes{Default: 7, Min: 2, Max: 90},
			File:           "bootflash:acme-restore.cfg",
			Drop:           []string{`^Building configuration\.\.\.$`, `^Current configuration : \d+ bytes$`},
		},
	}
}

var (
	formInput    = regexp.MustCompile(`<input\b[^>]*>`)
	formTextarea = regexp.MustCompile(`(?s)<textarea\b([^>]*)>(.*?)</textarea>`)
	formSelect   = regexp.MustCompile(`(?s)<select\b([^>]*)>(.*?)</select>`)
	formOption   = regexp.MustCompile(`<option\b([^>]*)>`)
	formAttr     = regexp.MustCompile(`([\w-]+)(?:="([^"]*)")?`)
)

// attrs reads the attributes of a tag.
func attrs(tag string) map[string]string {
	out := map[string]string{}
	for _, m := range formAttr.FindAllStringSubmatch(tag, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

// formValues is what a browser without scripts sends for the form with
// id on page: its inputs, ticked boxes, textareas and chosen options.
func formValues(t *testing.T, body, id string) url.Values {
	t.Helper()
	start := strings.Index(body, `id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no form %s", id)
	}
	body = body[start:]
	body = body[:strings.Index(body, "</form>")]
	v := url.Values{}
	for _, tag := range formInput.FindAllString(body, -1) {
		a := attrs(strings.TrimPrefix(tag, "<input"))
		if a["name"] == "" || (a["type"] == "checkbox" && !strings.Contains(tag, " checked")) {
			continue
		}
		v.Add(a["name"], a["value"])
	}
	for _, m := range formTextarea.FindAllStringSubmatch(body, -1) {
		v.Add(attrs(m[1])["name"], html.UnescapeString(m[2]))
	}
	for _, m := range formSelect.FindAllStringSubmatch(body, -1) {
		chosen := ""
		for i, o := range formOption.FindAllStringSubmatch(m[2], -1) {
			a := attrs(o[1])
			if _, sel := a["selected"]; sel || i == 0 {
				chosen = a["value"]
			}
		}
		v.Set(attrs(m[1])["name"], chosen)
	}
	return v
}

// exported reads a stored platform's definition through its export.
func exported(t *testing.T, b *browser, id string) platforms.Definition {
	t.Helper()
	p := b.get("/platforms/" + id + "/export")
	expect(t, "export "+id, p, http.StatusOK, "")
	var d platforms.Definition
	if err := json.Unmarshal([]byte(p.body), &d); err != nil {
		t.Fatalf("export of %s: %v\n%s", id, err, p.body)
	}
	return d
}

// A definition imported with a restore declaration shows it in the form
// and keeps it, field for field, when the form is saved as it is; the
// lists show each platform's method; choosing "not supported" removes
// it; a field the chosen method does not read is left out.
func TestPlatformRestoreFormRoundTrip(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	b := adminBrowser(t, e)

	want := restoringDefinition("custom_acme_xe")
	b.get("/platforms")
	p := b.uploadPlatform("acme.json", string(platforms.Marshal(want)), nil)
	expect(t, "import", p, http.StatusSeeOther, "/platforms/custom_acme_xe?notice=imported")

	p = b.get("/platforms/custom_acme_xe")
	expect(t, "detail", p, http.StatusOK, "")
	expectBody(t, "detail", p, `id="platform-restore"`,
		`<option value="ios_configure_replace" data-timer data-file selected>ios_configure_replace: a file copied over SCP`,
		`value="bootflash:acme-restore.cfg"`, `name="restore_confirm_default" type="text" inputmode="numeric" pattern="[0-9]{1,5}" maxlength="5" value="7"`)
	form := formValues(t, p.body, "platform-form")
	if form.Get("restore_method") != "ios_configure_replace" || form.Get("restore_save") != "write memory\ncopy running-config nvram:backup" {
		t.Fatalf("the form does not hold the restore declaration: %v", form)
	}
	form.Set("action", "save")
	expect(t, "save as shown", b.post("/platforms/custom_acme_xe", form), http.StatusSeeOther, "/platforms/custom_acme_xe?notice=updated")
	if got := exported(t, b, "custom_acme_xe"); !reflect.DeepEqual(got.Restore, want.Restore) {
		t.Fatalf("the form lost part of the restore declaration:\n got %+v\nwant %+v", got.Restore, want.Restore)
	}
	pl, _ := driver.Lookup("custom_acme_xe")
	if pl.Restore.Method != "ios_configure_replace" || pl.Restore.File != "bootflash:acme-restore.cfg" || pl.Restore.Timer.Default.Minutes() != 7 {
		t.Fatalf("registry after the save: %+v", pl.Restore)
	}

	// The lists name the method of each platform, built-in and custom.
	p = b.get("/platforms")
	expectBody(t, "list", p, `<td class="platform-restore"><code>ios_configure_replace</code></td>`,
		`<td class="platform-restore"><code>frr_vtysh</code></td>`, `<span class="muted">not supported</span>`)

	// Another method: the file and the timer, which frr_vtysh does not
	// read, are left out, as the page's script would leave them out.
	b.get("/platforms/custom_acme_xe")
	form.Set("restore_method", "frr_vtysh")
	form.Set("restore_apply_error", `\S`)
	expect(t, "frr_vtysh", b.post("/platforms/custom_acme_xe", form), http.StatusSeeOther, "")
	got := exported(t, b, "custom_acme_xe").Restore
	if got == nil || got.Method != "frr_vtysh" || got.File != "" || got.ConfirmMinutes != nil || len(got.Save) != 2 {
		t.Fatalf("after choosing frr_vtysh: %+v", got)
	}

	// Not supported: no restore at all.
	b.get("/platforms/custom_acme_xe")
	form.Set("restore_method", "")
	expect(t, "not supported", b.post("/platforms/custom_acme_xe", form), http.StatusSeeOther, "")
	if d := exported(t, b, "custom_acme_xe"); d.Restore != nil {
		t.Fatalf("not supported kept %+v", d.Restore)
	}
	if pl, _ := driver.Lookup("custom_acme_xe"); pl.CanRestore() {
		t.Fatal("the registry's platform still restores")
	}
	expectBody(t, "detail not supported", b.get("/platforms/custom_acme_xe"), `<option value="">Not supported (this platform cannot restore)</option>`)

	// A built-in's export, started from on the form, brings its method.
	p = b.get("/platforms/new?from=juniper_junos")
	expectBody(t, "start from Junos", p, `<option value="junos_commit_confirmed" data-timer selected>`, `>configure exclusive</textarea>`)
}

func driverMethodIDs() []string {
	var ids []string
	for _, m := range driver.RestoreMethods {
		ids = append(ids, m.ID)
	}
	return ids
}

// restoreForm is platformForm with a restore section.
func restoreForm(id string, restore map[string]string) url.Values {
	f := platformForm(id)
	for k, v := range restore {
		f.Set(k, v)
	}
	return f
}

// Bad restore fields are explained by name, in English and Chinese, and
// nothing is stored; a change without the CSRF token is refused.
func TestPlatformRestoreFormErrors(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	b := adminBrowser(t, e)

	bad := map[string]string{
		"restore_method": "ios_configure_replace", "restore_apply_error": `^\s*$`, "restore_save": "write memory",
		"restore_confirm_default": "5", "restore_confirm_min": "0", "restore_confirm_max": "70000",
		"restore_file": "flash:my restore.cfg", "restore_drop": "(unclosed",
	}
	for _, c := range []struct {
		lang string
		want []string
	}{
		{"en", []string{
			"restore.apply_error: matches an empty line",
			"restore.confirm_minutes.min: out of range (1 ≤ min ≤ default).",
			"restore.confirm_minutes.max: out of range (default ≤ max ≤ 65535).",
			"restore.file: must be one path without spaces",
			"restore.drop[0]: not a valid regular expression",
		}},
		{"zh-CN", []string{
			"restore.apply_error：会匹配空行",
			"restore.confirm_minutes.min：超出范围（1 ≤ min ≤ default）。",
			"restore.confirm_minutes.max：超出范围（default ≤ max ≤ 65535）。",
			"restore.file：必须是一个不含空格的路径",
			"restore.drop[0]：不是有效的正则表达式",
			"还原方式",
		}},
	} {
		b.header.Set("Accept-Language", c.lang)
		b.get("/platforms/new")
		p := b.post("/platforms", restoreForm("custom_bad", bad))
		expect(t, c.lang+" bad restore", p, http.StatusUnprocessableEntity, "")
		for _, w := range c.want {
			expectBody(t, c.lang+" bad restore", p, html.EscapeString(w))
		}
		if strings.Contains(p.body, "恢复") {
			t.Errorf("%s: the page says 恢复; restore is 还原", c.lang)
		}
		// The form keeps what was typed.
		expectBody(t, c.lang+" kept", p, `value="flash:my restore.cfg"`, `<option value="ios_configure_replace" data-timer data-file selected>`)

		b.get("/platforms/new")
		p = b.post("/platforms", restoreForm("custom_bad", map[string]string{"restore_method": "paste_lines", "restore_apply_error": "^%"}))
		expect(t, c.lang+" unknown method", p, http.StatusUnprocessableEntity, "")
		msg := map[string]string{"en": "restore.method: not a restore method; use one of ", "zh-CN": "restore.method：不是还原方式；请使用以下之一："}[c.lang]
		expectBody(t, c.lang+" unknown method", p, html.EscapeString(msg)+strings.Join(driverMethodIDs(), ", "),
			`<option value="paste_lines" data-timer data-file selected>paste_lines</option>`)

		b.get("/platforms/new")
		p = b.post("/platforms", restoreForm("custom_bad", map[string]string{"restore_method": "junos_commit_confirmed",
			"restore_apply_error": "error:", "restore_confirm_default": "five", "restore_confirm_min": "1", "restore_confirm_max": "9"}))
		expect(t, c.lang+" not a number", p, http.StatusUnprocessableEntity, "")
		msg = map[string]string{"en": "restore.confirm_minutes.default: not a whole number.", "zh-CN": "restore.confirm_minutes.default：不是整数。"}[c.lang]
		expectBody(t, c.lang+" not a number", p, msg)

		b.get("/platforms/new")
		p = b.post("/platforms", restoreForm("custom_bad", map[string]string{"restore_method": "junos_commit_confirmed", "restore_apply_error": "error:"}))
		expect(t, c.lang+" no timer", p, http.StatusUnprocessableEntity, "")
		msg = map[string]string{"en": "restore.confirm_minutes: required.", "zh-CN": "restore.confirm_minutes：必填。"}[c.lang]
		expectBody(t, c.lang+" no timer", p, msg)
	}
	b.header.Del("Accept-Language")
	if _, ok := driver.Lookup("custom_bad"); ok {
		t.Fatal("a bad restore declaration was stored")
	}

	// The CSRF token guards the restore section as the rest of the form.
	good := map[string]string{"restore_method": "frr_vtysh", "restore_apply_error": `\S`, "restore_save": "write memory"}
	b.get("/platforms/new")
	f := restoreForm("custom_frr_like", good)
	f.Set("csrf", "")
	expect(t, "create without token", b.post("/platforms", f), http.StatusForbidden, "")
	if _, ok := driver.Lookup("custom_frr_like"); ok {
		t.Fatal("created without the token")
	}
	b.get("/platforms/new")
	expect(t, "create", b.post("/platforms", restoreForm("custom_frr_like", good)), http.StatusSeeOther, "/platforms/custom_frr_like?notice=created")
	b.get("/platforms/custom_frr_like")
	f = restoreForm("custom_frr_like", map[string]string{"restore_method": ""})
	f.Set("csrf", "wrong-token")
	expect(t, "drop restore with a wrong token", b.post("/platforms/custom_frr_like", f), http.StatusForbidden, "")
	if pl, _ := driver.Lookup("custom_frr_like"); pl.Restore.Method != "frr_vtysh" || pl.Restore.Save[0] != "write memory" {
		t.Fatalf("a refused post changed the restore: %+v", pl.Restore)
	}
}

// "Test against a device" only reads: the form's restore section, even a
// broken one, neither stops the test nor sends a line of configuration.
func TestPlatformTestIgnoresRestore(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	sim := platformSim(t)
	b := adminBrowser(t, e)
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	b.get("/platforms/new")
	f := restoreForm("custom_acme_os", map[string]string{
		"restore_method": "ios_configure_replace", "restore_apply_error": "((", "restore_save": "write memory",
		"restore_confirm_default": "5", "restore_confirm_min": "1", "restore_confirm_max": "120", "restore_file": "flash:r.cfg",
		"action": "test", "target_host": "127.0.0.1", "target_port": port, "target_method": "ssh",
		"target_username": "netops", "target_password": simPassword, "target_enable_password": simEnable,
	})
	p := b.post("/platforms", f)
	expect(t, "test", p, http.StatusOK, "")
	expectBody(t, "test", p, `id="platform-test-ok"`, "hostname acme-lab")
	transcript := p.body[strings.Index(p.body, `id="platform-test-transcript"`):]
	transcript = transcript[:strings.Index(transcript, "</pre>")]
	for _, sent := range []string{"configure", "write memory", "copy "} {
		if strings.Contains(transcript, sent) {
			t.Errorf("the test sent %q to the device", sent)
		}
	}
	if strings.Contains(p.body, "restore.apply_error") {
		t.Error("the test checked the restore section")
	}
	// The form still shows the section as typed, for the save after.
	expectBody(t, "kept", p, `value="flash:r.cfg"`, `value="(("`)
}
