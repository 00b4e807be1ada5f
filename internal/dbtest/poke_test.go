package dbtest_test

import (
	"context"
	"testing"
	"time"

	"backupd/internal/dbtest"
)

// Poke writes to the test's own database beside the store, with ?
// placeholders and the store writer's rules on both engines; one pool per
// test and store, closed with the test.
func TestPoke(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t)
	g, err := s.CreateGroup(ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := dbtest.Poke(t, s)
	if dbtest.Poke(t, s) != p {
		t.Error("a second Poke in the same test opened another pool")
	}
	if p == dbtest.Peek(t, s) {
		t.Error("Poke hands out the read-only Peek pool")
	}

	// A write is committed and the store reads it.
	if _, err := p.ExecContext(ctx, `UPDATE device_groups SET name = ? WHERE id = ?`, "edge", g.ID); err != nil {
		t.Fatalf("a write through Poke: %v", err)
	}
	if got, err := s.GetGroup(ctx, g.ID); err != nil || got.Name != "edge" {
		t.Fatalf("the group after a write through Poke: %+v, %v", got, err)
	}

	// The schema's rules hold as for the store's writer: a reference to
	// no row is refused (SQLite checks foreign keys only when told to).
	if _, err := p.ExecContext(ctx, `UPDATE device_groups SET parent_id = ? WHERE id = ?`, 999999, g.ID); err == nil {
		t.Error("Poke wrote a parent that does not exist")
	}

	// A transaction of Poke's and the store's writer take turns: the
	// store's write waits for the commit rather than fails.
	tx, err := p.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE device_groups SET sort_order = ? WHERE id = ?`, 7, g.ID); err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := s.CreateGroup(ctx, "branch", nil)
		created <- err
	}()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-created:
		if err != nil {
			t.Errorf("the store's write beside a transaction of Poke's: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the store's write did not finish after Poke's transaction committed")
	}

	if !dbtest.Postgres() {
		// The pragmas of the store's writer: a busy database is waited
		// for, and the write-ahead log lets the store's readers read on.
		for pragma, want := range map[string]string{"busy_timeout": "10000", "foreign_keys": "1", "journal_mode": "wal"} {
			var got string
			if err := p.QueryRowContext(ctx, `PRAGMA `+pragma).Scan(&got); err != nil || got != want {
				t.Errorf("PRAGMA %s through Poke: %q, %v; want %q", pragma, got, err, want)
			}
		}
	}

	// A subtest's pool is its own, and is closed when the subtest ends.
	var inner interface{ PingContext(context.Context) error }
	t.Run("subtest", func(t *testing.T) {
		q := dbtest.Poke(t, s)
		if q == p {
			t.Error("the subtest shares its parent's pool")
		}
		if _, err := q.ExecContext(ctx, `UPDATE device_groups SET sort_order = ? WHERE id = ?`, 8, g.ID); err != nil {
			t.Fatal(err)
		}
		inner = q
	})
	if err := inner.PingContext(ctx); err == nil {
		t.Error("the subtest's pool is still open after the subtest")
	}
	if _, err := p.ExecContext(ctx, `UPDATE device_groups SET sort_order = ? WHERE id = ?`, 9, g.ID); err != nil {
		t.Errorf("the test's own pool after the subtest: %v", err)
	}
}
