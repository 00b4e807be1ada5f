package ui_test

import (
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/db"
	"backupd/internal/dbtest"
)

// The secrets of a test configuration, each in a form the Cisco rules
// mask, and the community its next version rotates to.
const (
	uiEnable    = "$9$uiSaltSalt0$uiEnableHashValue0123456789"
	uiCommunity = "UiC0mmunityOld"
	uiRotated   = "UiC0mmunityNew"
	uiUserPw    = "0822455D0A16"
)

func uiConfig(community string) string {
	return "hostname core-r1\n!\nenable secret 9 " + uiEnable + "\nusername noc privilege 5 password 7 " + uiUserPw +
		"\n!\ninterface Gi0/1\n description uplink\n!\nsnmp-server community " + community + " RO 99\nsnmp-server location rack 4\n!\nend\n"
}

var uiMarker = regexp.MustCompile(`&lt;secret:([0-9a-f]{6})&gt;`)

// secretsFixture is a device with two versions (the community rotated)
// and a failed attempt whose session log printed the configuration.
type secretsFixture struct {
	f        *detailFleet
	old, cur db.Backup
	failed   db.Backup
}

func newSecretsFixture(t *testing.T, e *env) secretsFixture {
	t.Helper()
	f := newDetailFleet(t, e)
	s := secretsFixture{f: f}
	s.old = f.version(t, e, f.coreDev, 2*time.Hour, uiConfig(uiCommunity), true, "")
	s.cur = f.version(t, e, f.coreDev, time.Hour, uiConfig(uiRotated), true, "")
	s.failed = f.version(t, e, f.coreDev, 30*time.Minute, "", false, "timeout")
	segs, _ := json.Marshal([]map[string]string{{"kind": "received", "text": "core-r1#show running-config\n" + uiConfig(uiRotated)}})
	if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(),
		`INSERT INTO backup_logs (backup_id, segments, truncated) VALUES (?, ?, 0)`, s.failed.ID, string(segs)); err != nil {
		t.Fatal(err)
	}
	return s
}

// pages are every page that shows the device's configuration text.
func (s secretsFixture) pages() map[string]string {
	d := devicePath(s.f.coreDev)
	return map[string]string{
		"version":  d + "/versions/" + s.cur.ID,
		"raw":      d + "/versions/" + s.cur.ID + "/raw",
		"download": d + "/versions/" + s.cur.ID + "/raw?download=1",
		"diff":     d + "/diff?" + url.Values{"from": {s.old.ID}, "to": {s.cur.ID}}.Encode(),
		"diff raw": d + "/diff/raw?" + url.Values{"from": {s.old.ID}, "to": {s.cur.ID}}.Encode(),
		"lines":    "/api" + d + "/versions/" + s.cur.ID + "/lines?start=1&count=50",
		"log":      d + "/versions/" + s.failed.ID + "/log",
		"search":   "/search?" + url.Values{"q": {"snmp-server community"}, "context": {"2"}}.Encode(),
	}
}

// shown is a page's text as read: without the diff's character marks,
// and JSON's escapes of < and > undone.
func shown(body string) string {
	r := strings.NewReplacer(`<mark class="diff-char">`, "", "</mark>", "", `\u003c`, "&lt;", `\u003e`, "&gt;")
	return r.Replace(body)
}

func holdsSecret(body string) string {
	body = shown(body)
	for _, s := range []string{uiEnable, uiCommunity, uiRotated, uiUserPw, "uiSaltSalt0", "uiEnableHashValue"} {
		if strings.Contains(body, s) || strings.Contains(body, html.EscapeString(s)) {
			return s
		}
	}
	return ""
}

