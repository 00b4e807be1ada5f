package backup_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
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

// runEngine runs eng until the test ends, and checks that it stops.
//
// The outage tests below call t.Parallel: most of their time the engine
// waits out its claims' failure window or a database that is away, not
// the CPU, so two of them share that waiting. Each has its own store (and
// PostgreSQL server), devices and log.
func runEngine(t *testing.T, eng *backup.Engine) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Error("the engine did not stop within 60 s")
		}
	})
}

// jobStates counts the jobs by state.
func jobStates(t *testing.T, s *db.Store, ids []int64) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	js, err := s.GetJobs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, j := range js {
		out[j.State]++
	}
	return out
}

// engineReady is the engine's readiness, asked with a short deadline.
func engineReady(eng *backup.Engine) error {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	return eng.Ready(ctx)
}

// The running jobs of a dead engine (here one that claimed and vanished,
// as a node killed with SIGKILL leaves them) are queued again while every
// worker of the live engine is busy with slow devices: the check for dead
// owners has its own timer. Before, it ran from the claim loop, which
// waits for a free worker.
func TestEngineRequeuesDeadEnginesJobsWhileEveryWorkerIsBusy(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	slowOpts := devsim.Options{Failures: []devsim.Failure{devsim.FailSlowDrip},
		DripDelay: 20 * time.Millisecond, DripChunk: 8, DripBudget: 5 * time.Minute}
	var slow, other []int64
	for i := range 2 {
		o := slowOpts
		o.Seed = int64(40 + i)
		slow = append(slow, e.sim(fmt.Sprintf("slow%d", i), "cisco_ios", "ssh", o))
		other = append(other, e.sim(fmt.Sprintf("other%d", i), "cisco_ios", "ssh", devsim.Options{Seed: int64(50 + i)}))
	}
	eng := e.engine(backup.Options{Workers: len(slow), RecoverEvery: 200 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Minute, Job: 10 * time.Minute}})
	runEngine(t, eng)
	// Queued behind the engine's back (as another node queues them): it
	// finds them at its next look, fills every worker and then waits for
	// one to come free.
	var reqs []queue.JobRequest
	for _, id := range slow {
		reqs = append(reqs, queue.JobRequest{DeviceID: id, Trigger: queue.TriggerSchedule, NotBefore: time.Now()})
	}
	slowJobs, err := e.store.EnqueueJobs(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "every worker busy with a slow device", func() bool {
		return jobStates(t, e.store, slowJobs)[queue.JobRunning] == len(slow)
	})

	// A process that claimed two jobs and was killed: their owner holds
	// no liveness lock.
	ghostJobs, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{
		{DeviceID: other[0], Trigger: queue.TriggerSchedule, NotBefore: time.Now()},
		{DeviceID: other[1], Trigger: queue.TriggerSchedule, NotBefore: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := e.store.ClaimJobs(ctx, "killed-node", len(ghostJobs), ghostJobs)
	if err != nil || len(claimed) != len(ghostJobs) {
		t.Fatalf("the dead node's claim: %d jobs, %v", len(claimed), err)
	}
	ownedByDead := func() int {
		var n int
		if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE owner = 'killed-node' AND state = 'running'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil(t, 60*time.Second, "the dead node's jobs queued again", func() bool { return ownedByDead() == 0 })
	js, err := e.store.GetJobs(ctx, ghostJobs)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		if j.State != queue.JobQueued || j.Interruptions != 1 || j.Attempt != 0 {
			t.Errorf("dead node's job %d: %s, %d interruptions, attempt %d; want queued again, interrupted once, no attempt used",
				j.ID, j.State, j.Interruptions, j.Attempt)
		}
	}
	// The workers were busy all along: taken over while they were.
	if n := jobStates(t, e.store, slowJobs)[queue.JobRunning]; n != len(slow) {
		t.Fatalf("%d slow jobs still running; want %d (every worker busy while the dead node's jobs were requeued)", n, len(slow))
	}
}

// A SQLite store that refuses writes for a while (another process holds
// its write lock: "database is locked", as a full disk refuses them too)
// stops the engine's run once its claims have failed for 10 s: the engine
// says it does not run, and runs again by itself once the store takes
// writes, backing devices up as before.
func TestEngineRunsAgainAfterTheSQLiteStoreRefusedWrites(t *testing.T) {
	t.Parallel() // see runEngine
	dbtest.SQLiteOnly(t, "the write lock of the SQLite file")
	e := newEngEnv(t)
	ctx := context.Background()
	var devs []int64
	for i := range 3 {
		devs = append(devs, e.sim(fmt.Sprintf("sq%d", i), "cisco_ios", "ssh", devsim.Options{Seed: int64(60 + i)}))
	}
	eng := e.engine(backup.Options{Workers: 2, RestartBackoff: 50 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond})
	if err := engineReady(eng); !errors.Is(err, backup.ErrEngineNotRunning) {
		t.Fatalf("readiness of an engine not started: %v", err)
	}
	runEngine(t, eng)
	waitUntil(t, 20*time.Second, "the engine ready", func() bool { return engineReady(eng) == nil })

	// Another process takes the write lock and keeps it.
	other, err := sql.Open("sqlite", "file:"+filepath.Join(filepath.Dir(e.store.Path()), db.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hold, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	held := true
	defer func() {
		if held {
			_, _ = hold.ExecContext(ctx, `ROLLBACK`)
		}
		hold.Close()
	}()
	waitUntil(t, 60*time.Second, "the engine to say it does not run", func() bool {
		return !eng.Status().Running && errors.Is(engineReady(eng), backup.ErrEngineNotRunning)
	})
	if _, err := hold.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	held = false
	waitUntil(t, 60*time.Second, "the engine running again", func() bool { return engineReady(eng) == nil })
	if st := eng.Status(); st.Restarts < 1 {
		t.Errorf("status after the store came back: %+v; want a restart counted", st)
	}
	jobs, err := eng.Enqueue(ctx, devs, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the backups after the store came back", func() bool {
		return jobStates(t, e.store, jobs)[queue.JobSucceeded] == len(devs)
	})
	log := e.log.String()
	for _, want := range []string{"taking jobs from the queue failed", "backup engine stopped; it starts again once the database answers", "backup engine running again"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// pgOutage runs an engine with four workers on store (the engine's view
// of the database) while eight simulated devices, each taking about half
// a second, are backed up, calls outage once backups run, and checks:
// the engine says it does not run (Ready, Status) and has tried to start
// again at least once while the database was away, then — once heal has
// brought the database back — runs again by itself, every job of the
// round finishes successfully (those the outage cut off included), and a
// second round queued afterwards does too. check is the test's own
// handle on the database.
func pgOutage(t *testing.T, store, check *db.Store, outage, heal func()) {
	t.Helper()
	ctx := context.Background()
	e := newEngEnvOn(t, store)
	var devs []int64
	for i := range 8 {
		devs = append(devs, e.sim(fmt.Sprintf("pg%d", i), "cisco_ios", "ssh", devsim.Options{Seed: int64(70 + i),
			ConfigSize: devsim.MinConfigSize, Failures: []devsim.Failure{devsim.FailSlowDrip},
			DripDelay: 40 * time.Millisecond, DripChunk: 500, DripBudget: 400 * time.Millisecond}))
	}
	eng := e.engine(backup.Options{Workers: 4, RestartBackoff: 200 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond,
		RecoverEvery: 500 * time.Millisecond})
	runEngine(t, eng)
	waitUntil(t, 30*time.Second, "the engine ready", func() bool { return engineReady(eng) == nil })
	jobs, err := eng.Enqueue(ctx, devs, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "backups running", func() bool { return jobStates(t, check, jobs)[queue.JobRunning] > 0 })

	began := time.Now()
	outage()
	waitUntil(t, 45*time.Second, "the engine to say it does not run, having tried to start again", func() bool {
		return errors.Is(engineReady(eng), backup.ErrEngineNotRunning) && eng.Status().Failures >= 2
	})
	t.Logf("the engine said it does not run %s after the outage began", time.Since(began).Round(100*time.Millisecond))
	heal()
	healed := time.Now()
	waitUntil(t, 45*time.Second, "the engine running again", func() bool { return engineReady(eng) == nil })
	t.Logf("the engine ran again %s after the database came back", time.Since(healed).Round(100*time.Millisecond))
	waitUntil(t, 60*time.Second, "every backup of the round cut off by the outage", func() bool {
		st := jobStates(t, check, jobs)
		return st[queue.JobQueued]+st[queue.JobRunning] == 0
	})
	t.Logf("the round finished %s after the database came back", time.Since(healed).Round(100*time.Millisecond))
	if st := jobStates(t, check, jobs); st[queue.JobSucceeded] != len(devs) {
		t.Fatalf("jobs of the round the outage cut: %v; want all %d succeeded\n%s", st, len(devs), e.log.String())
	}
	again, err := eng.Enqueue(ctx, devs, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "a round queued after the outage", func() bool {
		return jobStates(t, check, again)[queue.JobSucceeded] == len(devs)
	})
	if st := eng.Status(); st.Restarts < 1 || !st.Running {
		t.Errorf("status after the outage: %+v; want running, restarted", st)
	}
	if log := e.log.String(); !strings.Contains(log, "backup engine running again") {
		t.Errorf("the log does not say the engine runs again:\n%s", log)
	}
}

// The PostgreSQL server of a running engine crashes (pg_ctl stop -m
// immediate: every connection refused) mid-run and starts again: the
// engine, which used to stop for good when its shutdown could not reach
// the database, runs again by itself and finishes the backups.
func TestEngineRunsAgainAfterThePostgreSQLServerRestarts(t *testing.T) {
	t.Parallel() // see runEngine
	srv := dbtest.StartServer(t)
	store, err := dbtest.OpenAt(t, srv.CreateDatabase("backupd"))
	if err != nil {
		t.Fatal(err)
	}
	pgOutage(t, store, store, srv.Stop, srv.Start)
}

// The connection to the PostgreSQL server of a running engine is cut
// (nothing refused, nothing closed: every call would wait for ever) and
// restored: the engine gives its calls up, says it does not run, and runs
// again once the database answers.
func TestEngineRunsAgainAfterTheDatabaseConnectionWasCut(t *testing.T) {
	t.Parallel() // see runEngine
	srv := dbtest.StartServer(t)
	loc := srv.CreateDatabase("backupd")
	proxy := dbtest.NewProxy(t, srv.Addr())
	check, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	viaProxy, err := dbtest.OpenAt(t, dbtest.WithHost(loc, proxy.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	pgOutage(t, viaProxy, check, proxy.Cut, proxy.Heal)
}
