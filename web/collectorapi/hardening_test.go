package collectorapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collector"
	"backupd/db"
	"backupd/web/collectorapi"
)

// rawCollector enrols a collector in the env's zone through the protocol
// and returns its bearer token: the test then speaks the protocol itself,
// as a collector that misbehaves would.
func rawCollector(t *testing.T, e *env, name string) string {
	t.Helper()
	token, err := collectorapi.NewEnrolmentToken(context.Background(), e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := collector.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(collector.EnrolRequest{Token: token, Name: name, PublicKey: collector.EncodeKey(key.Public), Version: "raw"})
	var resp collector.EnrolResponse
	if status := call(t, e, "enrol", "", string(body), &resp); status != http.StatusOK || resp.Token == "" {
		t.Fatalf("enrol: %d %+v", status, resp)
	}
	return resp.Token
}

// call posts body to the protocol's path and decodes a 200's answer into
// out.
func call(t *testing.T, e *env, path, bearer, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+collector.PathPrefix+path, strings.NewReader(body))
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
func pollFor(t *testing.T, e *env, bearer string, held []int64) collector.Job {
	t.Helper()
	body, _ := json.Marshal(collector.PollRequest{Version: "raw", Held: held, Free: 1})
	for range 50 {
		var resp collector.PollResponse
		if status := call(t, e, "poll", bearer, string(body), &resp); status != http.StatusOK {
			t.Fatalf("poll: %d", status)
		}
		if len(resp.Jobs) == 1 {
			return resp.Jobs[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the collector was handed no job")
	return collector.Job{}
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
	ids, err := e.store.EnqueueJobs(ctx, []db.JobRequest{{DeviceID: dev, Trigger: db.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	job := pollFor(t, e, bearer, nil)
	result := func(j collector.Job) string {
		b, _ := json.Marshal(collector.ResultRequest{Attempt: j.Attempt, Reason: backup.CaptureCancelled, Error: "cancelled by an operator"})
		return string(b)
	}
	if status := call(t, e, fmt.Sprintf("jobs/%d/result", job.ID), bearer, result(job), nil); status != http.StatusNoContent {
		t.Fatalf("result: %d", status)
	}
	jobs := e.waitJobs(t, ids, 10*time.Second)
	if jobs[0].State != db.JobFailed || jobs[0].Error == nil || *jobs[0].Error != backup.ErrorUnaskedCancel {
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
	ids, err = e.store.EnqueueJobs(ctx, []db.JobRequest{{DeviceID: dev, Trigger: db.TriggerManual, NotBefore: time.Now()}})
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
	if jobs[0].State != db.JobCancelled || jobs[0].Error == nil || *jobs[0].Error != db.ErrorCancelled {
		t.Fatalf("job = %s %v; want cancelled", jobs[0].State, jobs[0].Error)
	}
}
