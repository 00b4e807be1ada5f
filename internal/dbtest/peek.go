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
	key := peekKey{t, s}
	peeks.Lock()
	defer peeks.Unlock()
	if p := peeks.m[key]; p != nil {
		return p
	}
	var p *sql.DB
	var err error
	if s.Postgres() {
		p, err = engine.InspectPostgres(context.Background(), s.Location())
	} else {
		p, err = sql.Open("sqlite", sqlitePeekDSN(s.Path()))
		if err == nil {
			err = p.Ping()
		}
	}
	if err != nil {
		t.Fatalf("peek at the test's database: %v", err)
	}
	// A few connections, as the store's own reader has: a test may hold
	// a transaction open on one while it polls on another.
	p.SetMaxOpenConns(4)
	p.SetMaxIdleConns(4)
	if peeks.m == nil {
		peeks.m = map[peekKey]*sql.DB{}
	}
	peeks.m[key] = p
	t.Cleanup(func() {
		peeks.Lock()
		delete(peeks.m, key)
		peeks.Unlock()
		p.Close()
	})
	return p
}

type peekKey struct {
	t testing.TB
	s *db.Store
}

// peeks are the open Peek pools, by test and store.
var peeks struct {
	sync.Mutex
	m map[peekKey]*sql.DB
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
