// Package db is backupd's store: SQLite by default (one writer connection
// for all changes, a small read-only pool for queries), or PostgreSQL for a
// store several nodes share (postgres.go), with raw SQL per aggregate that
// both engines run: written once, with the store's dialect (dialect.go)
// spelling what the engines spell differently where the query is.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the database file inside the data directory.
const FileName = "backupd.db"

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// Store is the handle every component shares. Writes go through a single
// connection (SQLite has one writer anyway; queueing in Go beats
// SQLITE_BUSY), reads through a pool that never writes.
type Store struct {
	path string
	// pg is set on a PostgreSQL store, whose url is the connection string
	// it was opened with (path is then "").
	pg  bool
	url string
	// d is the engine's spelling of what the engines spell differently
	// (dialect.go).
	d      dialect
	writer *sql.DB
	reader *sql.DB
	// stmts are statements prepared on writer (notifications.go, jobs.go),
	// reads on reader (prepared.go).
	stmts map[string]*sql.Stmt
	reads map[string]*sql.Stmt
	// policy decides the events the store records (event_policy.go).
	policy EventPolicy
}

// dsn builds a modernc.org/sqlite connection string with the pragmas every
// connection needs. busy_timeout matters for other processes (the CLI
// running backups beside a server) sharing the file.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	// The path is escaped: in a file: URI, '?', '#' and '%' in a directory
	// name would otherwise cut or rewrite it and open another file.
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens (creating when missing) the database in dataDir, brings its
// schema up to date and returns the store.
func Open(ctx context.Context, dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dataDir, FileName)
	if err := Migrate(ctx, path, MigrateUp, nil); err != nil {
		return nil, err
	}
	return openPools(path)
}

// createPrivate creates the database file at path, empty and mode 0600,
// unless it exists. SQLite would create it 0644 less the umask, and its
// -wal and -shm files copy the database file's mode: creating it first
// keeps all three readable by their owner only, whatever the umask. An
// empty file is an empty database to SQLite.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	if err := f.Chmod(0o600); err != nil { // a umask cannot make it stricter either
		f.Close()
		return fmt.Errorf("create database: %w", err)
	}
	return f.Close()
}

func openPools(path string) (*Store, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	writer, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	reader, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	reader.SetConnMaxIdleTime(5 * time.Minute)
	if err := writer.Ping(); err != nil {
		writer.Close()
		reader.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	d := sqliteDialect{}
	return &Store{path: path, d: d, writer: writer, reader: reader, stmts: prepareAll(writer, writeQueries(d)),
		reads: prepareAll(reader, readQueries(d))}, nil
}

// Close closes both pools.
func (s *Store) Close() error {
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	for _, st := range s.reads {
		errs = append(errs, st.Close())
	}
	return errors.Join(append(errs, s.reader.Close(), s.writer.Close())...)
}

// Path is the database file's path ("" on PostgreSQL).
func (s *Store) Path() string { return s.path }

// Location is where the store lives: the database file's path, or the
// PostgreSQL URL it was opened with. The URL holds the database password:
// never log, show or return it (tests use it to open more handles).
func (s *Store) Location() string {
	if s.pg {
		return s.url
	}
	return s.path
}

// Postgres reports whether the store is a PostgreSQL database.
func (s *Store) Postgres() bool { return s.pg }

// InTx runs fn in a write transaction (BEGIN IMMEDIATE, so a transaction
// that reads before it writes cannot fail half-way under WAL). fn's error
// rolls the transaction back and is returned as is, but for a duplicate
// name refused by its UNIQUE constraint, which is ErrNameExists.
//
// On PostgreSQL a transaction that the server aborted to break a deadlock
// or a serialization conflict (Retryable) is run again from the start, up
// to txAttempts times in all, after a short random pause: fn may therefore
// run more than once, and must set what it hands out (captured results,
// counts, lists) afresh on each run rather than add to it, and do nothing
// outside the transaction that must not happen twice.
func (s *Store) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := s.inTx(ctx, fn)
		if err == nil || !s.pg || attempt >= txAttempts || !Retryable(err) {
			return err
		}
		txRetries.Add(1)
		if !sleepCtx(ctx, txBackoff(attempt)) {
			return err
		}
	}
}

// txAttempts bounds the runs of one InTx on PostgreSQL.
const txAttempts = 3

// txRetries counts the transactions InTx ran again (tests read it).
var txRetries atomic.Uint64

// txBackoff is the pause before run attempt+1: 10 ms, then 20 ms, …,
// each between half and one and a half times that, so that the two
// transactions of a deadlock do not meet again in step.
func txBackoff(attempt int) time.Duration {
	d := 10 * time.Millisecond << (attempt - 1)
	return d/2 + rand.N(d)
}

// sleepCtx waits d, or less when ctx ends; it reports whether it waited
// the whole time.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// inTx is one run of InTx's transaction.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return nameConflict(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Exec runs one writing statement outside an explicit transaction.
func (s *Store) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.writer.ExecContext(ctx, query, args...)
}

// TimeFormat is how every timestamp is stored and shown: UTC (or the zone
// the caller converted to), seconds precision, no zone designator.
const TimeFormat = "2006-01-02T15:04:05"

// Now is the current UTC time in TimeFormat.
func Now() string { return time.Now().UTC().Format(TimeFormat) }

// ParseTime reads a stored timestamp as UTC.
func ParseTime(s string) (time.Time, error) {
	return time.ParseInLocation(TimeFormat, s, time.UTC)
}

// nullString turns "" into SQL NULL.
func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// page counts the rows a list query would return and fetches one page of
// them; listQuery ends where LIMIT ? OFFSET ? can follow.
func page[T any](ctx context.Context, q querier, scan func(scanner) (T, error), countQuery, listQuery string, limit, offset int, args ...any) ([]T, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, countQuery, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	items, err := queryAll(ctx, q, scan, listQuery+` LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return items, total, err
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// exists reports whether query returns any row.
func exists(ctx context.Context, q querier, query string, args ...any) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// eachRow runs query and hands every row to fn.
func eachRow(ctx context.Context, q querier, query string, args []any, fn func(scanner) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// insertID runs an INSERT and returns the id of the row it added (through
// RETURNING, which both engines have; PostgreSQL has no last insert id).
func insertID(ctx context.Context, q querier, query string, args ...any) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, query+` RETURNING id`, args...).Scan(&id)
	return id, err
}
