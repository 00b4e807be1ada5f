package db_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/db/snapstore"
)

// configVersions returns n versions of a configuration of about size
// bytes, each changing about 2% of the lines of the one before (edits,
// insertions and deletions), deterministic from seed.
func configVersions(seed uint64, n, size int) []string {
	r := rand.New(rand.NewPCG(seed, 15))
	var lines []string
	for i, total := 0, 0; total < size; i++ {
		var l string
		switch i % 6 {
		case 0:
			l = fmt.Sprintf("interface GigabitEthernet1/0/%d", i/6)
		case 1:
			l = fmt.Sprintf(" description link to rack %d port %d", r.IntN(40), r.IntN(48))
		case 2:
			l = fmt.Sprintf(" ip address 10.%d.%d.1 255.255.255.0", r.IntN(256), r.IntN(256))
		case 3:
			l = " no shutdown"
		case 4:
			l = fmt.Sprintf(" switchport access vlan %d", 100+r.IntN(50))
		default:
			l = "!"
		}
		lines = append(lines, l)
		total += len(l) + 1
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, strings.Join(lines, "\n")+"\n")
		changes := max(len(lines)/50, 1)
		for k := range changes {
			i := r.IntN(len(lines))
			switch k % 3 {
			case 0:
				lines[i] = fmt.Sprintf(" description changed %d", r.Uint32())
			case 1:
				lines = append(lines[:i], append([]string{fmt.Sprintf("ip route 10.%d.0.0 255.255.0.0 192.0.2.%d", r.IntN(256), r.IntN(256))}, lines[i:]...)...)
			default:
				lines = append(lines[:i], lines[i+1:]...)
			}
		}
	}
	return out
}

// storeVersion records a good backup of text the way the engine does:
// a job claimed and finished. It returns the backup's id.
func storeVersion(t *testing.T, s *db.Store, device int64, text string) string {
	t.Helper()
	ctx := context.Background()
	enqueueNow(t, s, queue.TriggerSchedule, device)
	claims, err := s.ClaimJobs(ctx, "w", 1, nil)
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Text: text, Changed: true, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Versions are ordered by start time, kept to the millisecond.
	time.Sleep(2 * time.Millisecond)
	return claims[0].BackupID
}

// history gives a new device n versions (configVersions(seed, n, size))
// through storeVersion and returns their backup ids and texts, oldest
// first, and the map of one to the other checkVersions takes.
func history(t *testing.T, s *db.Store, seed uint64, n, size int) (ids, texts []string, want map[string]string) {
	t.Helper()
	dev := retDevice(t, s, fmt.Sprintf("r%d", seed))
	texts = configVersions(seed, n, size)
	want = map[string]string{}
	for _, text := range texts {
		id := storeVersion(t, s, dev, text)
		ids = append(ids, id)
		want[id] = text
	}
	return ids, texts, want
}

// checkVersions reads every backup back from what is stored and compares
// it byte for byte.
func checkVersions(t *testing.T, s *db.Store, want map[string]string) {
	t.Helper()
	db.ResetTextCache()
	ctx := context.Background()
	for id, text := range want {
		b, err := s.GetBackup(ctx, id)
		if err != nil || b.SnapshotHash == nil {
			t.Fatalf("backup %s: %v", id, err)
		}
		got, err := s.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			t.Fatalf("backup %s: %v", id, err)
		}
		if got != text {
			t.Fatalf("backup %s: read %d bytes, wrote %d: not the same text", id, len(got), len(text))
		}
	}
}

// chains returns, for every snapshot, how many deltas a read decodes.
func chains(t *testing.T, s *db.Store) map[string]int {
	t.Helper()
	rows, err := s.Reader().Query(`WITH RECURSIVE walk(start, id, base, n) AS (
			SELECT hash, id, base_id, 0 FROM snapshots
			UNION ALL
			SELECT walk.start, s.id, s.base_id, walk.n + 1 FROM walk JOIN snapshots s ON s.id = walk.base WHERE walk.n < 100
		) SELECT start, MAX(n) FROM walk GROUP BY start`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			t.Fatal(err)
		}
		out[h] = n
	}
	return out
}

func countDeltas(t *testing.T, s *db.Store) int {
	t.Helper()
	var n, counter int
	if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM snapshots WHERE base_id IS NOT NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := s.Reader().QueryRow(`SELECT value FROM counters WHERE name = 'snapshot_deltas'`).Scan(&counter); err != nil {
		t.Fatal(err)
	}
	if n != counter {
		t.Errorf("counter snapshot_deltas = %d, the rows count %d", counter, n)
	}
	return n
}

func checkClean(t *testing.T, s *db.Store) {
	t.Helper()
	db.ResetTextCache()
	problems, err := s.Check(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("db check: %v %q", err, problems)
	}
	retCheckCounters(t, s)
}

