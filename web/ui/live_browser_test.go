package ui_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/devsim"
)

// TestBackUpNowFollowsTheJobInChromium presses "Back up now" on the device
// list and on a device's page, and watches each follow the backup with no
// reload: the row and the summary say it is queued or running, linked to
// its job, then show how it ended, and the history gains the new version.
// A box ticked on the list while the row changes stays ticked. The device
// sends its configuration slowly for about 3 s, so the backup is seen
// running.
func TestBackUpNowFollowsTheJobInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := seedFleet(t, e)
	slow := devsim.Options{Failures: []devsim.Failure{devsim.FailSlowDrip}, DripDelay: 40 * time.Millisecond, DripBudget: 3 * time.Second}
	listed := jobsSimDevice(t, e, "slow-list", f.core, slow)
	paged := jobsSimDevice(t, e, "slow-page", f.core, slow)
	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)

	// The page asks every 2 s; a backup of about 3 s ends within this.
	const liveWait = 20 * time.Second
	noReload := func(where string) {
		t.Helper()
		if got := b.eval(`String(window.liveMark)`); got != "kept" {
			t.Errorf("%s: the page reloaded", where)
		}
	}

	// The list, in English.
	b.open("/login?next=" + "/devices%3Fq%3Dslow-list")
	b.signIn("operator", "operator-password-1")
	row := fmt.Sprintf("#device-row-%d", listed)
	b.run("device list", chromedp.WaitVisible(chromedp.CSS(row)))
	if got := b.eval(`String(!!document.querySelector("` + row + ` .devices-job"))`); got != "false" {
		t.Fatal("a job is shown before any was queued")
	}
	b.submit("back up now", row+` button[form="device-backup-one"]`)
	b.waitFor("the row shows the job", `!!document.querySelector("`+row+`[data-job]")`, liveWait)
	job := b.eval(`document.querySelector("` + row + ` .devices-job").textContent`)
	if job != "Backup queued" && job != "Backing up…" {
		t.Errorf("the row's job reads %q", job)
	}
	if got := b.eval(`document.querySelector("` + row + ` .devices-job").getAttribute("href")`); got != fmt.Sprintf("/jobs?device=%d", listed) {
		t.Errorf("the row's job links to %q", got)
	}
	b.eval(`(window.liveMark = "kept", "")`)
	b.run("tick the row", chromedp.Click(chromedp.CSS(row+` input[type="checkbox"]`)))
	b.waitFor("the row shows the result", `(function () {
		var tr = document.querySelector("`+row+`");
		return !tr.hasAttribute("data-job") && !!tr.querySelector(".devices-result-ok");
	})()`, liveWait)
	noReload("list")
	if got := b.eval(`String(document.querySelector("` + row + ` input[type=checkbox]").checked) + " " +
		document.querySelector("#device-bulk-backup .devices-selected-count").textContent`); got != "true (1)" {
		t.Errorf("after the row changed, its box and the count read %q, want ticked and (1)", got)
	}

	// A device's page, in Chinese.
	b.setLang("zh")
	b.open(fmt.Sprintf("/devices/%d", paged))
	if b.eval(`String(!!document.getElementById("history-empty"))`) != "true" {
		t.Fatal("the device has a history before its first backup")
	}
	b.submit("立即备份", "#device-backup-now")
	b.waitFor("the summary shows the job", `!!document.getElementById("device-job")`, liveWait)
	if got := b.eval(`document.getElementById("device-job").textContent`); got != "备份排队中" && got != "正在备份…" {
		t.Errorf("the summary's job reads %q", got)
	}
	b.eval(`(window.liveMark = "kept", "")`)
	b.waitFor("the summary shows the result", `!document.getElementById("device-job") &&
		!!document.querySelector("#device-summary .device-ok")`, liveWait)
	b.waitFor("the history shows the version", `document.querySelectorAll("#history-table tbody tr").length === 1`, liveWait)
	noReload("device page")
	if got := b.eval(`document.querySelector("#history-table .device-badge-ok").textContent`); !hasHan(got) {
		t.Errorf("the new history row reads %q, not Chinese", got)
	}
	b.checkConsole()
}
