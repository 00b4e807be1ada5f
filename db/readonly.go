package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// OpenReadOnly opens the existing database in dataDir for reading only,
// for commands that look and never change (backupd config): nothing is
// created or migrated, and both pools are query_only connections, so a
// write fails instead of waiting for the lock a running server may hold.
// Readers of a WAL database do not wait for its writer. The schema must be
// the one this binary knows: an older one is not upgraded behind the
// server's back, a newer one not misread.
func OpenReadOnly(ctx context.Context, dataDir string) (*Store, error) {
	path := filepath.Join(dataDir, FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no database in %s (%v); point --data at backupd's data directory", dataDir, err)
	}
	reader, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	// writer is the same read-only pool: the store has no write path.
	return checkReadOnly(ctx, &Store{path: path, d: sqliteDialect{}, writer: reader, reader: reader, stmts: map[string]*sql.Stmt{}})
}

// OpenPostgresReadOnly is OpenReadOnly for a PostgreSQL store: no
// migration, and every transaction of its one pool is read-only
// (default_transaction_read_only), so a write fails.
func OpenPostgresReadOnly(ctx context.Context, dbURL string) (*Store, error) {
	u, err := pgURL(dbURL, map[string]string{"application_name": "backupd", "default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	reader, err := sql.Open(pgDriverName, u)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return checkReadOnly(ctx, &Store{pg: true, url: dbURL, d: postgresDialect{}, writer: reader, reader: reader, stmts: map[string]*sql.Stmt{}})
}

// InspectPostgres opens the PostgreSQL database at dbURL to look at it as
// it is, before anything there is changed (CopyToPostgres checking that
// its target is no store in use, PostgresEmpty), or from outside the
// store (tests, through dbtest.Peek): no migration and no schema check
// (the database may be empty, or at another release's schema), every
// transaction is read-only, and ? placeholders are numbered as the
// store's are.
func InspectPostgres(ctx context.Context, dbURL string) (*sql.DB, error) {
	u, err := pgURL(dbURL, map[string]string{"application_name": "backupd", "default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	conn, err := sql.Open(pgDriverName, u)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	conn.SetMaxOpenConns(1)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return conn, nil
}

// PostgresEmpty reports whether the PostgreSQL database at dbURL holds no
// backupd schema yet (no migration ever ran there), changing nothing.
func PostgresEmpty(ctx context.Context, dbURL string) (bool, error) {
	look, err := InspectPostgres(ctx, dbURL)
	if err != nil {
		return false, fmt.Errorf("%w (database %s)", err, RedactURL(dbURL))
	}
	defer look.Close()
	var empty bool
	if err := look.QueryRowContext(ctx, `SELECT to_regclass('goose_db_version') IS NULL`).Scan(&empty); err != nil {
		return false, fmt.Errorf("look at %s: %w", RedactURL(dbURL), err)
	}
	return empty, nil
}

// checkReadOnly returns s when its schema is the one this binary knows,
// else closes it.
func checkReadOnly(ctx context.Context, s *Store) (*Store, error) {
	reader := s.reader
	want, err := LatestSchemaVersion()
	if err == nil {
		var have int64
		if have, err = s.SchemaVersion(ctx); err != nil {
			err = fmt.Errorf("read schema version: %w (is this backupd's database?)", err)
		} else if have > want {
			err = fmt.Errorf("%w: database is at version %d, this binary knows up to %d; use the backupd that runs the server", ErrSchemaFromFuture, have, want)
		} else if have < want {
			err = fmt.Errorf("database schema is at version %d, this binary's is %d; run `backupd migrate` (or start the server) first", have, want)
		}
	}
	if err != nil {
		reader.Close()
		return nil, err
	}
	return s, nil
}