func TestSnapshotDeltasRoundTrip(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := retDevice(t, s, "r1")
	texts := configVersions(1, 80, 60<<10)
	// Texts a store must keep byte for byte, among ordinary versions so
	// that they are packed against them and they against these.
	big := strings.Repeat(texts[0], 5<<20/len(texts[0])+1)[:5<<20]
	special := map[int]string{
		10: strings.ReplaceAll(texts[10], "\n", "\r\n"),
		20: texts[20][:3000] + "\xff\xfe\x00 not UTF-8 \xc3\x28\n" + texts[20][3000:],
		30: "",
		31: "x",
		40: big,
		41: big[:len(big)-10] + "changed\n",
	}
	want := map[string]string{}
	var newest string
	for i, text := range texts {
		if sp, ok := special[i]; ok {
			text = sp
		}
		id := storeVersion(t, s, dev, text)
		want[id] = text
		newest = id
	}
	checkVersions(t, s, want)
	// The 5 MB text is a delta too (on its edited successor), through an
	// encoder sized to it.
	var bigStored int
	var bigBase sql.NullInt64
	if err := s.Reader().QueryRow(`SELECT stored_size, base_id FROM snapshots WHERE hash = ?`, snapstore.Hash(big)).Scan(&bigStored, &bigBase); err != nil {
		t.Fatal(err)
	}
	if !bigBase.Valid || bigStored > 4096 {
		t.Errorf("the 5 MB version is stored in %d bytes (delta: %v); want a small delta", bigStored, bigBase.Valid)
	}

	deltas := countDeltas(t, s)
	if deltas < 60 {
		t.Errorf("%d of %d versions stored as deltas; want most of them", deltas, len(texts))
	}
	for h, n := range chains(t, s) {
		if n > snapstore.MaxDeltaChain {
			t.Errorf("snapshot %s is %d deltas from a whole frame; at most %d", h, n, snapstore.MaxDeltaChain)
		}
	}
	b, _ := s.GetBackup(ctx, newest)
	var base sql.NullInt64
	if err := s.Reader().QueryRow(`SELECT base_id FROM snapshots WHERE hash = ?`, *b.SnapshotHash).Scan(&base); err != nil || base.Valid {
		t.Errorf("the newest version is a delta (base %v, %v); it must be whole", base, err)
	}
	// An ordinary version's delta costs a small part of its whole frame.
	var deltaBytes, deltaCount int64
	if err := s.Reader().QueryRow(`SELECT SUM(stored_size), COUNT(*) FROM snapshots WHERE base_id IS NOT NULL AND size BETWEEN 50000 AND 70000`).Scan(&deltaBytes, &deltaCount); err != nil {
		t.Fatal(err)
	}
	whole := len(zstdWhole(t, texts[50]))
	if deltaCount == 0 || deltaBytes/deltaCount > int64(whole)/5 {
		t.Errorf("deltas average %d bytes over %d; a whole frame is %d", deltaBytes/max(deltaCount, 1), deltaCount, whole)
	}
	checkClean(t, s)
}

func zstdWhole(t *testing.T, text string) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll([]byte(text), nil)
}

func TestChainsStayBoundedOverAYear(t *testing.T) {
	s := openStore(t)
	_, _, want := history(t, s, 2, 3*snapstore.MaxDeltaChain+5, 4<<10)
	longest, whole := 0, 0
	for _, n := range chains(t, s) {
		longest = max(longest, n)
		if n == 0 {
			whole++
		}
	}
	// After every MaxDeltaChain deltas a key frame, and the newest.
	if longest != snapstore.MaxDeltaChain || whole != 4 {
		t.Errorf("longest chain %d, %d whole frames; want %d and 4", longest, whole, snapstore.MaxDeltaChain)
	}
	checkVersions(t, s, want)
	checkClean(t, s)
}

