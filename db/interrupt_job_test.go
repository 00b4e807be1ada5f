package db_test

import (
	"context"
	"slices"
	"testing"

	"backupd/db/queue"
)

// InterruptJob gives back one attempt while it is still its claim's: the
// job is queued again as interrupted (its attempt not counted), its
// backups row ends as interrupted, and the owner's other jobs, another
// owner's claim on the job, and a job already given back are left alone.
func TestInterruptJobGivesBackOneOwnedAttempt(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1 := insertDevice(t, s, "r1", nil, nil, nil)
	d2 := insertDevice(t, s, "r2", nil, nil, nil)
	enqueueNow(t, s, queue.TriggerManual, d1, d2)
	claims, err := s.ClaimJobs(ctx, "engine-a", 2, nil)
	if err != nil || len(claims) != 2 {
		t.Fatalf("ClaimJobs = %d claims, %v; want 2", len(claims), err)
	}
	slices.SortFunc(claims, func(a, b queue.Claim) int { return int(a.DeviceID - b.DeviceID) })
	first, second := claims[0], claims[1]

	res, err := s.InterruptJob(ctx, first, 10)
	if err != nil || res.Attempts != 1 || len(res.GaveUp) != 0 {
		t.Fatalf("InterruptJob = %+v, %v; want 1 attempt given back", res, err)
	}
	jobs, err := s.GetJobs(ctx, []int64{first.ID, second.ID})
	if err != nil || len(jobs) != 2 {
		t.Fatal(jobs, err)
	}
	slices.SortFunc(jobs, func(a, b queue.Job) int { return int(a.DeviceID - b.DeviceID) })
	if j := jobs[0]; j.State != queue.JobQueued || j.Attempt != 0 || j.Interruptions != 1 || j.Owner != nil ||
		j.Error == nil || *j.Error != queue.ErrorInterrupted {
		t.Errorf("given back job: %s attempt %d interruptions %d owner %v error %v", j.State, j.Attempt, j.Interruptions, j.Owner, j.Error)
	}
	if j := jobs[1]; j.State != queue.JobRunning || j.Owner == nil || *j.Owner != "engine-a" || j.Interruptions != 0 {
		t.Errorf("the owner's other job: %s owner %v interruptions %d, want still running", j.State, j.Owner, j.Interruptions)
	}
	b1, err := s.GetBackup(ctx, first.BackupID)
	if err != nil {
		t.Fatal(err)
	}
	if b1.FinishedAt == nil || b1.ErrorMessage == nil || *b1.ErrorMessage != queue.ErrorInterrupted {
		t.Errorf("given back attempt's backup: %+v, want finished as interrupted", b1)
	}
	if b2, err := s.GetBackup(ctx, second.BackupID); err != nil || b2.FinishedAt != nil {
		t.Errorf("the other job's backup: %+v, %v; want still running", b2, err)
	}

	// Given back already: nothing more happens.
	if res, err := s.InterruptJob(ctx, first, 10); err != nil || res.Attempts != 0 {
		t.Errorf("InterruptJob again = %+v, %v; want nothing done", res, err)
	}
	// Another owner's claim on the running job is not honoured.
	other := "engine-b"
	stolen := second
	stolen.Owner = &other
	if res, err := s.InterruptJob(ctx, stolen, 10); err != nil || res.Attempts != 0 {
		t.Errorf("InterruptJob by another owner = %+v, %v; want nothing done", res, err)
	}
	// The last interruption allowed fails the job, and says which device.
	res, err = s.InterruptJob(ctx, second, 1)
	if err != nil || res.Attempts != 1 || !slices.Equal(res.GaveUp, []int64{d2}) {
		t.Fatalf("InterruptJob at the limit = %+v, %v; want device %d given up", res, err, d2)
	}
	if jobs, err := s.GetJobs(ctx, []int64{second.ID}); err != nil || jobs[0].State != queue.JobFailed {
		t.Errorf("job at the limit: %+v, %v; want failed", jobs, err)
	}
}
