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

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/internal/testkit"
)

// TestDeviceDetailInChromium opens a device's history, a version and a
// diff in a real browser: the pages load their CSS and JavaScript under
// the CSP, the "Copy" button (JavaScript only) puts the exact text on the
// clipboard and says so, and the diff dims noise lines. Screenshots go to
// UI_SCREENSHOT_DIR when set.
func TestDeviceDetailInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900, chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
	f := newDetailFleet(t, e)
	v1 := f.version(t, e, f.coreDev, 3*time.Hour, detailConfigV1, true, "")
	f.version(t, e, f.coreDev, 2*time.Hour, "", false, "192.0.2.10:2222: host key changed: the device presented another key")
	v2 := f.version(t, e, f.coreDev, time.Hour, detailConfigV2, true, "")
	detailSetHostKeys(t, e, f.coreDev.ID, detailKey(t), detailKey(t))
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
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
		v, err := chromedp.Run(browserCtx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
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

	// The page's clipboard: the test reads back what Copy wrote.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(browserCtx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: "granted", Origin: e.srv.URL,
		}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}

	open("/login")
	run("sign in",
		chromedp.SendKeys(chromedp.CSS("#username"), "viewer"),
		chromedp.SendKeys(chromedp.CSS("#password"), "viewer-password-1"))
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS("#sign-in"))); err != nil {
		t.Fatalf("sign in: %v", err)
	}

	open(devicePath(f.coreDev))
	run("device page", chromedp.WaitVisible(chromedp.CSS("#history-table")))
	if got := eval(`String(document.querySelectorAll("#history-table tbody tr").length)`); got != "3" {
		t.Errorf("history shows %s rows, want 3", got)
	}
	if got := eval(`getComputedStyle(document.querySelector(".device-badge-changed")).backgroundColor`); got == "rgba(0, 0, 0, 0)" {
		t.Error("the changed badge is not styled")
	}
	shot("device-detail-en")

	// Compare the two versions through the history's form.
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS("#history-compare"))); err != nil {
		t.Fatalf("compare: %v", err)
	}
	run("diff page", chromedp.WaitVisible(chromedp.CSS("#diff-table")))
	if loc := eval(`location.pathname + location.search`); !strings.Contains(loc, "from="+v1.ID) || !strings.Contains(loc, "to="+v2.ID) {
		t.Errorf("the form compared %s", loc)
	}
	noise := eval(`getComputedStyle(document.querySelector("td.diff-noise")).opacity`)
	plain := eval(`getComputedStyle(document.querySelector("td.diff-add:not(.diff-noise)")).opacity`)
	if noise == plain || plain != "1" {
		t.Errorf("noise opacity %s, plain %s: noise is not dimmed", noise, plain)
	}
	shot("device-diff-en")

	open(devicePath(f.coreDev) + "/versions/" + v2.ID)
	run("copy button", chromedp.WaitVisible(chromedp.CSS("#version-copy")))
	run("copy", chromedp.Click(chromedp.CSS("#version-copy")))
	if _, err := chromedp.Run(browserCtx, chromedp.Poll[bool](`document.getElementById("version-copy-status").textContent === "Copied"`,
		chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("no \"Copied\" feedback (%v); the status reads %q", err, eval(`document.getElementById("version-copy-status").textContent`))
	}
	if got := eval(`navigator.clipboard.readText()`); got != detailConfigV2 {
		t.Errorf("clipboard holds %q, want the configuration %q", got, detailConfigV2)
	}
	shot("device-version-en")

	// Without JavaScript the button, which could do nothing, is not shown.
	if _, err := chromedp.Call(browserCtx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable scripts: %v", err)
	}
	open(devicePath(f.coreDev) + "/versions/" + v2.ID)
	if d := eval(`getComputedStyle(document.getElementById("version-copy")).display + " " + document.documentElement.className`); d != "none " {
		t.Errorf("without JavaScript the copy button shows: display and <html> class %q", d)
	}
	if _, err := chromedp.Call(browserCtx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatalf("enable scripts: %v", err)
	}

	open(devicePath(f.coreDev))
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS(`.lang-switch button[value="zh"]`))); err != nil {
		t.Fatalf("switch to Chinese: %v", err)
	}
	run("Chinese device page", chromedp.WaitVisible(chromedp.CSS("#host-key-changed")))
	if h := eval(`document.getElementById("history-title").textContent`); !hasHan(h) {
		t.Errorf("the history title reads %q in Chinese", h)
	}
	shot("device-detail-zh")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
