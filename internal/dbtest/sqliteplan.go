package dbtest

import (
	"testing"

	"backupd/db"
)

// PlanSQLite is SQLite's plan of q with args (EXPLAIN QUERY PLAN), one
// detail a step ("SEARCH b USING INDEX backups_device_started …"), read on
// Peek's pool: for the tests that a query reads an index, not a table.
func PlanSQLite(t testing.TB, s *db.Store, q string, args ...any) []string {
	t.Helper()
	rows, err := Peek(t, s).Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
