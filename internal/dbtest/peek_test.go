package dbtest_test

import (
	"context"
	"testing"

	"backupd/internal/dbtest"
)

// Peek looks at the test's own database, read-only, with ? placeholders
// on both engines; one pool per test and store, closed with the test.
func TestPeek(t *testing.T) {
	ctx := context.Background()
	s := dbtest.Open(t)
	g, err := s.CreateGroup(ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := dbtest.Peek(t, s)
	var name string
	if err := p.QueryRowContext(ctx, `SELECT name FROM device_groups WHERE id = ? AND name = ?`, g.ID, "core").Scan(&name); err != nil || name != "core" {
		t.Fatalf("the group the store wrote: %q, %v", name, err)
	}
	if dbtest.Peek(t, s) != p {
		t.Error("a second Peek in the same test opened another pool")
	}

	// Looking changes nothing: a write fails, and the row stays.
	if _, err := p.ExecContext(ctx, `DELETE FROM device_groups WHERE id = ?`, g.ID); err == nil {
		t.Error("a write through Peek succeeded")
	}
	if _, err := s.GetGroup(ctx, g.ID); err != nil {
		t.Errorf("the group after a write through Peek: %v", err)
	}

	// Another store's database is another database.
	other := dbtest.Open(t)
	var n int
	if err := dbtest.Peek(t, other).QueryRowContext(ctx, `SELECT COUNT(*) FROM device_groups`).Scan(&n); err != nil || n != 0 {
		t.Errorf("groups in another test store: %d, %v; want 0", n, err)
	}

	// A subtest's pool is its own, and is closed when the subtest ends.
	var inner interface{ PingContext(context.Context) error }
	t.Run("subtest", func(t *testing.T) {
		q := dbtest.Peek(t, s)
		if q == p {
			t.Error("the subtest shares its parent's pool")
		}
		if err := q.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		inner = q
	})
	if err := inner.PingContext(ctx); err == nil {
		t.Error("the subtest's pool is still open after the subtest")
	}
	if err := p.PingContext(ctx); err != nil {
		t.Errorf("the test's own pool after the subtest: %v", err)
	}
}
