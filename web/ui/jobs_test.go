package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// jobsDeviceID is the id of the device called name.
func jobsDeviceID(t *testing.T, e *env, name string) int64 {
	t.Helper()
	var id int64
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT id FROM devices WHERE name = ?`, name).Scan(&id); err != nil {
		t.Fatalf("device %s: %v", name, err)
	}
	return id
}

// jobsQueue queues one job per device that waits an hour, so that the
// running engine leaves it queued, and returns the jobs' ids.
func jobsQueue(t *testing.T, e *env, devices ...int64) []int64 {
	t.Helper()
	reqs := make([]queue.JobRequest, len(devices))
	for i, d := range devices {
		reqs[i] = queue.JobRequest{DeviceID: d, Trigger: queue.TriggerManual, NotBefore: time.Now().Add(time.Hour)}
	}
	ids, err := e.store.EnqueueJobs(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// jobsEnd ends a job as state (succeeded, failed) ago, with msg as its
// error and backupID as its version; the engine's own way there needs a
// real device.
func jobsEnd(t *testing.T, e *env, id int64, state, msg, backupID string, ago time.Duration) {
	t.Helper()
	end := time.Now().UTC().Add(-ago)
	var errText, bid any
	if msg != "" {
		errText = msg
	}
	if backupID != "" {
		bid = backupID
	}
	// A job ended ago was queued before it started, not now: the batch a
	// later job belongs to goes by when jobs were queued.
	if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `UPDATE jobs SET state = ?, attempt = 1, created_at = ?, started_at = ?,
		finished_at = ?, error = ?, backup_id = ? WHERE id = ?`, state, end.Add(-76*time.Second).Format(db.BackupTimeFormat),
		end.Add(-75*time.Second).Format(db.BackupTimeFormat), end.Format(db.BackupTimeFormat), errText, bid, id); err != nil {
		t.Fatal(err)
	}
}

// jobsState is a job's state in the store.
func jobsState(t *testing.T, e *env, id int64) string {
	t.Helper()
	jobs, err := e.store.GetJobs(context.Background(), []int64{id})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("job %d: %v (%d found)", id, err, len(jobs))
	}
	return jobs[0].State
}

// jobRows returns the job ids of a jobs page's rows, in order.
func jobRows(body string) []string {
	var ids []string
	for _, part := range strings.Split(body, `<tr data-job-id="`)[1:] {
		ids = append(ids, part[:strings.IndexByte(part, '"')])
	}
	return ids
}

func jobsID(id int64) string { return strconv.FormatInt(id, 10) }

