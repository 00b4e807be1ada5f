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
	"backupd/db"
	"backupd/internal/testkit"
)

// TestScheduleFormInChromium checks what only the script does on the
// schedule form, in a real browser under the CSP: only the chosen target's
// choices show, the preview of the next runs follows the cron expression
// and the zone as they are typed (errors included), and the device search
// adds a device to the list, which the saved schedule then targets. The
// rules and settings pages load without a console complaint. Screenshots go to UI_SCREENSHOT_DIR when set.
func TestScheduleFormInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900, chromedp.Flag("password-store", "basic"))
	defer cancelAlloc()

	e := newEnv(t)
	seedFleet(t, e)
	setClock(e, wednesdayNoon)
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
			// The preview of an invalid expression is a 422 on purpose;
			// Chromium logs every 4xx answer.
			if strings.Contains(m.Text, "status of 422") && strings.Contains(m.URL, "/api/schedules/preview") {
				continue
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
	waitFor := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(browserCtx, chromedp.Poll[bool](expr,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second))); err != nil {
			t.Fatalf("%s: %v; the page shows %q", what, err, eval(`document.getElementById("schedule-preview").innerText`))
		}
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
	// retype replaces a field's text with keystrokes, as a user does.
	retype := func(sel, text string) {
		t.Helper()
		eval(`(() => { document.querySelector("` + sel + `").value = ""; return ""; })()`)
		run("retype "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
	}
	shown := func(sel string) string {
		return eval(`document.querySelector('` + sel + `').hidden ? "hidden" : "shown"`)
	}
	firstRun := `(document.querySelector("#preview-runs li") || {}).textContent`

	open("/login")
	run("sign in", chromedp.SendKeys(chromedp.CSS("#username"), "root"), chromedp.SendKeys(chromedp.CSS("#password"), "root-password-1"))
	submit("sign in", "#sign-in")

	open("/schedules/new")
	run("form", chromedp.WaitVisible(chromedp.CSS("#sched-cron")))
	if got := shown(`[data-target-panel="groups"]`) + shown(`[data-target-panel="devices"]`); got != "hiddenhidden" {
		t.Errorf("with all devices chosen, groups/devices choices are %s", got)
	}

	// The preview follows the expression and the zone.
	retype("#sched-cron", "30 6 * * 1")
	retype("#sched-tz", "Asia/Shanghai")
	waitFor("Shanghai preview", firstRun+` === "Mon 2026-03-09 06:30 CST"`)
	if got := eval(`document.getElementById("preview-description").textContent`); got != "Every Monday at 06:30" {
		t.Errorf("description %q", got)
	}
	if got := eval(`String(document.querySelectorAll("#preview-runs li").length)`); got != "5" {
		t.Errorf("%s runs previewed, want 5", got)
	}
	retype("#sched-cron", "30 6 * *")
	waitFor("error shown", `!document.getElementById("preview-error").hidden`)
	if got := eval(`document.getElementById("preview-error").textContent`); !strings.Contains(got, "has 4 fields") || !strings.HasPrefix(got, "Cannot work out the next runs") {
		t.Errorf("preview error %q", got)
	}
	if got := eval(`String(document.querySelectorAll("#preview-runs li").length)`); got != "0" {
		t.Errorf("an invalid expression still lists %s runs", got)
	}
	retype("#sched-cron", "*/15 * * * *")
	waitFor("every 15 minutes", `document.getElementById("preview-description").textContent === "Every 15 minutes"`)
	if eval(`String(document.getElementById("preview-error").hidden)`) != "true" {
		t.Error("the error stays after a valid expression")
	}
	retype("#sched-cron", "0 3 * * 1-5")

	// Devices: the search adds a name to the list.
	run("choose devices", chromedp.Click(chromedp.CSS("#target-devices")))
	if got := shown(`[data-target-panel="groups"]`) + shown(`[data-target-panel="devices"]`) + shown("#sched-device-search"); got != "hiddenshownshown" {
		t.Errorf("with devices chosen, groups/devices/search are %s", got)
	}
	run("search", chromedp.SendKeys(chromedp.CSS("#sched-device-q"), "branch-1"))
	waitFor("search result", `document.querySelectorAll("#sched-device-results button").length === 1`)
	run("add", chromedp.Click(chromedp.CSS("#sched-device-results button")))
	if got := eval(`document.getElementById("sched-devices").value`); got != "branch-1" {
		t.Errorf("device list after adding: %q", got)
	}
	run("name", chromedp.SendKeys(chromedp.CSS("#sched-name"), "Branch weekdays"))
	shot("schedule-form")
	submit("save", "#schedule-save")
	run("list", chromedp.WaitVisible(chromedp.CSS("#schedules")))
	items, _, err := e.store.ListSchedules(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Target != db.ScheduleTargetDevices || len(items[0].TargetIDs) != 1 ||
		items[0].Cron != "0 3 * * 1-5" || items[0].Timezone != "Asia/Shanghai" {
		t.Errorf("saved schedules %+v", items)
	}
	if got := eval(`document.querySelector("#schedules .sched-desc").textContent`); got != "Every Monday to Friday at 03:00" {
		t.Errorf("list describes the schedule as %q", got)
	}
	shot("schedules-list")

	// The rules and settings pages need no script; they must still load
	// under the CSP without a complaint.
	open("/rules")
	run("rules", chromedp.WaitVisible(chromedp.CSS("#rule-try")))
	eval(`(() => { document.getElementById("try-platform").value = "cisco_ios"; return ""; })()`)
	run("sample", chromedp.SendKeys(chromedp.CSS("#try-sample"), "Building configuration...\nhostname r1\nntp clock-period 17179868\n"))
	submit("try", "#rule-try-submit")
	run("try result", chromedp.WaitVisible(chromedp.CSS("#try-result")))
	if got := eval(`document.getElementById("try-counts").textContent`); got != "3 lines: 2 ignored whole, 0 compared with a part masked." {
		t.Errorf("try counts %q", got)
	}
	shot("rules-try")
	open("/settings")
	run("settings", chromedp.WaitVisible(chromedp.CSS("#retention-form")))
	shot("settings")

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