// A viewer sees every configuration page with its secrets masked, cannot
// ask for them, and finds nothing searching for one; a rotation shows as
// a changed line with another tag.
func TestSecretsMaskedForViewers(t *testing.T) {
	e := newEnv(t)
	s := newSecretsFixture(t, e)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")
	for name, path := range s.pages() {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, p.status, p.body)
		}
		if leaked := holdsSecret(p.body); leaked != "" {
			t.Errorf("%s shows the secret %q", name, leaked)
		}
		if !strings.Contains(shown(p.body), "<secret:") && !strings.Contains(shown(p.body), "&lt;secret:") {
			t.Errorf("%s shows no marker:\n%s", name, p.body)
		}
		if strings.Contains(p.body, `id="secrets-reveal"`) {
			t.Errorf("%s offers a viewer to reveal secrets", name)
		}
		if q := b.get(withReveal(path)); q.status != http.StatusForbidden || holdsSecret(q.body) != "" {
			t.Errorf("%s with reveal: %d, secret %q", name, q.status, holdsSecret(q.body))
		}
	}
	p := b.get(s.pages()["diff"])
	expectBody(t, "diff", p, `id="secrets-bar"`)
	var tags []string
	for _, m := range uiMarker.FindAllStringSubmatch(shown(p.body), -1) {
		tags = append(tags, m[1])
	}
	// The diff shows the community's old and new lines with two tags.
	if !strings.Contains(p.body, "diff-del") || len(distinct(tags)) < 2 {
		t.Errorf("the rotated community shows no changed tag: %v", tags)
	}
	for _, q := range []string{uiRotated, uiEnable[:12], uiUserPw} {
		p := b.get("/search?" + url.Values{"q": {q}}.Encode())
		if p.status != http.StatusOK || strings.Contains(p.body, `id="search-summary"`) {
			t.Errorf("searching %q finds a masked secret: %d", q, p.status)
		}
	}
	if n := countAudit(e, "config.reveal"); n != 0 {
		t.Errorf("%d reveals audited for a viewer", n)
	}
}

// An administrator sees the same masked pages, offered a reveal; the
// revealed page shows the text and is audited. With masking off for
// views, everyone sees the stored text.
func TestSecretsRevealedAndAudited(t *testing.T) {
	e := newEnv(t)
	s := newSecretsFixture(t, e)
	admin := adminBrowser(t, e)
	version := s.pages()["version"]
	p := admin.get(version)
	expectBody(t, "admin version", p, `id="secrets-reveal"`)
	if leaked := holdsSecret(p.body); leaked != "" {
		t.Fatalf("the admin's page shows %q before a reveal", leaked)
	}
	for name, path := range s.pages() {
		p := admin.get(withReveal(path))
		if p.status != http.StatusOK {
			t.Fatalf("%s revealed: %d", name, p.status)
		}
		if name != "log" && name != "search" && holdsSecret(p.body) == "" {
			t.Errorf("%s revealed shows no secret", name)
		}
	}
	if n := countAudit(e, "config.reveal"); n != len(s.pages()) {
		t.Errorf("%d reveals audited, want %d", n, len(s.pages()))
	}
	entry := lastAudit(t, e, "config.reveal")
	if entry.Username != "root" || strings.Contains(string(mustJSON(t, entry.Details)), uiRotated) {
		t.Errorf("reveal audit entry %+v", entry)
	}

	if err := e.store.PutSetting(context.Background(), db.SettingSecretMasking, db.SecretMasking{Git: true}); err != nil {
		t.Fatal(err)
	}
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	if p := v.get(version); holdsSecret(p.body) == "" || strings.Contains(p.body, `id="secrets-bar"`) {
		t.Errorf("with masking off for views the page still masks")
	}
}

func withReveal(path string) string {
	if strings.Contains(path, "?") {
		return path + "&reveal=1"
	}
	return path + "?reveal=1"
}

