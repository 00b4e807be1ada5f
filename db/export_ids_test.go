package db

import (
	"context"
	"database/sql"
	"fmt"
)

// MigrateTo brings the database file at path up to version and no
// further, as an older backupd would have left it.
func MigrateTo(ctx context.Context, path string, version int64) error {
	conn, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	p, err := newProvider(conn)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}

// SeedFile seeds the database file at path in whatever schema version it
// is, without migrating it first.
func SeedFile(ctx context.Context, path string, opt SeedOptions) error {
	conn, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := seed(ctx, tx, opt.withDefaults()); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("seed: %w", err)
	}
	return tx.Commit()
}
