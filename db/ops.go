package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"backupd/embed"
)

// Operations on the database as a whole: readiness, online copies,
// integrity checks and its size on disk.

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

// SchemaVersion is the highest migration applied to the database.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.reader.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&v)
	return v, err
}

// Ready reports why the store cannot serve, or nil: the schema must be the
// one this binary carries, and the database must take a write lock and a
// write (rolled back, so a probe every few seconds costs nothing).
func (s *Store) Ready(ctx context.Context) error {
	want, err := LatestSchemaVersion()
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
	err = s.InTx(ctx, func(tx *sql.Tx) error {
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

// BackupTo writes a consistent copy of the database to dst with VACUUM
// INTO, while other connections keep reading and writing. dst must not
// exist: a copy never overwrites anything.
func (s *Store) BackupTo(ctx context.Context, dst string) error {
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
// and returns the problems found, none when the database is sound.
func (s *Store) Check(ctx context.Context) ([]string, error) {
	var problems []string
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
	err = checkSnapshots(ctx, s.reader, func(p string) { problems = append(problems, p) })
	return problems, err
}

// Vacuum rewrites the database file compactly (SQLite VACUUM) and folds
// the write-ahead log back into it.
func (s *Store) Vacuum(ctx context.Context) error {
	if _, err := s.writer.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	if _, err := s.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("vacuum: checkpoint: %w", err)
	}
	return nil
}

// SizeBytes is the database's size on disk: the file and its write-ahead
// log.
func (s *Store) SizeBytes() int64 {
	var n int64
	for _, p := range []string{s.path, s.path + "-wal"} {
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
