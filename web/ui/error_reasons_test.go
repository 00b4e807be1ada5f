package ui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A failed backup says why in the page's language, before the device's or
// the network's own words: a refused login (the simulator refuses the
// password) and a device without a credential, on the dashboard, the jobs
// page and its live list, and the device's history, in English and in
// Chinese.
func TestFailuresSayWhyInTheirLanguage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	f := seedFleet(t, e)
	refused := jobsSimDevice(t, e, "refuses-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailWrongPassword}})
	bare, err := e.store.CreateDevice(ctx, db.Device{Name: "bare-1", Host: "127.0.0.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.engine.Enqueue(ctx, []int64{refused, bare.ID}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		jobsWaitState(t, e, id, queue.JobFailed, 30*time.Second)
	}
	e.createUser("op", "op-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "op-password-1")

	for _, c := range []struct {
		lang, auth, noCred, join string
	}{
		{"en", "Login refused", "No credential", ": "},
		{"zh-CN", "登录被拒绝", "未设置凭据", "："},
	} {
		b.header.Set("Accept-Language", c.lang)
		expectBody(t, c.lang+" dashboard", b.get("/dashboard"),
			`<strong class="error-reason">`+c.auth+`</strong> `, `<strong class="error-reason">`+c.noCred+`</strong> the device has no credential`)
		expectBody(t, c.lang+" failed jobs", b.get("/jobs?state=failed"), c.auth+c.join, c.noCred+c.join+"the device has no credential")
		p := b.get("/api/jobs?state=failed")
		if !strings.Contains(p.body, `"result_text":"`+c.noCred+c.join+`the device has no credential`) {
			t.Errorf("%s: /api/jobs does not say why:\n%.600s", c.lang, p.body)
		}
		expectBody(t, c.lang+" history", b.get(fmt.Sprintf("/devices/%d?show=all", refused)), `<strong class="error-reason">`+c.auth+`</strong> `)
	}
	// The reason is stored beside the message, on the job and the attempt.
	var jobReason, backupReason string
	peek := dbtest.Peek(t, e.store)
	if err := peek.QueryRow(`SELECT error_reason FROM jobs WHERE id = ?`, ids[1]).Scan(&jobReason); err != nil {
		t.Fatal(err)
	}
	if err := peek.QueryRow(`SELECT error_reason FROM backups WHERE device_id = ? AND success = 0`, bare.ID).Scan(&backupReason); err != nil {
		t.Fatal(err)
	}
	if jobReason != "no_credential" || backupReason != "no_credential" {
		t.Errorf("stored reasons: job %q, attempt %q", jobReason, backupReason)
	}
}

// A failed attempt made here keeps its session log, passwords masked,
// linked from the device's history and the failed jobs; an attempt that
// never reached the device has none, nor does a success. The log goes
// with its device.
func TestFailedAttemptsKeepTheirSessionLog(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	f := seedFleet(t, e)
	refused := jobsSimDevice(t, e, "refuses-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailWrongPassword}})
	fine := jobsSimDevice(t, e, "fine-1", f.core, devsim.Options{})
	bare, err := e.store.CreateDevice(ctx, db.Device{Name: "bare-1", Host: "127.0.0.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.engine.Enqueue(ctx, []int64{refused, fine, bare.ID}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	jobsWaitState(t, e, ids[0], queue.JobFailed, 30*time.Second)
	jobsWaitState(t, e, ids[1], queue.JobSucceeded, 30*time.Second)
	jobsWaitState(t, e, ids[2], queue.JobFailed, 30*time.Second)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")

	var attempt string
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT backup_id FROM jobs WHERE id = ?`, ids[0]).Scan(&attempt); err != nil {
		t.Fatal(err)
	}
	refusedAttempt := attempt
	logPath := fmt.Sprintf("/devices/%d/versions/%s/log", refused, attempt)
	expectBody(t, "history", b.get(fmt.Sprintf("/devices/%d?show=all", refused)), `href="`+logPath+`" class="device-log-link"`)
	expectBody(t, "failed jobs", b.get("/jobs?state=failed"), `href="`+logPath+`" class="job-log-link"`)
	p := b.get(logPath)
	expectBody(t, "session log", p, `id="session-log"`, `<span class="platform-seg platform-seg-note">[ssh] connecting to 127.0.0.1:`,
		"authentication failed for user admin", "Login refused")
	if strings.Contains(p.body, "sim-password-1") {
		t.Error("the session log shows the password")
	}
	for _, dev := range []int64{fine, bare.ID} {
		if strings.Contains(b.get(fmt.Sprintf("/devices/%d?show=all", dev)).body, "device-log-link") {
			t.Errorf("device %d links to a session log it has none of", dev)
		}
	}
	var logs int
	peek := dbtest.Peek(t, e.store)
	if err := peek.QueryRow(`SELECT COUNT(*) FROM backup_logs`).Scan(&logs); err != nil || logs != 1 {
		t.Fatalf("%d session logs kept, want the refused attempt's only (%v)", logs, err)
	}

	// A device that hangs up mid-output: the log has what it said.
	cut := jobsSimDevice(t, e, "cut-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}})
	cutJobs, err := e.engine.Enqueue(ctx, []int64{cut}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	jobsWaitState(t, e, cutJobs[0], queue.JobFailed, 30*time.Second)
	if err := peek.QueryRow(`SELECT backup_id FROM jobs WHERE id = ?`, cutJobs[0]).Scan(&attempt); err != nil {
		t.Fatal(err)
	}
	p = b.get(fmt.Sprintf("/devices/%d/versions/%s/log", cut, attempt))
	expectBody(t, "session log of a hang-up", p, `<span class="platform-seg platform-seg-received">`, `<span class="platform-seg platform-seg-sent">`, "cut-1#")
	if err := peek.QueryRow(`SELECT COUNT(*) FROM backup_logs WHERE backup_id IN (SELECT id FROM backups WHERE device_id = ?)`, refused).Scan(&logs); err != nil || logs != 1 {
		t.Fatalf("the refused device has %d session logs (%v)", logs, err)
	}
	if err := e.store.DeleteDevice(ctx, refused); err != nil {
		t.Fatal(err)
	}
	if err := peek.QueryRow(`SELECT COUNT(*) FROM backup_logs WHERE backup_id = ?`, refusedAttempt).Scan(&logs); err != nil || logs != 0 {
		t.Errorf("%d session logs left after their device was deleted (%v)", logs, err)
	}
}
