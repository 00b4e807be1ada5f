package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// clusterDevices adds n devices and returns their ids.
func clusterDevices(t *testing.T, s *db.Store, n int) []int64 {
	t.Helper()
	ids := make([]int64, 0, n)
	err := s.InTx(context.Background(), func(tx *sql.Tx) error {
		for i := range n {
			var id int64
			if err := tx.QueryRow(`INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
				VALUES (?, '127.0.0.1', 22, 'cisco_ios', 'ssh', ?, ?) RETURNING id`,
				fmt.Sprintf("node-dev-%d", i), db.Now(), db.Now()).Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func requirePostgres(t *testing.T) {
	t.Helper()
	if !dbtest.Postgres() {
		t.Skip("several nodes share a PostgreSQL store only; set " + dbtest.Env)
	}
}

// Two nodes (two store handles, each with its own writer connection)
// claiming from one queue at once never take the same job, and between
// them take every job.
func TestClusterClaimsNeverOverlap(t *testing.T) {
	a := dbtest.Open(t)
	b := dbtest.Reopen(t, a)
	ctx := context.Background()
	devices := clusterDevices(t, a, 400)
	enqueueNow(t, a, queue.TriggerSchedule, devices...)

	var mu sync.Mutex
	taken := map[int64]string{}
	var dup []string
	var wg sync.WaitGroup
	var errs []error
	for w, s := range []*db.Store{a, b, a, b} {
		owner := fmt.Sprintf("node-%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 { // bounded: 400 jobs, at least one per round until empty
				claims, err := s.ClaimJobs(ctx, owner, 7, nil)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				if len(claims) == 0 {
					return
				}
				mu.Lock()
				if len(claims) > 7 {
					dup = append(dup, fmt.Sprintf("%s took %d jobs in a claim of at most 7", owner, len(claims)))
				}
				for _, c := range claims {
					if prev, ok := taken[c.ID]; ok {
						dup = append(dup, fmt.Sprintf("job %d by %s and %s", c.ID, prev, owner))
					}
					taken[c.ID] = owner
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	if len(dup) > 0 {
		t.Fatalf("%d jobs claimed twice or claims too large, among them: %v", len(dup), dup[:min(len(dup), 5)])
	}
	if len(taken) != len(devices) {
		t.Fatalf("claimed %d jobs, want %d", len(taken), len(devices))
	}
	q, r, err := a.JobCounts(ctx)
	if err != nil || q != 0 || r != len(devices) {
		t.Fatalf("JobCounts = %d queued, %d running, %v; want 0, %d", q, r, err, len(devices))
	}
}

// An engine whose liveness lock is held is alive: its jobs stay. Once
// its session ends (the process died), its running jobs are queued again
// once, however many nodes look at the same time, as interruptions; and
// the dead engine's late result is refused.
func TestClusterDeadOwnerRequeuedOnce(t *testing.T) {
	requirePostgres(t)
	a := dbtest.Open(t)
	b := dbtest.Reopen(t, a)
	c := dbtest.Reopen(t, a)
	ctx := context.Background()
	devices := clusterDevices(t, a, 5)
	enqueueNow(t, a, queue.TriggerSchedule, devices...)

	const owner = "engine-a"
	sess := holdLock(t, a, queue.OwnerLockName(owner))
	claims, err := a.ClaimJobs(ctx, owner, 10, nil)
	if err != nil || len(claims) != 5 {
		t.Fatalf("ClaimJobs = %d, %v", len(claims), err)
	}
	if res, dead, err := b.InterruptDeadOwner(ctx, owner, queue.DefaultMaxInterruptions); err != nil || dead || res.Attempts != 0 {
		t.Fatalf("InterruptDeadOwner of a live engine = %+v, dead %v, %v; want left alone", res, dead, err)
	}
	sess() // the engine's process is gone
	// The server ends the closed session's backend, and its locks, a
	// moment after the client hangs up.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var held bool
		if err := a.Reader().QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the closed session's lock is still held after 10 s")
		}
	}

	var wg sync.WaitGroup
	results := make([]queue.Interrupted, 2)
	errs := make([]error, 2)
	for i, s := range []*db.Store{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = s.InterruptDeadOwner(ctx, owner, queue.DefaultMaxInterruptions)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := results[0].Attempts + results[1].Attempts; got != 5 {
		t.Fatalf("requeued %d + %d attempts, want 5 in all", results[0].Attempts, results[1].Attempts)
	}
	var queued, interruptions, attempts int
	if err := a.Reader().QueryRow(`SELECT COUNT(*), SUM(interruptions), SUM(attempt) FROM jobs WHERE state = 'queued'`).
		Scan(&queued, &interruptions, &attempts); err != nil {
		t.Fatal(err)
	}
	if queued != 5 || interruptions != 5 || attempts != 0 {
		t.Fatalf("after recovery: %d queued, %d interruptions, %d attempts; want 5, 5, 0", queued, interruptions, attempts)
	}

	// The dead engine's attempt finishing late records nothing.
	err = a.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Text: "hostname late\n", FinishedAt: time.Now()})
	if !errors.Is(err, queue.ErrJobNotOwned) {
		t.Fatalf("FinishJob of a requeued job = %v, want ErrJobNotOwned", err)
	}
	var good int
	if err := a.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE success = 1`).Scan(&good); err != nil || good != 0 {
		t.Fatalf("successful backups after a refused finish = %d, %v; want 0", good, err)
	}
	// The requeued job runs again, once, elsewhere.
	again, err := b.ClaimJobs(ctx, "engine-b", 10, nil)
	if err != nil || len(again) != 5 {
		t.Fatalf("ClaimJobs after recovery = %d, %v", len(again), err)
	}
	for _, cl := range again {
		if err := b.FinishJob(ctx, cl, queue.Outcome{Success: true, Text: "hostname b\n", FinishedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE success = 1`).Scan(&good); err != nil || good != 5 {
		t.Fatalf("successful backups = %d, %v; want 5", good, err)
	}
}

// A schedule's tick fired by two schedulers at once (an old leader and a
// new one) queues its jobs once; the tick and its jobs commit together.
func TestClusterFireScheduleRunOnce(t *testing.T) {
	a := dbtest.Open(t)
	b := dbtest.Reopen(t, a)
	ctx := context.Background()
	devices := clusterDevices(t, a, 50)
	tick := time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)
	next := tick.Add(24 * time.Hour)
	sc, err := a.CreateSchedule(ctx, db.Schedule{Name: "nightly", Cron: "0 2 * * *", Timezone: "UTC",
		Target: db.ScheduleTargetAll, Enabled: true, NextRunAt: &tick})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]queue.JobRequest, len(devices))
	for i, id := range devices {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerSchedule, NotBefore: tick}
	}
	var wg sync.WaitGroup
	fired := make([]bool, 2)
	errs := make([]error, 2)
	for i, s := range []*db.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fired[i], errs[i] = s.FireScheduleRun(ctx, sc.ID, tick, next, reqs)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if fired[0] == fired[1] {
		t.Fatalf("fired = %v, want exactly one scheduler to fire the tick", fired)
	}
	var jobs int
	if err := a.Reader().QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&jobs); err != nil || jobs != len(devices) {
		t.Fatalf("jobs = %d, %v; want %d", jobs, err, len(devices))
	}
	got, err := a.GetSchedule(ctx, sc.ID)
	if err != nil || got.NextRunAt == nil || !got.NextRunAt.Equal(next) || got.LastRunAt == nil || !got.LastRunAt.Equal(tick) {
		t.Fatalf("schedule after the tick = %+v, %v", got, err)
	}
	// A failed enqueue leaves the tick due: a request naming a device
	// that does not exist is skipped, so fail it through a cancelled
	// context instead.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := a.FireScheduleRun(cctx, sc.ID, next, next.Add(24*time.Hour), reqs); err == nil || ok {
		t.Fatalf("FireScheduleRun with a cancelled context = %v, %v; want an error", ok, err)
	}
	if got, _ := a.GetSchedule(ctx, sc.ID); got.NextRunAt == nil || !got.NextRunAt.Equal(next) {
		t.Fatalf("next run after a failed fire = %v, want %v still due", got.NextRunAt, next)
	}
}