func distinct(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func countAudit(e *env, action string) int {
	n := 0
	for _, a := range e.auditEntries() {
		if a.Action == action {
			n++
		}
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The settings page saves where secrets are masked (audited), for those
// who may change settings; the report counts what each rule masked in
// the latest versions, and names no secret.
func TestSecretsSettingsAndReport(t *testing.T) {
	e := newEnv(t)
	newSecretsFixture(t, e)
	admin := adminBrowser(t, e)
	p := admin.get("/settings")
	expectBody(t, "settings", p, `id="secrets-form"`, `id="secrets-git" name="git" type="checkbox" value="1" checked`,
		`id="secrets-api" name="api" type="checkbox" value="1" aria-describedby`)
	p = admin.post("/settings/secrets", url.Values{"git": {"1"}, "api": {"1"}})
	if p.status != http.StatusSeeOther && p.status != http.StatusOK {
		t.Fatalf("save: %d %s", p.status, p.body)
	}
	m, err := e.store.SecretMaskingSettings(context.Background())
	if err != nil || m != (db.SecretMasking{Git: true, API: true}) {
		t.Fatalf("saved %+v, %v", m, err)
	}
	if a := lastAudit(t, e, "settings.update"); a.TargetID != db.SettingSecretMasking {
		t.Errorf("audit %+v", a)
	}

	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)
	op := e.browser()
	op.mustLogin("operator", "operator-password-1")
	op.get("/settings")
	if p := op.post("/settings/secrets", url.Values{"views": {"1"}}); p.status != http.StatusForbidden {
		t.Errorf("an operator saved masking: %d", p.status)
	}
	r := op.get("/settings/secrets")
	expectBody(t, "report", r, "Secrets masked in your fleet", `id="secrets-cisco_ios"`, "SNMP community", "Secrets masked in 1 of 1 devices")
	if leaked := holdsSecret(r.body); leaked != "" {
		t.Errorf("the report shows %q", leaked)
	}
	op.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "report zh", op.get("/settings/secrets"), "设备配置中被遮盖的密钥")
}

// A custom platform's secret rules are typed one a line, name first;
// saved, they mask its devices' configurations; a line without a name,
// or an expression without its secret group, is refused with the line.
func TestCustomPlatformSecretRules(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	b.get("/platforms/new")
	form := platformForm("custom_acme_os")
	form.Set("secrets", "^snmp community (?P<secret>\\S+)")
	expectBody(t, "no name", b.post("/platforms", form), "Secret rules, line 1: write a name")
	form.Set("secrets", "SNMP community: ^snmp community (\\S+)")
	expectBody(t, "no group", b.post("/platforms", form), "names no group “secret”")
	form.Set("secrets", "SNMP community: ^snmp community (?P<secret>\\S+)\nlicense: ^-----BEGIN LICENSE-----$ ... ^-----END LICENSE-----$")
	expect(t, "create", b.post("/platforms", form), http.StatusSeeOther, "")
	stored, err := e.store.GetCustomPlatform(context.Background(), "custom_acme_os")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "SNMP community"`, `"match": "^snmp community (?P\u003csecret\u003e\\S+)"`, `"begin": "^-----BEGIN LICENSE-----$"`} {
		if !strings.Contains(string(stored.Definition), want) {
			t.Errorf("stored definition lacks %s:\n%s", want, stored.Definition)
		}
	}
	expectBody(t, "edit form", b.get("/platforms/custom_acme_os"), "SNMP community: ^snmp community (?P&lt;secret&gt;\\S&#43;)\nlicense: ^-----BEGIN LICENSE-----$ ... ^-----END LICENSE-----$")
}

// A platform under test masks what the device prints with its own
// secret rules for an editor who may not reveal secrets; an
// administrator sees the text, and the audit entry says which.
func TestPlatformTestMasksSecrets(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	sim := platformSim(t)
	if _, err := e.store.CreateRole(context.Background(), "Platform editors", "", []string{"settings.view", "settings.update"}); err != nil {
		t.Fatal(err)
	}
	e.createUser("editor", "editor-password-1", "Platform editors", true)
	editor := e.browser()
	editor.mustLogin("editor", "editor-password-1")
	admin := adminBrowser(t, e)
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	form := platformForm("")
	form.Set("action", "test")
	form.Set("target_host", "127.0.0.1")
	form.Set("target_port", port)
	form.Set("target_method", "ssh")
	form.Set("target_username", "netops")
	form.Set("target_password", simPassword)
	form.Set("target_enable_password", simEnable)
	form.Set("secrets", "enable secret: ^enable secret (?:[0-9] )?(?P<secret>\\S+)\nsnmp: ^snmp-server community (?P<secret>\\S+)")
	secrets := sim.Secrets()
	count := func(body string) int {
		n := 0
		for _, s := range secrets {
			if strings.Contains(body, s) || strings.Contains(body, html.EscapeString(s)) {
				n++
			}
		}
		return n
	}
	editor.get("/platforms/new")
	p := editor.post("/platforms", form)
	expectBody(t, "editor's test", p, `id="platform-test-ok"`, "enable secret 9 &lt;secret:", "snmp-server community &lt;secret:")
	// The rules the form names mask their secrets; the others (a user's
	// password hash) are the form's own to add.
	if strings.Contains(p.body, "snmp-server community "+secrets[0]) || count(p.body) >= len(secrets) {
		t.Errorf("the editor sees %d of %d secrets", count(p.body), len(secrets))
	}
	if a := lastAudit(t, e, "platform.test"); a.Details["secrets_shown"] != false {
		t.Errorf("audit %+v", a.Details)
	}
	admin.get("/platforms/new")
	form.Del("csrf") // the editor's
	p = admin.post("/platforms", form)
	if !strings.Contains(p.body, `id="platform-test-ok"`) || strings.Contains(p.body, "&lt;secret:") {
		t.Errorf("the administrator's test output is masked")
	}
	if a := lastAudit(t, e, "platform.test"); a.Details["secrets_shown"] != true {
		t.Errorf("audit %+v", a.Details)
	}
}
