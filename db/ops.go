package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// Operations on the database as a whole: readiness, online copies,
// integrity checks and its size on disk.

// SchemaVersion is the highest migration applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.reader.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&v)
	return v, err
}

// Ping reports whether the database answers (a connection of the writing
// pool is good): for duties that wait for it to come back.
func (s *Store) Ping(ctx context.Context) error { return s.writer.PingContext(ctx) }

// Ready reports why the store cannot serve, or nil: the schema must be the
// one this binary carries, and the database must take a write lock and a
// write (rolled back, so a probe every few seconds costs nothing).
func (s *Store) Ready(ctx context.Context) error {
	want, err := engine.LatestSchemaVersion()
	if err != nil {
		return err
	}
	have, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have != want {
		return fmt.Errorf("schema is at version %d, this binary expects %d; restart backupd to apply migrations", have, want)
	}
	errProbe := errors.New("probe")
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO settings (key, value, updated_at) VALUES ('readiness_probe', '""', ?)
			 ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`, Now()); err != nil {
			return err
		}
		return errProbe
	})
	if !errors.Is(err, errProbe) {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}

// ErrBackupUsePgDump is BackupTo's answer on a PostgreSQL store: its
// copies are made by the server's own tools.
var ErrBackupUsePgDump = errors.New("a PostgreSQL store is copied with pg_dump (pg_dump --format=custom), not by backupd")

// BackupTo writes a consistent copy of the database to dst with VACUUM
// INTO, while other connections keep reading and writing. dst must not
// exist: a copy never overwrites anything. A PostgreSQL store returns
// ErrBackupUsePgDump.
func (s *Store) BackupTo(ctx context.Context, dst string) error {
	if s.pg {
		return ErrBackupUsePgDump
	}
	// The copy is created here, empty and 0600 (VACUUM INTO fills an empty
	// file): SQLite would create it 0644 less the umask, readable by others
	// until a chmod afterwards. O_EXCL also makes "never overwrites" exact.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; choose a new file name", dst)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The reader pool is query-only, which VACUUM INTO respects for
		// the source; the copy is a new file.
		_, err = s.writer.ExecContext(ctx, `VACUUM INTO ?`, dst)
	}
	if err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("copy the database to %s: %w", dst, err)
	}
	return nil
}

// Check runs SQLite's integrity_check and foreign_key_check, then decodes
// every stored snapshot (whole or delta) and checks it against its hash,
// and returns the problems found, none when the database is sound. On
// PostgreSQL, which checks its own pages and enforces foreign keys
// itself, it looks for rows whose reference was left dangling all the
// Same (checks switched off by a superuser) instead, then checks the
// snapshots alike.
func (s *Store) Check(ctx context.Context) ([]string, error) {
	var problems []string
	if s.pg {
		if err := pgForeignKeyProblems(ctx, s.reader, func(p string) { problems = append(problems, p) }); err != nil {
			return nil, err
		}
		err := snapstore.Check(ctx, s.reader, func(p string) { problems = append(problems, p) })
		return problems, err
	}
	rows, err := s.reader.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	rows.Close()
	fk, err := s.reader.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return nil, err
	}
	defer fk.Close()
	for fk.Next() {
		var table, parent string
		var rowid, fkid any
		if err := fk.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return nil, err
		}
		problems = append(problems, fmt.Sprintf("%s row %v refers to a missing %s row", table, rowid, parent))
	}
	if err := fk.Err(); err != nil {
		return nil, err
	}
	fk.Close()
	err = snapstore.Check(ctx, s.reader, func(p string) { problems = append(problems, p) })
	return problems, err
}

// pgForeignKeyProblems reports, per foreign key of the store's schema,
// how many rows refer to a row that does not exist: one anti-join per key
// through the parent's primary key or unique index.
func pgForeignKeyProblems(ctx context.Context, q *sql.DB, report func(string)) error {
	type fk struct{ name, child, parent, childCols, parentCols string }
	keys, err := engine.QueryAll(ctx, q, func(r engine.Scanner) (fk, error) {
		var k fk
		return k, r.Scan(&k.name, &k.child, &k.parent, &k.childCols, &k.parentCols)
	}, `SELECT c.conname, c.conrelid::regclass::text, c.confrelid::regclass::text,
			(SELECT string_agg(quote_ident(a.attname), ',' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n),
			(SELECT string_agg(quote_ident(a.attname), ',' ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n)
		FROM pg_constraint c JOIN pg_namespace ns ON ns.oid = c.connamespace
		WHERE c.contype = 'f' AND ns.nspname = current_schema()
		ORDER BY 2, 1`)
	if err != nil {
		return fmt.Errorf("read foreign keys: %w", err)
	}
	for _, k := range keys {
		childCols, parentCols := strings.Split(k.childCols, ","), strings.Split(k.parentCols, ",")
		var notNull, match []string
		for i := range childCols {
			notNull = append(notNull, "c."+childCols[i]+" IS NOT NULL")
			match = append(match, "p."+parentCols[i]+" = c."+childCols[i])
		}
		var n int64
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+k.child+` c WHERE `+strings.Join(notNull, " AND ")+
			` AND NOT EXISTS (SELECT 1 FROM `+k.parent+` p WHERE `+strings.Join(match, " AND ")+`)`).Scan(&n); err != nil {
			return fmt.Errorf("check foreign key %s: %w", k.name, err)
		}
		if n > 0 {
			report(fmt.Sprintf("%s: %d rows refer to a missing %s row (%s)", k.child, n, k.parent, k.name))
		}
	}
	return nil
}

// Vacuum rewrites the database file compactly (SQLite VACUUM) and folds
// the write-ahead log back into it. On PostgreSQL it is VACUUM (ANALYZE):
// dead rows' space made reusable and the planner's statistics refreshed
// (the files are not rewritten; that would lock every table).
func (s *Store) Vacuum(ctx context.Context) error {
	if s.pg {
		if _, err := s.writer.ExecContext(ctx, `VACUUM (ANALYZE)`); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		return nil
	}
	if _, err := s.writer.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := s.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("vacuum: checkpoint: %w", err)
	}
	return nil
}

// SizeBytes is the database's size on disk: the file and its write-ahead
// log; on PostgreSQL the database's (pg_database_size), or 0 when the
// server does not answer within five seconds.
func (s *Store) SizeBytes() int64 {
	if s.pg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var n int64
		if err := s.reader.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
			return 0
		}
		return n
	}
	var n int64
	for _, p := range []string{s.e.Path, s.e.Path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// DevicesByStatus counts all devices by status, for metrics.
func (s *Store) DevicesByStatus(ctx context.Context) (map[string]int, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT status, COUNT(*) FROM devices GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("devices by status: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return nil, err
		}
		out[status] = n
	}
	return out, rows.Err()
}
