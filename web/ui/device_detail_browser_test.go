package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestDeviceDetailInChromium opens a device's history, a version and a
// diff in a real browser: the pages load their CSS and JavaScript under
// the CSP, the "Copy" button (JavaScript only) puts the exact text on the
// clipboard and says so, and the diff dims noise lines. Screenshots go to
// UI_SCREENSHOT_DIR when set.
func TestDeviceDetailInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 3*time.Hour, detailConfigV1, true, "")
	f.version(t, e, f.coreDev, 2*time.Hour, "", false, "192.0.2.10:2222: host key changed: the device presented another key")
	v2 := f.version(t, e, f.coreDev, time.Hour, detailConfigV2, true, "")
	detailSetHostKeys(t, e, f.coreDev.ID, detailKey(t), detailKey(t))
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)

	// The page's clipboard: the test reads back what Copy wrote.
	b.grant("clipboard-read", "clipboard-write")

	b.login("viewer", "viewer-password-1")

	b.open(devicePath(f.coreDev))
	b.run("device page", chromedp.WaitVisible(chromedp.CSS("#history-table")))
	if got := b.eval(`String(document.querySelectorAll("#history-table tbody tr").length)`); got != "3" {
		t.Errorf("history shows %s rows, want 3", got)
	}
	if got := b.eval(`getComputedStyle(document.querySelector(".device-badge-changed")).backgroundColor`); got == "rgba(0, 0, 0, 0)" {
		t.Error("the changed badge is not styled")
	}
	b.shot("device-detail-en")

	// Compare the two versions through the history's form.
	b.submit("compare", "#history-compare")
	b.run("diff page", chromedp.WaitVisible(chromedp.CSS("#diff-table")))
	if loc := b.eval(`location.pathname + location.search`); !strings.Contains(loc, "from="+v1.ID) || !strings.Contains(loc, "to="+v2.ID) {
		t.Errorf("the form compared %s", loc)
	}
	noise := b.eval(`getComputedStyle(document.querySelector("td.diff-noise")).opacity`)
	plain := b.eval(`getComputedStyle(document.querySelector("td.diff-add:not(.diff-noise)")).opacity`)
	if noise == plain || plain != "1" {
		t.Errorf("noise opacity %s, plain %s: noise is not dimmed", noise, plain)
	}
	b.shot("device-diff-en")

	b.open(devicePath(f.coreDev) + "/versions/" + v2.ID)
	b.run("copy button", chromedp.WaitVisible(chromedp.CSS("#version-copy")))
	b.run("copy", chromedp.Click(chromedp.CSS("#version-copy")))
	if err := b.poll(`document.getElementById("version-copy-status").textContent === "Copied"`, 5*time.Second); err != nil {
		t.Fatalf("no \"Copied\" feedback (%v); the status reads %q", err, b.eval(`document.getElementById("version-copy-status").textContent`))
	}
	if got := b.eval(`navigator.clipboard.readText()`); got != detailConfigV2 {
		t.Errorf("clipboard holds %q, want the configuration %q", got, detailConfigV2)
	}
	b.shot("device-version-en")

	// Without JavaScript the button, which could do nothing, is not shown.
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable scripts: %v", err)
	}
	b.open(devicePath(f.coreDev) + "/versions/" + v2.ID)
	if d := b.eval(`getComputedStyle(document.getElementById("version-copy")).display + " " + document.documentElement.className`); d != "none " {
		t.Errorf("without JavaScript the copy button shows: display and <html> class %q", d)
	}
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatalf("enable scripts: %v", err)
	}

	b.open(devicePath(f.coreDev))
	b.setLang("zh")
	b.run("Chinese device page", chromedp.WaitVisible(chromedp.CSS("#host-key-changed")))
	if h := b.eval(`document.getElementById("history-title").textContent`); !hasHan(h) {
		t.Errorf("the history title reads %q in Chinese", h)
	}
	b.shot("device-detail-zh")

	b.checkConsole()
}
