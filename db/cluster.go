package db

import (
	"backupd/db/engine"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Several backupd nodes may share one PostgreSQL database. What they need
// to know of each other lives in PostgreSQL itself:
//
//   - An engine is alive while it holds a session advisory lock named
//     after its owner id (OwnerLockName), on a connection of its own
//     (LockSession). A node that can take that lock in a transaction
//     (InterruptDeadOwner) knows the engine is gone and queues its running
//     jobs again.
//   - One node leads (LeaderLockName): it runs the scheduler and the other
//     fleet-wide loops; the others try for the lock every couple of seconds.
//
// A process killed outright (kill -9, a crash) loses its connections at
// once: the kernel closes its sockets, PostgreSQL ends the sessions and
// their locks go. A node cut off by the network is found out by TCP
// keepalives on the lock connection, set on both ends (lockSessionParams,
// pgDialer): PostgreSQL drops it after at most LockServerBound, and
// the node itself gives up its locks (LockSession.Lost) after at most
// LockLease without a successful ping, which is sooner, so that two nodes
// never both believe they lead.

const (
	// LockPing is how often a lock session checks its connection.
	LockPing = 2 * time.Second
	// LockLease is how long a lock session may go without a successful
	// ping before it counts its locks lost.
	LockLease = 6 * time.Second
	// LockServerBound is the longest PostgreSQL keeps the locks of a node
	// it no longer hears from: 5 s idle + 3 keepalive probes 2 s apart
	// (tcp_keepalives_*), or 10 s of unacknowledged data
	// (tcp_user_timeout).
	LockServerBound = 11 * time.Second
)

// LeaderLockName is the advisory lock the leading node holds.
const LeaderLockName = "backupd-leader"

// OwnerLockName is the advisory lock a running engine holds while it
// lives, named after the owner id on its jobs.
func OwnerLockName(owner string) string { return "backupd-owner:" + owner }

// lockSessionParams are the lock connection's run-time parameters: the
// server-side keepalives that end a silent node's session (the client's
// are pgDialer's).
var lockSessionParams = map[string]string{
	"application_name":        "backupd-lock",
	"connect_timeout":         "5",
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "2",
	"tcp_keepalives_count":    "3",
	"tcp_user_timeout":        "10000",
}

// ErrNotPostgres is returned by what only a PostgreSQL store has.
var ErrNotPostgres = errors.New("only a PostgreSQL store has cluster locks")

// LockSession is a connection of its own that holds advisory locks for
// as long as it lives. It pings the server every LockPing; when a ping
// fails, or none succeeded for LockLease, it closes and Lost is closed:
// its holder must stop what the locks guarded at once.
type LockSession struct {
	pool *sql.DB
	conn *sql.Conn
	lost chan struct{}
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// OpenLockSession opens a lock session on a PostgreSQL store.
func (s *Store) OpenLockSession(ctx context.Context) (*LockSession, error) {
	if !s.pg {
		return nil, ErrNotPostgres
	}
	pool, err := engine.OpenPostgresSession(s.e.URL, lockSessionParams)
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(1)
	// Connecting is bounded by connect_timeout, the first ping here.
	pctx, cancel := context.WithTimeout(ctx, LockLease)
	defer cancel()
	conn, err := pool.Conn(pctx)
	if err == nil {
		err = conn.PingContext(pctx)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("lock session: %w", err)
	}
	l := &LockSession{pool: pool, conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// TryLock takes the advisory lock name if no other session holds it. A
// server that does not answer within LockLease fails it, and the session.
func (l *LockSession) TryLock(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, LockLease)
	defer cancel()
	var ok bool
	err := l.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, name).Scan(&ok)
	if err != nil {
		l.markLost()
		return false, fmt.Errorf("try lock %s: %w", name, err)
	}
	return ok, nil
}

// Lost is closed when the session can no longer vouch for its locks.
func (l *LockSession) Lost() <-chan struct{} { return l.lost }

// Close ends the session and with it every lock it holds.
func (l *LockSession) Close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

func (l *LockSession) markLost() {
	l.once.Do(func() { close(l.stop) })
}

// watch pings the connection until the session closes or the pings stop
// succeeding; then it closes the connection (which ends the session's
// locks on the server, when it can still be reached) and Lost.
func (l *LockSession) watch() {
	defer close(l.done)
	defer func() {
		close(l.lost)
		// Closing a connection to an unreachable server may wait for the
		// network; the locks count as lost whatever it does.
		go func() { l.conn.Close(); l.pool.Close() }()
	}()
	tick := time.NewTicker(LockPing)
	defer tick.Stop()
	lease := time.NewTimer(LockLease)
	defer lease.Stop()
	result := make(chan error, 1)
	inFlight := false
	for {
		select {
		case <-l.stop:
			return
		case <-lease.C:
			return
		case err := <-result:
			inFlight = false
			if err != nil {
				return
			}
			lease.Reset(LockLease)
		case <-tick.C:
			if inFlight {
				continue
			}
			inFlight = true
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), LockLease)
				defer cancel()
				_, err := l.conn.ExecContext(ctx, `SELECT 1`)
				result <- err
			}()
		}
	}
}

// InterruptDeadOwner ends the running attempts of engine owner when it is
// dead, as InterruptJobs does; dead reports whether it was. On PostgreSQL
// the engine is dead when its liveness lock (OwnerLockName) can be taken,
// here in the transaction that requeues its jobs, so that nodes checking
// the same owner at once requeue its jobs once. On SQLite the caller
// decides (the engine's lock file) and this is InterruptJobs.
func (s *Store) InterruptDeadOwner(ctx context.Context, owner string, maxInterruptions int) (out Interrupted, dead bool, err error) {
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		out, dead = Interrupted{}, true
		if s.pg {
			if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`,
				OwnerLockName(owner)).Scan(&dead); err != nil || !dead {
				return err
			}
		}
		return s.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, false, fmt.Errorf("interrupt jobs of %s: %w", owner, err)
	}
	return out, dead, nil
}
