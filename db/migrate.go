package db

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"

	"github.com/pressly/goose/v3"

	"backupd/embed"
)

// MigrateDirection names what Migrate does.
type MigrateDirection string

// The migrate commands.
const (
	MigrateUp     MigrateDirection = "up"
	MigrateDown   MigrateDirection = "down"
	MigrateStatus MigrateDirection = "status"
)

// ErrSchemaFromFuture is returned when the database was written by a newer
// backupd than this one.
var ErrSchemaFromFuture = fmt.Errorf("database schema is newer than this binary")

func newProvider(db *sql.DB) (*goose.Provider, error) {
	fsys, err := fs.Sub(embed.Migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectSQLite3, db, fsys)
}

// deltaMigration is the version that added snapshot deltas (base_id).
const deltaMigration = 17

// Migrate applies, rolls back one, or reports migrations on the database
// file at path; status lines go to out (which may be nil). It uses its own
// short-lived connection so the store's pools never see a half-built schema.
func Migrate(ctx context.Context, path string, dir MigrateDirection, out io.Writer) error {
	unlock, err := lockFile(path + ".migrate-lock")
	if err != nil {
		return err
	}
	defer unlock()
	if err := createPrivate(path); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	p, err := newProvider(conn)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	return runMigrations(ctx, p, dir, out, func(current int64) error {
		if current != deltaMigration {
			return nil
		}
		// Deltas cannot outlive the column that says what they are based
		// on: every one is written whole first.
		n, err := expandAll(ctx, conn)
		if err == nil && out != nil && n > 0 {
			fmt.Fprintf(out, "expanded %d delta snapshots\n", n)
		}
		return err
	})
}

// runMigrations applies, rolls back one, or reports the migrations of p,
// the same for both engines; beforeDown runs at the current version before
// a roll-back and may refuse it.
func runMigrations(ctx context.Context, p *goose.Provider, dir MigrateDirection, out io.Writer, beforeDown func(current int64) error) error {
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > target {
		return fmt.Errorf("%w: database is at version %d, this binary knows up to %d; run a newer backupd or restore a backup", ErrSchemaFromFuture, current, target)
	}
	switch dir {
	case MigrateUp:
		res, err := p.Up(ctx)
		if err != nil {
			return fmt.Errorf("apply migrations: %w", err)
		}
		if out != nil {
			for _, r := range res {
				fmt.Fprintf(out, "applied %s\n", r.Source.Path)
			}
			if len(res) == 0 {
				fmt.Fprintf(out, "schema is current (version %d)\n", current)
			}
		}
	case MigrateDown:
		if err := beforeDown(current); err != nil {
			return fmt.Errorf("roll back migration: %w", err)
		}
		r, err := p.Down(ctx)
		if err != nil {
			return fmt.Errorf("roll back migration: %w", err)
		}
		if out != nil {
			fmt.Fprintf(out, "rolled back %s\n", r.Source.Path)
		}
	case MigrateStatus:
		st, err := p.Status(ctx)
		if err != nil {
			return fmt.Errorf("read migration status: %w", err)
		}
		if out != nil {
			for _, s := range st {
				applied := "pending"
				if s.State == goose.StateApplied {
					applied = "applied " + s.AppliedAt.UTC().Format(TimeFormat)
				}
				fmt.Fprintf(out, "%05d  %-40s %s\n", s.Source.Version, s.Source.Path, applied)
			}
		}
	default:
		return fmt.Errorf("unknown migrate command %q (want up, down or status)", dir)
	}
	return nil
}
