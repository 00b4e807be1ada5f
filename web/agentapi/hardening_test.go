package agentapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"backupd/app/agent"
	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/web/agentapi"
)

// rawCollector enrols a collector in the env's zone through the protocol
// and returns its bearer token: the test then speaks the protocol itself,
// as a collector that misbehaves would.
func rawCollector(t *testing.T, e *env, name string) string {
	t.Helper()
	token, _, err := agentapi.NewEnrolmentToken(context.Background(), e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := agent.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(agent.EnrolRequest{Token: token, Name: name, PublicKey: agent.EncodeKey(key.Public), Version: "raw"})
	var resp agent.EnrolResponse
	if status := call(t, e, "enrol", "", string(body), &resp); status != http.StatusOK || resp.Token == "" {
		t.Fatalf("enrol: %d %+v", status, resp)
	}
	return resp.Token
}

// call posts body to the protocol's path and decodes a 200's answer into
// out.
func call(t *testing.T, e *env, path, bearer, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+agent.PathPrefix+path, strings.NewReader(body))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// pollFor polls (without waiting) until the collector is handed the
// job of device, bounded.
func pollFor(t *testing.T, e *env, bearer string, held []int64) agent.Job {
	t.Helper()
	body, _ := json.Marshal(agent.PollRequest{Version: "raw", Held: held, Free: 1})
	for range 50 {
		var resp agent.PollResponse
		if status := call(t, e, "poll", bearer, string(body), &resp); status != http.StatusOK {
			t.Fatalf("poll: %d", status)
		}
		if len(resp.Jobs) == 1 {
			return resp.Jobs[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the collector was handed no job")
	return agent.Job{}
}

// A collector that reports a job cancelled when no operator cancelled
// it does not get to end the backup quietly: the attempt fails, says
// why, and the device's backup counts as failed. A cancellation the
// operator did ask for still ends the job as cancelled.
func TestCollectorCannotCancelOnItsOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dev := e.device(t, "site-unasked", e.zone.ID)
	bearer := rawCollector(t, e, "rogue")
	ids, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	job := pollFor(t, e, bearer, nil)
	result := func(j agent.Job) string {
		b, _ := json.Marshal(agent.ResultRequest{Attempt: j.Attempt, Reason: backup.CaptureCancelled, Error: "cancelled by an operator"})
		return string(b)
	}
	if status := call(t, e, fmt.Sprintf("jobs/%d/result", job.ID), bearer, result(job), nil); status != http.StatusNoContent {
		t.Fatalf("result: %d", status)
	}
	jobs := e.waitJobs(t, ids, 10*time.Second)
	if jobs[0].State != queue.JobFailed || jobs[0].Error == nil || *jobs[0].Error != backup.ErrorUnaskedCancel {
		t.Fatalf("job = %s %v; want failed: %q", jobs[0].State, jobs[0].Error, backup.ErrorUnaskedCancel)
	}
	b, err := e.store.GetBackup(ctx, *jobs[0].BackupID)
	if err != nil || b.Success || b.ErrorMessage == nil || *b.ErrorMessage != backup.ErrorUnaskedCancel {
		t.Fatalf("backup = %+v, %v; want failed, not cancelled", b, err)
	}
	if d, err := e.store.GetDevice(ctx, dev); err != nil || d.LastBackupSuccess == nil || *d.LastBackupSuccess {
		t.Fatalf("device's last backup success = %v, %v; want failed", d.LastBackupSuccess, err)
	}
	if !strings.Contains(e.log.String(), "no one cancelled") {
		t.Fatalf("the server's log does not say why:\n%s", e.log.String())
	}

	// Asked by an operator: cancelled.
	ids, err = e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	job = pollFor(t, e, bearer, nil)
	if ok, err := e.store.CancelJob(ctx, job.ID); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if status := call(t, e, fmt.Sprintf("jobs/%d/result", job.ID), bearer, result(job), nil); status != http.StatusNoContent {
		t.Fatalf("result: %d", status)
	}
	jobs = e.waitJobs(t, ids, 10*time.Second)
	if jobs[0].State != queue.JobCancelled || jobs[0].Error == nil || *jobs[0].Error != queue.ErrorCancelled {
		t.Fatalf("job = %s %v; want cancelled", jobs[0].State, jobs[0].Error)
	}
}

// repeated reads an endless run of one byte.
type repeated byte

func (b repeated) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// uploadResult streams a failure report whose text is textBytes long,
// without holding it in memory, and returns the status and refusal.
// sized sends its length first (Content-Length), as the collector does;
// otherwise it goes chunked and the server finds out as it reads.
func uploadResult(t *testing.T, e *env, bearer string, job agent.Job, textBytes int64, sized bool) (int, agent.ErrorResponse) {
	t.Helper()
	prefix := fmt.Sprintf(`{"attempt":%q,"reason":"protocol","error":"the device printed too much","text":"`, job.Attempt)
	suffix := `"}`
	body := io.MultiReader(strings.NewReader(prefix), io.LimitReader(repeated('a'), textBytes), strings.NewReader(suffix))
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+agent.PathPrefix+fmt.Sprintf("jobs/%d/result", job.ID), body)
	if sized {
		req.ContentLength = int64(len(prefix)+len(suffix)) + textBytes
	}
	return send(t, e, req, bearer)
}

// A result larger than a capture of its job's commands can hold is
// refused with 413 (whether its size is announced or found out while
// reading), records nothing and costs the job nothing: the lease runs on,
// and the job is queued again once the collector drops it. The bound
// follows the job's commands: a three-command template's job takes more.
func TestCollectorResultSizeFollowsTheCommands(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	one := e.device(t, "site-one-command", e.zone.ID)
	bearer := rawCollector(t, e, "big")
	ids, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: one, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	job := pollFor(t, e, bearer, nil)
	over := agentapi.ResultLimit(1)
	for _, sized := range []bool{true, false} {
		status, er := uploadResult(t, e, bearer, job, over, sized)
		if status != http.StatusRequestEntityTooLarge || er.Code != agent.CodeTooLarge ||
			!strings.Contains(er.Message, fmt.Sprintf("exceeds %d bytes", over)) || !strings.Contains(er.Message, "1 commands") {
			t.Fatalf("an over-size result (sized %v): %d %+v; want 413 %s naming the limit", sized, status, er, agent.CodeTooLarge)
		}
	}
	js, err := e.store.GetJobs(ctx, ids)
	if err != nil || len(js) != 1 || js[0].State != queue.JobRunning {
		t.Fatalf("after the refusal the job = %+v, %v; want still running", js, err)
	}
	if b, err := e.store.GetBackup(ctx, job.Attempt); err != nil || b.FinishedAt != nil {
		t.Fatalf("after the refusal the attempt = %+v, %v; want nothing recorded", b, err)
	}
	cs, err := e.store.ListCollectors(ctx)
	if err != nil || len(cs) != 1 {
		t.Fatalf("collectors = %+v, %v", cs, err)
	}
	if _, err := e.store.LeasedClaim(ctx, cs[0].ID, job.ID, job.Attempt); err != nil {
		t.Fatalf("after the refusal the lease = %v; want still the collector's", err)
	}
	// The collector drops the refused result: its next poll no longer
	// holds the job, which is queued again with no attempt used up.
	body, _ := json.Marshal(agent.PollRequest{Version: "raw"})
	if status := call(t, e, "poll", bearer, string(body), nil); status != http.StatusOK {
		t.Fatalf("poll: %d", status)
	}
	if js, err = e.store.GetJobs(ctx, ids); err != nil || js[0].State != queue.JobQueued || js[0].Attempt != 0 || js[0].Interruptions != 1 {
		t.Fatalf("after the collector dropped it the job = %+v, %v; want queued again", js, err)
	}

	// Three commands: the same upload fits.
	tpl, err := e.store.CreateTemplate(ctx, db.Template{Name: "three", Platform: "cisco_ios",
		Commands: "show running-config\n\nshow version\nshow inventory\n"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateDevice(ctx, one, func(d *db.Device) error { d.TemplateID = &tpl.ID; return nil }); err != nil {
		t.Fatal(err)
	}
	job = pollFor(t, e, bearer, nil)
	if status, er := uploadResult(t, e, bearer, job, over, true); status != http.StatusNoContent {
		t.Fatalf("a result within the bound of three commands: %d %+v; want 204", status, er)
	}
	if js := e.waitJobs(t, ids, 10*time.Second); js[0].State != queue.JobFailed || js[0].Error == nil || *js[0].Error != "the device printed too much" {
		t.Fatalf("job = %s %v; want the failure reported", js[0].State, js[0].Error)
	}
}

// An idle collector's long poll does not queue behind another writer:
// with nothing due in its zone (a retry waits for later) it looks with a
// reader only, so while another process holds SQLite's write lock the
// poll still ends on its own wait and answers no jobs. (It proves that
// the waiting part of the poll takes no write lock; the heartbeat at its
// start is a write, so the lock is taken once the heartbeat is seen.)
func TestIdleCollectorPollTakesNoWriteLock(t *testing.T) {
	dbtest.SQLiteOnly(t, "holds SQLite's single write lock from another connection")
	e := newEnv(t)
	ctx := context.Background()
	dev := e.device(t, "site-retry-later", e.zone.ID)
	if _, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerRetry, NotBefore: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	bearer := rawCollector(t, e, "idle")
	cs, err := e.store.ListCollectors(ctx)
	if err != nil || len(cs) != 1 {
		t.Fatalf("collectors = %+v, %v", cs, err)
	}

	holder, err := sql.Open("sqlite", "file:"+e.store.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	type answer struct {
		status int
		resp   agent.PollResponse
	}
	polled := make(chan answer, 1)
	go func() {
		body, _ := json.Marshal(agent.PollRequest{Version: "raw-2", Free: 4, WaitSeconds: 2})
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+agent.PathPrefix+"poll", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+bearer)
		var a answer
		if resp, err := e.srv.Client().Do(req); err == nil {
			a.status = resp.StatusCode
			_ = json.NewDecoder(resp.Body).Decode(&a.resp)
			resp.Body.Close()
		}
		polled <- a
	}()
	// The heartbeat (the version it reports) is written: the poll is
	// past its writes.
	for seen := false; !seen; {
		c, err := e.store.GetCollector(ctx, cs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if seen = c.Version == "raw-2"; !seen {
			select {
			case a := <-polled:
				t.Fatalf("the poll answered %d before its heartbeat was seen", a.status)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// Held until the poll answers, or until just under the store's busy
	// timeout (10 s): a poll that waits for the lock answers only after.
	var got answer
	heldToTheEnd := false
	select {
	case got = <-polled:
	case <-time.After(9 * time.Second):
		heldToTheEnd = true
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if heldToTheEnd {
		got = <-polled
		t.Fatalf("the idle poll answered (%d) only once another writer let go of the write lock", got.status)
	}
	if got.status != http.StatusOK || len(got.resp.Jobs) != 0 {
		t.Fatalf("idle poll = %d %+v; want 200 and no jobs", got.status, got.resp)
	}
}
