package ui_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestDevicesPageInChromium checks what needs the page's script, in a real
// browser: "select all" and the count on "Back up selected", which then
// queues the backups; the form offering only the chosen platform's
// templates and showing the login method's default port; the delete
// confirmation. Screenshots in English and Chinese go to
// UI_SCREENSHOT_DIR when set.
func TestDevicesPageInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	s := newDevicesScopeEnv(t, e)
	third := devicesLoopback(t, e, "core-sw", &s.core, true)
	bg := context.Background()
	if _, err := e.store.CreateTemplate(bg, db.Template{Name: "ios running", Platform: "cisco_ios", Commands: "show running-config"}); err != nil {
		t.Fatal(err)
	}
	junos, err := e.store.CreateTemplate(bg, db.Template{Name: "junos full", Platform: "juniper_junos", Commands: "show configuration"})
	if err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)

	// The delete button's confirmation is accepted, and its text kept.
	var (
		mu          sync.Mutex
		confirmText string
	)
	dialogs := chromedp.Events(b.ctx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			confirmText = ev.Message
			mu.Unlock()
			_, _ = chromedp.Call(b.ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	b.login("root", "root-password-1")
	b.open("/devices")
	b.run("list", chromedp.WaitVisible(chromedp.CSS("#devices-table")))

	// Select all: the count shows and the button wakes up.
	if got := b.eval(`String(document.getElementById("device-bulk-backup").disabled)`); got != "true" {
		t.Errorf("with nothing selected the bulk button is enabled (%s)", got)
	}
	b.run("select all", chromedp.Click(chromedp.CSS("#device-select-all")))
	if got := b.eval(`document.querySelector(".devices-selected-count").textContent`); got != "(3)" {
		t.Errorf("selection count %q, want (3)", got)
	}
	b.run("unselect one", chromedp.Click(chromedp.CSS(`input[name="id"][value="`+fmt.Sprint(s.branchDev)+`"]`)))
	if got := b.eval(`String(document.getElementById("device-select-all").indeterminate)`); got != "true" {
		t.Error("select-all is not shown as partly checked")
	}
	b.shot("devices-01-list-en")
	b.submit("back up selected", "#device-bulk-backup")
	b.run("notice", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	if got := b.eval(`document.getElementById("devices-notice").textContent`); !strings.Contains(got, "2 backups were queued.") {
		t.Errorf("notice %q", got)
	}
	if len(devicesJobs(t, e, s.coreDev)) != 1 || len(devicesJobs(t, e, third)) != 1 || len(devicesJobs(t, e, s.branchDev)) != 0 {
		t.Error("the selection queued the wrong devices")
	}

	// The form: only the platform's templates; the method's port.
	b.open("/devices/new")
	b.run("form", chromedp.WaitVisible(chromedp.CSS("#device-form")))
	b.chooseValue("#d-platform", "juniper_junos")
	if got := b.eval(`String(document.querySelector('optgroup[data-platform="cisco_ios"]').hidden)`); got != "true" {
		t.Error("the form offers Cisco templates for a Junos device")
	}
	b.chooseValue("#d-login", "telnet")
	if got := b.eval(`document.getElementById("d-port").placeholder`); got != "23" {
		t.Errorf("port placeholder %q for telnet", got)
	}
	b.run("fill", chromedp.SendKeys(chromedp.CSS("#d-name"), "edge-9"), chromedp.SendKeys(chromedp.CSS("#d-host"), "192.0.2.99"))
	b.chooseValue("#d-template", fmt.Sprint(junos.ID))
	b.shot("devices-02-form-en")
	b.submit("create", "#device-save")
	b.run("created", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	d := devicesByName(t, e, "edge-9")
	if d.Port != 23 || d.TemplateID == nil || *d.TemplateID != junos.ID {
		t.Errorf("created %+v", d)
	}

	// Delete, confirmed in the dialog.
	b.open(fmt.Sprintf("/devices/%d/edit", d.ID))
	b.submit("delete", "#device-delete")
	b.run("deleted", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	mu.Lock()
	if !strings.Contains(confirmText, "Delete edge-9") {
		t.Errorf("confirmation %q", confirmText)
	}
	mu.Unlock()
	if _, err := e.store.GetDevice(bg, d.ID); err == nil {
		t.Error("the device was not deleted")
	}

	// Chinese, and the import page.
	b.setLang("zh")
	b.run("Chinese list", chromedp.WaitVisible(chromedp.CSS("#devices-table")))
	if h := b.eval(`document.querySelector("h1").textContent`); !hasHan(h) {
		t.Errorf("heading %q in Chinese", h)
	}
	b.shot("devices-03-list-zh")
	b.open("/devices/import")
	b.run("import page", chromedp.WaitVisible(chromedp.CSS("#import-form")))
	b.shot("devices-04-import-zh")
	b.run("tablet", chromedp.EmulateViewport(768, 1024))
	b.open("/devices")
	b.shot("devices-05-list-zh-tablet")

	b.checkConsole()
}
