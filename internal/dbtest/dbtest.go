// Package dbtest opens the store a test runs on: SQLite in a temporary
// directory by default, or, when BACKUPD_TEST_POSTGRES names a PostgreSQL
// server (postgres://user@host:port/postgres), a fresh database of its
// own on that server, dropped when the test ends. The same test suites
// thereby run on both engines. Only tests import it.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"

	_ "github.com/lib/pq" // the admin connection that creates databases

	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/db/engine"
	"backupd/embed"
)

// Env is the variable naming the PostgreSQL server tests run on.
const Env = "BACKUPD_TEST_POSTGRES"

// Postgres reports whether tests run on PostgreSQL.
func Postgres() bool { return os.Getenv(Env) != "" }

// SQLiteOnly skips a test that is about SQLite itself (its file, its
// pragmas) when the suite runs on PostgreSQL.
func SQLiteOnly(t testing.TB, why string) {
	t.Helper()
	if Postgres() {
		t.Skipf("SQLite only: %s", why)
	}
}

// AllEnv, set to 1, runs on PostgreSQL too the tests that OnceOnSQLite
// keeps to the SQLite run.
const AllEnv = "BACKUPD_TEST_POSTGRES_ALL"

// OnceOnSQLite skips, with its reason logged, a test whose outcome does
// not depend on the engine the suite runs on (why says what it tests
// instead) when the suite runs on PostgreSQL, unless AllEnv is 1: CI runs
// every package's suite on SQLite and again on PostgreSQL, and such a
// test proves the same thing both times, so it runs once, on SQLite.
func OnceOnSQLite(t testing.TB, why string) {
	t.Helper()
	if Postgres() && os.Getenv(AllEnv) != "1" {
		t.Skipf("runs once, in the SQLite run: %s (%s=1 runs it on PostgreSQL too)", why, AllEnv)
	}
}

