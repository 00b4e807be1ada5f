package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestInventoryInChromium checks what only the script does on the
// inventory pages, in a real browser under the CSP: the template form's
// default commands follow the platform select (and untouched defaults in
// the command box follow too; typed commands never change), and after a
// move up the keyboard stays on the group's button. Screenshots go to
// UI_SCREENSHOT_DIR when set.
func TestInventoryInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := seedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)

	b.login("root", "root-password-1")

	// Templates: nothing chosen, no defaults shown yet.
	b.open("/templates/new")
	b.run("template form", chromedp.WaitVisible(chromedp.CSS("#template-platform")))
	if got := b.shown("#template-defaults-none") + b.shown("#template-defaults") + b.shown("#template-use-defaults"); got != "shownhiddenhidden" {
		t.Errorf("before a choice: none/defaults/button %s", got)
	}
	b.chooseValue("#template-platform", "cisco_asa")
	if got := b.eval(`document.getElementById("template-defaults").textContent`); got != "more system:running-config" {
		t.Errorf("defaults shown for Cisco ASA: %q", got)
	}
	if got := b.eval(`document.getElementById("template-defaults-name").textContent`); got != "Cisco ASA" {
		t.Errorf("platform name shown: %q", got)
	}
	if got := b.shown("#template-defaults-none") + b.shown("#template-use-defaults"); got != "hiddenshown" {
		t.Errorf("after a choice: none/button %s", got)
	}
	b.run("use the defaults", chromedp.Click(chromedp.CSS("#template-use-defaults")))
	if got := b.eval(`document.getElementById("template-commands").value`); got != "more system:running-config" {
		t.Errorf("commands after \"use the defaults\": %q", got)
	}
	// Untouched defaults follow the platform, multi-line ones included.
	b.chooseValue("#template-platform", "linux")
	if got := b.eval(`document.getElementById("template-commands").value`); !strings.HasPrefix(got, "cat /etc/hostname\ncat /etc/hosts") {
		t.Errorf("untouched defaults did not follow the platform: %q", got)
	}
	b.shot("inventory-template-form-en")
	// Typed commands stay.
	b.run("type commands", chromedp.SetValue(chromedp.CSS("#template-commands"), "uname -a"))
	b.chooseValue("#template-platform", "vyos")
	if got := b.eval(`document.getElementById("template-commands").value`); got != "uname -a" {
		t.Errorf("typed commands were replaced: %q", got)
	}
	if got := b.eval(`document.getElementById("template-defaults").textContent`); got != "show configuration commands" {
		t.Errorf("defaults shown for VyOS: %q", got)
	}
	b.run("name", chromedp.SendKeys(chromedp.CSS("#template-name"), "vyos-uname"))
	b.submit("create the template", "#template-submit")
	b.run("template list", chromedp.WaitVisible(chromedp.CSS("#templates-notice")))
	if got := invTemplate(t, e, "vyos-uname"); got.Platform != "vyos" || got.Commands != "uname -a" {
		t.Errorf("created %+v", got)
	}
	b.shot("inventory-templates-en")

	// Groups: after "move up" the keyboard is on the same button.
	b.open("/groups")
	b.run("tree", chromedp.WaitVisible(chromedp.CSS("#group-tree")))
	up := fmt.Sprintf("#group-%d-up", f.branch)
	b.run("focus the button", chromedp.Focus(chromedp.CSS(up)))
	b.run("press it", chromedp.KeyEvent("\r"))
	b.run("tree again", chromedp.WaitVisible(chromedp.CSS("#groups-notice")))
	if got := invChildren(t, e, 0); got != "Branch,Core" {
		t.Errorf("roots after moving Branch up: %s", got)
	}
	// Branch is first now: its up button is disabled, so the focus goes
	// to its down button.
	want := fmt.Sprintf("group-%d-down", f.branch)
	if err := b.poll(`document.activeElement && document.activeElement.id === "`+want+`"`, 5*time.Second); err != nil {
		t.Errorf("focus is on %q, want %s (at %s; %s)", b.eval(`document.activeElement ? document.activeElement.id + " " + document.activeElement.tagName : ""`), want,
			b.eval(`location.href`), b.eval(`String(document.hasFocus()) + " " + String(!!document.getElementById("`+want+`"))`))
	}
	b.shot("inventory-groups-en")

	// The credential form, and the tree in Chinese, for the record.
	b.open("/credentials/new")
	b.run("credential form", chromedp.WaitVisible(chromedp.CSS("#credential-form")))
	b.shot("inventory-credential-form-en")
	b.setLang("zh")
	b.open("/groups/" + invID(f.core))
	b.run("Chinese group page", chromedp.WaitVisible(chromedp.CSS("#group-rename")))
	if text := b.eval(`document.getElementById("rename-title").textContent`); !hasHan(text) {
		t.Errorf("rename heading %q in Chinese", text)
	}
	b.shot("inventory-group-zh")

	b.checkConsole()
}
