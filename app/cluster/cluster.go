// Package cluster makes one of the backupd serve nodes that share a
// PostgreSQL store the leader, and keeps every node's row in the nodes
// table. Each node runs its own web interface, API and backup engine; only
// the leader runs the fleet-wide loops (schedules, reachability,
// retention, the git mirror, notification delivery), so that they run
// once. The leader is whoever holds the advisory lock lock.Leader
// on a connection of its own; the others try for it every Retry. A node
// whose lock connection fails (lock.Session.Lost) stops its leader loops
// at once. On SQLite the one process always leads.
package cluster

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"backupd/app/cluster/lock"
	"backupd/db"
)

// Defaults of Options.
const (
	DefaultRetry     = 2 * time.Second
	DefaultHeartbeat = 5 * time.Second
)

// Options tune a Node; zero values take the defaults.
type Options struct {
	// Version is the node's backupd version, shown with it.
	Version string
	// Retry is how often a follower tries to take the lead (default 2 s).
	Retry time.Duration
	// Heartbeat is how often the node writes its row (default 5 s).
	Heartbeat time.Duration
	Log       *slog.Logger
}

// Node is this process as one of the nodes serving the store.
type Node struct {
	store  *db.Store
	opts   Options
	id     string
	host   string
	start  time.Time
	leader atomic.Bool
	since  atomic.Pointer[time.Time]
	beat   chan struct{}
}

// New returns this process's node; Run makes it take part.
func New(store *db.Store, opts Options) *Node {
	if opts.Retry <= 0 {
		opts.Retry = DefaultRetry
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	host, _ := os.Hostname()
	return &Node{store: store, opts: opts, id: uuid.NewString(), host: host, start: time.Now(), beat: make(chan struct{}, 1)}
}

// ID is the node's id in the nodes table.
func (n *Node) ID() string { return n.id }

// Leader reports whether this node leads now.
func (n *Node) Leader() bool { return n.leader.Load() }

// Run keeps the node's row up to date and runs lead while this node
// leads, with a context that ends when it stops leading (or ctx ends),
// until ctx ends. lead returns when its context ends; Run waits for it
// before trying for the lead again, so that a node never runs two sets of
// leader loops.
func (n *Node) Run(ctx context.Context, lead func(ctx context.Context)) {
	// The node's row exists before it leads (or stops).
	n.heartbeat(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); n.heartbeats(ctx) }()
	defer func() { <-done }()
	if !n.store.Postgres() {
		n.setLeader(true)
		lead(ctx)
		n.setLeader(false)
		return
	}
	// While the database stays away, the failure is logged once a
	// minute, not at every try.
	var failingSince, lastLog time.Time
	for ctx.Err() == nil {
		sess, err := lock.Open(ctx, n.store)
		if err != nil {
			if ctx.Err() == nil {
				switch {
				case failingSince.IsZero():
					failingSince, lastLog = time.Now(), time.Now()
					n.opts.Log.Error("cannot reach the database to take part in the leader election; trying again every few seconds", "err", err)
				case time.Since(lastLog) >= time.Minute:
					lastLog = time.Now()
					n.opts.Log.Warn("still cannot reach the database to take part in the leader election",
						"for", time.Since(failingSince).Round(time.Second).String(), "err", err)
				}
			}
			n.wait(ctx, nil)
			continue
		}
		if !failingSince.IsZero() {
			n.opts.Log.Info("the database answers again: this node takes part in the leader election",
				"after", time.Since(failingSince).Round(time.Second).String())
			failingSince = time.Time{}
		}
		n.follow(ctx, sess, lead)
		sess.Close()
	}
}

// follow tries for the lead on sess every Retry, leads once it has it,
// and returns when sess is lost (or ctx ends).
func (n *Node) follow(ctx context.Context, sess *lock.Session, lead func(context.Context)) {
	for ctx.Err() == nil {
		ok, err := sess.TryLock(ctx, lock.Leader)
		if err != nil {
			if ctx.Err() == nil {
				n.opts.Log.Error("leader election failed", "err", err)
			}
			return
		}
		if ok {
			n.lead(ctx, sess, lead)
			return
		}
		if !n.wait(ctx, sess.Lost()) {
			return
		}
	}
}

// wait sleeps Retry; false when lost closed or ctx ended first.
func (n *Node) wait(ctx context.Context, lost <-chan struct{}) bool {
	t := time.NewTimer(n.opts.Retry)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-lost:
		return false
	case <-t.C:
		return true
	}
}

// TakeoverDelay is how long a node that took the leader lock waits
// before it starts leading, while other nodes run: long enough for a
// leader whose session the server ended to have noticed at its next ping
// (lock.Ping) and stopped. A leader cut off by the network stops after lock.Lease
// without a successful ping, before the server frees its lock
// (lock.ServerBound), so this delay is not needed for it.
const TakeoverDelay = lock.Ping + time.Second

func (n *Node) lead(ctx context.Context, sess *lock.Session, lead func(context.Context)) {
	wait := TakeoverDelay
	fctx, cancel := context.WithTimeout(ctx, lock.Lease)
	running, err := n.store.FreshNodes(fctx, time.Now())
	cancel()
	if err == nil && running <= 1 {
		// No other node has shown itself for db.NodeFresh: any former
		// leader lost the database longer ago than lock.Lease, and
		// has stopped.
		wait = 0
	}
	delay := time.NewTimer(wait)
	defer delay.Stop()
	select {
	case <-ctx.Done():
		return
	case <-sess.Lost():
		return
	case <-delay.C:
	}
	n.setLeader(true)
	n.opts.Log.Info("this node leads: it runs the schedules, reachability checks, retention, the git mirror and notifications", "node", n.id)
	leadCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); lead(leadCtx) }()
	select {
	case <-sess.Lost():
		n.opts.Log.Error("lost the leader lock's database connection: leader work stopped", "node", n.id)
	case <-ctx.Done():
	case <-done:
	}
	stop()
	n.setLeader(false)
	<-done
}

func (n *Node) setLeader(on bool) {
	if on {
		now := time.Now()
		n.since.Store(&now)
	} else {
		n.since.Store(nil)
	}
	n.leader.Store(on)
	select {
	case n.beat <- struct{}{}:
	default:
	}
}

// heartbeats writes the node's row every Heartbeat, at once when its
// leadership changes, and marks it stopped when ctx ends.
func (n *Node) heartbeats(ctx context.Context) {
	t := time.NewTicker(n.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = n.store.NodeStopped(sctx, n.id)
			cancel()
			return
		case <-t.C:
		case <-n.beat:
		}
		n.heartbeat(ctx)
	}
}

// heartbeat writes the node's row once.
func (n *Node) heartbeat(ctx context.Context) {
	row := db.Node{ID: n.id, Hostname: n.host, Version: n.opts.Version, StartedAt: n.start,
		Leader: n.leader.Load(), LeaderSince: n.since.Load()}
	hctx, cancel := context.WithTimeout(ctx, n.opts.Heartbeat)
	defer cancel()
	if err := n.store.Heartbeat(hctx, row); err != nil && ctx.Err() == nil {
		n.opts.Log.Warn("node heartbeat failed", "err", err)
	}
}