// Open opens a migrated, empty store for t.
func Open(t testing.TB) *db.Store {
	t.Helper()
	s, err := OpenAt(t, Location(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Location returns a fresh, migrated store location for t: a data
// directory, or a PostgreSQL URL. Each OpenAt of it opens the same store,
// as several processes or nodes would.
func Location(t testing.TB) string {
	t.Helper()
	if !Postgres() {
		return sqliteDir(t)
	}
	return newDatabase(t)
}

// sqliteDir is a fresh data directory holding a copy of a migrated
// database, so that each test does not migrate one of its own (under
// -race a migration from nothing takes about a second, and most tests
// open a store). Without the template, the directory is empty and
// db.Open migrates it.
func sqliteDir(t testing.TB) string {
	dir := t.TempDir()
	tpl, err := sqliteTemplate()
	if err != nil {
		t.Logf("no migrated SQLite template (%v): the store migrates itself", err)
		return dir
	}
	data, err := os.ReadFile(tpl)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, db.FileName), data, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var sqliteTpl struct {
	once sync.Once
	path string
	err  error
}

// sqliteTemplate returns the path of a SQLite database migrated to the
// newest schema, made once per schema in the system's temporary
// directory and shared by test processes (written aside and renamed into
// place, so none reads a half-written one).
func sqliteTemplate() (string, error) {
	sqliteTpl.once.Do(func() {
		// Keyed by the migrations and by the modules that write the file
		// (SQLite, goose): a template of another schema or another
		// SQLite is never taken.
		key := hashMigrations("migrations")
		if bi, ok := debug.ReadBuildInfo(); ok {
			h := sha256.New()
			h.Write([]byte(key))
			for _, m := range bi.Deps {
				h.Write([]byte(m.Path + "@" + m.Version + "\n"))
			}
			key = hex.EncodeToString(h.Sum(nil))[:12]
		}
		path := filepath.Join(os.TempDir(), "backupd-dbtest-"+key+".db")
		if _, err := os.Stat(path); err == nil {
			sqliteTpl.path = path
			return
		}
		work, err := os.MkdirTemp("", "backupd-dbtest-")
		if err != nil {
			sqliteTpl.err = err
			return
		}
		defer os.RemoveAll(work)
		fresh := filepath.Join(work, db.FileName)
		if err := db.Migrate(context.Background(), fresh, engine.MigrateUp, nil); err != nil {
			sqliteTpl.err = err
			return
		}
		// Migrate closes its connection, which checkpoints the write-ahead
		// log into the file; a log left beside it would be lost in a copy.
		if _, err := os.Stat(fresh + "-wal"); err == nil {
			sqliteTpl.err = fmt.Errorf("a write-ahead log is left beside the migrated database")
			return
		}
		if err := os.Rename(fresh, path); err != nil {
			sqliteTpl.err = err
			return
		}
		sqliteTpl.path = path
	})
	return sqliteTpl.path, sqliteTpl.err
}

// OpenAt opens the store at loc (from Location), with backupd's event
// policy as serve opens it, and closes it when t ends.
func OpenAt(t testing.TB, loc string) (*db.Store, error) {
	t.Helper()
	var s *db.Store
	var err error
	if engine.IsPostgresURL(loc) {
		s, err = db.OpenPostgres(context.Background(), loc)
	} else {
		s, err = db.Open(context.Background(), loc)
	}
	if err != nil {
		return nil, err
	}
	s.SetEventPolicy(policy.Decide)
	t.Cleanup(func() { s.Close() })
	return s, nil
}

// Reopen opens a second handle on s's store: the same data directory, or
// the same PostgreSQL database.
func Reopen(t testing.TB, s *db.Store) *db.Store {
	t.Helper()
	loc := s.Location()
	if !s.Postgres() {
		loc = dirOf(loc)
	}
	o, err := OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// DataDir is the data directory beside s, for what lives in files even
// with a PostgreSQL store (the secret key, the engines' liveness locks,
// the Git mirror): the SQLite database's own directory, or a fresh
// temporary one.
func DataDir(t testing.TB, s *db.Store) string {
	t.Helper()
	if s.Postgres() {
		return t.TempDir()
	}
	return dirOf(s.Path())
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "."
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// admin connects to the server's maintenance database.
func admin() (*sql.DB, error) {
	a, err := sql.Open("postgres", os.Getenv(Env))
	if err != nil {
		return nil, err
	}
	a.SetMaxOpenConns(2)
	return a, nil
}

// migrationsHash names the template database after the schema it holds,
// so a changed migration builds a new one.
func migrationsHash() string { return hashMigrations("migrations/postgres") }

// hashMigrations is a digest of the migration files under root.
func hashMigrations(root string) string {
	h := sha256.New()
	_ = fs.WalkDir(embed.Migrations, root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(embed.Migrations, p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// template builds, once per server and schema, a migrated database that
// every test's database is copied from (CREATE DATABASE … TEMPLATE is a
// file copy, far quicker than migrating each time). Test processes of
// several packages running at once take turns through an advisory lock.
func template() (string, error) {
	templateOnce.Do(func() {
		templateName = "backupd_template_" + migrationsHash()
		templateErr = func() error {
			a, err := admin()
			if err != nil {
				return err
			}
			defer a.Close()
			ctx := context.Background()
			conn, err := a.Conn(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", Env, err)
			}
			defer conn.Close()
			sum := sha256.Sum256([]byte(templateName))
			key := int64(binary.BigEndian.Uint64(sum[:8]))
			if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
				return err
			}
			defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
			var ok bool
			if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, templateName).Scan(&ok); err != nil {
				return err
			}
			if ok {
				return nil
			}
			if _, err := conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+templateName); err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+templateName+` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
				return err
			}
			s, err := db.OpenPostgres(ctx, withDatabase(os.Getenv(Env), templateName))
			if err != nil {
				return fmt.Errorf("migrate the template database: %w", err)
			}
			s.Close()
			_, err = conn.ExecContext(ctx, `ALTER DATABASE `+templateName+` IS_TEMPLATE true`)
			return err
		}()
	})
	return templateName, templateErr
}

func withDatabase(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

// newDatabase creates an empty, migrated database for t and drops it when
// t ends.
func newDatabase(t testing.TB) string {
	t.Helper()
	tmpl, err := template()
	if err != nil {
		t.Fatalf("%s=%s: %v", Env, os.Getenv(Env), err)
	}
	a, err := admin()
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "backupd_test_" + hex.EncodeToString(b[:])
	if _, err := a.Exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + tmpl); err != nil {
		a.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		defer a.Close()
		if _, err := a.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	return withDatabase(os.Getenv(Env), name)
}
