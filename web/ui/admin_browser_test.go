package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
)

// TestAdminPagesInChromium creates an API key in a real browser and copies
// it with the copy button: the clipboard then holds exactly the key, and
// the key is not on the keys page afterwards. On the way, the new-user
// form greys out the group list while "all groups" is chosen, and the
// administration pages load under the CSP without console errors.
//
// Set UI_SCREENSHOT_DIR to keep the screenshots.
func TestAdminPagesInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	seedFleet(t, e)
	e.createUser("boss", bossPassword, auth.RoleAdministrator, true)

	b.login("boss", bossPassword)
	b.grant("clipboard-read")

	// The scope picker follows the chosen radio button.
	b.open("/users/new")
	b.run("new user form", chromedp.WaitVisible(chromedp.CSS("#user-form")))
	if got := b.eval(`String(document.querySelector('input[name="group"]').disabled)`); got != "false" {
		t.Errorf("with \"only these groups\" chosen, the group boxes are disabled=%s", got)
	}
	b.run("choose all groups", chromedp.Click(chromedp.CSS("#scope-all")))
	if got := b.eval(`String(Array.from(document.querySelectorAll('input[name="group"]')).every(b => b.disabled))`); got != "true" {
		t.Error("with \"all groups\" chosen, the group boxes stay enabled")
	}
	if got := b.eval(`String(document.querySelector('#password').disabled)`); got != "true" {
		t.Error("with a generated password, the password box is enabled")
	}
	b.shot("admin-01-new-user")

	// Create a key; copy it.
	b.open("/api-keys")
	b.run("key form", chromedp.SendKeys(chromedp.CSS("#key-name"), "browser key"))
	b.submit("create key", "#create-key")
	b.run("key page", chromedp.WaitVisible(chromedp.CSS("#new-key")), chromedp.WaitVisible(chromedp.CSS("#copy-key")))
	key := b.eval(`document.getElementById("new-key").textContent`)
	if _, ok := auth.APIKeyPrefix(key); !ok {
		t.Fatalf("the page shows %q, not a key", key)
	}
	b.run("copy", chromedp.Click(chromedp.CSS("#copy-key")))
	b.waitFor("copied", `document.querySelector(".admin-copy-status").textContent === "Copied"`, 5*time.Second)
	if clip := b.eval(`navigator.clipboard.readText()`); clip != key {
		t.Errorf("the clipboard holds %q, want the key", clip)
	}
	b.shot("admin-02-key-created")
	if got := e.apiStatus(key, "/api/v1/groups"); got != 200 {
		t.Errorf("the copied key on /api/v1/groups: %d", got)
	}

	// Back on the list, the key is gone for good.
	b.submit("done", "#keys-done")
	b.run("keys list", chromedp.WaitVisible(chromedp.CSS("#api-keys")))
	if strings.Contains(b.eval(`document.documentElement.outerHTML`), key) {
		t.Error("the keys page shows the key again")
	}
	b.shot("admin-03-keys")
	for _, path := range []string{"/users", "/users/" + id(e.userID("admin")), "/roles", "/roles/new", "/audit"} {
		b.open(path)
		b.run(path, chromedp.WaitVisible(chromedp.CSS("h1")))
		b.shot("admin-" + strings.ReplaceAll(strings.Trim(path, "/"), "/", "-"))
	}

	b.checkConsole()
}
