// Package lock is what the nodes sharing one PostgreSQL store know of
// each other: sessions that hold PostgreSQL advisory locks for as long as
// their node lives, the leader's lock, and the bounds within which a
// node that dies or is cut off loses its locks.
package lock

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"backupd/db"
	"backupd/db/engine"
)

// Several backupd nodes may share one PostgreSQL database. What they need
// to know of each other lives in PostgreSQL itself:
//
//   - An engine is alive while it holds a session advisory lock named
//     after its owner id (queue.OwnerLockName), on a connection of its own
//     (Session). A node that can take that lock in a transaction
//     (queue.Queue.InterruptDeadOwner) knows the engine is gone and queues
//     its running jobs again.
//   - One node leads (Leader): it runs the scheduler and the other
//     fleet-wide loops; the others try for the lock every couple of seconds.
//
// A process killed outright (kill -9, a crash) loses its connections at
// once: the kernel closes its sockets, PostgreSQL ends the sessions and
// their locks go. A node cut off by the network is found out by TCP
// keepalives on the lock connection, set on both ends (sessionParams, and
// the client's in db/engine): PostgreSQL drops it after at most
// ServerBound, and the node itself gives up its locks (Session.Lost)
// after at most Lease without a successful ping, which is sooner, so that two nodes
// never both believe they lead.

const (
	// Ping is how often a lock session checks its connection.
	Ping = 2 * time.Second
	// Lease is how long a lock session may go without a successful
	// ping before it counts its locks lost.
	Lease = 6 * time.Second
	// ServerBound is the longest PostgreSQL keeps the locks of a node
	// it no longer hears from: 5 s idle + 3 keepalive probes 2 s apart
	// (tcp_keepalives_*), or 10 s of unacknowledged data
	// (tcp_user_timeout).
	ServerBound = 11 * time.Second
)

// Leader is the advisory lock the leading node holds.
const Leader = "backupd-leader"

// sessionParams are the lock connection's run-time parameters: the
// server-side keepalives that end a silent node's session (the client's
// are db/engine's).
var sessionParams = map[string]string{
	"application_name":        "backupd-lock",
	"connect_timeout":         "5",
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "2",
	"tcp_keepalives_count":    "3",
	"tcp_user_timeout":        "10000",
}

// ErrNotPostgres is returned by what only a PostgreSQL store has.
var ErrNotPostgres = errors.New("only a PostgreSQL store has cluster locks")

// Session is a connection of its own that holds advisory locks for
// as long as it lives. It pings the server every Ping; when a ping
// fails, or none succeeded for Lease, it closes and Lost is closed:
// its holder must stop what the locks guarded at once.
type Session struct {
	pool *sql.DB
	conn *sql.Conn
	lost chan struct{}
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// Open opens a lock session on store, which must be a PostgreSQL store.
func Open(ctx context.Context, store *db.Store) (*Session, error) {
	if !store.Postgres() {
		return nil, ErrNotPostgres
	}
	pool, err := engine.OpenPostgresSession(store.Location(), sessionParams)
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(1)
	// Connecting is bounded by connect_timeout, the first ping here.
	pctx, cancel := context.WithTimeout(ctx, Lease)
	defer cancel()
	conn, err := pool.Conn(pctx)
	if err == nil {
		err = conn.PingContext(pctx)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("lock session: %w", err)
	}
	l := &Session{pool: pool, conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// TryLock takes the advisory lock name if no other session holds it. A
// server that does not answer within Lease fails it, and the session.
func (l *Session) TryLock(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, Lease)
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
func (l *Session) Lost() <-chan struct{} { return l.lost }

// Close ends the session and with it every lock it holds.
func (l *Session) Close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

func (l *Session) markLost() {
	l.once.Do(func() { close(l.stop) })
}

// watch pings the connection until the session closes or the pings stop
// succeeding; then it closes the connection (which ends the session's
// locks on the server, when it can still be reached) and Lost.
func (l *Session) watch() {
	defer close(l.done)
	defer func() {
		close(l.lost)
		// Closing a connection to an unreachable server may wait for the
		// network; the locks count as lost whatever it does.
		go func() { l.conn.Close(); l.pool.Close() }()
	}()
	tick := time.NewTicker(Ping)
	defer tick.Stop()
	lease := time.NewTimer(Lease)
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
			lease.Reset(Lease)
		case <-tick.C:
			if inFlight {
				continue
			}
			inFlight = true
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), Lease)
				defer cancel()
				_, err := l.conn.ExecContext(ctx, `SELECT 1`)
				result <- err
			}()
		}
	}
}
