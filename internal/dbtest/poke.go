package dbtest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"backupd/db"
	"backupd/db/engine"
)

// Poke is a writable connection pool of t's own on s's database, for a
// test that sets rows up, or damages them, with SQL the store would
// never send (an old timestamp, a corrupted frame, a row another release
// left). Like Peek it is not the store's: the store hands no connection
// out. On SQLite it is one connection to the same file with the store
// writer's pragmas, so it waits for the store's writer rather than fails;
// on PostgreSQL its ? placeholders are numbered as the store's are. Its
// writes commit at once, and the store sees them as another process's.
// The pool is opened once per test and store, and closed when t ends.
func Poke(t testing.TB, s *db.Store) *sql.DB {
	t.Helper()
	key := peekKey{t, s}
	pokes.Lock()
	defer pokes.Unlock()
	if p := pokes.m[key]; p != nil {
		return p
	}
	var p *sql.DB
	var err error
	if s.Postgres() {
		p, err = engine.OpenPostgresSession(s.Location(), map[string]string{"application_name": "backupd-test"})
		if err == nil {
			err = p.PingContext(context.Background())
		}
	} else {
		p, err = sql.Open("sqlite", engine.DSN(s.Path(), false))
		if err == nil {
			err = p.Ping()
		}
	}
	if err != nil {
		t.Fatalf("poke at the test's database: %v", err)
	}
	// One connection: SQLite has one writer anyway, and a test's writes
	// then happen in the order it makes them.
	p.SetMaxOpenConns(1)
	if pokes.m == nil {
		pokes.m = map[peekKey]*sql.DB{}
	}
	pokes.m[key] = p
	t.Cleanup(func() {
		pokes.Lock()
		delete(pokes.m, key)
		pokes.Unlock()
		p.Close()
	})
	return p
}

// pokes are the open Poke pools, by test and store.
var pokes struct {
	sync.Mutex
	m map[peekKey]*sql.DB
}
