package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/secret"
	"backupd/db"
)

// Settings a copy keeps in the target beside the store's own: its
// progress, and the secret key's fingerprint every node checks.
const (
	migrateMarkerSetting = "migrate_to_postgres"
)

// Bounds of one copied batch: rows, and bytes of text and blobs read
// (snapshots can be megabytes each; a batch holds at least one row).
const (
	migrateBatchRows  = 500
	migrateBatchBytes = 8 << 20
	// migrateMaxBatches bounds the batches of one table (a billion rows
	// at the smallest batch size).
	migrateMaxBatches = 2_000_000_000
)

// migrateLockKey is the advisory lock a copy holds on its target.
const migrateLockKey int64 = 0x6263_6b64_6d69_6772 // "bckdmigr"

// migrateOrder overrides the primary key as the copy order of a table
// that references itself: parents before children.
var migrateOrder = map[string][]string{"device_groups": {"depth", "id"}}

// migrateMarker is the target's record of a copy: which store it comes
// from, and how far each table has come.
type migrateMarker struct {
	Source  string           `json:"source"`
	From    string           `json:"from"`
	Started string           `json:"started"`
	After   map[string][]any `json:"after,omitempty"`
	Done    map[string]bool  `json:"done,omitempty"`
	Copied  bool             `json:"copied,omitempty"`
}

