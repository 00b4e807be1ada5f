package dbtest

import (
	"context"
	"database/sql"
	"net/url"
	"sync"
	"testing"

	"backupd/db"
	"backupd/db/engine"
)

// Peek is a read-only connection pool of t's own on s's database (the
// SQLite file, or the PostgreSQL database), for a test that checks with
// SQL what the store wrote. It is not the store's: the store hands no
// connection out, and a test looks at its rows the way another process
// would. Queries take ? placeholders on both engines (on PostgreSQL the
// pool is engine.InspectPostgres's, which numbers them and changes nothing
// else), so they are written in SQL both engines read. Every
// transaction is read-only. The pool is opened once per test and store,
// and closed when t ends.
func Peek(t testing.TB, s *db.Store) *sql.DB {
	t.Helper()
	return pool(t, s, false, func() (*sql.DB, error) {
		if s.Postgres() {
			return engine.InspectPostgres(context.Background(), s.Location())
		}
		return sql.Open("sqlite", sqlitePeekDSN(s.Path()))
	})
}

// Poke is a writable connection pool of t's own on s's database, for a
// test that sets rows up, or damages them, with SQL the store would
// never send (an old timestamp, a corrupted frame, a row another release
// left). Like Peek it is not the store's: the store hands no connection
// out. On SQLite it connects to the same file with the store writer's
// pragmas, so it waits for the store's writer rather than fails; on
// PostgreSQL its ? placeholders are numbered as the store's are. Its
// writes commit at once, and the store sees them as another process's.
// It has one connection, so a test's writes happen in the order it makes
// them. The pool is opened once per test and store, and closed when t
// ends.
func Poke(t testing.TB, s *db.Store) *sql.DB {
	t.Helper()
	return pool(t, s, true, func() (*sql.DB, error) {
		if s.Postgres() {
			return engine.OpenPostgresSession(s.Location(), map[string]string{"application_name": "backupd-test"})
		}
		return sql.Open("sqlite", engine.DSN(s.Path(), false))
	})
}

// pool is t's Peek (write unset) or Poke pool on s, opened by open the
// first time: a writing pool gets one connection, a reading one a few,
// as the store's own reader has (a test may hold a transaction open on
// one while it polls on another).
func pool(t testing.TB, s *db.Store, write bool, open func() (*sql.DB, error)) *sql.DB {
	t.Helper()
	key := poolKey{t, s, write}
	pools.Lock()
	defer pools.Unlock()
	if p := pools.m[key]; p != nil {
		return p
	}
	p, err := open()
	if err == nil {
		err = p.PingContext(context.Background())
	}
	if err != nil {
		t.Fatalf("connect to the test's database: %v", err)
	}
	n := 4
	if write {
		n = 1
	}
	p.SetMaxOpenConns(n)
	p.SetMaxIdleConns(n)
	if pools.m == nil {
		pools.m = map[poolKey]*sql.DB{}
	}
	pools.m[key] = p
	t.Cleanup(func() {
		pools.Lock()
		delete(pools.m, key)
		pools.Unlock()
		p.Close()
	})
	return p
}

type poolKey struct {
	t     testing.TB
	s     *db.Store
	write bool
}

// pools are the open Peek and Poke pools, by test, store and kind.
var pools struct {
	sync.Mutex
	m map[poolKey]*sql.DB
}

// sqlitePeekDSN opens the database file at path for queries only: a
// write fails rather than waits for the store's writer, and a busy
// database (a checkpoint) is waited for as the store's readers wait.
func sqlitePeekDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
