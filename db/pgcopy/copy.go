// Package pgcopy moves an appliance's SQLite store to PostgreSQL (backupd
// db migrate-to-postgres): Run copies every table of the source,
// read in one consistent snapshot, into a PostgreSQL database brought to
// the current schema, in batches that each record how far the copy came
// (so a killed copy carries on), then verifies the copy row by row and
// snapshot by snapshot. tables.go lists what is copied,
// batch.go copies it, verify.go checks it, and
// inuse.go refuses a target that is a store in use.
package pgcopy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"backupd/db"
	"backupd/db/engine"
)

// copyMarkerSetting is the settings key of a copy's record in its target.
const copyMarkerSetting = "migrate_to_postgres"

// BatchRows is how many rows a batch of the copy holds unless told
// otherwise.
const BatchRows = 500

// Bounds of one copied batch: rows, and bytes of text and blobs read
// (snapshots can be megabytes each; a batch holds at least one row).
const (
	copyBatchBytes = 8 << 20
	// copyMaxBatches bounds the batches of one table (a billion rows at
	// the smallest batch size).
	copyMaxBatches = 2_000_000_000
)

// copyLockKey is the advisory lock a copy holds on its target.
const copyLockKey int64 = 0x6263_6b64_6d69_6772 // "bckdmigr"

// copyMarker is the target's record of a copy: which store it comes from,
// and how far each table has come.
type copyMarker struct {
	Source  string           `json:"source"`
	From    string           `json:"from"`
	Started string           `json:"started"`
	After   map[string][]any `json:"after,omitempty"`
	Done    map[string]bool  `json:"done,omitempty"`
	Copied  bool             `json:"copied,omitempty"`
}

// Copy is what Run copies, and where it says how it
// goes.
type Copy struct {
	// From is the data directory of the SQLite store. No backupd may work
	// on it meanwhile (the caller checks).
	From string
	// To is the PostgreSQL database's URL.
	To string
	// KeyFingerprint is the fingerprint of From's secret key: the copy
	// records it in the target, and refuses a target set up with another.
	KeyFingerprint string
	// BatchRows is how many rows one batch copies (the package's BatchRows when 0).
	BatchRows int
	// Out gets the verification's summary; Progress what the copy is
	// doing.
	Out, Progress io.Writer
}

// Result is what a finished, verified copy did.
type Result struct {
	Tables int   // tables copied
	Rows   int64 // rows this run copied
}

// pgCopy is one run of Run.
type pgCopy struct {
	Copy
	src    *engine.DB // the source, read-only
	dst    *engine.DB // the target
	read   *sql.Conn  // the source's one read transaction
	marker copyMarker
}

// Run copies the SQLite store in c.From into the PostgreSQL
// database c.To and verifies the copy. The target must be empty, or hold
// an interrupted copy of the same store, which is then carried on (rows
// already there are skipped, not duplicated); a target holding another
// store, or one backupd already uses, is refused before anything is
// written to it. The error of a copy that stopped says to run it again.
func Run(ctx context.Context, c Copy) (Result, error) {
	if c.BatchRows <= 0 {
		c.BatchRows = BatchRows
	}
	m := &pgCopy{Copy: c}
	var err error
	// The source must be a store at this binary's schema: db's read-only
	// opening checks that; the copy then reads its tables as they are.
	check, err := db.OpenReadOnly(ctx, m.From)
	if err != nil {
		return Result{}, err
	}
	path := check.Path()
	check.Close()
	if m.src, err = engine.OpenSQLiteReadOnly(path); err != nil {
		return Result{}, err
	}
	defer m.src.Close()
	if m.read, err = m.src.Reader.Conn(ctx); err != nil {
		return Result{}, err
	}
	defer m.read.Close()
	// One read transaction for the whole copy and its verification: one
	// consistent state of the source, whatever happens to the file.
	if _, err := m.read.ExecContext(ctx, `BEGIN`); err != nil {
		return Result{}, fmt.Errorf("read %s: %w", m.From, err)
	}
	defer m.read.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	// Before anything is written there, the schema included: a store
	// nodes have served since an earlier copy is left alone.
	if err := m.refuseLiveTarget(ctx); err != nil {
		return Result{}, err
	}
	if err := engine.MigratePostgres(ctx, m.To, engine.MigrateUp, nil); err != nil {
		return Result{}, fmt.Errorf("%w (database %s)", err, engine.RedactURL(m.To))
	}
	if m.dst, err = engine.OpenPostgres(ctx, m.To); err != nil {
		return Result{}, fmt.Errorf("%w (database %s)", err, engine.RedactURL(m.To))
	}
	defer m.dst.Close()
	// One copy at a time into a database: a session advisory lock, held on
	// a connection of its own until the end (or the process's death).
	lockConn, err := m.dst.Reader.Conn(ctx)
	if err != nil {
		return Result{}, err
	}
	defer lockConn.Close()
	var locked bool
	if err := lockConn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, copyLockKey).Scan(&locked); err != nil {
		return Result{}, fmt.Errorf("lock %s: %w", engine.RedactURL(m.To), err)
	}
	if !locked {
		return Result{}, fmt.Errorf("another migrate-to-postgres is copying into %s; let it finish (or stop it), then run this again", engine.RedactURL(m.To))
	}
	fmt.Fprintf(m.Progress, "copying %s (read-only) to %s; backupd must not run on %s meanwhile\n", m.From, engine.RedactURL(m.To), m.From)

	tables, err := m.tables(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := m.claim(ctx, tables); err != nil {
		return Result{}, err
	}
	if m.marker.Copied {
		fmt.Fprintln(m.Progress, "the copy was finished before; verifying it again")
	}
	res := Result{Tables: len(tables)}
	for _, t := range tables {
		n, err := m.copyTable(ctx, t)
		res.Rows += n
		if err != nil {
			return res, fmt.Errorf("copy %s: %w (run the same command again to carry on)", t.name, err)
		}
	}
	if err := m.finish(ctx, tables); err != nil {
		return res, fmt.Errorf("%w (run the same command again to carry on)", err)
	}
	ok, err := m.verify(ctx, tables)
	if err != nil {
		return res, fmt.Errorf("verify: %w", err)
	}
	if !ok {
		return res, errors.New("verification failed: the copy differs from the source (see above); do not use it. No node has served it: " +
			"copy again into a new, empty database (CREATE DATABASE …), then drop this one")
	}
	return res, nil
}

