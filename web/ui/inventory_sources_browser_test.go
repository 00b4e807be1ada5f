package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestInventorySourcesInChromium adds a NetBox source through the form in
// a real browser under the CSP, runs a dry run and a sync from the list,
// and finds the devices the sync made; then the same pages in Chinese.
// Screenshots go to UI_SCREENSHOT_DIR when set.
func TestInventorySourcesInChromium(t *testing.T) {
	e := newEnv(t)
	nb := newFakeNetBox(t)
	b := newTab(t, e, 90*time.Second, 1280, 900)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b.login("root", "root-password-1")
	b.setLang("en")

	b.open("/settings")
	b.submit("open the inventory sources", "#insync-open")
	b.submit("add a source", "#insync-add")
	b.expectKindShown("a new source", "netbox", true)
	for _, k := range []string{"http", "librenms", "oxidized", "netbox"} {
		b.chooseValue("#insync-kind", k)
		b.expectKindShown("chose "+k, k, true)
	}
	b.typeIn("#insync-name", "netbox-par1")
	b.chooseValue("#insync-kind", "netbox")
	b.typeIn("#insync-token", insyncToken)
	b.typeIn("#nb-url", nb.srv.URL)
	b.typeIn("#insync-mapping", "acme-os = cisco_ios")
	b.shot("insync-form-en")
	b.submit("save the source", "#insync-save")
	if got := b.eval(`document.getElementById("insync-notice").textContent`); !strings.Contains(got, "was added") {
		t.Fatalf("after saving: notice %q", got)
	}
	if strings.Contains(b.shows(), insyncToken[:16]) {
		t.Fatal("the list shows the token")
	}
	id := sourceID(t, e, "netbox-par1")
	idS := itoa(id)
	b.shot("insync-list-en")

	b.submit("dry run", "#insync-dry-run-"+idS)
	dry := b.eval(`Array.from(document.querySelectorAll(".insync-line"), r => r.dataset.action + " " + r.dataset.name).join("\n")`)
	if !strings.Contains(dry, "create ") {
		t.Fatalf("dry run lines: %q", dry)
	}
	b.shot("insync-dry-run-en")
	b.submit("sync now from the report", "#insync-report-sync")
	real := b.eval(`Array.from(document.querySelectorAll(".insync-line"), r => r.dataset.action + " " + r.dataset.name).join("\n")`)
	if real != dry {
		t.Fatalf("the sync's lines differ from the dry run's:\n%s\n---\n%s", real, dry)
	}
	b.shot("insync-sync-en")
	name := strings.TrimPrefix(strings.Split(dry, "\n")[0], "create ")
	b.open("/devices")
	if !strings.Contains(b.shows(), name) {
		t.Fatalf("the devices page lacks %q", name)
	}

	// Without JavaScript the kind links lead to the form of a kind.
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable scripts: %v", err)
	}
	b.open("/settings/inventory-sources/new")
	b.expectKindShown("a new source without JavaScript", "netbox", false)
	b.submit("the HTTP JSON link", "#insync-kind-link-http")
	b.expectKindShown("the HTTP JSON link", "http", false)
	b.shot("insync-form-nojs-en")
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatalf("enable scripts: %v", err)
	}

	b.open("/settings/inventory-sources")
	b.setLang("zh")
	if got := b.eval(`document.querySelector("h1").textContent`); got != "清单来源" {
		t.Errorf("Chinese heading %q", got)
	}
	b.shot("insync-list-zh")
	b.submit("试运行", "#insync-dry-run-"+idS)
	if got := b.eval(`document.getElementById("insync-report-done").textContent`); !hasHan(got) {
		t.Errorf("the Chinese report says %q", got)
	}
	b.shot("insync-dry-run-zh")
	b.open("/settings/inventory-sources/" + idS)
	if got := b.eval(`document.getElementById("insync-token-state").textContent`); !hasHan(got) || b.eval(`document.getElementById("insync-token").value`) != "" {
		t.Errorf("the Chinese edit form's token: %q", got)
	}
	b.shot("insync-form-zh")
	b.expectKindShown("the Chinese edit form", "netbox", true)

	// A LibreNMS source, the kind chosen after typing into another
	// kind's section: only the chosen section's fields are sent.
	b.open("/settings/inventory-sources/new")
	b.chooseValue("#insync-kind", "http")
	b.typeIn("#http-url", "https://cmdb.example.net/api/devices")
	b.chooseValue("#insync-kind", "librenms")
	b.expectKindShown("chose LibreNMS", "librenms", true)
	if got := b.eval(`document.getElementById("insync-lnms-title").textContent`); got != "LibreNMS 服务器" || !hasHan(b.eval(`document.querySelector("#insync-librenms .hint").textContent`)) {
		t.Errorf("the Chinese LibreNMS section says %q", got)
	}
	b.typeIn("#insync-name", "lnms")
	b.typeIn("#insync-token", insyncToken)
	b.typeIn("#lnms-url", nb.srv.URL)
	b.shot("insync-form-librenms-zh")
	b.submit("保存 LibreNMS", "#insync-save")
	lnms, err := e.store.InventorySource(t.Context(), sourceID(t, e, "lnms"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := string(lnms.Config); !strings.Contains(cfg, `"preset":"librenms"`) || !strings.Contains(cfg, `"url":"`+nb.srv.URL+`"`) {
		t.Errorf("the LibreNMS source was stored as %s", cfg)
	}
	b.checkConsole()
}

// expectKindShown fails the test unless the inventory source form shows
// the section of kind alone, and with JavaScript the kind list in place
// of the kind links (without, the links only).
func (b *tab) expectKindShown(what, kind string, withJS bool) {
	b.t.Helper()
	// A section shown is "kind", one whose fields are sent "kind+".
	got := b.eval(`Array.from(document.querySelectorAll("[data-kind-panel]")).filter(p => p.getClientRects().length > 0 || !p.querySelector("fieldset").disabled).map(p => p.dataset.kindPanel + (p.getClientRects().length > 0 ? "" : "(hidden)") + (p.querySelector("fieldset").disabled ? "" : "+")).join(",")`)
	if got != kind+"+" {
		b.t.Fatalf("%s: the form shows the sections %q, want %q (+: its fields are sent)", what, got, kind+"+")
	}
	if got := b.eval(`[document.getElementById("insync-kind").getClientRects().length > 0, document.getElementById("insync-kind-links").getClientRects().length > 0].join(",")`); got != map[bool]string{true: "true,false", false: "false,true"}[withJS] {
		b.t.Fatalf("%s: kind list shown, kind links shown: %s", what, got)
	}
}