func newDBMigrateToPostgres(cfg *config.Config) *cobra.Command {
	var from, to string
	var batchRows int
	cmd := &cobra.Command{
		Use:   "migrate-to-postgres --from DATA --to postgres://…",
		Short: "Copy an appliance's SQLite store into a PostgreSQL database, verified and resumable",
		Long: `Copy the SQLite store of the data directory DATA (default --data) into the
PostgreSQL database --to (default --db), to run backupd on PostgreSQL from then on.

Stop backupd on DATA first (systemctl stop backupd): the copy reads DATA's database
read-only in one consistent snapshot and refuses to start while a backupd process
works on it. The target is brought to the current schema; it must be empty, or hold
an interrupted copy of the same store, which is then carried on (rows already there
are skipped, not duplicated). A database holding another store is refused, and so is
one backupd already uses (nodes served it, or it holds rows written after the copy):
nothing is written to it, and the refusal says how to go on without losing them.

Tables are copied in batches, keeping every ID. At the end the row counts of every
table are compared, and every stored configuration is decoded on PostgreSQL and
checked against its hash; the exit status is non-zero on any difference.

Then copy DATA/secret.key into the data directory of every node and start them with
--db naming the database: without that key, the stored device passwords cannot be
read. Keep DATA as it is until the new store has run well.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				from = cfg.DataDir
			}
			if to == "" {
				to = cfg.DB
			}
			if to == "" {
				return errors.New("--to is required: the PostgreSQL database to copy into, postgres://user:password@host:port/database")
			}
			target := *cfg
			target.DataDir, target.DB = from, to
			if err := target.ValidateStore(); err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			if batchRows < 1 || batchRows > 10_000 {
				return errors.New("--batch-rows: want 1 to 10,000")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			m := &pgMigration{from: from, to: to, out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(), batchRows: batchRows}
			return m.run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "data directory of the SQLite store to copy (default: --data)")
	f.StringVar(&to, "to", "", "PostgreSQL database to copy into, postgres://user@host:port/database (default: --db, or BACKUPD_DB: "+
		"keep the password there, in PGPASSWORD or in ~/.pgpass rather than on the command line, which ps shows)")
	f.IntVar(&batchRows, "batch-rows", migrateBatchRows, "rows per copied batch")
	_ = f.MarkHidden("batch-rows")
	return cmd
}

// migrateFrom is the data directory a migrate-to-postgres run reads, for
// the root's preparation of it (ownership, modes): --from when given.
func migrateFrom(cmd *cobra.Command) string {
	if cmd.Name() != "migrate-to-postgres" {
		return ""
	}
	if f := cmd.Flags().Lookup("from"); f != nil {
		return f.Value.String()
	}
	return ""
}

// pgMigration is one run of migrate-to-postgres.
type pgMigration struct {
	from, to  string
	out, errw io.Writer
	batchRows int

	src    *db.Store
	dst    *db.Store
	read   *sql.Conn // the source's one read transaction
	marker migrateMarker
}

// pgTable is a table of the PostgreSQL schema, as the copy needs it.
type pgTable struct {
	name     string
	cols     []string
	types    []string // udt_name per column
	order    []string // the keyset the copy walks
	identity bool     // an id column generated by an identity sequence
}

func (m *pgMigration) run(ctx context.Context) error {
	start := time.Now()
	if _, err := os.Stat(filepath.Join(m.from, db.FileName)); err != nil {
		return fmt.Errorf("no database in %s (%v); point --from at the data directory of the backupd to copy", m.from, err)
	}
	if who, busy := busyRunFile(m.from); busy {
		return fmt.Errorf("a backupd process is working on %s (%s is locked): stop it first (systemctl stop backupd, and no backupd backup run), then copy", m.from, who)
	}
	sealer, err := secret.Load(m.from)
	if err != nil {
		return fmt.Errorf("the secret key of %s: %w; the copy needs it, and every node then needs the same key", m.from, err)
	}
	if m.src, err = db.OpenReadOnly(ctx, m.from); err != nil {
		return err
	}
	defer m.src.Close()
	if m.read, err = m.src.Reader().Conn(ctx); err != nil {
		return err
	}
	defer m.read.Close()
	// One read transaction for the whole copy and its verification: one
	// consistent state of the source, whatever happens to the file.
	if _, err := m.read.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("read %s: %w", m.from, err)
	}
	defer m.read.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	// Before anything is written there, the schema included: a store
	// nodes have served since an earlier copy is left alone.
	if err := m.refuseLiveTarget(ctx); err != nil {
		return err
	}
	if m.dst, err = db.OpenPostgres(ctx, m.to); err != nil {
		return fmt.Errorf("%w (database %s)", err, db.RedactURL(m.to))
	}
	defer m.dst.Close()
	// One copy at a time into a database: a session advisory lock, held on
	// a connection of its own until the end (or the process's death).
	lockConn, err := m.dst.Reader().Conn(ctx)
	if err != nil {
		return err
	}
	defer lockConn.Close()
	var locked bool
	if err := lockConn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, migrateLockKey).Scan(&locked); err != nil {
		return fmt.Errorf("lock %s: %w", db.RedactURL(m.to), err)
	}
	if !locked {
		return fmt.Errorf("another migrate-to-postgres is copying into %s; let it finish (or stop it), then run this again", db.RedactURL(m.to))
	}
	fmt.Fprintf(m.errw, "copying %s (read-only) to %s; backupd must not run on %s meanwhile\n", m.from, db.RedactURL(m.to), m.from)

	tables, err := m.tables(ctx)
	if err != nil {
		return err
	}
	if err := m.claim(ctx, sealer, tables); err != nil {
		return err
	}
	if m.marker.Copied {
		fmt.Fprintln(m.errw, "the copy was finished before; verifying it again")
	}
	var rows int64
	for _, t := range tables {
		n, err := m.copyTable(ctx, t)
		rows += n
		if err != nil {
			return fmt.Errorf("copy %s: %w (run the same command again to carry on)", t.name, err)
		}
	}
	if err := m.finish(ctx, tables); err != nil {
		return fmt.Errorf("%w (run the same command again to carry on)", err)
	}
	ok, err := m.verify(ctx, tables)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !ok {
		return errors.New("verification failed: the copy differs from the source (see above); do not use it. No node has served it: " +
			"copy again into a new, empty database (CREATE DATABASE …), then drop this one")
	}
	fmt.Fprintf(m.out, "copied %s to %s in %s: %d tables, %d rows this run, verified\n", m.from, db.RedactURL(m.to),
		time.Since(start).Round(time.Millisecond), len(tables), rows)
	fmt.Fprintf(m.errw, "next: copy %s into the data directory of every node and start them with --db %s\n",
		filepath.Join(m.from, secret.KeyFile), db.RedactURL(m.to))
	return nil
}

// migrateSkipped are tables of run-time state, not of the store: the
// nodes of a cluster register themselves when they start.
var migrateSkipped = map[string]bool{"nodes": true}

// migrateCounted are the tables behind the counters view (PostgreSQL
// migration 00021): not copied row by row, finish sets them from the
// source's counters.
var migrateCounted = map[string]bool{"counter_totals": true, "counter_deltas": true}

// tables lists the PostgreSQL schema's tables in foreign-key order
// (referenced tables first), each checked against the source.
func (m *pgMigration) tables(ctx context.Context) ([]pgTable, error) {
	q := m.dst.Reader()
	names, err := queryStrings(ctx, q, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version' ORDER BY table_name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	refs := map[string][]string{}
	rows, err := q.QueryContext(ctx, `SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c
		WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, fmt.Errorf("list foreign keys: %w", err)
	}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			rows.Close()
			return nil, err
		}
		if from != to {
			refs[from] = append(refs[from], to)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	srcTables, err := queryStrings(ctx, m.read, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.from, err)
	}
	inSource := map[string]bool{}
	for _, n := range srcTables {
		inSource[n] = true
	}
	byName := map[string]pgTable{}
	for _, n := range names {
		if migrateSkipped[n] || migrateCounted[n] {
			continue
		}
		if !inSource[n] {
			return nil, fmt.Errorf("the source has no table %s: is %s backupd's data directory, at this release's schema?", n, m.from)
		}
		t := pgTable{name: n}
		cr, err := q.QueryContext(ctx, `SELECT column_name, udt_name, is_identity FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`, n)
		if err != nil {
			return nil, err
		}
		for cr.Next() {
			var col, typ, ident string
			if err := cr.Scan(&col, &typ, &ident); err != nil {
				cr.Close()
				return nil, err
			}
			t.cols, t.types = append(t.cols, col), append(t.types, typ)
			if col == "id" && ident == "YES" {
				t.identity = true
			}
		}
		cr.Close()
		if t.order = migrateOrder[n]; t.order == nil {
			if t.order, err = queryStrings(ctx, q, `SELECT a.attname FROM pg_index i
				JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
				WHERE i.indrelid = CAST(? AS regclass) AND i.indisprimary
				ORDER BY array_position(CAST(i.indkey AS int2[]), a.attnum)`, n); err != nil {
				return nil, err
			}
		}
		if len(t.order) == 0 {
			return nil, fmt.Errorf("table %s has no primary key to copy it by", n)
		}
		// The source must have every column (it is at the same schema).
		probe, err := m.read.QueryContext(ctx, `SELECT `+quoteList(t.cols)+` FROM `+quoteIdent(n)+` LIMIT 0`)
		if err != nil {
			return nil, fmt.Errorf("the source's table %s differs from PostgreSQL's: %w", n, err)
		}
		probe.Close()
		for _, k := range t.order {
			if !slices.Contains(t.cols, k) {
				return nil, fmt.Errorf("table %s: no column %s to copy it in order", n, k)
			}
		}
		byName[n] = t
	}
	// Referenced tables first; ties by name, so every run copies alike.
	var ordered []pgTable
	placed := map[string]bool{}
	for range len(names) + 1 {
		progress := false
		for _, n := range names {
			if placed[n] || migrateSkipped[n] || migrateCounted[n] {
				continue
			}
			ready := true
			for _, r := range refs[n] {
				if !placed[r] && byName[r].name != "" {
					ready = false
				}
			}
			if ready {
				ordered, placed[n], progress = append(ordered, byName[n]), true, true
			}
		}
		if !progress {
			break
		}
	}
	if len(ordered) != len(byName) {
		return nil, errors.New("the tables' foreign keys form a cycle; the copy cannot order them")
	}
	return ordered, nil
}

