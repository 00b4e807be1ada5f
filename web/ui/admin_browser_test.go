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
	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/internal/testkit"
)

// TestAdminPagesInChromium creates an API key in a real browser and copies
// it with the copy button: the clipboard then holds exactly the key, and
// the key is not on the keys page afterwards. On the way, the new-user
// form greys out the group list while "all groups" is chosen, and the
// administration pages load under the CSP without console errors.
//
// Set UI_SCREENSHOT_DIR to keep the screenshots.
func TestAdminPagesInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900, chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
	seedFleet(t, e)
	e.createUser("boss", bossPassword, auth.RoleAdministrator, true)
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

	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browserCtx, steps...); err != nil {
			text, _ := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, text)
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
			t.Error(err)
		}
	}

	open("/login")
	run("sign in", chromedp.SendKeys(chromedp.CSS("#username"), "boss"), chromedp.SendKeys(chromedp.CSS("#password"), bossPassword))
	submit("sign in", "#sign-in")
	if _, err := chromedp.CallBrowser(browserCtx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "clipboard-read"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: e.srv.URL,
	}); err != nil {
		t.Fatalf("grant clipboard-read: %v", err)
	}

	// The scope picker follows the chosen radio button.
	open("/users/new")
	run("new user form", chromedp.WaitVisible(chromedp.CSS("#user-form")))
	if got := eval(`String(document.querySelector('input[name="group"]').disabled)`); got != "false" {
		t.Errorf("with \"only these groups\" chosen, the group boxes are disabled=%s", got)
	}
	run("choose all groups", chromedp.Click(chromedp.CSS("#scope-all")))
	if got := eval(`String(Array.from(document.querySelectorAll('input[name="group"]')).every(b => b.disabled))`); got != "true" {
		t.Error("with \"all groups\" chosen, the group boxes stay enabled")
	}
	if got := eval(`String(document.querySelector('#password').disabled)`); got != "true" {
		t.Error("with a generated password, the password box is enabled")
	}
	shot("admin-01-new-user")

	// Create a key; copy it.
	open("/api-keys")
	run("key form", chromedp.SendKeys(chromedp.CSS("#key-name"), "browser key"))
	submit("create key", "#create-key")
	run("key page", chromedp.WaitVisible(chromedp.CSS("#new-key")), chromedp.WaitVisible(chromedp.CSS("#copy-key")))
	key := eval(`document.getElementById("new-key").textContent`)
	if _, ok := auth.APIKeyPrefix(key); !ok {
		t.Fatalf("the page shows %q, not a key", key)
	}
	run("copy", chromedp.Click(chromedp.CSS("#copy-key")))
	run("copied", chromedp.Poll[chromedp.Void](`document.querySelector(".admin-copy-status").textContent === "Copied"`, chromedp.WithPollingTimeout(5*time.Second)))
	clip, err := chromedp.Run(browserCtx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the clipboard: %v", err)
	}
	if clip != key {
		t.Errorf("the clipboard holds %q, want the key", clip)
	}
	shot("admin-02-key-created")
	if got := e.apiStatus(key, "/api/v1/groups"); got != 200 {
		t.Errorf("the copied key on /api/v1/groups: %d", got)
	}

	// Back on the list, the key is gone for good.
	submit("done", "#keys-done")
	run("keys list", chromedp.WaitVisible(chromedp.CSS("#api-keys")))
	if strings.Contains(eval(`document.documentElement.outerHTML`), key) {
		t.Error("the keys page shows the key again")
	}
	shot("admin-03-keys")
	for _, path := range []string{"/users", "/users/" + id(e.userID("admin")), "/roles", "/roles/new", "/audit"} {
		open(path)
		run(path, chromedp.WaitVisible(chromedp.CSS("h1")))
		shot("admin-" + strings.ReplaceAll(strings.Trim(path, "/"), "/", "-"))
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
