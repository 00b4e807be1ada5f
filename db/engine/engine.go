// Package engine is what the store runs on: the two SQL engines, SQLite
// (one writer connection for all changes, a small read-only pool for
// queries) and PostgreSQL (for a store several nodes share), opened with
// the settings each needs; the dialect that spells what they spell
// differently (dialect.go); the migrations that build their schemas
// (migrate.go); transactions, retried where PostgreSQL asks for it; and
// the small helpers every query site uses to scan rows.
//
// It knows no table: what the store keeps, and the SQL that keeps it,
// is package db's.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is one store's connections to its engine. Writes go through a
// single connection (SQLite has one writer anyway; queueing in Go beats
// SQLITE_BUSY), reads through a pool that never writes.
type DB struct {
	// Path is the SQLite database file ("" on PostgreSQL).
	Path string
	// URL is the PostgreSQL connection string the DB was opened with
	// ("" on SQLite). It holds the database password: never log, show or
	// return it.
	URL     string
	Dialect Dialect
	Writer  *sql.DB
	Reader  *sql.DB
}

// Postgres reports whether the DB is a PostgreSQL database.
func (db *DB) Postgres() bool { return db.URL != "" }

// Close closes both pools.
func (db *DB) Close() error { return errors.Join(db.Reader.Close(), db.Writer.Close()) }

// DSN builds a modernc.org/sqlite connection string with the pragmas
// every connection needs. busy_timeout matters for other processes (the
// CLI running backups beside a server) sharing the file.
func DSN(path string, readOnly bool) string {
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

// CreatePrivate creates the database file at path, empty and mode 0600,
// unless it exists. SQLite would create it 0644 less the umask, and its
// -wal and -shm files copy the database file's mode: creating it first
// keeps all three readable by their owner only, whatever the umask. An
// empty file is an empty database to SQLite.
func CreatePrivate(path string) error {
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

// OpenSQLite opens the pools of the SQLite database file at path,
// creating it (empty, private) when missing. It does not migrate.
func OpenSQLite(path string) (*DB, error) {
	if err := CreatePrivate(path); err != nil {
		return nil, err
	}
	writer, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	reader, err := sql.Open("sqlite", DSN(path, true))
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
	return &DB{Path: path, Dialect: SQLite{}, Writer: writer, Reader: reader}, nil
}

// InTx runs fn in a write transaction (BEGIN IMMEDIATE, so a transaction
// that reads before it writes cannot fail half-way under WAL). fn's error
// rolls the transaction back and is returned as is.
//
// On PostgreSQL a transaction that the server aborted to break a deadlock
// or a serialization conflict (Retryable) is run again from the start, up
// to txAttempts times in all, after a short random pause: fn may therefore
// run more than once, and must set what it hands out (captured results,
// counts, lists) afresh on each run rather than add to it, and do nothing
// outside the transaction that must not happen twice.
func (db *DB) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.inTx(ctx, fn)
		if err == nil || !db.Postgres() || attempt >= txAttempts || !Retryable(err) {
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

// txRetries counts the transactions InTx ran again.
var txRetries atomic.Uint64

// TxRetries is how many transactions InTx has run again so far in this
// process.
func TxRetries() uint64 { return txRetries.Load() }

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
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.Writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// TimeFormat is how every timestamp is stored: UTC, seconds precision, no
// zone designator (see migration 00017 for why PostgreSQL keeps it too).
const TimeFormat = "2006-01-02T15:04:05"

// BackupTimeFormat is TimeFormat to the millisecond: the times of backups
// and jobs, which order attempts that start within the same second.
const BackupTimeFormat = "2006-01-02T15:04:05.000"
