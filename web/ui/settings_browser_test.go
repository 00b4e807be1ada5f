package ui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/db"
)

// TestScheduleFormInChromium checks what only the script does on the
// schedule form, in a real browser under the CSP: only the chosen target's
// choices show, the preview of the next runs follows the cron expression
// and the zone as they are typed (errors included), and the device search
// adds a device to the list, which the saved schedule then targets. The
// rules and settings pages load without a console complaint. Screenshots go to UI_SCREENSHOT_DIR when set.
func TestScheduleFormInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	seedFleet(t, e)
	setClock(e, wednesdayNoon)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	// The preview of an invalid expression is a 422 on purpose; Chromium
	// logs every 4xx answer.
	b.allow(func(m chromedp.ConsoleMessage) bool {
		return strings.Contains(m.Text, "status of 422") && strings.Contains(m.URL, "/api/schedules/preview")
	})

	// waitFor waits for the script to update the form; a failure shows
	// the preview.
	waitFor := func(what, expr string) {
		t.Helper()
		if err := b.poll(expr, 5*time.Second); err != nil {
			t.Fatalf("%s: %v; the page shows %q", what, err, b.eval(`document.getElementById("schedule-preview").innerText`))
		}
	}
	// retype replaces a field's text with keystrokes, as a user does.
	retype := func(sel, text string) {
		t.Helper()
		b.eval(`(() => { document.querySelector("` + sel + `").value = ""; return ""; })()`)
		b.run("retype "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
	}
	firstRun := `(document.querySelector("#preview-runs li") || {}).textContent`

	b.login("root", "root-password-1")

	b.open("/schedules/new")
	b.run("form", chromedp.WaitVisible(chromedp.CSS("#sched-cron")))
	if got := b.shown(`[data-target-panel="groups"]`) + b.shown(`[data-target-panel="devices"]`); got != "hiddenhidden" {
		t.Errorf("with all devices chosen, groups/devices choices are %s", got)
	}

	// The preview follows the expression and the zone.
	retype("#sched-cron", "30 6 * * 1")
	retype("#sched-tz", "Asia/Shanghai")
	waitFor("Shanghai preview", firstRun+` === "Mon 2026-03-09 06:30 CST"`)
	if got := b.eval(`document.getElementById("preview-description").textContent`); got != "Every Monday at 06:30" {
		t.Errorf("description %q", got)
	}
	if got := b.eval(`String(document.querySelectorAll("#preview-runs li").length)`); got != "5" {
		t.Errorf("%s runs previewed, want 5", got)
	}
	retype("#sched-cron", "30 6 * *")
	waitFor("error shown", `!document.getElementById("preview-error").hidden`)
	if got := b.eval(`document.getElementById("preview-error").textContent`); !strings.Contains(got, "has 4 fields") || !strings.HasPrefix(got, "Cannot work out the next runs") {
		t.Errorf("preview error %q", got)
	}
	if got := b.eval(`String(document.querySelectorAll("#preview-runs li").length)`); got != "0" {
		t.Errorf("an invalid expression still lists %s runs", got)
	}
	retype("#sched-cron", "*/15 * * * *")
	waitFor("every 15 minutes", `document.getElementById("preview-description").textContent === "Every 15 minutes"`)
	if b.eval(`String(document.getElementById("preview-error").hidden)`) != "true" {
		t.Error("the error stays after a valid expression")
	}
	retype("#sched-cron", "0 3 * * 1-5")

	// Devices: the search adds a name to the list.
	b.run("choose devices", chromedp.Click(chromedp.CSS("#target-devices")))
	if got := b.shown(`[data-target-panel="groups"]`) + b.shown(`[data-target-panel="devices"]`) + b.shown("#sched-device-search"); got != "hiddenshownshown" {
		t.Errorf("with devices chosen, groups/devices/search are %s", got)
	}
	b.run("search", chromedp.SendKeys(chromedp.CSS("#sched-device-q"), "branch-1"))
	waitFor("search result", `document.querySelectorAll("#sched-device-results button").length === 1`)
	b.run("add", chromedp.Click(chromedp.CSS("#sched-device-results button")))
	if got := b.eval(`document.getElementById("sched-devices").value`); got != "branch-1" {
		t.Errorf("device list after adding: %q", got)
	}
	b.run("name", chromedp.SendKeys(chromedp.CSS("#sched-name"), "Branch weekdays"))
	b.shot("schedule-form")
	b.submit("save", "#schedule-save")
	b.run("list", chromedp.WaitVisible(chromedp.CSS("#schedules")))
	items, _, err := e.store.ListSchedules(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Target != db.ScheduleTargetDevices || len(items[0].TargetIDs) != 1 ||
		items[0].Cron != "0 3 * * 1-5" || items[0].Timezone != "Asia/Shanghai" {
		t.Errorf("saved schedules %+v", items)
	}
	if got := b.eval(`document.querySelector("#schedules .sched-desc").textContent`); got != "Every Monday to Friday at 03:00" {
		t.Errorf("list describes the schedule as %q", got)
	}
	b.shot("schedules-list")

	// The rules and settings pages need no script; they must still load
	// under the CSP without a complaint.
	b.open("/rules")
	b.run("rules", chromedp.WaitVisible(chromedp.CSS("#rule-try")))
	b.eval(`(() => { document.getElementById("try-platform").value = "cisco_ios"; return ""; })()`)
	b.run("sample", chromedp.SendKeys(chromedp.CSS("#try-sample"), "Building configuration...\nhostname r1\nntp clock-period 17179868\n"))
	b.submit("try", "#rule-try-submit")
	b.run("try result", chromedp.WaitVisible(chromedp.CSS("#try-result")))
	if got := b.eval(`document.getElementById("try-counts").textContent`); got != "3 lines: 2 ignored whole, 0 compared with a part masked." {
		t.Errorf("try counts %q", got)
	}
	b.shot("rules-try")
	b.open("/settings")
	b.run("settings", chromedp.WaitVisible(chromedp.CSS("#retention-form")))
	b.shot("settings")

	b.checkConsole()
}
