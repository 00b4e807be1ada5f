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

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/internal/testkit"
)

// TestInventoryInChromium checks what only the script does on the
// inventory pages, in a real browser under the CSP: the template form's
// default commands follow the platform select (and untouched defaults in
// the command box follow too; typed commands never change), and after a
// move up the keyboard stays on the group's button. Screenshots go to
// UI_SCREENSHOT_DIR when set.
func TestInventoryInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900, chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
	f := seedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	shots := testkit.ScreenshotDir(t, "UI_SCREENSHOT_DIR")

	var mu sync.Mutex
	var problems []string
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
				problems = append(problems, fmt.Sprintf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browserCtx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
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
	open := func(path string) {
		t.Helper()
		if _, err := chromedp.RunResponse(browserCtx, chromedp.Navigate(e.srv.URL+path)); err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
	}
	submit := func(what, selector string) {
		t.Helper()
		if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS(selector))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(browserCtx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Errorf("save screenshot: %v", err)
		}
	}
	// choose picks a platform as a user does: the select fires "change".
	choose := func(id string) {
		t.Helper()
		eval(`(() => { const s = document.getElementById("template-platform"); s.value = "` + id + `";
			s.dispatchEvent(new Event("change", {bubbles: true})); return ""; })()`)
	}
	visible := func(id string) string {
		return eval(`document.getElementById("` + id + `").hidden ? "hidden" : "shown"`)
	}

	open("/login")
	run("sign in",
		chromedp.SendKeys(chromedp.CSS("#username"), "root"),
		chromedp.SendKeys(chromedp.CSS("#password"), "root-password-1"))
	submit("sign in", "#sign-in")

	// Templates: nothing chosen, no defaults shown yet.
	open("/templates/new")
	run("template form", chromedp.WaitVisible(chromedp.CSS("#template-platform")))
	if got := visible("template-defaults-none") + visible("template-defaults") + visible("template-use-defaults"); got != "shownhiddenhidden" {
		t.Errorf("before a choice: none/defaults/button %s", got)
	}
	choose("cisco_asa")
	if got := eval(`document.getElementById("template-defaults").textContent`); got != "more system:running-config" {
		t.Errorf("defaults shown for Cisco ASA: %q", got)
	}
	if got := eval(`document.getElementById("template-defaults-name").textContent`); got != "Cisco ASA" {
		t.Errorf("platform name shown: %q", got)
	}
	if got := visible("template-defaults-none") + visible("template-use-defaults"); got != "hiddenshown" {
		t.Errorf("after a choice: none/button %s", got)
	}
	run("use the defaults", chromedp.Click(chromedp.CSS("#template-use-defaults")))
	if got := eval(`document.getElementById("template-commands").value`); got != "more system:running-config" {
		t.Errorf("commands after \"use the defaults\": %q", got)
	}
	// Untouched defaults follow the platform, multi-line ones included.
	choose("linux")
	if got := eval(`document.getElementById("template-commands").value`); !strings.HasPrefix(got, "cat /etc/hostname\ncat /etc/hosts") {
		t.Errorf("untouched defaults did not follow the platform: %q", got)
	}
	shot("inventory-template-form-en")
	// Typed commands stay.
	run("type commands", chromedp.SetValue(chromedp.CSS("#template-commands"), "uname -a"))
	choose("vyos")
	if got := eval(`document.getElementById("template-commands").value`); got != "uname -a" {
		t.Errorf("typed commands were replaced: %q", got)
	}
	if got := eval(`document.getElementById("template-defaults").textContent`); got != "show configuration commands" {
		t.Errorf("defaults shown for VyOS: %q", got)
	}
	run("name", chromedp.SendKeys(chromedp.CSS("#template-name"), "vyos-uname"))
	submit("create the template", "#template-submit")
	run("template list", chromedp.WaitVisible(chromedp.CSS("#templates-notice")))
	if got := invTemplate(t, e, "vyos-uname"); got.Platform != "vyos" || got.Commands != "uname -a" {
		t.Errorf("created %+v", got)
	}
	shot("inventory-templates-en")

	// Groups: after "move up" the keyboard is on the same button.
	open("/groups")
	run("tree", chromedp.WaitVisible(chromedp.CSS("#group-tree")))
	up := fmt.Sprintf("#group-%d-up", f.branch)
	run("focus the button", chromedp.Focus(chromedp.CSS(up)))
	run("press it", chromedp.KeyEvent("\r"))
	run("tree again", chromedp.WaitVisible(chromedp.CSS("#groups-notice")))
	if got := invChildren(t, e, 0); got != "Branch,Core" {
		t.Errorf("roots after moving Branch up: %s", got)
	}
	// Branch is first now: its up button is disabled, so the focus goes
	// to its down button.
	want := fmt.Sprintf("group-%d-down", f.branch)
	if _, err := chromedp.Run(browserCtx, chromedp.Poll[bool](`document.activeElement && document.activeElement.id === "`+want+`"`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Errorf("focus is on %q, want %s (at %s; %s)", eval(`document.activeElement ? document.activeElement.id + " " + document.activeElement.tagName : ""`), want,
			eval(`location.href`), eval(`String(document.hasFocus()) + " " + String(!!document.getElementById("`+want+`"))`))
	}
	shot("inventory-groups-en")

	// The credential form, and the tree in Chinese, for the record.
	open("/credentials/new")
	run("credential form", chromedp.WaitVisible(chromedp.CSS("#credential-form")))
	shot("inventory-credential-form-en")
	submit("switch to Chinese", `.lang-switch button[value="zh"]`)
	open("/groups/" + invID(f.core))
	run("Chinese group page", chromedp.WaitVisible(chromedp.CSS("#group-rename")))
	if text := eval(`document.getElementById("rename-title").textContent`); !hasHan(text) {
		t.Errorf("rename heading %q in Chinese", text)
	}
	shot("inventory-group-zh")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
