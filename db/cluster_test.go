package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/db"
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
	enqueueNow(t, a, db.TriggerSchedule, devices...)

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
	enqueueNow(t, a, db.TriggerSchedule, devices...)

	const owner = "engine-a"
	sess, err := a.OpenLockSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sess.TryLock(ctx, db.OwnerLockName(owner)); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	claims, err := a.ClaimJobs(ctx, owner, 10, nil)
	if err != nil || len(claims) != 5 {
		t.Fatalf("ClaimJobs = %d, %v", len(claims), err)
	}
	if res, dead, err := b.InterruptDeadOwner(ctx, owner, db.DefaultMaxInterruptions); err != nil || dead || res.Attempts != 0 {
		t.Fatalf("InterruptDeadOwner of a live engine = %+v, dead %v, %v; want left alone", res, dead, err)
	}
	sess.Close() // the engine's process is gone
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
	results := make([]db.Interrupted, 2)
	errs := make([]error, 2)
	for i, s := range []*db.Store{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = s.InterruptDeadOwner(ctx, owner, db.DefaultMaxInterruptions)
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
	err = a.FinishJob(ctx, claims[0], db.Outcome{Success: true, Text: "hostname late\n", FinishedAt: time.Now()})
	if !errors.Is(err, db.ErrJobNotOwned) {
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
		if err := b.FinishJob(ctx, cl, db.Outcome{Success: true, Text: "hostname b\n", FinishedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE success = 1`).Scan(&good); err != nil || good != 5 {
		t.Fatalf("successful backups = %d, %v; want 5", good, err)
	}
}

// One session holds the leader lock; another cannot take it until the
// first ends, and then can. A session whose connection the server ends
// says so (Lost) within the lease.
func TestClusterLeaderHandover(t *testing.T) {
	requirePostgres(t)
	a := dbtest.Open(t)
	b := dbtest.Reopen(t, a)
	ctx := context.Background()
	first, err := a.OpenLockSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := b.OpenLockSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if ok, err := first.TryLock(ctx, db.LeaderLockName); err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v; want the lead", ok, err)
	}
	if ok, err := second.TryLock(ctx, db.LeaderLockName); err != nil || ok {
		t.Fatalf("second TryLock = %v, %v; want refused while the first leads", ok, err)
	}

	// The server ends the leader's session (as when its node dies or
	// is cut off): the leader hears of it, and the lock is free.
	var killed int
	if err := b.Reader().QueryRow(`SELECT COUNT(pg_terminate_backend(l.pid)) FROM pg_locks l
		JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.application_name = 'backupd-lock'`).
		Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d lock sessions, %v; want 1", killed, err)
	}
	select {
	case <-first.Lost():
	case <-time.After(db.LockLease + 5*time.Second):
		t.Fatal("the leader's session did not notice its connection ended")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := second.TryLock(ctx, db.LeaderLockName)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lead was not free after the leader's session ended")
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-second.Lost():
		t.Fatal("the new leader's session counts itself lost")
	default:
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
	reqs := make([]db.JobRequest, len(devices))
	for i, id := range devices {
		reqs[i] = db.JobRequest{DeviceID: id, Trigger: db.TriggerSchedule, NotBefore: tick}
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
	enqueueNow(t, s, db.TriggerManual, devices...)
	for i, want := range []int{2, 1, 0} {
		claims, err := s.ClaimJobs(ctx, fmt.Sprint("owner-", i), 2, nil)
		if err != nil || len(claims) != want {
			t.Fatalf("claim %d took %d jobs, %v; want %d", i, len(claims), err, want)
		}
	}
}

// blackhole is a TCP proxy to PostgreSQL that can stop passing bytes
// without closing anything, as a network that drops a node's packets.
type blackhole struct {
	ln     net.Listener
	target string
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newBlackhole(t *testing.T, target string) *blackhole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &blackhole{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

// pipe copies from to to, dropping what it reads while frozen.
func (p *blackhole) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			to.Close()
			return
		}
		if p.frozen.Load() {
			continue
		}
		if _, err := to.Write(buf[:n]); err != nil {
			from.Close()
			return
		}
	}
}

// A node whose database stops answering (its packets dropped, nothing
// closed) counts its locks lost by itself, after LockLease without a
// successful ping: it stops leading before PostgreSQL frees the lock.
func TestClusterLockSessionLostWhenDatabaseSilent(t *testing.T) {
	requirePostgres(t)
	direct := dbtest.Open(t)
	u, err := url.Parse(direct.Location())
	if err != nil {
		t.Fatal(err)
	}
	proxy := newBlackhole(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	viaProxy, err := dbtest.OpenAt(t, u.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := viaProxy.OpenLockSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if ok, err := sess.TryLock(ctx, db.LeaderLockName); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	// Healthy, it keeps its locks past the lease.
	select {
	case <-sess.Lost():
		t.Fatal("a session whose pings succeed counted itself lost")
	case <-time.After(db.LockLease + db.LockPing):
	}
	proxy.frozen.Store(true)
	// Unfrozen before the handles close, so that their idle connections
	// can say goodbye.
	defer proxy.frozen.Store(false)
	cut := time.Now()
	select {
	case <-sess.Lost():
		t.Logf("lost %s after the database went silent", time.Since(cut).Round(100*time.Millisecond))
	case <-time.After(db.LockLease + 2*db.LockPing):
		t.Fatal("the session still vouches for its locks with the database silent")
	}
	// The server still holds the lock (its side of the connection is
	// open): nobody else leads yet.
	other, err := direct.OpenLockSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := other.TryLock(ctx, db.LeaderLockName); err != nil || ok {
		t.Fatalf("TryLock while the silent node's session lives on the server = %v, %v; want refused", ok, err)
	}
}
