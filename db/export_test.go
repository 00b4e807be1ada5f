package db

// What package db's own tests (package db_test) reach beyond the
// exported API: the store's pools, unexported queries and steps.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"backupd/db/engine"
	"backupd/db/seed"
	"backupd/db/snapstore"

	"github.com/pressly/goose/v3"
)

// Reader is the store's read-only pool, for tests that check with SQL
// what the store wrote. Other packages' tests use dbtest.Peek.
func (s *Store) Reader() *sql.DB { return s.reader }

// ListDevicesQueries lets the tests check the plans of ListDevices on
// SQLite.
func ListDevicesQueries(scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	return listDevicesQueries(engine.SQLite{}, scope, f)
}

// ListDevicesQueriesOf are ListDevices' queries on s's engine.
func ListDevicesQueriesOf(s *Store, scope Scope, f DeviceFilter) (count, list string, args []any, err error) {
	return listDevicesQueries(s.d, scope, f)
}

// FleetHealthQueries lets the tests check the plans of FleetHealth's
// queries.
var FleetHealthQueries = []string{fleetDevicesQuery, fleetOldestQuery}

// MigrateTo brings the database file at path up to version and no
// further, as an older backupd would have left it.
func MigrateTo(ctx context.Context, path string, version int64) error {
	return withProvider(ctx, path, func(p *goose.Provider) error {
		_, err := p.UpTo(ctx, version)
		return err
	})
}

// MigrateDownTo rolls the database file at path back to version.
func MigrateDownTo(ctx context.Context, path string, version int64) error {
	return withProvider(ctx, path, func(p *goose.Provider) error {
		_, err := p.DownTo(ctx, version)
		return err
	})
}

func withProvider(ctx context.Context, path string, fn func(p *goose.Provider) error) error {
	conn, err := sql.Open("sqlite", engine.DSN(path, false))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	p, err := engine.SQLiteMigrations(conn)
	if err != nil {
		return err
	}
	return fn(p)
}

// SeedFile seeds the database file at path in whatever schema version it
// is, without migrating it first.
func SeedFile(ctx context.Context, path string, opt seed.Options) error {
	conn, err := sql.Open("sqlite", engine.DSN(path, false))
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := seed.InTx(ctx, tx, opt, false); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("seed: %w", err)
	}
	return tx.Commit()
}

// PreparedEventQueries is how many of the queries of an attempt's end
// the store prepared, of how many.
func PreparedEventQueries(s *Store) (int, int) {
	return len(s.stmts), len(writeQueries(s.d))
}

// PreparedReadQueries is how many of the read queries the store
// prepared, of how many.
func PreparedReadQueries(s *Store) (int, int) { return len(s.reads), len(readQueries(s.d)) }

// UnpreparedQueries are the write and read queries the store did not
// prepare, each with the error preparing it now gives.
func UnpreparedQueries(s *Store) map[string]error {
	out := map[string]error{}
	for _, q := range writeQueries(s.d) {
		if s.stmts[q] == nil {
			st, err := s.writer.Prepare(q)
			if err == nil {
				st.Close()
			}
			out[q] = err
		}
	}
	for _, q := range readQueries(s.d) {
		if s.reads[q] == nil {
			st, err := s.reader.Prepare(q)
			if err == nil {
				st.Close()
			}
			out[q] = err
		}
	}
	return out
}

// InsertID runs an INSERT on the writing connection and returns the new
// row's id (RETURNING id: PostgreSQL has no LastInsertId).
func (s *Store) InsertID(ctx context.Context, query string, args ...any) (int64, error) {
	return engine.InsertID(ctx, s.writer, query, args...)
}

// Writer is the writing connection, for tests that interleave two nodes'
// transactions statement by statement.
func (s *Store) Writer() *sql.DB { return s.writer }

// EqualFold is the store's spelling of a name column compared with a ?
// parameter, ASCII case folded, for tests that plan its queries.
func (s *Store) EqualFold(expr string) string { return s.d.EqualFold(expr) }

// SentToPostgres reports whether the store sent a statement holding
// fragment to PostgreSQL during this run (TestMain records them).
func SentToPostgres(fragment string) bool {
	pgSent.Lock()
	defer pgSent.Unlock()
	for q := range pgSent.m {
		if strings.Contains(q, fragment) {
			return true
		}
	}
	return false
}

// ResetTextCache empties the process's cache of decoded texts, so a test
// reads what is stored rather than what it wrote.
func ResetTextCache() { snapstore.ResetCache() }

// DeleteBackups deletes the backups ids as retention does, with the
// snapshots only they named.
func (s *Store) DeleteBackups(ctx context.Context, ids []string) (RetentionResult, error) {
	var res RetentionResult
	err := s.deleteBackups(ctx, ids, &res)
	return res, err
}

// Last24hQuery is the query of Stats' last-24-hours counts, for plan tests.
func (s *Store) Last24hQuery() string { return s.last24hQuery() }

// OutcomeSums is the outcome counts' spelling on this store's engine.
func (s *Store) OutcomeSums(b string) string { return s.outcomeSums(b) }

// InTx and Exec let the tests of package db write through the store's
// own writer: the transaction retry and the name-conflict mapping are
// tested through them. Other packages' tests write through dbtest.Poke.
func (s *Store) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error { return s.inTx(ctx, fn) }

func (s *Store) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.writer.ExecContext(ctx, query, args...)
}

// Dialect is the store's dialect, for a test calling the queue's
// functions that take it.
func (s *Store) Dialect() engine.Dialect { return s.d }
