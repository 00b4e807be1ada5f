package snapstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
)

// openEngine is a migrated, empty store's engine for t: SQLite in a
// temporary directory, or a database of its own on the PostgreSQL server
// BACKUPD_TEST_POSTGRES names. Package snapstore runs on an engine.DB,
// below package db's Store.
func openEngine(t *testing.T) *engine.DB {
	t.Helper()
	ctx := context.Background()
	loc := dbtest.Location(t)
	var e *engine.DB
	var err error
	if dbtest.Postgres() {
		e, err = engine.OpenPostgres(ctx, loc)
	} else {
		path := filepath.Join(loc, db.FileName)
		if err = engine.MigrateSQLite(ctx, path, engine.MigrateUp, nil, nil); err == nil {
			e, err = engine.OpenSQLite(path)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// versions returns n versions of a configuration of about size bytes,
// each changing a few lines of the one before, deterministic from seed.
func versions(seed uint64, n, size int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	var lines []string
	for i := 0; len(lines)*40 < size; i++ {
		lines = append(lines, fmt.Sprintf("interface GigabitEthernet1/0/%d", i), fmt.Sprintf(" description rack %d port %d", r.IntN(40), r.IntN(48)))
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, strings.Join(lines, "\n")+"\n")
		for range 3 {
			lines[r.IntN(len(lines))] = fmt.Sprintf(" description changed %d", r.Uint32())
		}
	}
	return out
}

// put stores every text and returns their hashes.
func put(t *testing.T, e *engine.DB, texts []string) []string {
	t.Helper()
	hashes := make([]string, len(texts))
	for i, text := range texts {
		h, _, err := snapstore.PutNew(context.Background(), e.Writer, e.Dialect, text, "")
		if err != nil {
			t.Fatal(err)
		}
		hashes[i] = h
	}
	return hashes
}

// packAll packs each version on the next, oldest first, as a device's
// history is packed, and returns which were rewritten.
func packAll(t *testing.T, e *engine.DB, hashes []string) []bool {
	t.Helper()
	out := make([]bool, len(hashes))
	for i := 0; i+1 < len(hashes); i++ {
		ok, err := snapstore.PackPair(context.Background(), e, hashes[i], hashes[i+1], nil)
		if err != nil {
			t.Fatalf("pack %d on %d: %v", i, i+1, err)
		}
		out[i] = ok
	}
	return out
}

// readAll reads every text back from what is stored, cache emptied, and
// compares it byte for byte.
func readAll(t *testing.T, e *engine.DB, want map[string]string) {
	t.Helper()
	snapstore.ResetCache()
	for h, text := range want {
		got, err := snapstore.Text(context.Background(), e.Reader, h)
		if err != nil {
			t.Fatalf("snapshot %s: %v", h, err)
		}
		if got != text {
			t.Fatalf("snapshot %s: read %d bytes, wrote %d: not the same text", h, len(got), len(text))
		}
	}
}

// checkClean runs Check and fails on any problem.
func checkClean(t *testing.T, e *engine.DB) {
	t.Helper()
	snapstore.ResetCache()
	var problems []string
	if err := snapstore.Check(context.Background(), e.Reader, func(p string) { problems = append(problems, p) }); err != nil || len(problems) > 0 {
		t.Fatalf("check: %v %q", err, problems)
	}
}

func baseOf(t *testing.T, e *engine.DB, hash string) sql.NullInt64 {
	t.Helper()
	var base sql.NullInt64
	if err := e.Reader.QueryRow(`SELECT base_id FROM snapshots WHERE hash = ?`, hash).Scan(&base); err != nil {
		t.Fatal(err)
	}
	return base
}

func idOf(t *testing.T, e *engine.DB, hash string) int64 {
	t.Helper()
	var id int64
	if err := e.Reader.QueryRow(`SELECT id FROM snapshots WHERE hash = ?`, hash).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// recorder is a real connection that notes the statements it runs.
type recorder struct {
	engine.Querier
	seen []string
}

func (r *recorder) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	r.seen = append(r.seen, q)
	return r.Querier.QueryContext(ctx, q, args...)
}

func (r *recorder) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	r.seen = append(r.seen, q)
	return r.Querier.QueryRowContext(ctx, q, args...)
}

func (r *recorder) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	r.seen = append(r.seen, q)
	return r.Querier.ExecContext(ctx, q, args...)
}

