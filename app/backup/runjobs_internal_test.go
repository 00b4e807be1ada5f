package backup

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"backupd/app/collect"
	"backupd/db/queue"
)

// RunJobs waits for every job it was given: those it runs, one another
// process ran to the end before it looked (its poll of the job states
// finds it), and one whose device was deleted meanwhile (dropped, not
// waited for).
func TestRunJobsReportsJobsEndedElsewhereAndDropsDeletedOnes(t *testing.T) {
	ctx := context.Background()
	store, sealer, ids := internalFleet(t, "192.0.2.1", "192.0.2.2", "192.0.2.3")
	e := New(store, sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Workers: 2})
	e.collect = func(_ context.Context, tg collect.Target) (collect.Result, error) {
		return collect.Result{Text: "hostname " + tg.Host + "\n"}, nil
	}
	jobs, err := e.Enqueue(ctx, ids, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	// Another process backs the second device up before this one starts.
	claims, err := store.ClaimJobs(ctx, "another-process", 1, jobs[1:2])
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	if err := store.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Text: "hostname elsewhere\n", FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// The third device is deleted, and its job with it.
	if err := store.DeleteDevice(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got := map[int64]queue.Job{}
	if err := e.RunJobs(runCtx, jobs, func(j queue.Job) { got[j.ID] = j }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[jobs[0]].State != queue.JobSucceeded || got[jobs[1]].State != queue.JobSucceeded {
		t.Fatalf("reported %+v; want the jobs of the first two devices, succeeded", got)
	}
}
