package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

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
	return fn(p)
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
	if err := seed(ctx, tx, opt.withDefaults(), false); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("seed: %w", err)
	}
	return tx.Commit()
}
