package snapstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// openDB is a migrated SQLite database of the test's own.
func openDB(t *testing.T) *engine.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backupd.db")
	if err := engine.MigrateSQLite(context.Background(), path, engine.MigrateUp, nil, nil); err != nil {
		t.Fatal(err)
	}
	e, err := engine.OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func config(version int) string {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "interface GigabitEthernet0/%d\n description uplink %d\n", i, i)
	}
	fmt.Fprintf(&b, "hostname core-%d\n", version)
	return b.String()
}

// An older version packed as a delta against a newer one reads back as
// it was, costs less than its whole frame, and passes the check; a
// damaged frame is reported by the check and never packed on.
func TestPackedVersionsReadBackAndCheck(t *testing.T) {
	ctx := context.Background()
	e := openDB(t)
	older, newer := config(1), config(2)
	h1, err := snapstore.Put(ctx, e.Writer, e.Dialect, older)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := snapstore.Put(ctx, e.Writer, e.Dialect, newer)
	if err != nil {
		t.Fatal(err)
	}
	if h1 != snapstore.Hash(older) {
		t.Fatalf("Put = %s, want the text's hash %s", h1, snapstore.Hash(older))
	}
	var whole int
	if err := e.Reader.QueryRow(`SELECT stored_size FROM snapshots WHERE hash = ?`, h1).Scan(&whole); err != nil {
		t.Fatal(err)
	}
	packed, err := snapstore.PackPair(ctx, e, h1, h2, nil)
	if err != nil || !packed {
		t.Fatalf("PackPair = %v, %v; want the older version packed", packed, err)
	}
	var delta int
	var base *int64
	if err := e.Reader.QueryRow(`SELECT stored_size, base_id FROM snapshots WHERE hash = ?`, h1).Scan(&delta, &base); err != nil {
		t.Fatal(err)
	}
	if base == nil || delta >= whole {
		t.Fatalf("after packing: base %v, %d bytes (whole %d); want a smaller delta", base, delta, whole)
	}
	snapstore.ResetCache()
	for hash, want := range map[string]string{h1: older, h2: newer} {
		got, err := snapstore.Text(ctx, e.Reader, hash)
		if err != nil || got != want {
			t.Fatalf("Text(%s) = %d bytes, %v; want the %d bytes stored", hash, len(got), err, len(want))
		}
	}
	var problems []string
	if err := snapstore.Check(ctx, e.Reader, func(p string) { problems = append(problems, p) }); err != nil || len(problems) > 0 {
		t.Fatalf("Check = %v, %v; want nothing to report", problems, err)
	}

	// A newer version whose frame is damaged.
	third := config(3)
	h3, err := snapstore.Put(ctx, e.Writer, e.Dialect, third)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Writer.Exec(`UPDATE snapshots SET data = ? WHERE hash = ?`, []byte("not zstd"), h3); err != nil {
		t.Fatal(err)
	}
	snapstore.ResetCache()
	problems = nil
	if err := snapstore.Check(ctx, e.Reader, func(p string) { problems = append(problems, p) }); err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], h3) {
		t.Fatalf("Check after damage = %q; want one report naming %s", problems, h3)
	}
	if _, err := snapstore.Text(ctx, e.Reader, h3); err == nil {
		t.Fatal("Text of a damaged frame succeeded")
	}
	if _, err := snapstore.Text(ctx, e.Reader, snapstore.Hash("never stored")); err != engine.ErrNotFound {
		t.Fatalf("Text of an unknown hash = %v, want ErrNotFound", err)
	}
}
