package pgcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"text/tabwriter"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/snapstore"
)

// finish sets what triggers counted as the source has it (the counters)
// and moves every identity sequence past the highest id the source ever
// gave, so that new rows never reuse an id.
func (m *pgCopy) finish(ctx context.Context, tables []pgTable) error {
	counters, err := m.read.QueryContext(ctx, `SELECT name, value FROM counters`)
	if err != nil {
		return err
	}
	type counter struct {
		name  string
		value int64
	}
	var cs []counter
	for counters.Next() {
		var c counter
		if err := counters.Scan(&c.name, &c.value); err != nil {
			counters.Close()
			return err
		}
		cs = append(cs, c)
	}
	counters.Close()
	if err := counters.Err(); err != nil {
		return err
	}
	seqs := m.sourceSequences(ctx)
	return m.dst.InTx(ctx, func(tx *sql.Tx) error {
		// The deltas the copy's triggers added are folded first, so that
		// the totals set here are the counters' values.
		if _, err := tx.ExecContext(ctx, `SELECT bd_fold_counters()`); err != nil {
			return fmt.Errorf("fold the counters: %w", err)
		}
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO counter_totals (name, value) VALUES (?, ?)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value`, c.name, c.value); err != nil {
				return fmt.Errorf("set counter %s: %w", c.name, err)
			}
		}
		for _, t := range tables {
			if !t.identity {
				continue
			}
			var maxID int64
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM `+quoteIdent(t.name)).Scan(&maxID); err != nil {
				return err
			}
			maxID = max(maxID, seqs[t.name])
			// Empty: the next id is 1; else the one after the highest.
			isCalled := maxID > 0
			if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence(?, 'id'), ?, ?)`,
				quoteIdent(t.name), max(maxID, 1), isCalled); err != nil {
				return fmt.Errorf("move the id sequence of %s: %w", t.name, err)
			}
		}
		m.marker.Copied = true
		return m.saveMarker(ctx, tx)
	})
}

// sourceSequences is the highest id the source ever gave, per table whose
// ids SQLite's AUTOINCREMENT gives (rows since deleted included); empty
// when the source has no such table.
func (m *pgCopy) sourceSequences(ctx context.Context) map[string]int64 {
	seqs := map[string]int64{}
	if rows, err := m.read.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`); err == nil {
		for rows.Next() {
			var n string
			var s int64
			if rows.Scan(&n, &s) == nil {
				seqs[n] = s
			}
		}
		rows.Close()
	}
	return seqs
}

// verify compares every table's row count and counter, and decodes every
// snapshot on the target against its hash. It prints a summary and
// reports whether all matched.
func (m *pgCopy) verify(ctx context.Context, tables []pgTable) (bool, error) {
	ok := true
	tw := tabwriter.NewWriter(m.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\tsource rows\ttarget rows\t")
	names := make([]string, 0, len(tables))
	for _, t := range tables {
		names = append(names, t.name)
	}
	sort.Strings(names)
	for _, n := range names {
		query := `SELECT COUNT(*) FROM ` + quoteIdent(n)
		if n == "settings" {
			query += ` WHERE key NOT IN ('` + copyMarkerSetting + `', '` + db.SettingKeyFingerprint + `')`
		}
		var s, d int64
		if err := m.read.QueryRowContext(ctx, query).Scan(&s); err != nil {
			return false, fmt.Errorf("count %s on the source: %w", n, err)
		}
		if err := m.dst.Reader.QueryRowContext(ctx, query).Scan(&d); err != nil {
			return false, fmt.Errorf("count %s on the target: %w", n, err)
		}
		mark := "ok"
		if s != d {
			mark, ok = "DIFFERS", false
		}
		fmt.Fprintf(tw, "%s\t%11d\t%11d\t%s\n", n, s, d, mark)
	}
	if err := tw.Flush(); err != nil {
		return false, err
	}
	// Counters.
	srcC, err := counterValues(ctx, m.read)
	if err != nil {
		return false, err
	}
	dstC, err := counterValues(ctx, m.dst.Reader)
	if err != nil {
		return false, err
	}
	for name, v := range srcC {
		if dstC[name] != v {
			fmt.Fprintf(m.Out, "counter %s: source %d, target %d: DIFFERS\n", name, v, dstC[name])
			ok = false
		}
	}
	// Snapshots, through the store's own read path.
	checked, bad, err := m.verifySnapshots(ctx)
	if err != nil {
		return false, err
	}
	if bad > 0 {
		ok = false
		fmt.Fprintf(m.Out, "snapshots: %d decoded on PostgreSQL, %d do NOT match their hash\n", checked, bad)
	} else {
		fmt.Fprintf(m.Out, "snapshots: %d decoded on PostgreSQL, every one matches its hash\n", checked)
	}
	return ok, nil
}

// verifySnapshots reads every snapshot of the target through
// SnapshotText (deltas applied) and hashes it.
func (m *pgCopy) verifySnapshots(ctx context.Context) (checked, bad int64, err error) {
	var after int64
	for range copyMaxBatches {
		rows, err := m.dst.Reader.QueryContext(ctx, `SELECT id, hash FROM snapshots WHERE id > ? ORDER BY id LIMIT 500`, after)
		if err != nil {
			return checked, bad, err
		}
		type snap struct {
			id   int64
			hash string
		}
		var page []snap
		for rows.Next() {
			var s snap
			if err := rows.Scan(&s.id, &s.hash); err != nil {
				rows.Close()
				return checked, bad, err
			}
			page = append(page, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return checked, bad, err
		}
		if len(page) == 0 {
			return checked, bad, nil
		}
		for _, s := range page {
			text, err := snapstore.Text(ctx, m.dst.Reader, s.hash)
			checked++
			if err != nil || snapstore.Hash(text) != s.hash {
				bad++
				if bad <= 10 {
					fmt.Fprintf(m.Out, "snapshot %s (id %d): %v\n", s.hash, s.id, cmpErr(err))
				}
			}
			after = s.id
		}
	}
	return checked, bad, errors.New("too many snapshots")
}

func cmpErr(err error) string {
	if err != nil {
		return err.Error()
	}
	return "decodes to text of another hash"
}

// counterValues reads the counters view.
func counterValues(ctx context.Context, q engine.Querier) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, value FROM counters`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var n string
		var v int64
		if err := rows.Scan(&n, &v); err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, rows.Err()
}
