package backup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// An engine whose liveness lock the database server cuts off starts
// again under a new name, while the cancel watcher of the run that ended
// may still be looking for cancelled jobs under the old one. Under -race
// (the watcher looking every millisecond so that its reads fall in that
// window) this checks that the rename and the watcher never touch the
// engine's name unsynchronised; before the watcher was given its run's
// name and joined, and the name made atomic, it reported a data race in
// three runs of four. The restarted engine then watches for cancels under its new
// name: a job of its cancelled from elsewhere (the store, as another
// node would) is stopped and ends as cancelled.
func TestEngineRestartAfterLivenessLossWatchesItsNewName(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("an engine's liveness lock is lost only on PostgreSQL; set " + dbtest.Env)
	}
	e := newEngEnv(t)
	ctx := context.Background()
	dev := e.sim("slow", "cisco_ios", "ssh", devsim.Options{Seed: 5, Failures: []devsim.Failure{devsim.FailSlowDrip},
		DripDelay: 20 * time.Millisecond, DripChunk: 8, DripBudget: 5 * time.Minute})
	eng := e.engine(backup.Options{Workers: 1, ShutdownGrace: 100 * time.Millisecond, CancelPoll: time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 2 * time.Minute, Job: 2 * time.Minute}})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	defer func() {
		stop()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the engine did not stop")
		}
	}()
	// Idle, it holds its liveness lock: the server ends that session, a
	// few times over (each is one more chance for -race to see the watcher
	// and the rename meet).
	const losses = 3
	restarts := func() int {
		return strings.Count(e.log.String(), "lost the database connection that shows this engine alive")
	}
	for i := range losses {
		waitUntil(t, 30*time.Second, "the engine's liveness lock", func() bool { return lockSessions(t, e.store, false) == 1 })
		if killed := lockSessions(t, e.store, true); killed != 1 {
			t.Fatalf("terminated %d lock sessions; want the engine's", killed)
		}
		waitUntil(t, 30*time.Second, "the engine to start again", func() bool { return restarts() == i+1 })
	}
	waitUntil(t, 30*time.Second, "the engine's liveness lock", func() bool { return lockSessions(t, e.store, false) == 1 })
	jobs, err := eng.Enqueue(ctx, []int64{dev}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the restarted engine to run the slow device's job", func() bool {
		js, err := e.store.GetJobs(ctx, jobs)
		return err == nil && len(js) == 1 && js[0].State == queue.JobRunning
	})
	if ok, err := e.store.CancelJob(ctx, jobs[0]); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	waitUntil(t, 30*time.Second, "the cancelled job to end", func() bool {
		js, err := e.store.GetJobs(ctx, jobs)
		return err == nil && len(js) == 1 && js[0].State != queue.JobRunning && js[0].State != queue.JobQueued
	})
	js, _ := e.store.GetJobs(ctx, jobs)
	if js[0].State != queue.JobCancelled || js[0].Error == nil || *js[0].Error != queue.ErrorCancelled {
		t.Fatalf("job = %s %v; want cancelled by the restarted engine's watcher", js[0].State, js[0].Error)
	}
	if n := restarts(); n != losses {
		t.Fatalf("the engine logged %d losses of its liveness lock, want %d", n, losses)
	}
}

// lockSessions counts the database's sessions holding a backupd lock
// (the engine's liveness lock: no other lock is taken here), and ends
// them when kill is set.
func lockSessions(t *testing.T, s *db.Store, kill bool) int {
	t.Helper()
	what := "COUNT(*)"
	if kill {
		what = "COUNT(pg_terminate_backend(l.pid))"
	}
	var n int
	if err := dbtest.Peek(t, s).QueryRow(`SELECT ` + what + ` FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.application_name = 'backupd-lock'`).
		Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitUntil polls cond (bounded) and fails the test when it never holds.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