// jobsCall sends an internal API request as the browser's script does:
// from this site, with the page's CSRF token unless withToken is false.
func (b *browser) jobsCall(method, path string, withToken bool) page {
	b.e.t.Helper()
	req, err := http.NewRequest(method, b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", b.e.srv.URL)
	if withToken {
		req.Header.Set("X-CSRF-Token", b.csrf)
	}
	return b.do(req)
}

// jobsFixture is seedFleet with jobs: core-1 and branch-1 queued; core-2
// failed 10 minutes ago (with markup in its message); branch-2 succeeded
// two hours ago; core-1 failed two days ago.
type jobsFixture struct {
	fleet
	core1, core2, branch1, branch2         int64
	core1Job, branch1Job                   int64
	core2Failed, branch2Done, core1OldFail int64
}

func newJobsFixture(t *testing.T, e *env) jobsFixture {
	t.Helper()
	f := jobsFixture{fleet: seedFleet(t, e)}
	f.core1, f.core2 = jobsDeviceID(t, e, "core-1"), jobsDeviceID(t, e, "core-2")
	f.branch1, f.branch2 = jobsDeviceID(t, e, "branch-1"), jobsDeviceID(t, e, "branch-2")
	f.core1OldFail = jobsQueue(t, e, f.core1)[0]
	jobsEnd(t, e, f.core1OldFail, queue.JobFailed, "old failure", "", 48*time.Hour)
	ids := jobsQueue(t, e, f.core2, f.branch2)
	f.core2Failed, f.branch2Done = ids[0], ids[1]
	jobsEnd(t, e, f.core2Failed, queue.JobFailed, "connect: refused <b>bold</b>", "", 10*time.Minute)
	jobsEnd(t, e, f.branch2Done, queue.JobSucceeded, "", "b-branch2", 2*time.Hour)
	ids = jobsQueue(t, e, f.core1, f.branch1)
	f.core1Job, f.branch1Job = ids[0], ids[1]
	return f
}

func TestJobsPageListsViewsWithinScope(t *testing.T) {
	e := newEnv(t)
	f := newJobsFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.branch)

	admin := e.browser()
	admin.mustLogin("root", "root-password-1")
	p := admin.get("/jobs")
	expect(t, "admin jobs", p, http.StatusOK, "")
	if got, want := strings.Join(jobRows(p.body), ","), jobsID(f.core1Job)+","+jobsID(f.branch1Job); got != want {
		t.Errorf("active rows %s, want %s (the queue in the order it runs)", got, want)
	}
	want := map[string]string{"queued": "2", "running": "0", "finished_last_hour": "1", "finished_last_day": "2", "failed_last_day": "1"}
	if got := counts(p.body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("admin counts %v, want %v", got, want)
	}
	expectBody(t, "admin jobs", p, `href="/devices/`+jobsID(f.core1)+`"`, "Queued", "Manual",
		`action="/jobs/`+jobsID(f.core1Job)+`/cancel"`, `<a href="/jobs" aria-current="page">`, `href="/search"`,
		`id="job-progress"`, "Backups done: 0 of 2")

	p = admin.get("/jobs?state=finished")
	expect(t, "finished", p, http.StatusOK, "")
	if got, want := strings.Join(jobRows(p.body), ","), fmt.Sprintf("%d,%d,%d", f.branch2Done, f.core2Failed, f.core1OldFail); got != want {
		t.Errorf("finished rows %s, want %s (newest first)", got, want)
	}
	expectBody(t, "finished", p, "connect: refused &lt;b&gt;bold&lt;/b&gt;", // escaped, never markup
		`href="/devices/`+jobsID(f.branch2)+`/versions/b-branch2"`, "Succeeded", "1 min 15 s", "1 of 3")
	if strings.Contains(p.body, "<b>bold") || strings.Contains(p.body, `/cancel"`) {
		t.Error("the finished list shows markup from a message or a cancel button")
	}

	p = admin.get("/jobs?state=failed&device=" + jobsID(f.core1))
	if got := strings.Join(jobRows(p.body), ","); got != jobsID(f.core1OldFail) {
		t.Errorf("failed jobs of core-1: %s, want %d", got, f.core1OldFail)
	}
	expectBody(t, "device filter", p, `id="job-device-filter"`, "core-1")

	// A user scoped to Branch sees and counts Branch's jobs only, and
	// gets no cancel button without backups.create.
	br := e.browser()
	br.mustLogin("brancher", "branch-password-1")
	p = br.get("/jobs")
	expect(t, "brancher jobs", p, http.StatusOK, "")
	if got := strings.Join(jobRows(p.body), ","); got != jobsID(f.branch1Job) {
		t.Errorf("brancher sees rows %s, want only %d", got, f.branch1Job)
	}
	want = map[string]string{"queued": "1", "running": "0", "finished_last_hour": "0", "finished_last_day": "1", "failed_last_day": "0"}
	if got := counts(p.body); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("brancher counts %v, want %v", got, want)
	}
	if strings.Contains(p.body, "core-") || strings.Contains(p.body, "job-cancel") {
		t.Error("brancher's page names a Core device or offers cancel")
	}
	p = br.get("/jobs?state=finished")
	if got := strings.Join(jobRows(p.body), ","); got != jobsID(f.branch2Done) || strings.Contains(p.body, "refused") {
		t.Errorf("brancher's finished rows %s, want only %d", got, f.branch2Done)
	}
	expect(t, "another group's device as filter", br.get("/jobs?device="+jobsID(f.core1)), http.StatusForbidden, "")
	expect(t, "unknown device as filter", br.get("/jobs?device=999999"), http.StatusNotFound, "")
	expect(t, "bad view", br.get("/jobs?state=bogus"), http.StatusSeeOther, "/jobs")

	// Backup readers see the page; users without backups.view do not.
	nobody := e.browser()
	e.createUser("reader", "reader-password-1", auth.RoleBackupReader, true)
	nobody.mustLogin("reader", "reader-password-1")
	expect(t, "backup reader", nobody.get("/jobs"), http.StatusOK, "")
}