// sourceID names the store being copied: its secret key's fingerprint and
// its first user, created when the store was.
func (m *pgMigration) sourceID(ctx context.Context, fp string) (string, error) {
	var id int64
	var name, created string
	err := m.read.QueryRowContext(ctx, `SELECT id, username, created_at FROM users ORDER BY id LIMIT 1`).Scan(&id, &name, &created)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read %s: %w", m.from, err)
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s", fp, id, name, created)))
	return hex.EncodeToString(sum[:16]), nil
}

// claim makes the target this copy's: empty, or holding an earlier,
// interrupted run of the same copy. It records the copy and the secret
// key's fingerprint before any row is copied.
func (m *pgMigration) claim(ctx context.Context, sealer *secret.Sealer, tables []pgTable) error {
	fp := sealer.Fingerprint()
	src, err := m.sourceID(ctx, fp)
	if err != nil {
		return err
	}
	var haveFP string
	if _, err := m.dst.GetSetting(ctx, keyFingerprintSetting, &haveFP); err != nil {
		return err
	}
	if haveFP != "" && haveFP != fp {
		return fmt.Errorf("%s was set up with another secret key than %s's: it holds another store, and is left alone; copy into an empty database",
			db.RedactURL(m.to), m.from)
	}
	found, err := m.dst.GetSetting(ctx, migrateMarkerSetting, &m.marker)
	if err != nil {
		return err
	}
	if found {
		if m.marker.Source != src {
			return fmt.Errorf("%s holds a copy of another store (from %s), and is left alone; copy into an empty database", db.RedactURL(m.to), m.marker.From)
		}
		if !m.marker.Copied {
			fmt.Fprintf(m.errw, "carrying on the copy started %s\n", m.marker.Started)
		}
		return nil
	}
	// A first run: the target must hold nothing but what its schema
	// brings (the counters) and, at most, this key's fingerprint.
	for _, t := range tables {
		var n int64
		query := `SELECT COUNT(*) FROM ` + quoteIdent(t.name)
		switch t.name {
		case "zones":
			query += ` WHERE id <> 1` // the server's own zone, which the schema brings
		case "settings":
			query += ` WHERE key <> '` + keyFingerprintSetting + `'`
		}
		if err := m.dst.Reader().QueryRowContext(ctx, query).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%s is not empty (table %s holds %d rows): it holds another store, and is left alone; copy into an empty database (CREATE DATABASE …), and start no backupd on it before the copy",
				db.RedactURL(m.to), t.name, n)
		}
	}
	abs, err := filepath.Abs(m.from)
	if err != nil {
		abs = m.from
	}
	m.marker = migrateMarker{Source: src, From: abs, Started: db.Now(), After: map[string][]any{}, Done: map[string]bool{}}
	return m.dst.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
			keyFingerprintSetting, strconv.Quote(fp), db.Now()); err != nil {
			return err
		}
		return m.saveMarker(ctx, tx)
	})
}

