package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/db/queue"
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
	e, err := engine.OpenSQLiteReadOnly(path)
	if err != nil {
		return nil, err
	}
	return checkReadOnly(ctx, readOnlyStore(e))
}

// OpenPostgresReadOnly is OpenReadOnly for a PostgreSQL store: no
// migration, and every transaction of its one pool is read-only
// (default_transaction_read_only), so a write fails.
func OpenPostgresReadOnly(ctx context.Context, dbURL string) (*Store, error) {
	e, err := engine.OpenPostgresReadOnly(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	return checkReadOnly(ctx, readOnlyStore(e))
}

// readOnlyStore is the store on e's one read-only pool, with none of its
// own statements prepared: it has no write path. Its job queue reads
// and outbox read (a write fails as any other).
func readOnlyStore(e *engine.DB) *Store {
	s := &Store{e: e, pg: e.Postgres(), d: e.Dialect, writer: e.Writer, reader: e.Reader, stmts: map[string]*sql.Stmt{}}
	s.Queue = queue.New(e, queue.Hooks{Ended: s.attemptEnded, Stored: s.attemptStored, WorkEnded: s.workEnded})
	s.Outbox = outbox.New(e)
	return s
}

// PostgresEmpty reports whether the PostgreSQL database at dbURL holds no
// backupd schema yet (no migration ever ran there), changing nothing.
func PostgresEmpty(ctx context.Context, dbURL string) (bool, error) {
	look, err := engine.InspectPostgres(ctx, dbURL)
	if err != nil {
		return false, fmt.Errorf("%w (database %s)", err, engine.RedactURL(dbURL))
	}
	defer look.Close()
	var empty bool
	if err := look.QueryRowContext(ctx, `SELECT to_regclass('goose_db_version') IS NULL`).Scan(&empty); err != nil {
		return false, fmt.Errorf("look at %s: %w", engine.RedactURL(dbURL), err)
	}
	return empty, nil
}

// checkReadOnly returns s when its schema is the one this binary knows,
// else closes it.
func checkReadOnly(ctx context.Context, s *Store) (*Store, error) {
	reader := s.reader
	want, err := engine.LatestSchemaVersion()
	if err == nil {
		var have int64
		if have, err = s.SchemaVersion(ctx); err != nil {
			err = fmt.Errorf("read schema version: %w (is this backupd's database?)", err)
		} else if have > want {
			err = fmt.Errorf("%w: database is at version %d, this binary knows up to %d; use the backupd that runs the server", engine.ErrSchemaFromFuture, have, want)
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