func TestCheckFindsADamagedSnapshot(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ids, texts, _ := history(t, s, 3, 12, 20<<10)
	checkClean(t, s)
	hashOf := func(i int) string {
		b, _ := s.GetBackup(ctx, ids[i])
		return *b.SnapshotHash
	}
	for _, c := range []struct {
		name, hash, set, want string
	}{
		// A flipped byte in the middle of a delta frame.
		{"delta", hashOf(4), `UPDATE snapshots SET data = ? WHERE hash = ?`, "delta cannot be decoded"},
		// A delta whose base is gone.
		{"base", hashOf(5), `UPDATE snapshots SET base_id = 999999 WHERE hash = ?`, "which is missing"},
		// The newest, whole frame replaced by another text's.
		{"whole", hashOf(11), `UPDATE snapshots SET data = ? WHERE hash = ?`, "another hash"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var saved []byte
			var base sql.NullInt64
			if err := s.Reader().QueryRow(`SELECT data, base_id FROM snapshots WHERE hash = ?`, c.hash).Scan(&saved, &base); err != nil {
				t.Fatal(err)
			}
			args := []any{c.hash}
			switch c.name {
			case "delta":
				flipped := slices.Clone(saved)
				flipped[len(flipped)/2] ^= 0xff
				args = []any{flipped, c.hash}
			case "whole":
				args = []any{zstdWhole(t, texts[0]), c.hash}
			}
			if _, err := s.Exec(ctx, c.set, args...); err != nil {
				t.Fatal(err)
			}
			db.ResetTextCache()
			problems, err := s.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), c.hash) || !strings.Contains(strings.Join(problems, "\n"), c.want) {
				t.Errorf("db check found %q; want %s on %s", problems, c.want, c.hash)
			}
			// A read fails rather than give a wrong text.
			db.ResetTextCache()
			if text, err := s.SnapshotText(ctx, c.hash); err == nil && snapstore.Hash(text) != c.hash {
				if c.name != "whole" {
					t.Errorf("reading the damaged snapshot gave a wrong text without an error")
				}
			}
			if _, err := s.Exec(ctx, `UPDATE snapshots SET data = ?, base_id = ? WHERE hash = ?`, saved, base, c.hash); err != nil {
				t.Fatal(err)
			}
			checkClean(t, s)
		})
	}
}

func TestRetentionRebasesDeltas(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ids, texts, want := history(t, s, 4, 40, 20<<10)
	first, _ := s.GetBackup(ctx, ids[0])
	dev := first.DeviceID
	// Versions 10 to 19 go from the middle of the chain: version 9 was a
	// delta on version 10 and must now rest on version 20.
	res, err := s.DeleteBackups(ctx, ids[10:20])
	if err != nil {
		t.Fatal(err)
	}
	if res.BackupsDeleted != 10 || res.SnapshotsPurged != 10 {
		t.Fatalf("deleted %+v; want 10 backups and their 10 snapshots", res)
	}
	for _, id := range ids[10:20] {
		delete(want, id)
	}
	var base9, id20 int64
	b9, _ := s.GetBackup(ctx, ids[9])
	b20, _ := s.GetBackup(ctx, ids[20])
	s.Reader().QueryRow(`SELECT base_id FROM snapshots WHERE hash = ?`, *b9.SnapshotHash).Scan(&base9)
	s.Reader().QueryRow(`SELECT id FROM snapshots WHERE hash = ?`, *b20.SnapshotHash).Scan(&id20)
	if base9 != id20 {
		t.Errorf("version 9 rests on snapshot %d; want version 20's, %d", base9, id20)
	}
	checkVersions(t, s, want)
	checkClean(t, s)

	// A device that went back to an old configuration: its newest
	// version names a snapshot that is a delta on versions retention
	// removes. That snapshot is written whole.
	id := storeVersion(t, s, dev, texts[3])
	want = map[string]string{id: texts[3]}
	r := retApply(t, s, db.Retention{KeepLast: 1})
	if r.BackupsDeleted != 30 {
		t.Errorf("retention deleted %d backups; want 30", r.BackupsDeleted)
	}
	checkVersions(t, s, want)
	checkClean(t, s)
	if n := countDeltas(t, s); n != 0 {
		t.Errorf("%d deltas left with one version stored", n)
	}
}

func TestDeletingABaseIsRefused(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	history(t, s, 5, 3, 8<<10)
	_, err := s.Exec(ctx, `DELETE FROM snapshots WHERE id = (SELECT base_id FROM snapshots WHERE base_id IS NOT NULL LIMIT 1)`)
	if err == nil || !strings.Contains(err.Error(), "base of a stored delta") {
		t.Fatalf("deleting a delta's base: %v; want it refused", err)
	}
}

