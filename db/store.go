// Package db is backupd's store: what it keeps (devices, groups,
// credentials, schedules, backups, notifications, users …) and the SQL
// that keeps it, one file per aggregate. The SQL is written once for
// both engines, with the store's dialect spelling what they spell
// differently where the query is; the engines themselves, their
// connections, dialects and migrations are package engine's, the job
// queue package queue's and the notification outbox package outbox's
// (the Store embeds both), configuration texts package snapstore's.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/db/queue"
)

// FileName is the database file inside the data directory.
const FileName = "backupd.db"

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = engine.ErrNotFound

// Store is the handle every component shares.
type Store struct {
	// Queue is the job queue (package queue) on the store's database:
	// its methods are the store's.
	*queue.Queue
	// Outbox is the notification outbox (package outbox): the delivery
	// worker's queue, its batches and channel health.
	*outbox.Outbox
	e *engine.DB
	// pg, d, writer and reader are e's, at hand: whether the store is on
	// PostgreSQL, its engine.Dialect, and its writing and reading pools.
	pg     bool
	d      engine.Dialect
	writer *sql.DB
	reader *sql.DB
	// stmts are statements prepared on writer (writeQueries), reads on
	// reader (readQueries).
	stmts map[string]*sql.Stmt
	reads map[string]*sql.Stmt
	// policy decides the events the store records (event_policy.go).
	policy EventPolicy
}

// newStore is the store on e's pools, its frequent statements prepared.
func newStore(e *engine.DB) *Store {
	s := &Store{e: e, pg: e.Postgres(), d: e.Dialect, writer: e.Writer, reader: e.Reader,
		stmts: engine.PrepareAll(e.Writer, writeQueries(e.Dialect)),
		reads: engine.PrepareAll(e.Reader, readQueries(e.Dialect))}
	s.Queue = queue.New(e, queue.Hooks{Ended: s.attemptEnded, Stored: s.attemptStored, WorkEnded: s.workEnded})
	s.Outbox = outbox.New(e)
	return s
}

// Open opens (creating when missing) the database in dataDir, brings its
// schema up to date and returns the store.
func Open(ctx context.Context, dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dataDir, FileName)
	if err := Migrate(ctx, path, engine.MigrateUp, nil); err != nil {
		return nil, err
	}
	return openPools(path)
}

func openPools(path string) (*Store, error) {
	e, err := engine.OpenSQLite(path)
	if err != nil {
		return nil, err
	}
	return newStore(e), nil
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
	return errors.Join(append(errs, s.Queue.Close(), s.e.Close())...)
}

// Path is the database file's path ("" on PostgreSQL).
func (s *Store) Path() string { return s.e.Path }

// Location is where the store lives: the database file's path, or the
// PostgreSQL URL it was opened with. The URL holds the database password:
// never log, show or return it (tests use it to open more handles).
func (s *Store) Location() string {
	if s.pg {
		return s.e.URL
	}
	return s.e.Path
}

// Postgres reports whether the store is a PostgreSQL database.
func (s *Store) Postgres() bool { return s.pg }

// inTx runs fn in a write transaction (engine.DB.InTx: on PostgreSQL fn
// may run more than once). fn's error rolls the transaction back and is
// returned as is, but for a duplicate name refused by its UNIQUE
// constraint, which is ErrNameExists.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return nameConflict(s.e.InTx(ctx, fn))
}

// TimeFormat is how every timestamp is stored and shown: UTC (or the zone
// the caller converted to), seconds precision, no zone designator.
const TimeFormat = engine.TimeFormat

// Now is the current UTC time in TimeFormat.
func Now() string { return time.Now().UTC().Format(TimeFormat) }

// ParseTime reads a stored timestamp as UTC.
func ParseTime(s string) (time.Time, error) {
	return time.ParseInLocation(TimeFormat, s, time.UTC)
}

// readQueries are the reads every backup makes (its device, credential,
// host key and previous version; the job queue prepares those of its
// jobs), prepared on
// the read pool when the store opens: parsing them again for each of
// thousands of devices costs as much as running them.
func readQueries(d engine.Dialect) []string {
	return []string{getDeviceQuery, getCredentialQuery, hostKeysQuery, latestGoodSnapshotQuery}
}

// read is the read pool, with readQueries prepared.
func (s *Store) read() engine.Querier { return engine.Prepared{DB: s.reader, Stmts: s.reads} }

// prepared wraps tx so that the event queries run prepared.
func (s *Store) prepared(tx *sql.Tx) engine.Querier { return engine.PreparedTx{Tx: tx, Stmts: s.stmts} }

// writeQueries are the statements prepared on the writer: those of
// recording an attempt's end (the job queue prepares its own).
func writeQueries(d engine.Dialect) []string {
	return slices.Concat(eventQueries(d), finishDeviceQueries())
}