func TestJobsPageIsPaged(t *testing.T) {
	e := newEnv(t)
	core := seedFleet(t, e).core
	ctx := context.Background()
	var devs []int64
	for i := range 60 {
		d, err := e.store.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("pg-%02d", i), Host: "192.0.2.9", Port: 22,
			Platform: "cisco_ios", LoginMethod: "ssh", GroupID: &core, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d.ID)
	}
	jobsQueue(t, e, devs...)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	p := b.get("/jobs")
	if n := len(jobRows(p.body)); n != 50 {
		t.Errorf("page 1 has %d rows, want 50", n)
	}
	expectBody(t, "page 1", p, "Page 1 of 2 · jobs: 60", `href="/jobs?page=2&amp;state=active" rel="next"`)
	p = b.get("/jobs?state=active&page=2")
	if n := len(jobRows(p.body)); n != 10 {
		t.Errorf("page 2 has %d rows, want 10", n)
	}
	expectBody(t, "page 2", p, `rel="prev"`)
	// Past the end: the last page.
	p = b.get("/jobs?state=active&page=7")
	if n := len(jobRows(p.body)); n != 10 {
		t.Errorf("page 7 shows %d rows, want the last page's 10", n)
	}
}

// jobsJSON is GET /api/jobs's answer.
type jobsJSON struct {
	State  string         `json:"state"`
	Counts map[string]int `json:"counts"`
	Items  []struct {
		ID          int64    `json:"id"`
		DeviceID    int64    `json:"device_id"`
		DeviceName  string   `json:"device_name"`
		DeviceURL   string   `json:"device_url"`
		State       string   `json:"state"`
		StateText   string   `json:"state_text"`
		TriggerText string   `json:"trigger_text"`
		AttemptText string   `json:"attempt_text"`
		QueuedText  string   `json:"queued_text"`
		Duration    *float64 `json:"duration_seconds"`
		ResultText  string   `json:"result_text"`
		ResultURL   string   `json:"result_url"`
		CancelURL   string   `json:"cancel_url"`
		Retry       bool     `json:"retry"`
	} `json:"items"`
	Total    int `json:"total"`
	Page     int `json:"page"`
	PerPage  int `json:"per_page"`
	Progress *struct {
		Since    int64  `json:"since"`
		Total    int    `json:"total"`
		Done     int    `json:"done"`
		Failed   int    `json:"failed"`
		Complete bool   `json:"complete"`
		Text     string `json:"text"`
	} `json:"progress"`
	PagerText string `json:"pager_text"`
}

func decodeJobs(t *testing.T, p page) jobsJSON {
	t.Helper()
	if p.status != http.StatusOK {
		t.Fatalf("GET /api/jobs: %d %s", p.status, p.body)
	}
	var out jobsJSON
	if err := json.Unmarshal([]byte(p.body), &out); err != nil {
		t.Fatalf("decode %s: %v", p.body, err)
	}
	return out
}