func TestCachedTextOfADeletedSnapshotIsNotFound(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := retDevice(t, s, "r1")
	texts := configVersions(6, 2, 8<<10)
	first := storeVersion(t, s, dev, texts[0])
	storeVersion(t, s, dev, texts[1])
	b, _ := s.GetBackup(ctx, first)
	if _, err := s.SnapshotText(ctx, *b.SnapshotHash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteBackups(ctx, []string{first}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotText(ctx, *b.SnapshotHash); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("reading a purged snapshot: %v; want ErrNotFound", err)
	}
}

// deltasOf is how many of a device's n versions packing stores as
// deltas: all but the newest and a key frame after every MaxDeltaChain.
func deltasOf(n int) int { return n - 1 - (n-1)/(snapstore.MaxDeltaChain+1) }

// legacyHistory writes versions as a backupd before deltas did: each
// snapshot whole, nothing packed.
func legacyHistory(t *testing.T, s *db.Store, devices, versions, size int) map[string]string {
	t.Helper()
	want := map[string]string{}
	for d := range devices {
		dev := retDevice(t, s, fmt.Sprintf("r%d", d))
		for i, text := range configVersions(uint64(100+d), versions, size) {
			want[retVersion(t, s, dev, float64(versions-i), text)] = text
		}
	}
	if n := countDeltas(t, s); n != 0 {
		t.Fatalf("%d deltas before any packing", n)
	}
	return want
}

func TestRepackConvertsAnOldDatabase(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	want := legacyHistory(t, s, 3, 40, 16<<10)
	before, _ := s.Stats(ctx, time.Now())
	res, err := s.Repack(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Stats(ctx, time.Now())
	// 40 versions: the newest whole, 39 deltas, per device.
	if want := 3 * deltasOf(40); res.Devices != 3 || res.Packed != want || countDeltas(t, s) != want {
		t.Errorf("repack %+v, %d deltas; want 3 devices, %d packed", res, countDeltas(t, s), want)
	}
	if res.Bytes <= 0 || after.SnapshotStoredBytes != before.SnapshotStoredBytes-res.Bytes || after.SnapshotStoredBytes*4 > before.SnapshotStoredBytes {
		t.Errorf("stored bytes %d -> %d (repack says %d saved); want under a quarter", before.SnapshotStoredBytes, after.SnapshotStoredBytes, res.Bytes)
	}
	if after.SnapshotBytes != before.SnapshotBytes {
		t.Errorf("raw bytes changed %d -> %d", before.SnapshotBytes, after.SnapshotBytes)
	}
	checkVersions(t, s, want)
	checkClean(t, s)
	again, err := s.Repack(ctx, nil)
	if err != nil || again.Packed != 0 {
		t.Errorf("second repack %+v, %v; want nothing left to do", again, err)
	}
}

const repackChildEnv = "BACKUPD_TEST_REPACK_DATA"

// TestRepackChild is the process TestRepackSurvivesKill kills.
func TestRepackChild(t *testing.T) {
	dir := os.Getenv(repackChildEnv)
	if dir == "" {
		t.Skip("run by TestRepackSurvivesKill")
	}
	s, err := db.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Repack(context.Background(), nil)
	t.Fatalf("the repack was not killed: %v", err)
}

func TestRepackSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := legacyHistory(t, s, 8, 60, 40<<10)
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run", "^TestRepackChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), repackChildEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has packed some but not all.
	watch, err := sql.Open("sqlite", "file:"+filepath.Join(dir, db.FileName)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	deadline := time.Now().Add(60 * time.Second)
	var n int
	for n < 40 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		watch.QueryRow(`SELECT value FROM counters WHERE name = 'snapshot_deltas'`).Scan(&n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if n < 40 || n >= 8*deltasOf(60) {
		t.Fatalf("killed after %d deltas; want some but not all (child said %s)", n, out.String())
	}

	s, err = db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkVersions(t, s, want)
	checkClean(t, s)
	res, err := s.Repack(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := countDeltas(t, s); got != 8*deltasOf(60) {
		t.Errorf("after the second run %d deltas (it packed %d); want %d", got, res.Packed, 8*deltasOf(60))
	}
	checkVersions(t, s, want)
	checkClean(t, s)
}

func TestMigrateDownExpandsDeltas(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.SetEventPolicy(policy.Decide)
	_, _, want := history(t, s, 7, 10, 8<<10)
	if countDeltas(t, s) == 0 {
		t.Fatal("no deltas to expand")
	}
	s.Close()
	path := filepath.Join(dir, db.FileName)
	var log bytes.Buffer
	// Down to before 00017, the deltas' migration, past any later one
	// (at most 30 of them).
	for range 30 {
		if err := db.Migrate(ctx, path, engine.MigrateDown, &log); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(log.String(), "00017_") {
			break
		}
	}
	if !strings.Contains(log.String(), "expanded 9 delta snapshots") {
		t.Errorf("migrate down said %q", log.String())
	}
	// What is left is what the older schema reads: whole frames only.
	conn, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	rows, err := conn.Query(`SELECT hash, data FROM snapshots`)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rows.Next() {
		var h string
		var data []byte
		rows.Scan(&h, &data)
		text, err := dec.DecodeAll(data, nil)
		if err != nil || snapstore.Hash(string(text)) != h {
			t.Errorf("snapshot %s after migrate down: %v", h, err)
		}
		n++
	}
	rows.Close()
	conn.Close()
	if n != 10 {
		t.Errorf("%d snapshots after migrate down; want 10", n)
	}
	s, err = db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkVersions(t, s, want)
	checkClean(t, s)
}
