package ui_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/testkit"

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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900, chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
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
	shots := testkit.ScreenshotDir(t, "UI_SCREENSHOT_DIR")

	var (
		mu       sync.Mutex
		problems []string
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	console := chromedp.Console(browserCtx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	// The delete button's confirmation is accepted, and its text kept.
	var confirmText string
	dialogs := chromedp.Events(browserCtx, cdppage.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			confirmText = ev.Message
			mu.Unlock()
			_, _ = chromedp.Call(browserCtx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browserCtx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	submit := func(what, selector string) {
		t.Helper()
		if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS(selector))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	open := func(path string) {
		t.Helper()
		if _, err := chromedp.RunResponse(browserCtx, chromedp.Navigate(e.srv.URL+path)); err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(browserCtx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(browserCtx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
	choose := func(selector, value string) {
		t.Helper()
		eval(`(() => { const el = document.querySelector("` + selector + `"); el.value = "` + value + `";
			el.dispatchEvent(new Event("change", {bubbles: true})); return el.value; })()`)
	}

	open("/login")
	run("sign in", chromedp.SendKeys(chromedp.CSS("#username"), "root"), chromedp.SendKeys(chromedp.CSS("#password"), "root-password-1"))
	submit("sign in", "#sign-in")
	open("/devices")
	run("list", chromedp.WaitVisible(chromedp.CSS("#devices-table")))

	// Select all: the count shows and the button wakes up.
	if got := eval(`String(document.getElementById("device-bulk-backup").disabled)`); got != "true" {
		t.Errorf("with nothing selected the bulk button is enabled (%s)", got)
	}
	run("select all", chromedp.Click(chromedp.CSS("#device-select-all")))
	if got := eval(`document.querySelector(".devices-selected-count").textContent`); got != "(3)" {
		t.Errorf("selection count %q, want (3)", got)
	}
	run("unselect one", chromedp.Click(chromedp.CSS(`input[name="id"][value="`+fmt.Sprint(s.branchDev)+`"]`)))
	if got := eval(`String(document.getElementById("device-select-all").indeterminate)`); got != "true" {
		t.Error("select-all is not shown as partly checked")
	}
	shot("devices-01-list-en")
	submit("back up selected", "#device-bulk-backup")
	run("notice", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	if got := eval(`document.getElementById("devices-notice").textContent`); !strings.Contains(got, "2 backups were queued.") {
		t.Errorf("notice %q", got)
	}
	if len(devicesJobs(t, e, s.coreDev)) != 1 || len(devicesJobs(t, e, third)) != 1 || len(devicesJobs(t, e, s.branchDev)) != 0 {
		t.Error("the selection queued the wrong devices")
	}

	// The form: only the platform's templates; the method's port.
	open("/devices/new")
	run("form", chromedp.WaitVisible(chromedp.CSS("#device-form")))
	choose("#d-platform", "juniper_junos")
	if got := eval(`String(document.querySelector('optgroup[data-platform="cisco_ios"]').hidden)`); got != "true" {
		t.Error("the form offers Cisco templates for a Junos device")
	}
	choose("#d-login", "telnet")
	if got := eval(`document.getElementById("d-port").placeholder`); got != "23" {
		t.Errorf("port placeholder %q for telnet", got)
	}
	run("fill", chromedp.SendKeys(chromedp.CSS("#d-name"), "edge-9"), chromedp.SendKeys(chromedp.CSS("#d-host"), "192.0.2.99"))
	choose("#d-template", fmt.Sprint(junos.ID))
	shot("devices-02-form-en")
	submit("create", "#device-save")
	run("created", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	d := devicesByName(t, e, "edge-9")
	if d.Port != 23 || d.TemplateID == nil || *d.TemplateID != junos.ID {
		t.Errorf("created %+v", d)
	}

	// Delete, confirmed in the dialog.
	open(fmt.Sprintf("/devices/%d/edit", d.ID))
	submit("delete", "#device-delete")
	run("deleted", chromedp.WaitVisible(chromedp.CSS("#devices-notice")))
	mu.Lock()
	if !strings.Contains(confirmText, "Delete edge-9") {
		t.Errorf("confirmation %q", confirmText)
	}
	mu.Unlock()
	if _, err := e.store.GetDevice(bg, d.ID); err == nil {
		t.Error("the device was not deleted")
	}

	// Chinese, and the import page.
	submit("Chinese", `.lang-switch button[value="zh"]`)
	run("Chinese list", chromedp.WaitVisible(chromedp.CSS("#devices-table")))
	if h := eval(`document.querySelector("h1").textContent`); !hasHan(h) {
		t.Errorf("heading %q in Chinese", h)
	}
	shot("devices-03-list-zh")
	open("/devices/import")
	run("import page", chromedp.WaitVisible(chromedp.CSS("#import-form")))
	shot("devices-04-import-zh")
	run("tablet", chromedp.EmulateViewport(768, 1024))
	open("/devices")
	shot("devices-05-list-zh-tablet")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