func TestJobsAPIShapeAndScope(t *testing.T) {
	e := newEnv(t)
	f := newJobsFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("brancher", "branch-password-1", auth.RoleViewer, false, f.branch)

	admin := e.browser()
	admin.mustLogin("root", "root-password-1")
	j := decodeJobs(t, admin.jobsCall(http.MethodGet, "/api/jobs?state=active", false))
	if j.State != "active" || j.Total != 2 || j.Page != 1 || j.PerPage != 50 || len(j.Items) != 2 {
		t.Fatalf("admin active: %+v", j)
	}
	it := j.Items[0]
	if it.ID != f.core1Job || it.DeviceName != "core-1" || it.DeviceURL != "/devices/"+jobsID(f.core1) || it.State != "queued" ||
		it.StateText != "Queued" || it.TriggerText != "Manual" || it.AttemptText != "—" || it.QueuedText == "" ||
		it.Duration != nil || it.CancelURL != "/jobs/"+jobsID(f.core1Job)+"/cancel" {
		t.Errorf("first item %+v", it)
	}
	if !strings.HasPrefix(it.ResultText, "Waits until ") {
		t.Errorf("a job waiting for its time says %q", it.ResultText)
	}
	if j.Counts["queued"] != 2 || j.Counts["failed_last_day"] != 1 || j.Counts["finished_last_day"] != 2 {
		t.Errorf("counts %v", j.Counts)
	}
	if j.Progress == nil || j.Progress.Since != f.core1Job || j.Progress.Total != 2 || j.Progress.Done != 0 || j.Progress.Text != "Backups done: 0 of 2" {
		t.Errorf("progress %+v", j.Progress)
	}
	// Progress from an earlier job counts the finished ones since.
	j = decodeJobs(t, admin.jobsCall(http.MethodGet, "/api/jobs?state=finished&since="+jobsID(f.core2Failed), false))
	if p := j.Progress; p == nil || p.Total != 4 || p.Done != 2 || p.Failed != 1 || p.Text != "Backups done: 2 of 4 · 1 failed" {
		t.Errorf("progress since %d: %+v", f.core2Failed, j.Progress)
	}
	if len(j.Items) != 3 || j.Items[0].ResultURL != "/devices/"+jobsID(f.branch2)+"/versions/b-branch2" || j.Items[0].Duration == nil || *j.Items[0].Duration != 75 {
		t.Errorf("finished items %+v", j.Items)
	}

	// Scope: the Branch viewer's answer holds Branch's jobs only, without
	// cancel links.
	br := e.browser()
	br.mustLogin("brancher", "branch-password-1")
	j = decodeJobs(t, br.jobsCall(http.MethodGet, "/api/jobs?state=active", false))
	if len(j.Items) != 1 || j.Items[0].ID != f.branch1Job || j.Items[0].CancelURL != "" || j.Counts["queued"] != 1 || j.Counts["failed_last_day"] != 0 {
		t.Errorf("brancher active: %+v", j)
	}
	if j.Progress == nil || j.Progress.Since != f.branch1Job || j.Progress.Total != 1 {
		t.Errorf("brancher progress %+v", j.Progress)
	}
	j = decodeJobs(t, br.jobsCall(http.MethodGet, "/api/jobs?state=finished", false))
	if len(j.Items) != 1 || j.Items[0].ID != f.branch2Done {
		t.Errorf("brancher finished: %+v", j.Items)
	}
	if p := br.jobsCall(http.MethodGet, "/api/jobs?device="+jobsID(f.core1), false); p.status != http.StatusForbidden {
		t.Errorf("another group's device: %d %s", p.status, p.body)
	}

	// Chinese texts for a Chinese session.
	br.post("/lang", url.Values{"lang": {"zh"}, "next": {"/jobs"}})
	j = decodeJobs(t, br.jobsCall(http.MethodGet, "/api/jobs", false))
	if len(j.Items) != 1 || j.Items[0].StateText != "排队中" || !strings.Contains(j.PagerText, "第 1 页") {
		t.Errorf("Chinese answer: %+v", j)
	}

	for _, q := range []string{"state=bogus", "page=0", "page=x", "device=-1", "since=abc"} {
		p := admin.jobsCall(http.MethodGet, "/api/jobs?"+q, false)
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "VALIDATION_ERROR") {
			t.Errorf("%s: %d %s, want 422", q, p.status, p.body)
		}
	}
	if p := e.browser().jobsCall(http.MethodGet, "/api/jobs", false); p.status != http.StatusUnauthorized {
		t.Errorf("without a session: %d", p.status)
	}
}

