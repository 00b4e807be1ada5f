package ui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/db/queue"
)

// TestJobsLiveInChromium opens the jobs page and watches it follow the
// queue without a reload: a backup started behind its back appears as
// running, with the counts and the progress bar; the Cancel button stops
// it, and the row leaves the list while the finished count goes up. The
// device hangs mid-output, so the job runs until it is cancelled.
func TestJobsLiveInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 40*time.Second, 1280, 900)
	f := seedFleet(t, e)
	dev := jobsSimDevice(t, e, "hanging-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)

	// The page polls every 2 s; jobsWait is how long a change may take to
	// show.
	const jobsWait = 12 * time.Second
	count := func(name string) string {
		return b.eval(`document.querySelector('#job-counts [data-count="` + name + `"]').textContent`)
	}

	b.open("/login?next=/jobs")
	b.signIn("operator", "operator-password-1")
	b.run("jobs page", chromedp.WaitVisible(chromedp.CSS("#jobs-table")))
	if p := b.path(); p != "/jobs" {
		t.Fatalf("signed in to %s, want /jobs", p)
	}
	b.waitFor("live indicator", `document.getElementById("jobs-live").dataset.live === "live"`, jobsWait)
	if b.eval(`getComputedStyle(document.getElementById("jobs-empty")).display`) == "none" || count("running") != "0" {
		t.Fatal("the empty queue is not shown as empty")
	}
	// A reload would lose this mark.
	b.eval(`(window.jobsMark = "kept", "")`)

	ids, err := e.engine.Enqueue(context.Background(), []int64{dev}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`#jobs-rows tr[data-job-id="%d"]`, ids[0])
	b.waitFor("the running job appears", `(function () {
		var tr = document.querySelector('`+row+`');
		return !!tr && tr.dataset.state === "running";
	})()`, jobsWait)
	if got := b.eval(`document.querySelector('` + row + ` [data-field="state"]').textContent`); got != "Running" {
		t.Errorf("state cell %q", got)
	}
	if got := b.eval(`document.querySelector('` + row + ` [data-field="device"]').getAttribute("href")`); got != fmt.Sprintf("/devices/%d", dev) {
		t.Errorf("device link %q", got)
	}
	if got := count("running"); got != "1" {
		t.Errorf("running count %s, want 1", got)
	}
	if got := b.shown("#jobs-empty"); got != "hidden" {
		t.Error("the empty-queue note stays with a job listed")
	}
	b.waitFor("progress", `!document.getElementById("job-progress").hidden &&
		document.getElementById("job-progress-text").textContent === "Backups done: 0 of 1"`, jobsWait)

	// Cancel from the row: the script asks the server and the row goes
	// once the engine has stopped the backup.
	b.run("cancel", chromedp.Click(chromedp.CSS(row+` button`)))
	b.waitFor("the cancelled job leaves the queue", `!document.querySelector('`+row+`') &&
		document.querySelector('#job-counts [data-count="finished_last_hour"]').textContent === "1"`, jobsWait)
	b.waitFor("progress complete", `document.getElementById("job-progress-text").textContent === "Backups done: all 1"`, jobsWait)
	if s := jobsState(t, e, ids[0]); s != queue.JobCancelled {
		t.Errorf("job state %s after the click", s)
	}
	if got := b.eval(`String(window.jobsMark)`); got != "kept" {
		t.Error("the page reloaded")
	}
	if b.shown("#jobs-error") != "hidden" {
		t.Errorf("error shown: %s", b.eval(`document.getElementById("jobs-error").textContent`))
	}

	b.checkConsole()
}
