package lock_test

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/app/cluster/lock"
	"backupd/internal/dbtest"
)

func requirePostgres(t *testing.T) {
	t.Helper()
	if !dbtest.Postgres() {
		t.Skip("several nodes share a PostgreSQL store only; set " + dbtest.Env)
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
	first, err := lock.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := lock.Open(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if ok, err := first.TryLock(ctx, lock.Leader); err != nil || !ok {
		t.Fatalf("first TryLock = %v, %v; want the lead", ok, err)
	}
	if ok, err := second.TryLock(ctx, lock.Leader); err != nil || ok {
		t.Fatalf("second TryLock = %v, %v; want refused while the first leads", ok, err)
	}

	// The server ends the leader's session (as when its node dies or
	// is cut off): the leader hears of it, and the lock is free.
	var killed int
	if err := dbtest.Peek(t, b).QueryRow(`SELECT COUNT(pg_terminate_backend(l.pid)) FROM pg_locks l
		JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND a.application_name = 'backupd-lock'`).
		Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d lock sessions, %v; want 1", killed, err)
	}
	select {
	case <-first.Lost():
	case <-time.After(lock.Lease + 5*time.Second):
		t.Fatal("the leader's session did not notice its connection ended")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := second.TryLock(ctx, lock.Leader)
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
	sess, err := lock.Open(ctx, viaProxy)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if ok, err := sess.TryLock(ctx, lock.Leader); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	// Healthy, it keeps its locks past the lease.
	select {
	case <-sess.Lost():
		t.Fatal("a session whose pings succeed counted itself lost")
	case <-time.After(lock.Lease + lock.Ping):
	}
	proxy.frozen.Store(true)
	// Unfrozen before the handles close, so that their idle connections
	// can say goodbye.
	defer proxy.frozen.Store(false)
	cut := time.Now()
	select {
	case <-sess.Lost():
		t.Logf("lost %s after the database went silent", time.Since(cut).Round(100*time.Millisecond))
	case <-time.After(lock.Lease + 2*lock.Ping):
		t.Fatal("the session still vouches for its locks with the database silent")
	}
	// The server still holds the lock (its side of the connection is
	// open): nobody else leads yet.
	other, err := lock.Open(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := other.TryLock(ctx, lock.Leader); err != nil || ok {
		t.Fatalf("TryLock while the silent node's session lives on the server = %v, %v; want refused", ok, err)
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