// The nodes table: each node's heartbeat, who leads, and which are fresh.
func TestClusterNodes(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Minute)
	since := time.Now()
	if err := s.Heartbeat(ctx, db.Node{ID: "n1", Hostname: "h1", Version: "v1", StartedAt: start, Leader: true, LeaderSince: &since}); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, db.Node{ID: "n2", Hostname: "h2", Version: "v1", StartedAt: start}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.FreshNodes(ctx, time.Now()); err != nil || n != 2 {
		t.Fatalf("FreshNodes = %d, %v; want 2", n, err)
	}
	if err := s.NodeStopped(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	nodes, err := s.ListNodes(ctx)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("ListNodes = %+v, %v", nodes, err)
	}
	if nodes[0].ID != "n2" || nodes[1].Leader || nodes[1].LeaderSince != nil {
		t.Fatalf("nodes = %+v; want n2 first and the stopped n1 no longer leading", nodes)
	}
	if n, err := s.FreshNodes(ctx, time.Now()); err != nil || n != 1 {
		t.Fatalf("FreshNodes after a stop = %d, %v; want 1", n, err)
	}
	// A new leader's heartbeat clears the flag a dead leader left.
	if _, err := s.Exec(ctx, `UPDATE nodes SET leader = 1, leader_since = ? WHERE id = 'n2'`, db.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, db.Node{ID: "n3", Hostname: "h3", Version: "v1", StartedAt: start, Leader: true, LeaderSince: &since}); err != nil {
		t.Fatal(err)
	}
	nodes, err = s.ListNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var leaders []string
	for _, n := range nodes {
		if n.Leader {
			leaders = append(leaders, n.ID)
		}
	}
	if len(leaders) != 1 || leaders[0] != "n3" {
		t.Fatalf("leaders = %v, want only n3", leaders)
	}
}

// A claim takes at most as many jobs as asked for, however small the
// queue (on PostgreSQL a locking pick run again per row took more).
func TestClusterClaimTakesAtMostN(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	devices := clusterDevices(t, s, 3)
	enqueueNow(t, s, queue.TriggerManual, devices...)
	for i, want := range []int{2, 1, 0} {
		claims, err := s.ClaimJobs(ctx, fmt.Sprint("owner-", i), 2, nil)
		if err != nil || len(claims) != want {
			t.Fatalf("claim %d took %d jobs, %v; want %d", i, len(claims), err, want)
		}
	}
}

// holdLock takes the advisory lock name on a PostgreSQL session of its
// own, as a running engine's lock session does, and returns what ends
// the session (and the lock with it).
func holdLock(t *testing.T, s *db.Store, name string) (end func()) {
	t.Helper()
	pool, err := engine.OpenPostgresSession(s.Location(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	var ok bool
	if err := pool.QueryRow(`SELECT pg_try_advisory_lock(hashtextextended(?, 0))`, name).Scan(&ok); err != nil || !ok {
		t.Fatalf("take lock %s = %v, %v", name, ok, err)
	}
	return func() { pool.Close() }
}
