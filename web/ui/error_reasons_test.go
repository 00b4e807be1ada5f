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
