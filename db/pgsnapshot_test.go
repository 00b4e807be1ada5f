package db_test

import (
	"context"
	"database/sql"
	"testing"

	"backupd/internal/dbtest"
)

// A read-only transaction sees one state of the store from its first
// statement to its last, on PostgreSQL as on SQLite, while another handle
// (another node) commits in between.
func TestReadTransactionSeesOneSnapshot(t *testing.T) {
	s := openStore(t)
	other := dbtest.Reopen(t, s)
	ctx := context.Background()
	createGroup(t, s, "before", nil)

	tx, err := s.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	count := func() int {
		t.Helper()
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM device_groups`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := count()
	createGroup(t, other, "during", nil)
	if again := count(); again != first {
		t.Errorf("the read transaction saw %d groups, then %d after another handle's commit", first, again)
	}
	tx.Rollback()
	var now int
	if err := s.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM device_groups`).Scan(&now); err != nil || now != first+1 {
		t.Errorf("after the transaction: %d groups (%v), want %d", now, err, first+1)
	}
}
