package ui_test

import (
	"backupd/internal/testkit"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/db"
)

// TestJobsLiveInChromium opens the jobs page and watches it follow the
// queue without a reload: a backup started behind its back appears as
// running, with the counts and the progress bar; the Cancel button stops
// it, and the row leaves the list while the finished count goes up. The
// device hangs mid-output, so the job runs until it is cancelled.
func TestJobsLiveInChromium(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := testkit.Chromium(t, ctx, 1280, 900)
	defer cancelAlloc()

	e := newEnv(t)
	f := seedFleet(t, e)
	dev := jobsSimDevice(t, e, "hanging-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)

	var (
		mu       sync.Mutex
		problems []string
	)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// Console starts the browser; it must do so before anything else runs
	// in it, not from the goroutine.
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
	// waitFor waits until the page's expression is true, as the page's
	// own polling (every 2 s) makes it.
	waitFor := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(browserCtx, chromedp.Poll[bool](expr,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(12*time.Second))); err != nil {
			text, _ := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.querySelector("main").innerText.slice(0, 2000)`))
			t.Fatalf("%s: %v; the page shows:\n%s", what, err, text)
		}
	}
	count := func(name string) string {
		return eval(`document.querySelector('#job-counts [data-count="` + name + `"]').textContent`)
	}

	if _, err := chromedp.RunResponse(browserCtx, chromedp.Navigate(e.srv.URL+"/login?next=/jobs")); err != nil {
		t.Fatal(err)
	}
	run("sign in",
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "operator"),
		chromedp.SendKeys(chromedp.CSS("#password"), "operator-password-1"))
	if _, err := chromedp.RunResponse(browserCtx, chromedp.Click(chromedp.CSS("#sign-in"))); err != nil {
		t.Fatal(err)
	}
	run("jobs page", chromedp.WaitVisible(chromedp.CSS("#jobs-table")))
	if p := eval(`location.pathname`); p != "/jobs" {
		t.Fatalf("signed in to %s, want /jobs", p)
	}
	waitFor("live indicator", `document.getElementById("jobs-live").dataset.live === "live"`)
	if eval(`getComputedStyle(document.getElementById("jobs-empty")).display`) == "none" || count("running") != "0" {
		t.Fatal("the empty queue is not shown as empty")
	}
	// A reload would lose this mark.
	eval(`(window.jobsMark = "kept", "")`)

	ids, err := e.engine.Enqueue(context.Background(), []int64{dev}, db.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`#jobs-rows tr[data-job-id="%d"]`, ids[0])
	waitFor("the running job appears", `(function () {
		var tr = document.querySelector('`+row+`');
		return !!tr && tr.dataset.state === "running";
	})()`)
	if got := eval(`document.querySelector('` + row + ` [data-field="state"]').textContent`); got != "Running" {
		t.Errorf("state cell %q", got)
	}
	if got := eval(`document.querySelector('` + row + ` [data-field="device"]').getAttribute("href")`); got != fmt.Sprintf("/devices/%d", dev) {
		t.Errorf("device link %q", got)
	}
	if got := count("running"); got != "1" {
		t.Errorf("running count %s, want 1", got)
	}
	if got := eval(`document.getElementById("jobs-empty").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Error("the empty-queue note stays with a job listed")
	}
	waitFor("progress", `!document.getElementById("job-progress").hidden &&
		document.getElementById("job-progress-text").textContent === "Backups done: 0 of 1"`)

	// Cancel from the row: the script asks the server and the row goes
	// once the engine has stopped the backup.
	run("cancel", chromedp.Click(chromedp.CSS(row+` button`)))
	waitFor("the cancelled job leaves the queue", `!document.querySelector('`+row+`') &&
		document.querySelector('#job-counts [data-count="finished_last_hour"]').textContent === "1"`)
	waitFor("progress complete", `document.getElementById("job-progress-text").textContent === "Backups done: all 1"`)
	if s := jobsState(t, e, ids[0]); s != db.JobCancelled {
		t.Errorf("job state %s after the click", s)
	}
	if got := eval(`String(window.jobsMark)`); got != "kept" {
		t.Error("the page reloaded")
	}
	if eval(`document.getElementById("jobs-error").hidden ? "hidden" : "shown"`) != "hidden" {
		t.Errorf("error shown: %s", eval(`document.getElementById("jobs-error").textContent`))
	}

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser reported: %s", p)
	}
}
