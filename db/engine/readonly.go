package engine

import (
	"context"
	"database/sql"
	"fmt"
)

// The read-only openings are for commands that look and never change
// (backupd config, checks before a copy): one pool, Writer and Reader
// alike, whose every connection refuses to write, so that a write fails
// instead of waiting for the lock a running server may hold. They
// neither create nor migrate.

// OpenSQLiteReadOnly opens the existing database file at path for reading
// only (query_only connections). Readers of a WAL database do not wait
// for its writer.
func OpenSQLiteReadOnly(path string) (*DB, error) {
	reader, err := sql.Open("sqlite", DSN(path, true))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	return &DB{Path: path, Dialect: SQLite{}, Writer: reader, Reader: reader}, nil
}

// OpenPostgresReadOnly opens the PostgreSQL database at dbURL with one
// pool whose every transaction is read-only
// (default_transaction_read_only).
func OpenPostgresReadOnly(ctx context.Context, dbURL string) (*DB, error) {
	u, err := PGURL(dbURL, map[string]string{"application_name": "backupd", "default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	reader, err := sql.Open(PostgresDriver, u)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &DB{URL: dbURL, Dialect: Postgres{}, Writer: reader, Reader: reader}, nil
}

// InspectPostgres opens the PostgreSQL database at dbURL to look at it as
// it is, before anything there is changed, or from outside the store
// (tests): one read-only connection whose ? placeholders are numbered as
// the store's are, and no schema check (the database may be empty, or at
// another release's schema).
func InspectPostgres(ctx context.Context, dbURL string) (*sql.DB, error) {
	u, err := PGURL(dbURL, map[string]string{"application_name": "backupd", "default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	conn, err := sql.Open(PostgresDriver, u)
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
