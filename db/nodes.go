package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/engine"
)

// Node is one backupd serve process on this store, as it last reported.
type Node struct {
	ID          string
	Hostname    string
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	Leader      bool
	LeaderSince *time.Time
	// StoppedAt is when the node shut down cleanly (nil: running, or
	// gone without a word: see HeartbeatAt).
	StoppedAt *time.Time
}

// Running reports whether the node runs as of now: not stopped, and its
// heartbeat at most NodeFresh old.
func (n Node) Running(now time.Time) bool {
	return n.StoppedAt == nil && now.Sub(n.HeartbeatAt) <= NodeFresh
}

// NodeFresh is how recent a node's heartbeat must be for it to count as
// running.
const NodeFresh = 20 * time.Second

// nodePrune is how long a stopped node's row stays.
const nodePrune = 24 * time.Hour

// Heartbeat records that node n runs (inserting its row the first time)
// with its leadership now, and removes the rows of nodes silent for a day.
func (s *Store) Heartbeat(ctx context.Context, n Node) error {
	now := time.Now()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var since any
		if n.Leader && n.LeaderSince != nil {
			since = n.LeaderSince.UTC().Format(TimeFormat)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO nodes (id, hostname, version, started_at, heartbeat_at, leader, leader_since)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, leader = excluded.leader,
				leader_since = excluded.leader_since, stopped_at = NULL`,
			n.ID, n.Hostname, n.Version, n.StartedAt.UTC().Format(TimeFormat), now.UTC().Format(TimeFormat),
			n.Leader, since); err != nil {
			return err
		}
		if n.Leader {
			// A leader that died leaves its row saying it leads: one
			// leader at a time, this one.
			if _, err := tx.ExecContext(ctx, `UPDATE nodes SET leader = 0, leader_since = NULL WHERE leader = 1 AND id <> ?`, n.ID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE heartbeat_at < ?`, now.Add(-nodePrune).UTC().Format(TimeFormat))
		return err
	})
	if err != nil {
		return fmt.Errorf("node heartbeat: %w", err)
	}
	return nil
}

// NodeStopped marks node id as stopped (and no longer leading).
func (s *Store) NodeStopped(ctx context.Context, id string) error {
	if _, err := s.writer.ExecContext(ctx, `UPDATE nodes SET leader = 0, leader_since = NULL, stopped_at = ? WHERE id = ?`,
		Now(), id); err != nil {
		return fmt.Errorf("node stopped: %w", err)
	}
	return nil
}

// ListNodes returns the nodes that reported in the last day, the running
// ones first, each group newest first.
func (s *Store) ListNodes(ctx context.Context) ([]Node, error) {
	nodes, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (Node, error) {
		var n Node
		var started, beat string
		var since, stopped sql.NullString
		if err := r.Scan(&n.ID, &n.Hostname, &n.Version, &started, &beat, &n.Leader, &since, &stopped); err != nil {
			return n, err
		}
		var err error
		if n.StartedAt, err = ParseTime(started); err != nil {
			return n, err
		}
		if n.HeartbeatAt, err = ParseTime(beat); err != nil {
			return n, err
		}
		if n.LeaderSince, err = parseNullTime(since); err != nil {
			return n, err
		}
		n.StoppedAt, err = parseNullTime(stopped)
		return n, err
	}, `SELECT id, hostname, version, started_at, heartbeat_at, leader, leader_since, stopped_at FROM nodes
		ORDER BY stopped_at IS NOT NULL, heartbeat_at DESC, started_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return nodes, nil
}

// FreshNodes counts the nodes running as of now (Node.Running).
func (s *Store) FreshNodes(ctx context.Context, now time.Time) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM nodes WHERE stopped_at IS NULL AND heartbeat_at >= ?`,
		now.Add(-NodeFresh).UTC().Format(TimeFormat)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count nodes: %w", err)
	}
	return n, nil
}