func TestCancelJob(t *testing.T) {
	e := newEnv(t)
	f := newJobsFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	e.createUser("brop", "brop-password-1", auth.RoleOperator, false, f.branch)
	cancelAudits := func() []db.AuditEntry {
		var out []db.AuditEntry
		for _, a := range e.auditEntries() {
			if a.Action == "job.cancel" {
				out = append(out, a)
			}
		}
		return out
	}

	// A viewer sees no cancel button and is refused either way.
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	p := v.get("/jobs")
	if strings.Contains(p.body, "job-cancel") {
		t.Error("a viewer is offered cancel")
	}
	expect(t, "viewer cancels", v.post("/jobs/"+jobsID(f.core1Job)+"/cancel", nil), http.StatusForbidden, "")
	if p := v.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(f.core1Job), true); p.status != http.StatusForbidden {
		t.Errorf("viewer DELETE: %d", p.status)
	}

	// An operator of Branch cannot cancel Core's job.
	op := e.browser()
	op.mustLogin("brop", "brop-password-1")
	op.get("/jobs")
	expect(t, "out-of-scope cancel", op.post("/jobs/"+jobsID(f.core1Job)+"/cancel", nil), http.StatusForbidden, "")
	if p := op.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(f.core1Job), true); p.status != http.StatusForbidden || !strings.Contains(p.body, "PERMISSION_DENIED") {
		t.Errorf("out-of-scope DELETE: %d %s", p.status, p.body)
	}

	// CSRF: a form without its token, a script call without its header.
	admin := e.browser()
	admin.mustLogin("root", "root-password-1")
	admin.get("/jobs")
	expect(t, "cancel without token", admin.post("/jobs/"+jobsID(f.core1Job)+"/cancel", url.Values{"csrf": {""}}), http.StatusForbidden, "")
	if p := admin.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(f.core1Job), false); p.status != http.StatusForbidden {
		t.Errorf("DELETE without token: %d", p.status)
	}
	if s := jobsState(t, e, f.core1Job); s != queue.JobQueued || len(cancelAudits()) != 0 {
		t.Fatalf("refused cancels changed something: state %s, %d audit entries", s, len(cancelAudits()))
	}

	// The form cancels and comes back to the list it came from.
	p = admin.post("/jobs/"+jobsID(f.core1Job)+"/cancel", url.Values{"back": {"/jobs?state=active&page=1"}})
	expect(t, "cancel", p, http.StatusSeeOther, "/jobs?notice=cancelled&page=1&state=active")
	if s := jobsState(t, e, f.core1Job); s != queue.JobCancelled {
		t.Errorf("job state %s after cancel", s)
	}
	audits := cancelAudits()
	if len(audits) != 1 || audits[0].TargetType != "job" || audits[0].TargetID != jobsID(f.core1Job) || audits[0].Username != "root" ||
		audits[0].Details["device_name"] != "core-1" || audits[0].Details["outcome"] != "cancelled" {
		t.Errorf("audit %+v", audits)
	}
	p = admin.get("/jobs?notice=cancelled&state=active")
	expectBody(t, "after cancel", p, `id="jobs-notice"`, "The queued backup was cancelled.")
	if strings.Contains(strings.Join(jobRows(p.body), ","), jobsID(f.core1Job)) {
		t.Error("the cancelled job is still listed as active")
	}
	// Again: nothing left to cancel, nothing recorded.
	expect(t, "cancel again", admin.post("/jobs/"+jobsID(f.core1Job)+"/cancel", nil), http.StatusSeeOther, "/jobs?notice=already_finished")
	// A back address elsewhere is ignored.
	expect(t, "cancel with foreign back", admin.post("/jobs/"+jobsID(f.core1Job)+"/cancel", url.Values{"back": {"https://evil.example/"}}),
		http.StatusSeeOther, "/jobs?notice=already_finished")
	if n := len(cancelAudits()); n != 1 {
		t.Errorf("%d cancel audit entries after cancelling a finished job, want 1", n)
	}
	expect(t, "unknown job", admin.post("/jobs/999999/cancel", nil), http.StatusNotFound, "")

	// The script's call: 200, then 409 once it is over.
	op.get("/jobs")
	p = op.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(f.branch1Job), true)
	if p.status != http.StatusOK || !strings.Contains(p.body, `"outcome":"cancelled"`) {
		t.Errorf("DELETE: %d %s", p.status, p.body)
	}
	if s := jobsState(t, e, f.branch1Job); s != queue.JobCancelled {
		t.Errorf("job state %s after DELETE", s)
	}
	if p := op.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(f.branch1Job), true); p.status != http.StatusConflict {
		t.Errorf("second DELETE: %d %s", p.status, p.body)
	}
	if p := op.jobsCall(http.MethodDelete, "/api/jobs/999999", true); p.status != http.StatusNotFound {
		t.Errorf("DELETE unknown: %d", p.status)
	}
	if audits := cancelAudits(); len(audits) != 2 || audits[1].Username != "brop" {
		t.Errorf("audit after DELETE: %+v", audits)
	}
}