// sourceID names the store being copied: its secret key's fingerprint and
// its first user, created when the store was.
func (m *pgCopy) sourceID(ctx context.Context) (string, error) {
	var id int64
	var name, created string
	err := m.read.QueryRowContext(ctx, `SELECT id, username, created_at FROM users ORDER BY id LIMIT 1`).Scan(&id, &name, &created)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read %s: %w", m.From, err)
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s", m.KeyFingerprint, id, name, created)))
	return hex.EncodeToString(sum[:16]), nil
}

// claim makes the target this copy's: empty, or holding an earlier,
// interrupted run of the same copy. It records the copy and the secret
// key's fingerprint before any row is copied.
func (m *pgCopy) claim(ctx context.Context, tables []pgTable) error {
	fp := m.KeyFingerprint
	src, err := m.sourceID(ctx)
	if err != nil {
		return err
	}
	var haveFP string
	if _, err := getSetting(ctx, m.dst.Reader, db.SettingKeyFingerprint, &haveFP); err != nil {
		return err
	}
	if haveFP != "" && haveFP != fp {
		return fmt.Errorf("%s was set up with another secret key than %s's: it holds another store, and is left alone; copy into an empty database",
			engine.RedactURL(m.To), m.From)
	}
	found, err := getSetting(ctx, m.dst.Reader, copyMarkerSetting, &m.marker)
	if err != nil {
		return err
	}
	if found {
		if m.marker.Source != src {
			return fmt.Errorf("%s holds a copy of another store (from %s), and is left alone; copy into an empty database", engine.RedactURL(m.To), m.marker.From)
		}
		if !m.marker.Copied {
			fmt.Fprintf(m.Progress, "carrying on the copy started %s\n", m.marker.Started)
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
			query += ` WHERE key <> '` + db.SettingKeyFingerprint + `'`
		}
		if err := m.dst.Reader.QueryRowContext(ctx, query).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%s is not empty (table %s holds %d rows): it holds another store, and is left alone; copy into an empty database (CREATE DATABASE …), and start no backupd on it before the copy",
				engine.RedactURL(m.To), t.name, n)
		}
	}
	abs, err := filepath.Abs(m.From)
	if err != nil {
		abs = m.From
	}
	m.marker = copyMarker{Source: src, From: abs, Started: db.Now(), After: map[string][]any{}, Done: map[string]bool{}}
	return m.dst.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
			db.SettingKeyFingerprint, strconv.Quote(fp), db.Now()); err != nil {
			return err
		}
		return m.saveMarker(ctx, tx)
	})
}

func (m *pgCopy) saveMarker(ctx context.Context, tx *sql.Tx) error {
	raw, err := json.Marshal(m.marker)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, copyMarkerSetting, string(raw), db.Now())
	return err
}

// Unfinished reports a copy into store that has not finished, with the
// data directory it copies and when it started: half a store must not be
// taken for the whole.
func Unfinished(ctx context.Context, store *db.Store) (from, started string, unfinished bool, err error) {
	var m copyMarker
	found, err := store.GetSetting(ctx, copyMarkerSetting, &m)
	if err != nil || !found || m.Copied {
		return "", "", false, err
	}
	return m.From, m.Started, true, nil
}

// getSetting reads the setting key of the target into v, as
// db.Store.GetSetting does, through q (a pool or the copy's transaction).
func getSetting(ctx context.Context, q engine.Querier, key string, v any) (bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get setting %s: %w", key, err)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return false, fmt.Errorf("setting %s: %w", key, err)
	}
	return true, nil
}

// quoteIdent quotes a name of the schema for SQL (both engines).
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(n))
	}
	return b.String()
}
