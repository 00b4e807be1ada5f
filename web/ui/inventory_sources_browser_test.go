package ui_test

import (
	"strings"
	"testing"
	"time"

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
	b.checkConsole()
}