// jobsSimDevice starts a simulated cisco_ios device on loopback (o adds
// failures) and registers it in group with its login.
func jobsSimDevice(t *testing.T, e *env, name string, group int64, o devsim.Options) int64 {
	t.Helper()
	ctx := context.Background()
	o.Platform, o.Hostname, o.Username, o.Password, o.SSHAddr = "cisco_ios", name, "admin", "sim-password-1", "127.0.0.1:0"
	d, err := devsim.NewDevice(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "login of " + name, Username: "admin",
		Password: e.sealer.Seal("sim-password-1", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(d.SSHAddr())
	p, _ := strconv.Atoi(port)
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "127.0.0.1", Port: p, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &group, CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return dev.ID
}

// jobsWaitState waits (up to limit) for a job to reach state.
func jobsWaitState(t *testing.T, e *env, id int64, state string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for jobsState(t, e, id) != state {
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s after %s, want %s", id, jobsState(t, e, id), limit, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCancelRunningJob stops a backup that hangs on its device: the
// engine ends it as cancelled within seconds, long before its timeouts.
func TestCancelRunningJob(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	dev := jobsSimDevice(t, e, "hanging-1", f.core, devsim.Options{Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	ids, err := e.engine.Enqueue(context.Background(), []int64{dev}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	jobsWaitState(t, e, ids[0], queue.JobRunning, 10*time.Second)

	b := e.browser()
	b.mustLogin("root", "root-password-1")
	p := b.get("/jobs")
	expectBody(t, "running job", p, `data-state="running"`, "Running", `action="/jobs/`+jobsID(ids[0])+`/cancel"`)
	p = b.jobsCall(http.MethodDelete, "/api/jobs/"+jobsID(ids[0]), true)
	if p.status != http.StatusOK || !strings.Contains(p.body, `"outcome":"cancel_requested"`) {
		t.Fatalf("DELETE running: %d %s", p.status, p.body)
	}
	// Well within the hang's command timeout (10 s).
	jobsWaitState(t, e, ids[0], queue.JobCancelled, 8*time.Second)
	j := decodeJobs(t, b.jobsCall(http.MethodGet, "/api/jobs?state=finished", false))
	if len(j.Items) != 1 || j.Items[0].State != queue.JobCancelled || j.Items[0].ResultText != "Cancelled by an operator" {
		t.Errorf("finished list after the cancel: %+v", j.Items)
	}
}

// Attempts cut short by the backup process stopping show beside the
// attempts they did not use up, and a job given up for them says why, in
// the session's language.
func TestJobsShowInterruptions(t *testing.T) {
	e := newEnv(t)
	seedFleet(t, e)
	core2, branch2 := jobsDeviceID(t, e, "core-2"), jobsDeviceID(t, e, "branch-2")
	ids := jobsQueue(t, e, core2, branch2)
	givenUp, done := ids[0], ids[1]
	jobsEnd(t, e, givenUp, queue.JobFailed, queue.ErrorInterruptedTooOften, "", time.Minute)
	jobsEnd(t, e, done, queue.JobSucceeded, "", "b-branch2", time.Minute)
	for id, counts := range map[int64][2]int{givenUp: {0, queue.DefaultMaxInterruptions}, done: {1, 2}} {
		if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `UPDATE jobs SET attempt = ?, interruptions = ? WHERE id = ?`, counts[0], counts[1], id); err != nil {
			t.Fatal(err)
		}
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	texts := func() map[int64][2]string {
		out := map[int64][2]string{}
		for _, it := range decodeJobs(t, b.jobsCall(http.MethodGet, "/api/jobs?state=finished", false)).Items {
			out[it.ID] = [2]string{it.AttemptText, it.ResultText}
		}
		return out
	}
	got := texts()
	if got[givenUp] != [2]string{"interrupted 10×", "Given up: the backup process stopped before this device's backup finished too many times; see the server log"} ||
		got[done][0] != "1 of 3 · interrupted 2×" {
		t.Errorf("English texts: %v", got)
	}
	expectBody(t, "finished page", b.get("/jobs?state=finished"), "1 of 3 · interrupted 2×", "interrupted 10×", "Given up: the backup process stopped")
	b.post("/lang", url.Values{"lang": {"zh"}, "next": {"/jobs"}})
	got = texts()
	if got[givenUp] != [2]string{"中断 10 次", "已放弃：备份进程多次在此设备的备份完成前停止；请查看服务器日志"} ||
		got[done][0] != "第 1 次，共 3 次 · 中断 2 次" {
		t.Errorf("Chinese texts: %v", got)
	}
}

// A failed job offers Retry to a user who may start backups: it queues
// the device again, as "Back up now" does, and the jobs page follows the
// new job. A viewer is offered nothing; a job that did not fail neither.
func TestRetryFailedJob(t *testing.T) {
	e := newEnv(t)
	f := newJobsFixture(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	retryForm := fmt.Sprintf(`<input type="hidden" name="id" value="%d">`, f.core2)

	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	if p := v.get("/jobs?state=failed"); strings.Contains(p.body, "jobs-retry-button") {
		t.Error("a viewer is offered Retry")
	}

	admin := e.browser()
	admin.mustLogin("root", "root-password-1")
	p := admin.get("/jobs?state=finished")
	expect(t, "finished", p, http.StatusOK, "")
	if !strings.Contains(p.body, retryForm) {
		t.Fatalf("the failed job of core-2 offers no Retry")
	}
	if strings.Contains(p.body, fmt.Sprintf(`<input type="hidden" name="id" value="%d">`, f.branch2)) {
		t.Error("a succeeded job offers Retry")
	}
	j := decodeJobs(t, admin.jobsCall(http.MethodGet, "/api/jobs?state=failed", false))
	retry := map[int64]bool{}
	for _, it := range j.Items {
		retry[it.ID] = it.Retry
	}
	if !retry[f.core2Failed] {
		t.Errorf("/api/jobs does not offer Retry for the failed job: %+v", j.Items)
	}

	p = admin.post("/devices/backup", url.Values{"id": {fmt.Sprint(f.core2)}, "next": {"/jobs"}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/jobs?") || !strings.Contains(loc, "since=") {
		t.Fatalf("retry: %d to %q, want the jobs page following the new job", p.status, loc)
	}
	// The jobs page follows the new job (it may have run already).
	to, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	since, err := strconv.ParseInt(to.Query().Get("since"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := e.store.GetJobs(context.Background(), []int64{since})
	if err != nil || len(jobs) != 1 || jobs[0].DeviceID != f.core2 || since <= f.core2Failed {
		t.Errorf("after Retry the page follows job %d: %+v, %v; want a new job of core-2", since, jobs, err)
	}
	expect(t, "jobs page after Retry", admin.get(loc), http.StatusOK, "")
}
