package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/app/cluster"
	"backupd/app/cluster/lock"
	"backupd/db"
	"backupd/internal/dbtest"
)

// waitFor polls cond every 50 ms for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// On SQLite the one process leads.
func TestSQLiteNodeAlwaysLeads(t *testing.T) {
	dbtest.SQLiteOnly(t, "the single-node path")
	s := dbtest.Open(t)
	n := cluster.New(s, cluster.Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	led := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx, func(ctx context.Context) { close(led); <-ctx.Done() })
	}()
	select {
	case <-led:
	case <-time.After(10 * time.Second):
		t.Fatal("the SQLite node did not lead")
	}
	if !n.Leader() {
		t.Fatal("Leader() = false while leading")
	}
	cancel()
	<-done
	nodes, err := s.ListNodes(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].StoppedAt == nil {
		t.Fatalf("nodes after stop = %+v, %v; want one, stopped", nodes, err)
	}
}

// Of several nodes on one PostgreSQL database exactly one leads; when
// it stops, another takes over, and one whose lock connection the server
// ends stops its leader work.
func TestOneLeaderAndHandover(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("several nodes share a PostgreSQL store only; set " + dbtest.Env)
	}
	first := dbtest.Open(t)
	stores := []*db.Store{first, dbtest.Reopen(t, first), dbtest.Reopen(t, first)}
	var leading atomic.Int32
	var most atomic.Int32
	type running struct {
		node   *cluster.Node
		cancel context.CancelFunc
		done   chan struct{}
	}
	var nodes []running
	var wg sync.WaitGroup
	for _, s := range stores {
		n := cluster.New(s, cluster.Options{Version: "test", Retry: 200 * time.Millisecond, Heartbeat: time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		r := running{n, cancel, make(chan struct{})}
		nodes = append(nodes, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.done)
			n.Run(ctx, func(ctx context.Context) {
				if v := leading.Add(1); v > most.Load() {
					most.Store(v)
				}
				<-ctx.Done()
				leading.Add(-1)
			})
		}()
	}
	defer func() {
		for _, r := range nodes {
			r.cancel()
		}
		wg.Wait()
	}()
	leader := func() int {
		idx := -1
		for i, r := range nodes {
			if r.node.Leader() {
				if idx >= 0 {
					t.Fatalf("nodes %d and %d both lead", idx, i)
				}
				idx = i
			}
		}
		return idx
	}
	waitFor(t, 10*time.Second, "a leader", func() bool { return leader() >= 0 })
	time.Sleep(time.Second) // followers try five times meanwhile
	old := leader()
	if most.Load() != 1 {
		t.Fatalf("%d nodes ran leader work at once", most.Load())
	}

	// The leader stops: another takes over.
	nodes[old].cancel()
	<-nodes[old].done
	waitFor(t, 10*time.Second, "a new leader", func() bool { l := leader(); return l >= 0 && l != old })
	next := leader()

	// The server ends the new leader's lock connection: it stops
	// leading, and the third node takes over.
	var killed int
	if err := dbtest.Peek(t, first).QueryRow(`SELECT COUNT(pg_terminate_backend(l.pid)) FROM pg_locks l
		JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.application_name = 'backupd-lock'`).
		Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d lock sessions, %v; want the leader's", killed, err)
	}
	waitFor(t, lock.Lease+10*time.Second, "leadership to move after the leader's connection ended", func() bool {
		l := leader()
		return l >= 0 && (l != next || !nodes[next].node.Leader())
	})
	if most.Load() != 1 {
		t.Fatalf("%d nodes ran leader work at once", most.Load())
	}
}