func (m *pgMigration) saveMarker(ctx context.Context, tx *sql.Tx) error {
	raw, err := json.Marshal(m.marker)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, migrateMarkerSetting, string(raw), db.Now())
	return err
}

// copyTable copies t's rows from where the last run stopped, one batch
// per target transaction, which also records how far it came.
func (m *pgMigration) copyTable(ctx context.Context, t pgTable) (int64, error) {
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
	for range migrateMaxBatches {
		query := `SELECT ` + quoteList(t.cols) + ` FROM ` + quoteIdent(t.name)
		var args []any
		if after != nil {
			query += ` WHERE (` + quoteList(t.order) + `) > (` + strings.TrimSuffix(strings.Repeat("?, ", len(t.order)), ", ") + `)`
			args = append(args, after...)
		}
		query += ` ORDER BY ` + quoteList(t.order) + ` LIMIT ?`
		args = append(args, m.batchRows)
		batch, key, err := m.readBatch(ctx, query, args, t, orderIdx)
		if err != nil {
			return copied, err
		}
		if len(batch) == 0 {
			m.marker.Done[t.name] = true
			delete(m.marker.After, t.name)
			err := m.dst.InTx(ctx, func(tx *sql.Tx) error { return m.saveMarker(ctx, tx) })
			if copied > 0 {
				fmt.Fprintf(m.errw, "%s: %d rows copied\n", t.name, copied)
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
			fmt.Fprintf(m.errw, "%s: %d of %d rows\n", t.name, copied, total)
		}
	}
	return copied, errors.New("too many batches")
}

// canQuietTriggers reports whether the copy may turn table's triggers off
// while it inserts, which is several times quicker for backups: it must
// own the table (it does when it created the schema), and the table must
// have triggers.
func (m *pgMigration) canQuietTriggers(ctx context.Context, table string) bool {
	var n int
	if err := m.dst.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_trigger
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

// readBatch reads up to batchRows rows (and about migrateBatchBytes) of
// query, converted for the target's columns, and the last row's key.
func (m *pgMigration) readBatch(ctx context.Context, query string, args []any, t pgTable, orderIdx []int) ([][]any, []any, error) {
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
		if size >= migrateBatchBytes {
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

// finish sets what triggers counted as the source has it (the counters)
// and moves every identity sequence past the highest id the source ever
// gave, so that new rows never reuse an id.
func (m *pgMigration) finish(ctx context.Context, tables []pgTable) error {
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

// verify compares every table's row count and counter, and decodes every
// snapshot on the target against its hash. It prints a summary and
// reports whether all matched.
func (m *pgMigration) verify(ctx context.Context, tables []pgTable) (bool, error) {
	ok := true
	tw := tabwriter.NewWriter(m.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "table\tsource rows\ttarget rows\t")
	names := make([]string, 0, len(tables))
	for _, t := range tables {
		names = append(names, t.name)
	}
	sort.Strings(names)
	for _, n := range names {
		query := `SELECT COUNT(*) FROM ` + quoteIdent(n)
		if n == "settings" {
			query += ` WHERE key NOT IN ('` + migrateMarkerSetting + `', '` + keyFingerprintSetting + `')`
		}
		var s, d int64
		if err := m.read.QueryRowContext(ctx, query).Scan(&s); err != nil {
			return false, fmt.Errorf("count %s on the source: %w", n, err)
		}
		if err := m.dst.Reader().QueryRowContext(ctx, query).Scan(&d); err != nil {
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
	dstC, err := counterValues(ctx, m.dst.Reader())
	if err != nil {
		return false, err
	}
	for name, v := range srcC {
		if dstC[name] != v {
			fmt.Fprintf(m.out, "counter %s: source %d, target %d: DIFFERS\n", name, v, dstC[name])
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
		fmt.Fprintf(m.out, "snapshots: %d decoded on PostgreSQL, %d do NOT match their hash\n", checked, bad)
	} else {
		fmt.Fprintf(m.out, "snapshots: %d decoded on PostgreSQL, every one matches its hash\n", checked)
	}
	return ok, nil
}

// verifySnapshots reads every snapshot of the target through
// SnapshotText (deltas applied) and hashes it.
func (m *pgMigration) verifySnapshots(ctx context.Context) (checked, bad int64, err error) {
	var after int64
	for range migrateMaxBatches {
		rows, err := m.dst.Reader().QueryContext(ctx, `SELECT id, hash FROM snapshots WHERE id > ? ORDER BY id LIMIT 500`, after)
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
			text, err := m.dst.SnapshotText(ctx, s.hash)
			checked++
			if err != nil || db.SnapshotHash(text) != s.hash {
				bad++
				if bad <= 10 {
					fmt.Fprintf(m.out, "snapshot %s (id %d): %v\n", s.hash, s.id, cmpErr(err))
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

type rowQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func counterValues(ctx context.Context, q rowQuerier) (map[string]int64, error) {
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

func queryStrings(ctx context.Context, q rowQuerier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// quoteIdent quotes a name of the schema for SQL (both engines).
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteList(names []string) string {
	var b bytes.Buffer
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(n))
	}
	return b.String()
}
