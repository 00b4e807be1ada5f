package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"backupd/embed"
)

// IsPostgresURL reports whether s names a PostgreSQL database
// (postgres://… or postgresql://…) rather than a data directory.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// ErrNotPostgresURL is returned for a --db value that is not a
// PostgreSQL URL.
var ErrNotPostgresURL = errors.New("not a PostgreSQL URL: want postgres://user:password@host:port/database")

// PGURL checks a PostgreSQL URL and returns it with extra run-time
// parameters set, and pgWireDefaults where the URL sets none.
func PGURL(raw string, params map[string]string) (string, error) {
	if !IsPostgresURL(raw) {
		return "", ErrNotPostgresURL
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password included: say only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("PostgreSQL URL: %v", err)
	}
	if strings.TrimPrefix(u.Path, "/") == "" {
		return "", errors.New("PostgreSQL URL names no database: want postgres://user:password@host:port/database")
	}
	q := u.Query()
	for k, v := range pgWireDefaults {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// RedactURL is a PostgreSQL URL fit for a log line: its password removed,
// whether before the @ or in a password= parameter (lib/pq reads both).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unreadable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// OpenPostgres opens the pools of the PostgreSQL database at dbURL. It
// does not migrate.
func OpenPostgres(ctx context.Context, dbURL string) (*DB, error) {
	wURL, err := PGURL(dbURL, map[string]string{"application_name": "backupd"})
	if err != nil {
		return nil, err
	}
	rURL, err := PGURL(dbURL, map[string]string{"application_name": "backupd", "default_transaction_read_only": "on"})
	if err != nil {
		return nil, err
	}
	writer, err := sql.Open(PostgresDriver, wURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// One writing connection per node, as on SQLite: a node's own writes
	// never race each other; other nodes' are kept apart by row locks and
	// constraints.
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(5 * time.Minute)
	reader, err := sql.Open(PostgresDriver, rURL)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	reader.SetMaxOpenConns(4)
	reader.SetMaxIdleConns(4)
	reader.SetConnMaxIdleTime(5 * time.Minute)
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		reader.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &DB{URL: dbURL, Dialect: Postgres{}, Writer: writer, Reader: reader}, nil
}

// pgMigrations is the PostgreSQL schema's migration set.
func pgMigrations() (fs.FS, error) {
	return fs.Sub(embed.Migrations, "migrations/postgres")
}

// pgFirstVersion is where PostgreSQL's migrations start: the schema of
// SQLite's 00017 in one file.
const pgFirstVersion = 17

// MigratePostgres is Migrate for a PostgreSQL database. Nodes starting
// together take turns through a session advisory lock.
func MigratePostgres(ctx context.Context, dbURL string, dir MigrateDirection, out io.Writer) error {
	u, err := PGURL(dbURL, map[string]string{"application_name": "backupd-migrate"})
	if err != nil {
		return err
	}
	// The migrations run as written: their connection numbers no
	// placeholders (goose's own statements use $1, $2, …).
	conn := sql.OpenDB(pgConnector{dsn: u})
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	fsys, err := pgMigrations()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, conn, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	return runMigrations(ctx, p, dir, out, func(current int64) error {
		if current <= pgFirstVersion {
			return fmt.Errorf("version %d is where a PostgreSQL store starts; there is no older schema to return to (drop the database to start again)", current)
		}
		return nil
	})
}

// OpenPostgresSession is a pool of one connection to the PostgreSQL
// database at dbURL with params set, for a session of its own beside the
// store's pools (a lock that lives as long as its connection). Its ?
// placeholders are numbered as the store's are.
func OpenPostgresSession(dbURL string, params map[string]string) (*sql.DB, error) {
	u, err := PGURL(dbURL, params)
	if err != nil {
		return nil, err
	}
	pool := sql.OpenDB(pgConnector{dsn: u, numbered: true})
	pool.SetMaxOpenConns(1)
	return pool, nil
}