func TestPutStoresEachTextOnce(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	want := map[string]string{}
	for _, text := range []string{"", "x", "hostname r1\r\nend\r\n", "hostname r1\n\xff\xfe\x00 not UTF-8 \xc3\x28\n"} {
		rec := &recorder{Querier: e.Writer}
		h, isNew, err := snapstore.PutNew(ctx, rec, e.Dialect, text, "")
		if err != nil || !isNew || h != snapstore.Hash(text) {
			t.Fatalf("put %q: %s, new %v, %v; want its hash, new", text, h, isNew, err)
		}
		// Put runs what PutQueries names, no other text: a caller that
		// prepares those has every statement of Put prepared.
		for _, q := range rec.seen {
			if !slices.Contains(snapstore.PutQueries(e.Dialect), q) {
				t.Errorf("Put ran %q, which PutQueries does not name", q)
			}
		}
		if h2, isNew, err := snapstore.PutNew(ctx, e.Writer, e.Dialect, text, h); err != nil || isNew || h2 != h {
			t.Errorf("second put of %q: %s, new %v, %v; want the same hash, not new", text, h2, isNew, err)
		}
		want[h] = text
	}
	readAll(t, e, want)
	var n int
	var created string
	if err := e.Reader.QueryRow(`SELECT COUNT(*), MAX(created_at) FROM snapshots`).Scan(&n, &created); err != nil || n != len(want) {
		t.Fatalf("%d rows (%v); want %d", n, err, len(want))
	}
	// Retention compares created_at with times in the store's format.
	if at, err := time.ParseInLocation(db.TimeFormat, created, time.UTC); err != nil || time.Since(at) > time.Hour {
		t.Errorf("created_at %q is not a recent time in db.TimeFormat: %v", created, err)
	}
	if _, err := snapstore.Text(ctx, e.Reader, snapstore.Hash("never stored")); !errors.Is(err, engine.ErrNotFound) || !errors.Is(err, db.ErrNotFound) {
		t.Errorf("reading a text never stored: %v; want ErrNotFound", err)
	}
}

func TestPackKeepsChainsBounded(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	texts := versions(1, snapstore.MaxDeltaChain+3, 4<<10)
	hashes := put(t, e, texts)
	before := snapstore.PackCounts()
	packed := packAll(t, e, hashes)
	// Every version is a delta on the next but the newest and the one
	// MaxDeltaChain deltas rest on, a key frame.
	for i, ok := range packed {
		whole := i == snapstore.MaxDeltaChain || i == len(hashes)-1
		if ok == whole || baseOf(t, e, hashes[i]).Valid == whole {
			t.Errorf("version %d packed %v; want whole %v", i, ok, whole)
		}
	}
	if got := snapstore.PackCounts(); got.Packed-before.Packed != uint64(len(hashes)-2) || got.Failed != before.Failed {
		t.Errorf("pack counts went from %+v to %+v; want %d more packed, no failure", before, got, len(hashes)-2)
	}
	// Nothing left to pack: each refusal leaves the pair as it is.
	if again := packAll(t, e, hashes); slices.Contains(again, true) {
		t.Errorf("packing again rewrote %v", again)
	}
	want := map[string]string{}
	for i, h := range hashes {
		want[h] = texts[i]
	}
	readAll(t, e, want)
	checkClean(t, e)

	// Refused whatever the chains: a pair of one, a base too short to
	// help, a text not stored.
	short, _, err := snapstore.PutNew(ctx, e.Writer, e.Dialect, "end\n", "")
	if err != nil {
		t.Fatal(err)
	}
	last := hashes[len(hashes)-1]
	for _, c := range [][2]string{{last, last}, {last, short}, {snapstore.Hash("gone"), last}, {last, snapstore.Hash("gone")}} {
		if ok, err := snapstore.PackPair(ctx, e, c[0], c[1], nil); ok || err != nil {
			t.Errorf("pack %s on %s: %v, %v; want refused without error", c[0][:8], c[1][:8], ok, err)
		}
	}
}

func TestPackRefusesADamagedText(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	texts := versions(2, 2, 4<<10)
	hashes := put(t, e, texts)
	// The older row holds another text's frame.
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	if _, err := e.Writer.Exec(`UPDATE snapshots SET data = ? WHERE hash = ?`, enc.EncodeAll([]byte(texts[1]), nil), hashes[0]); err != nil {
		t.Fatal(err)
	}
	before := snapstore.PackCounts()
	ok, err := snapstore.PackPair(ctx, e, hashes[0], hashes[1], nil)
	if ok || err == nil || !strings.Contains(err.Error(), "does not match its hash") {
		t.Errorf("packing a damaged text: %v, %v; want refused with an error", ok, err)
	}
	if got := snapstore.PackCounts(); got.Failed != before.Failed+1 {
		t.Errorf("failures went from %d to %d; want one more", before.Failed, got.Failed)
	}
	if baseOf(t, e, hashes[0]).Valid {
		t.Error("the damaged text was rewritten as a delta")
	}
}

