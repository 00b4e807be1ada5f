package engine

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"

	"backupd/embed"
)

// MigrateDirection names what a migration run does.
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

// SQLiteMigrations is the SQLite schema's migrations, to run on conn.
func SQLiteMigrations(conn *sql.DB) (*goose.Provider, error) {
	fsys, err := fs.Sub(embed.Migrations, "migrations")
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectSQLite3, conn, fsys)
}

// MigrateSQLite applies, rolls back one, or reports migrations on the
// database file at path; status lines go to out (which may be nil). It
// uses its own short-lived connection, so the store's pools never see a
// half-built schema, and takes a lock file beside the database, so two
// processes opening a fresh directory do not migrate it at once.
// beforeDown runs on that connection at the current version before a
// roll-back, and may refuse it or ready the data for the older schema.
func MigrateSQLite(ctx context.Context, path string, dir MigrateDirection, out io.Writer, beforeDown func(conn *sql.DB, current int64) error) error {
	unlock, err := lockFile(path + ".migrate-lock")
	if err != nil {
		return err
	}
	defer unlock()
	if err := CreatePrivate(path); err != nil {
		return err
	}
	conn, err := sql.Open("sqlite", DSN(path, false))
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	p, err := SQLiteMigrations(conn)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	return runMigrations(ctx, p, dir, out, func(current int64) error { return beforeDown(conn, current) })
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

// LatestSchemaVersion is the highest migration this binary carries.
func LatestSchemaVersion() (int64, error) {
	files, err := fs.Glob(embed.Migrations, "migrations/*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, f := range files {
		num, _, _ := strings.Cut(path.Base(f), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: no version number", f)
		}
		latest = max(latest, v)
	}
	return latest, nil
}
