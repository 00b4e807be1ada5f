package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/seed"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// applianceSource builds a SQLite appliance to copy: a seeded inventory
// with a year of history, older versions packed as deltas, an API key,
// audit entries, and a device deleted after others were created (so that
// its id must never be given again).
func applianceSource(t *testing.T, devices, backups int) string {
	t.Helper()
	data := t.TempDir()
	createKey(t, data, "--name", "automation") // bootstraps admin, writes secret.key, audits
	ctx := t.Context()
	s, err := db.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Seed(ctx, seed.Options{Devices: devices, BackupsPerDevice: backups, RootGroups: 3, ChildGroups: 2, Snapshots: 40}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repack(ctx, nil); err != nil {
		t.Fatal(err)
	}
	gone, err := s.CreateDevice(ctx, db.Device{Name: "gone", Host: "192.0.2.99", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDevice(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	// A remote zone with a device and an enrolled collector: the copy
	// keeps them beside the schema's own zone.
	branch, err := s.CreateZone(ctx, "branch")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDevice(ctx, db.Device{Name: "branch-sw", Host: "192.0.2.98", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, ZoneID: branch.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnrolmentToken(ctx, branch.ID, []byte("token-hash"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnrolCollector(ctx, []byte("token-hash"), db.Collector{Name: "branch-1", PublicKey: "public"}, []byte("bearer-hash")); err != nil {
		t.Fatal(err)
	}
	// A device deleted with its history: the _ever counters keep what
	// its backups counted, which no row shows any more.
	if err := s.DeleteDevice(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var deltas int
	if err := dbtest.Peek(t, s).QueryRow(`SELECT COUNT(*) FROM snapshots WHERE base_id IS NOT NULL`).Scan(&deltas); err != nil || (deltas == 0 && backups >= 10) {
		t.Fatalf("the source holds %d deltas (%v); the copy must be shown with some", deltas, err)
	}
	return data
}

// storeFacts is what a copy must keep: rows per table, counters, and
// every snapshot's text hash by id.
type storeFacts struct {
	rows      map[string]int64
	counters  map[string]int64
	snapshots map[int64]string
	devices   []string // id:name:last_good_backup_at:last_changed_at
}

func factsOf(t *testing.T, s *db.Store) storeFacts {
	t.Helper()
	ctx := t.Context()
	f := storeFacts{rows: map[string]int64{}, counters: map[string]int64{}, snapshots: map[int64]string{}}
	for _, table := range []string{"users", "roles", "role_permissions", "user_roles", "api_keys", "audit_log", "device_groups",
		"devices", "credentials", "backups", "snapshots", "jobs", "zones", "collectors", "collector_tokens"} {
		var n int64
		if err := dbtest.Peek(t, s).QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		f.rows[table] = n
	}
	rows, err := dbtest.Peek(t, s).QueryContext(ctx, `SELECT name, value FROM counters`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		var v int64
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		f.counters[n] = v
	}
	rows.Close()
	rows, err = dbtest.Peek(t, s).QueryContext(ctx, `SELECT id, hash FROM snapshots ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var hashes []string
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			t.Fatal(err)
		}
		ids, hashes = append(ids, id), append(hashes, h)
	}
	rows.Close()
	for i, h := range hashes {
		text, err := s.SnapshotText(ctx, h)
		if err != nil {
			t.Fatalf("snapshot %s: %v", h, err)
		}
		f.snapshots[ids[i]] = snapstore.Hash(text)
	}
	rows, err = dbtest.Peek(t, s).QueryContext(ctx, `SELECT id, name, COALESCE(last_good_backup_at, ''), COALESCE(last_changed_at, '') FROM devices ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var name, good, changed string
		if err := rows.Scan(&id, &name, &good, &changed); err != nil {
			t.Fatal(err)
		}
		f.devices = append(f.devices, fmt.Sprintf("%d:%s:%s:%s", id, name, good, changed))
	}
	rows.Close()
	return f
}

func expectSameFacts(t *testing.T, src, dst storeFacts) {
	t.Helper()
	for table, n := range src.rows {
		if dst.rows[table] != n {
			t.Errorf("%s: %d rows copied, the source has %d", table, dst.rows[table], n)
		}
	}
	for name, v := range src.counters {
		if dst.counters[name] != v {
			t.Errorf("counter %s: %d on PostgreSQL, %d on the source", name, dst.counters[name], v)
		}
	}
	if len(src.snapshots) == 0 || len(dst.snapshots) != len(src.snapshots) {
		t.Errorf("%d snapshots on PostgreSQL, %d on the source", len(dst.snapshots), len(src.snapshots))
	}
	for id, h := range src.snapshots {
		if dst.snapshots[id] != h {
			t.Errorf("snapshot %d: text hash %q on PostgreSQL, %q on the source", id, dst.snapshots[id], h)
		}
	}
	if !slices.Equal(src.devices, dst.devices) {
		t.Errorf("devices differ:\nsource %v\ntarget %v", src.devices, dst.devices)
	}
}

func sourceFacts(t *testing.T, data string) storeFacts {
	t.Helper()
	s, err := db.OpenReadOnly(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return factsOf(t, s)
}

func TestMigrateToPostgresCopiesAndVerifies(t *testing.T) {
	loc := pgLocation(t)
	src := applianceSource(t, 40, 15)
	want := sourceFacts(t, src)
	dbBytes := fileDigest(t, filepath.Join(src, db.FileName))

	r := mustRun(t, call{}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	if strings.Contains(r.stdout, "DIFFERS") || !strings.Contains(r.stdout, "every one matches its hash") || !strings.Contains(r.stdout, "verified") {
		t.Errorf("migrate-to-postgres summary:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, pgPassword) {
		t.Errorf("the password is shown:\n%s", r)
	}
	if fileDigest(t, filepath.Join(src, db.FileName)) != dbBytes {
		t.Error("the source database file changed during the copy")
	}
	dst, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	expectSameFacts(t, want, factsOf(t, dst))

	// A second run finds the copy finished and verifies it again.
	r = mustRun(t, call{}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	if !strings.Contains(r.stderr, "finished before") || !strings.Contains(r.stdout, "verified") {
		t.Errorf("second run:\n%s", r)
	}

	// New rows get ids past every id the source gave, the deleted
	// device's too.
	var maxGiven int64
	s, _ := db.OpenReadOnly(t.Context(), src)
	_ = dbtest.Peek(t, s).QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'devices'`).Scan(&maxGiven)
	s.Close()
	d, err := dst.CreateDevice(t.Context(), db.Device{Name: "new-after-copy", Host: "192.0.2.200", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if maxGiven == 0 || d.ID != maxGiven+1 {
		t.Errorf("a device created after the copy got id %d; the source gave ids up to %d", d.ID, maxGiven)
	}

	// The copy runs as a store: the appliance's key opens it, the API
	// key made on SQLite lists, a configuration reads.
	r = mustRun(t, call{}, "key", "list", "--db", loc, "--data", src)
	if !strings.Contains(r.stdout, "automation") {
		t.Errorf("key list on the copy:\n%s", r)
	}
	mustFail(t, call{}, []string{"secret key is not the one"}, "key", "list", "--db", loc, "--data", t.TempDir())

}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return snapstore.Hash(string(b))
}

// TestMigrateToPostgresResumesAfterKill9 starts the copy as its own
// process and kills it from outside (SIGKILL) twice, each time inside a
// batch it has not committed yet, then runs it once more: it carries on
// where it stopped, copies again no table it had finished, and ends with
// the source's rows, counters and snapshots exactly, none twice.
func TestMigrateToPostgresResumesAfterKill9(t *testing.T) {
	loc := pgLocation(t)
	src := applianceSource(t, 25, 12)
	want := sourceFacts(t, src)
	dst, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.OpenReadOnly(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Rows of every table the copy copies, but for the copy's own
	// settings (its marker, the key's fingerprint).
	var list string
	if err := dbtest.Peek(t, dst).QueryRow(`SELECT string_agg(table_name, ',') FROM information_schema.tables WHERE table_schema = current_schema()
		AND table_type = 'BASE TABLE' AND table_name NOT IN ('goose_db_version', 'nodes', 'counter_totals', 'counter_deltas')`).Scan(&list); err != nil {
		t.Fatal(err)
	}
	names := strings.Split(list, ",")
	rowsIn := func(q *sql.DB, table string) int64 {
		query := `SELECT COUNT(*) FROM ` + table
		if table == "settings" {
			query += ` WHERE key NOT IN ('migrate_to_postgres', 'secret_key_fingerprint')`
		}
		var n int64
		if err := q.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	copied := func() (n int64) {
		for _, table := range names {
			n += rowsIn(dbtest.Peek(t, dst), table)
		}
		return n
	}
	var total int64
	for _, table := range names {
		total += rowsIn(dbtest.Peek(t, s), table)
	}
	before := copied() // what the schema brings (the server's zone)

	first := killMidCopy(t, dst, src, loc, frozenCopy{})
	partial := []int64{copied()}
	second := killMidCopy(t, dst, src, loc, first)
	partial = append(partial, copied())
	// The second run carried on from the first's rows, and neither got
	// to the end.
	if partial[0] <= before || partial[1] <= partial[0] || partial[1] >= total {
		t.Fatalf("rows copied after the two kills: %v of %d (%d before the copy); want some, more, not all", partial, total, before)
	}
	t.Logf("killed inside a batch with %d, then %d of %d rows copied; the marker then:\n%s\n%s", partial[0], partial[1], total, first.raw, second.raw)
	// The triggers the copy turns off inside its batches are on.
	var off int
	if err := dbtest.Peek(t, dst).QueryRow(`SELECT COUNT(*) FROM pg_trigger WHERE NOT tgisinternal AND tgenabled = 'D'`).Scan(&off); err != nil || off != 0 {
		t.Fatalf("%d triggers left disabled after the kills (%v)", off, err)
	}
	// Half a copy is no store to run on.
	mustFail(t, call{}, []string{"is unfinished", "run it again"}, "key", "list", "--db", loc, "--data", src)
	r := mustRun(t, call{}, "db", "migrate-to-postgres", "--from", src, "--to", loc, "--batch-rows", "7")
	if !strings.Contains(r.stderr, "carrying on the copy") || !strings.Contains(r.stdout, "verified") || strings.Contains(r.stdout, "DIFFERS") {
		t.Errorf("the resumed copy:\n%s", r)
	}
	// It carried on: a table finished before is not copied again, and
	// the table under way is copied from where it was, not from its start.
	for table := range second.marker.Done {
		if strings.Contains("\n"+r.stderr, "\n"+table+": ") {
			t.Errorf("the resumed copy copied %s again, which was finished before it:\n%s", table, r.stderr)
		}
	}
	for table := range second.marker.After {
		inSource := rowsIn(dbtest.Peek(t, s), table)
		// No line: the rows were all there, only the table's end was not.
		var n int64
		if m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(table) + `: (\d+) rows copied$`).FindStringSubmatch(r.stderr); m != nil {
			n, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if n >= inSource {
			t.Errorf("the resumed copy copied %d rows of %s, which has %d and was under way: it started over", n, table, inSource)
		}
	}
	expectSameFacts(t, want, factsOf(t, dst))
	mustRun(t, call{}, "key", "list", "--db", loc, "--data", src)
}

// frozenCopy is where a killed copy stood: its marker as committed.
type frozenCopy struct {
	raw    string
	marker struct {
		After  map[string]json.RawMessage `json:"after"`
		Done   map[string]bool            `json:"done"`
		Copied bool                       `json:"copied"`
	}
}

// killMidCopy runs migrate-to-postgres from src into loc (dst) in a
// process of its own and kills it (SIGKILL) inside a batch it has not
// committed, once it has committed one more than prev, finished a table
// and begun another. Every batch updates the copy's marker row before it commits:
// holding that row, the test stops the copy inside its next batch, checks
// where it stands and that it waits there, and kills it.
func killMidCopy(t *testing.T, dst *db.Store, src, loc string, prev frozenCopy) frozenCopy {
	t.Helper()
	ctx := t.Context()
	stderr := &testkit.LockedBuffer{}
	cmd := exec.Command(binPath, "db", "migrate-to-postgres", "--from", src, "--to", loc, "--batch-rows", "7")
	cmd.Env, cmd.Dir, cmd.Stderr = cleanEnv(), t.TempDir(), stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	// wait polls (every few ms, for at most 30 s in all) until cond holds.
	deadline := time.Now().Add(30 * time.Second)
	wait := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case err := <-done:
				exited = true
				t.Fatalf("the copy ended (%v) before %s:\n%s", err, what, stderr)
			case <-time.After(2 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("not within 30 s: %s\n%s", what, stderr)
			}
		}
	}
	read := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, lock string) (f frozenCopy) {
		err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'migrate_to_postgres'`+lock).Scan(&f.raw)
		if errors.Is(err, sql.ErrNoRows) {
			return f
		}
		if err == nil {
			err = json.Unmarshal([]byte(f.raw), &f.marker)
		}
		if err != nil {
			t.Fatalf("the copy's marker %q: %v", f.raw, err)
		}
		return f
	}
	// Where the kill must land: past prev, a table finished and one
	// under way.
	there := func(f frozenCopy) bool {
		return f.raw != prev.raw && len(f.marker.Done) > 0 && len(f.marker.After) > 0 && !f.marker.Copied
	}
	var f frozenCopy
	var tx *sql.Tx
	seen := prev.raw
	for tx == nil {
		wait("the copy's next committed batch", func() bool { f = read(dbtest.Peek(t, dst), ""); return f.raw != seen })
		if f.marker.Copied {
			t.Fatalf("the copy got to its end before the test could stop it (marker %s); the source is too small for this", f.raw)
		}
		if !there(f) {
			seen = f.raw
			continue
		}
		var err error
		if tx, err = dbtest.Peek(t, dst).BeginTx(ctx, nil); err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		// From here on the copy commits nothing: f is where it stands.
		if f = read(tx, " FOR UPDATE"); !there(f) {
			_ = tx.Rollback()
			tx, seen = nil, f.raw
		}
	}
	// The copy waits on the test, inside its next batch.
	wait("the copy waits to commit its next batch", func() bool {
		var waiting int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting > 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		exited = true
	case <-time.After(30 * time.Second):
		t.Fatal("the copy still runs 30 s after SIGKILL")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the copy ended %v, not by the test's SIGKILL:\n%s", cmd.ProcessState, stderr)
	}
	return f
}

func TestMigrateToPostgresRefusesAnotherStore(t *testing.T) {
	src := applianceSource(t, 3, 2)

	t.Run("a store started on the target", func(t *testing.T) {
		loc := pgLocation(t)
		other := t.TempDir()
		copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(other, "secret.key"))
		mustRun(t, call{}, "user", "list", "--db", loc, "--data", other) // bootstraps an admin there
		mustFail(t, call{}, []string{"is not empty (table ", "left alone"}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	})
	t.Run("another key", func(t *testing.T) {
		loc := pgLocation(t)
		mustRun(t, call{}, "user", "list", "--db", loc, "--data", t.TempDir())
		mustFail(t, call{}, []string{"another secret key", "left alone"}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	})
	t.Run("a copy under way", func(t *testing.T) {
		loc := pgLocation(t)
		dst, err := dbtest.OpenAt(t, loc)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := dbtest.Peek(t, dst).Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var locked bool
		if err := conn.QueryRowContext(t.Context(), `SELECT pg_try_advisory_lock(?)`, int64(0x6263_6b64_6d69_6772)).Scan(&locked); err != nil || !locked {
			t.Fatalf("take the copy's lock: %v %v", locked, err)
		}
		mustFail(t, call{}, []string{"another migrate-to-postgres is copying"}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	})
	t.Run("a copy of another appliance", func(t *testing.T) {
		loc := pgLocation(t)
		first := applianceSource(t, 2, 2)
		copyFile(t, filepath.Join(src, "secret.key"), filepath.Join(first, "secret.key"))
		mustRun(t, call{}, "db", "migrate-to-postgres", "--from", first, "--to", loc)
		mustFail(t, call{}, []string{"holds a copy of another store", "left alone"}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	})
}

// TestMigrateToPostgresReportsADifference damages the target after a
// copy: the next run's verification finds it and exits non-zero.
func TestMigrateToPostgresReportsADifference(t *testing.T) {
	loc := pgLocation(t)
	src := applianceSource(t, 5, 4)
	mustRun(t, call{}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	dst, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var hash string
	if err := dbtest.Peek(t, dst).QueryRow(`SELECT hash FROM snapshots WHERE base_id IS NULL ORDER BY id LIMIT 1`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, dst).ExecContext(ctx, `UPDATE snapshots SET data = substring(data from 1 for 12) || '\x5a5a'::bytea || substring(data from 15) WHERE hash = ?`, hash); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, dst).ExecContext(ctx, `DELETE FROM audit_log WHERE id = (SELECT MIN(id) FROM audit_log)`); err != nil {
		t.Fatal(err)
	}
	r := mustFail(t, call{}, []string{"verification failed"}, "db", "migrate-to-postgres", "--from", src, "--to", loc)
	if !strings.Contains(r.stdout, "audit_log") || !strings.Contains(r.stdout, "DIFFERS") || !strings.Contains(r.stdout, "snapshot "+hash) {
		t.Errorf("the verification does not name what differs:\n%s", r)
	}
}

// TestMigrateToPostgresRefusesWhileServing: the source must not be
// written during the copy; a running server holds its run locks.
func TestMigrateToPostgresRefusesWhileServing(t *testing.T) {
	src := t.TempDir()
	createKey(t, src, "--name", "x")
	srv := startServe(t, src)
	mustFail(t, call{}, []string{"a backupd process is working on", "stop it first"},
		"db", "migrate-to-postgres", "--from", src, "--to", "postgres://u:"+pgPassword+"@127.0.0.1:1/backupd?connect_timeout=1")
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	// Stopped, the same copy gets past that check (and on to the target,
	// which here does not exist).
	r := mustFail(t, call{}, []string{"127.0.0.1:1"}, "db", "migrate-to-postgres", "--from", src, "--to", "postgres://u:"+pgPassword+"@127.0.0.1:1/backupd?connect_timeout=1")
	if strings.Contains(r.stderr, "is working on") || strings.Contains(r.stderr, pgPassword) {
		t.Errorf("after serve stopped:\n%s", r.stderr)
	}
}