func TestRebaseDependentsBeforeDeletion(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	texts := versions(3, 8, 4<<10)
	hashes := put(t, e, texts)
	packAll(t, e, hashes)
	// del deletes the snapshots of versions idx in one transaction, as
	// retention does, after RebaseDependents.
	del := func(idx ...int) int {
		t.Helper()
		doomed := map[int64]sql.NullInt64{}
		for _, i := range idx {
			doomed[idOf(t, e, hashes[i])] = baseOf(t, e, hashes[i])
		}
		var n int
		err := e.InTx(ctx, func(tx *sql.Tx) error {
			var err error
			if n, err = snapstore.RebaseDependents(ctx, tx, doomed); err != nil {
				return err
			}
			for id := range doomed {
				if _, err := tx.ExecContext(ctx, `DELETE FROM snapshots WHERE id = ?`, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := map[string]string{}
	for i, h := range hashes {
		want[h] = texts[i]
	}
	// From the middle: version 2 rested on 3 and now rests on 5.
	if n := del(3, 4); n != 1 {
		t.Errorf("%d snapshots rewritten; want version 2's", n)
	}
	delete(want, hashes[3])
	delete(want, hashes[4])
	if got := baseOf(t, e, hashes[2]); got.Int64 != idOf(t, e, hashes[5]) {
		t.Errorf("version 2 rests on snapshot %v; want version 5's, %d", got, idOf(t, e, hashes[5]))
	}
	readAll(t, e, want)
	checkClean(t, e)
	// From the top: version 5 loses every ancestor and is written whole.
	if n := del(6, 7); n != 1 {
		t.Errorf("%d snapshots rewritten; want version 5's", n)
	}
	delete(want, hashes[6])
	delete(want, hashes[7])
	if baseOf(t, e, hashes[5]).Valid {
		t.Error("version 5 is still a delta with no ancestor left")
	}
	readAll(t, e, want)
	checkClean(t, e)
	// A cached text whose row is gone is not found.
	if _, err := snapstore.Text(ctx, e.Reader, hashes[0]); err != nil {
		t.Fatal(err)
	}
	del(0)
	if _, err := snapstore.Text(ctx, e.Reader, hashes[0]); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("reading a deleted, cached text: %v; want ErrNotFound", err)
	}
}

func TestCheckReportsADamagedDelta(t *testing.T) {
	e := openEngine(t)
	texts := versions(4, 4, 4<<10)
	hashes := put(t, e, texts)
	packAll(t, e, hashes)
	checkClean(t, e)
	var data []byte
	if err := e.Reader.QueryRow(`SELECT data FROM snapshots WHERE hash = ?`, hashes[1]).Scan(&data); err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if _, err := e.Writer.Exec(`UPDATE snapshots SET data = ? WHERE hash = ?`, data, hashes[1]); err != nil {
		t.Fatal(err)
	}
	snapstore.ResetCache()
	var problems []string
	if err := snapstore.Check(context.Background(), e.Reader, func(p string) { problems = append(problems, p) }); err != nil {
		t.Fatal(err)
	}
	// Version 1's delta, and version 0's, whose base it is.
	all := strings.Join(problems, "\n")
	if len(problems) != 2 || !strings.Contains(all, "snapshot "+hashes[1]+": its delta cannot be decoded") ||
		!strings.Contains(all, "snapshot "+hashes[0]+" is a delta on snapshot "+hashes[1]+", which cannot be read") {
		t.Errorf("check found %q; want version 1's delta and version 0 on it", problems)
	}
}

func TestExpandAllWritesEveryDeltaWhole(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	texts := versions(5, 10, 4<<10)
	hashes := put(t, e, texts)
	packAll(t, e, hashes)
	var n int
	err := e.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = snapstore.ExpandAll(ctx, tx)
		return err
	})
	if err != nil || n != 9 {
		t.Fatalf("expanded %d, %v; want 9", n, err)
	}
	// Whole frames only, which any zstd reader decodes alone.
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for i, h := range hashes {
		var data []byte
		var base sql.NullInt64
		if err := e.Reader.QueryRow(`SELECT data, base_id FROM snapshots WHERE hash = ?`, h).Scan(&data, &base); err != nil {
			t.Fatal(err)
		}
		if text, err := dec.DecodeAll(data, nil); base.Valid || err != nil || string(text) != texts[i] {
			t.Errorf("version %d after ExpandAll: base %v, %v", i, base, err)
		}
	}
	checkClean(t, e)
}
