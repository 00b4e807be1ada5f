package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"backupd/internal/dbtest"
)

// targetDigest is everything the target holds: each table's rows (a hash
// of their text, in order) and each sequence's position, so that a test
// can tell that a command wrote nothing at all.
func targetDigest(t *testing.T, q *sql.DB) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	tables, err := q.QueryContext(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	for _, n := range names {
		var rows int64
		var sum sql.NullString
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*), md5(string_agg(r::text, '|' ORDER BY r::text)) FROM `+n+` r`).Scan(&rows, &sum); err != nil {
			t.Fatal(err)
		}
		out["table "+n] = fmt.Sprintf("%d %s", rows, sum.String)
	}
	seqs, err := q.QueryContext(ctx, `SELECT sequencename, COALESCE(last_value, 0) FROM pg_sequences WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	for seqs.Next() {
		var n string
		var v int64
		if err := seqs.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		out["sequence "+n] = fmt.Sprint(v)
	}
	seqs.Close()
	return out
}

func expectSameDigest(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %s, then %s", k, v, after[k])
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d tables and sequences before, %d after", len(before), len(after))
	}
}

// Issue 23 (6b): migrate-to-postgres run again against a database that
// nodes have served since the copy used to go on (setting the counters
// and the marker) and fail its verification with the advice to drop and
// re-create the target, which on a live store loses everything written
// since the move. It is refused now, before anything is written, with
// what shows the store in use and advice that keeps the data: by the
// nodes' heartbeats, and by rows past the source's ids once the nodes'
// rows are gone (pruned a day after the last heartbeat).
func TestMigrateToPostgresRefusesALiveTarget(t *testing.T) {
	loc := pgLocation(t)
	src := applianceSource(t, 5, 4)
	mustRun(t, call{}, "db", "migrate-to-postgres", "--from", src, "--to", loc)

	// A node runs on the new store; an administrator adds an API key.
	node := t.TempDir()
	copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(node, "secret.key"))
	srv := startServe(t, node, "--db", loc)
	mustRun(t, call{}, "key", "create", "--db", loc, "--data", node, "--name", "after-the-move")
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
	dst, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	var nodeID, host string
	if err := dbtest.Peek(t, dst).QueryRow(`SELECT id, hostname FROM nodes`).Scan(&nodeID, &host); err != nil {
		t.Fatalf("the node's row: %v", err)
	}

	before := targetDigest(t, dbtest.Peek(t, dst))
	r := mustFail(t, call{}, []string{
		"is in use as backupd's store", "nothing was written to it",
		"Nodes served it: " + nodeID + " on host " + host + " (last seen ", ", stopped ",
		"It holds data written after the source", "api_keys (1 row)", "audit_log (",
		"keep the nodes running on this database", "backupd db backup --db URL", "into a new, empty database",
	}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	for _, bad := range []string{"Drop and re-create", "verification", pgPassword} {
		if strings.Contains(r.stdout+r.stderr, bad) {
			t.Errorf("the refusal says %q:\n%s", bad, r)
		}
	}
	expectSameDigest(t, before, targetDigest(t, dbtest.Peek(t, dst)))

	// The nodes' rows gone, the rows written on PostgreSQL still show it.
	if _, err := dbtest.Poke(t, dst).ExecContext(context.Background(), `DELETE FROM nodes`); err != nil {
		t.Fatal(err)
	}
	before = targetDigest(t, dbtest.Peek(t, dst))
	r = mustFail(t, call{}, []string{"is in use as backupd's store", "It holds data written after the source", "api_keys (1 row)"},
		"db", "migrate-to-postgres", "--from", src, "--to", loc)
	if strings.Contains(r.stderr, "Nodes served it") {
		t.Errorf("the refusal names nodes, and there are none:\n%s", r)
	}
	expectSameDigest(t, before, targetDigest(t, dbtest.Peek(t, dst)))
}
