package pgcopy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/db"
)

// copyTable copies t's rows from where the last run stopped, one batch
// per target transaction, which also records how far it came.
func (m *pgCopy) copyTable(ctx context.Context, t pgTable) (int64, error) {
	if m.marker.Done[t.name] {
		return 0, nil
	}
	if m.marker.After == nil {
		m.marker.After, m.marker.Done = map[string][]any{}, map[string]bool{}
	}
	var total int64
	if err := m.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+quoteIdent(t.name)).Scan(&total); err != nil {
		return 0, err
	}
	after := jsonKeys(m.marker.After[t.name])
	orderIdx := make([]int, len(t.order))
	for i, k := range t.order {
		orderIdx[i] = slices.Index(t.cols, k)
	}
	insertCols := len(t.cols)
	quiet := m.canQuietTriggers(ctx, t.name)
	var copied int64
	last := time.Now()
	for range copyMaxBatches {
		query := `SELECT ` + quoteList(t.cols) + ` FROM ` + quoteIdent(t.name)
		var args []any
		if after != nil {
			query += ` WHERE (` + quoteList(t.order) + `) > (` + strings.TrimSuffix(strings.Repeat("?, ", len(t.order)), ", ") + `)`
			args = append(args, after...)
		}
		query += ` ORDER BY ` + quoteList(t.order) + ` LIMIT ?`
		args = append(args, m.BatchRows)
		batch, key, err := m.readBatch(ctx, query, args, t, orderIdx)
		if err != nil {
			return copied, err
		}
		if len(batch) == 0 {
			m.marker.Done[t.name] = true
			delete(m.marker.After, t.name)
			err := m.dst.InTx(ctx, func(tx *sql.Tx) error { return m.saveMarker(ctx, tx) })
			if copied > 0 {
				fmt.Fprintf(m.Progress, "%s: %d rows copied\n", t.name, copied)
			}
			return copied, err
		}
		m.marker.After[t.name] = key
		err = m.dst.InTx(ctx, func(tx *sql.Tx) error {
			var sb strings.Builder
			sb.WriteString(`INSERT INTO ` + quoteIdent(t.name) + ` (` + quoteList(t.cols[:insertCols]) + `) VALUES `)
			flat := make([]any, 0, len(batch)*insertCols)
			row := `(` + strings.TrimSuffix(strings.Repeat("?, ", insertCols), ", ") + `)`
			for i, r := range batch {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(row)
				flat = append(flat, r[:insertCols]...)
			}
			sb.WriteString(` ON CONFLICT DO NOTHING`)
			if quiet {
				// What the triggers keep is copied: the devices' columns
				// with the devices, the counters at the end. Off inside
				// this transaction only, so a kill leaves them on.
				if _, err := tx.ExecContext(ctx, `ALTER TABLE `+quoteIdent(t.name)+` DISABLE TRIGGER USER`); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, sb.String(), flat...); err != nil {
				return err
			}
			if quiet {
				if _, err := tx.ExecContext(ctx, `ALTER TABLE `+quoteIdent(t.name)+` ENABLE TRIGGER USER`); err != nil {
					return err
				}
			}
			return m.saveMarker(ctx, tx)
		})
		if err != nil {
			return copied, err
		}
		after = key
		copied += int64(len(batch))
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			fmt.Fprintf(m.Progress, "%s: %d of %d rows\n", t.name, copied, total)
		}
	}
	return copied, errors.New("too many batches")
}

// canQuietTriggers reports whether the copy may turn table's triggers off
// while it inserts, which is several times quicker for backups: it must
// own the table (it does when it created the schema), and the table must
// have triggers.
func (m *pgCopy) canQuietTriggers(ctx context.Context, table string) bool {
	var n int
	if err := m.dst.Reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_trigger
		WHERE tgrelid = CAST(? AS regclass) AND NOT tgisinternal`, quoteIdent(table)).Scan(&n); err != nil || n == 0 {
		return false
	}
	probe := errors.New("probe")
	err := m.dst.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+quoteIdent(table)+` DISABLE TRIGGER USER`); err != nil {
			return err
		}
		return probe // rolled back
	})
	return errors.Is(err, probe)
}

// readBatch reads up to BatchRows rows (and about copyBatchBytes) of
// query, converted for the target's columns, and the last row's key.
func (m *pgCopy) readBatch(ctx context.Context, query string, args []any, t pgTable, orderIdx []int) ([][]any, []any, error) {
	rows, err := m.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var batch [][]any
	var key []any
	size := 0
	for rows.Next() {
		vals := make([]any, len(t.cols))
		ptrs := make([]any, len(t.cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		key = make([]any, len(orderIdx))
		for i, j := range orderIdx {
			key[i] = keyValue(vals[j])
		}
		for i, v := range vals {
			c, n, err := convertForPostgres(v, t.types[i])
			if err != nil {
				return nil, nil, fmt.Errorf("column %s: %w", t.cols[i], err)
			}
			vals[i] = c
			size += n
		}
		batch = append(batch, vals)
		if size >= copyBatchBytes {
			break
		}
	}
	return batch, key, rows.Err()
}

// keyValue is a key column's value as kept in the marker (JSON): an
// integer or a string.
func keyValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case float64:
		return int64(x)
	}
	return v
}

// jsonKeys turns a key read back from the marker into query arguments.
func jsonKeys(k []any) []any {
	if k == nil {
		return nil
	}
	out := make([]any, len(k))
	for i, v := range k {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				out[i] = n
			} else {
				out[i] = x.String()
			}
		case float64:
			out[i] = int64(x)
		default:
			out[i] = x
		}
	}
	return out
}

// convertForPostgres converts a SQLite value for a PostgreSQL column of
// type typ (udt_name), returning its size in bytes.
func convertForPostgres(v any, typ string) (any, int, error) {
	if v == nil {
		return nil, 0, nil
	}
	switch typ {
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, len(x), nil
		case string:
			return []byte(x), len(x), nil
		}
	case "int8", "int4", "int2":
		switch x := v.(type) {
		case int64:
			return x, 8, nil
		case bool:
			if x {
				return int64(1), 8, nil
			}
			return int64(0), 8, nil
		case float64:
			return int64(x), 8, nil
		case string:
			n, err := strconv.ParseInt(x, 10, 64)
			return n, 8, err
		case []byte:
			n, err := strconv.ParseInt(string(x), 10, 64)
			return n, 8, err
		}
	default: // text, citext
		switch x := v.(type) {
		case string:
			return x, len(x), nil
		case []byte:
			return string(x), len(x), nil
		case int64:
			return strconv.FormatInt(x, 10), 8, nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), 8, nil
		case bool:
			return strconv.FormatBool(x), 8, nil
		case time.Time:
			return x.UTC().Format(db.TimeFormat), 8, nil
		}
	}
	return nil, 0, fmt.Errorf("cannot copy a %T into a %s column", v, typ)
}
