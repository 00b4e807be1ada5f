package pgcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"backupd/db"
	"backupd/db/engine"
)

// copyListMax bounds the nodes and tables a refusal names.
const copyListMax = 5

// targetUse is what shows that a database is a store in use: nodes that
// served it, and rows the source never had.
type targetUse struct {
	nodes []db.Node
	// newer holds, per table, the rows whose id is past every id the
	// source gave: written on PostgreSQL after the source was copied.
	newer map[string]int64
}

func (u targetUse) inUse() bool { return len(u.nodes) > 0 || len(u.newer) > 0 }

// refuseLiveTarget refuses a target that backupd already uses as its
// store, before anything is written to it (its schema is not even
// brought up to date). Copying into such a database again can only end
// in a verification failure, and the way out of that (drop the target)
// would lose everything written since the move.
func (m *pgCopy) refuseLiveTarget(ctx context.Context) error {
	look, err := engine.InspectPostgres(ctx, m.To)
	if err != nil {
		return fmt.Errorf("%w (database %s)", err, engine.RedactURL(m.To))
	}
	defer look.Close()
	use, err := m.targetUse(ctx, look)
	if err != nil {
		return fmt.Errorf("look at %s: %w", engine.RedactURL(m.To), err)
	}
	if !use.inUse() {
		return nil
	}
	return errors.New(m.liveTargetMessage(use, time.Now()))
}

// targetUse reads the target's nodes and, for every table whose ids an
// identity gives, how many of its rows lie past the source's highest id.
func (m *pgCopy) targetUse(ctx context.Context, look *sql.DB) (targetUse, error) {
	var use targetUse
	var hasNodes bool
	if err := look.QueryRowContext(ctx, `SELECT to_regclass('nodes') IS NOT NULL`).Scan(&hasNodes); err != nil {
		return use, err
	}
	if !hasNodes {
		return use, nil // empty, or older than any node: nobody served it
	}
	rows, err := look.QueryContext(ctx, `SELECT id, hostname, heartbeat_at, stopped_at FROM nodes ORDER BY heartbeat_at DESC, id`)
	if err != nil {
		return use, err
	}
	for rows.Next() {
		var n db.Node
		var beat string
		var stopped sql.NullString
		if err := rows.Scan(&n.ID, &n.Hostname, &beat, &stopped); err != nil {
			rows.Close()
			return use, err
		}
		n.HeartbeatAt, _ = db.ParseTime(beat)
		if stopped.Valid {
			if t, err := db.ParseTime(stopped.String); err == nil {
				n.StoppedAt = &t
			}
		}
		use.nodes = append(use.nodes, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return use, err
	}

	tables, err := queryStrings(ctx, look, `SELECT table_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name = 'id' AND is_identity = 'YES' ORDER BY table_name`)
	if err != nil {
		return use, err
	}
	seqs := m.sourceSequences(ctx)
	for _, t := range tables {
		if copySkipped[t] || copyCounted[t] {
			continue
		}
		var inSource int
		if err := m.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, t).Scan(&inSource); err != nil {
			return use, fmt.Errorf("read %s: %w", m.From, err)
		}
		if inSource == 0 {
			continue
		}
		var highest int64
		if err := m.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM `+quoteIdent(t)).Scan(&highest); err != nil {
			return use, fmt.Errorf("read %s: %w", m.From, err)
		}
		highest = max(highest, seqs[t])
		var n int64
		if err := look.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(t)+` WHERE id > ?`, highest).Scan(&n); err != nil {
			return use, err
		}
		if n > 0 {
			if use.newer == nil {
				use.newer = map[string]int64{}
			}
			use.newer[t] = n
		}
	}
	return use, nil
}

// liveTargetMessage says what shows the target is in use, and how to go
// on without losing what was written to it.
func (m *pgCopy) liveTargetMessage(use targetUse, now time.Time) string {
	target := engine.RedactURL(m.To)
	var b strings.Builder
	fmt.Fprintf(&b, "%s is in use as backupd's store: the copy is refused, and nothing was written to it", target)
	if len(use.nodes) > 0 {
		var names []string
		for i, n := range use.nodes {
			if i == copyListMax {
				names = append(names, fmt.Sprintf("and %d more", len(use.nodes)-i))
				break
			}
			state := "running"
			switch {
			case n.StoppedAt != nil:
				state = "stopped " + n.StoppedAt.UTC().Format(time.RFC3339)
			case !n.Running(now):
				state = "silent"
			}
			names = append(names, fmt.Sprintf("%s on host %s (last seen %s, %s)", n.ID, n.Hostname,
				n.HeartbeatAt.UTC().Format(time.RFC3339), state))
		}
		fmt.Fprintf(&b, ".\nNodes served it: %s", strings.Join(names, ", "))
	}
	if len(use.newer) > 0 {
		tables := make([]string, 0, len(use.newer))
		for t := range use.newer {
			tables = append(tables, t)
		}
		// The tables with most new rows first.
		sort.Slice(tables, func(i, j int) bool {
			if use.newer[tables[i]] != use.newer[tables[j]] {
				return use.newer[tables[i]] > use.newer[tables[j]]
			}
			return tables[i] < tables[j]
		})
		var parts []string
		for i, t := range tables {
			if i == copyListMax {
				parts = append(parts, fmt.Sprintf("and %d more tables", len(tables)-i))
				break
			}
			unit := "rows"
			if use.newer[t] == 1 {
				unit = "row"
			}
			parts = append(parts, fmt.Sprintf("%s (%d %s)", t, use.newer[t], unit))
		}
		fmt.Fprintf(&b, ".\nIt holds data written after the source %s was copied: %s", m.From, strings.Join(parts, ", "))
	}
	fmt.Fprintf(&b, ".\nThe store lives on PostgreSQL now, and %s is older than it: keep the nodes running on this database. "+
		"To move the store to another database, back this one up (backupd db backup --db URL --out FILE, URL naming this "+
		"database) and restore that into the new one (pg_restore --no-owner --dbname=URL FILE). To copy %s again instead, "+
		"copy it into a new, empty database (CREATE DATABASE …) and keep this one: it alone holds what was written since the move",
		m.From, m.From)
	return b.String()
}
