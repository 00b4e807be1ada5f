package db_test

// Storage benchmarks: what a year of nightly versions costs on disk, next
// to git holding the same versions, and how fast they are written and
// read back. Versions go through the write path the engine uses
// (EnqueueJobs, ClaimJobs, FinishJob) into a real SQLite file.
//
//	go test ./db -run '^$' -bench StorageYear -benchtime 1x
//	BACKUPD_BENCH_STORAGE_DEVICES=1000 go test ./db -run '^$' -bench StorageFleet -benchtime 1x -timeout 2h
//
// BACKUPD_BENCH_STORAGE_DEVICES (default 10) sets the fleet's size,
// BACKUPD_BENCH_STORAGE_VERSIONS (default 365) the versions per device.

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/notify/policy"
	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
)

const (
	benchConfigSize = 60 << 10
	benchYear       = 365
)

// storageRepack, when set (by a file of the build whose store can
// convert a database), runs on the written database before it is
// measured.
var storageRepack func(context.Context, *db.Store) error

// storageResetCache, when set (by a build whose store caches decoded
// texts), empties that cache: the cold reads and diffs call it first.
var storageResetCache func()

// benchDevices inserts n devices and returns their ids.
func benchDevices(tb testing.TB, s *db.Store, n int) []int64 {
	tb.Helper()
	ctx := context.Background()
	ids := make([]int64, 0, n)
	for i := range n {
		id, err := s.InsertID(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
			VALUES (?, ?, 22, 'cisco_ios', 'ssh', ?, ?)`, fmt.Sprintf("sw%05d", i+1), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), db.Now(), db.Now())
		if err != nil {
			tb.Fatalf("insert device: %v", err)
		}
		ids = append(ids, id)
	}
	return ids
}

// nightWriter backs up a set of devices once through the job queue.
type nightWriter struct {
	s         *db.Store
	lastClaim int64 // ms
}

// night queues, claims and finishes one job per device, each with
// text(i) for devices[i]; it returns the backup ids in device order.
func (w *nightWriter) night(ctx context.Context, devices []int64, first bool, text func(i int) string) ([]string, error) {
	reqs := make([]queue.JobRequest, len(devices))
	at := time.Now().Add(-time.Second)
	index := make(map[int64]int, len(devices))
	for i, d := range devices {
		reqs[i] = queue.JobRequest{DeviceID: d, Trigger: queue.TriggerSchedule, NotBefore: at}
		index[d] = i
	}
	jobs, err := w.s.EnqueueJobs(ctx, reqs)
	if err != nil {
		return nil, err
	}
	// Backups are ordered by their start, stored to the millisecond: a
	// device's versions must not share one.
	for deadline := time.Now().Add(time.Second); time.Now().UnixMilli() <= w.lastClaim && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	claims, err := w.s.ClaimJobs(ctx, "storage-bench", len(jobs), jobs)
	if err != nil {
		return nil, err
	}
	w.lastClaim = time.Now().UnixMilli()
	if len(claims) != len(devices) {
		return nil, fmt.Errorf("claimed %d jobs of %d", len(claims), len(devices))
	}
	ids := make([]string, len(devices))
	for _, c := range claims {
		i := index[c.DeviceID]
		ids[i] = c.BackupID
		o := queue.Outcome{Success: true, Text: text(i), First: first, Changed: !first, FinishedAt: time.Now()}
		if err := w.s.FinishJob(ctx, c, o); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// vacuumedSize runs the repack hook (when there is one), VACUUMs the
// database in place and returns the file's size.
func vacuumedSize(tb testing.TB, s *db.Store, repack bool) int64 {
	tb.Helper()
	ctx := context.Background()
	if repack && storageRepack != nil {
		if err := storageRepack(ctx, s); err != nil {
			tb.Fatalf("repack: %v", err)
		}
	}
	for _, q := range []string{`VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := s.Exec(ctx, q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.Path() + suffix); err == nil {
			size += fi.Size()
		}
	}
	return size
}

// largestTables lists the tables and indexes that take the most pages,
// from SQLite's dbstat (empty when the build lacks it).
func largestTables(s *db.Store, n int) string {
	rows, err := s.Reader().Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT ?`, n)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var name string
		var size int64
		if rows.Scan(&name, &size) == nil {
			parts = append(parts, fmt.Sprintf("%s %d", name, size))
		}
	}
	return strings.Join(parts, ", ")
}

// emptyDBSize is the size of a database with the schema and nothing else.
func emptyDBSize(tb testing.TB) int64 {
	s, err := db.Open(context.Background(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	return vacuumedSize(tb, s, false)
}

// percentile of sorted durations, p in [0, 1].
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// readLatency reads hash n times and returns p50 and p99. cold empties
// the store's cache of decoded texts (in a build that has one) before
// each read, so every read decodes what is stored.
func readLatency(tb testing.TB, s *db.Store, hash string, n int, cold bool) (p50, p99 time.Duration) {
	tb.Helper()
	ctx := context.Background()
	times := make([]time.Duration, n)
	for i := range times {
		if cold && storageResetCache != nil {
			storageResetCache()
		}
		start := time.Now()
		text, err := s.SnapshotText(ctx, hash)
		times[i] = time.Since(start)
		if err != nil || snapstore.Hash(text) != hash {
			tb.Fatalf("SnapshotText(%s): %v (or the text does not match its hash)", hash, err)
		}
	}
	slices.Sort(times)
	return percentile(times, 0.50), percentile(times, 0.99)
}

// deepestChain returns the snapshot whose reading walks the most deltas,
// and how many; ok is false when the store keeps no deltas (no base_id).
func deepestChain(s *db.Store) (hash string, depth int, ok bool) {
	err := s.Reader().QueryRow(`WITH RECURSIVE chain(hash, base, depth) AS (
			SELECT hash, base_id, 0 FROM snapshots
			UNION ALL
			SELECT chain.hash, s.base_id, chain.depth + 1 FROM chain JOIN snapshots s ON s.id = chain.base
			WHERE chain.depth < 10000)
		SELECT hash, MAX(depth) FROM chain GROUP BY hash ORDER BY 2 DESC, hash LIMIT 1`).Scan(&hash, &depth)
	return hash, depth, err == nil
}

// gitYear commits each text as one commit of one file in a new
// repository, runs git gc --aggressive and returns the size of
// .git/objects and what its blobs take of it.
func gitYear(tb testing.TB, texts []string) (total, blobs int64) {
	tb.Helper()
	dir := tb.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.net",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.net", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "-q", "-b", "main")
	file := filepath.Join(dir, "sw00001.cfg")
	for i, text := range texts {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
		run("add", "sw00001.cfg")
		run("commit", "-q", "-m", fmt.Sprintf("sw00001: version %d", i+1))
	}
	run("gc", "-q", "--aggressive", "--prune=now")
	return dirSize(tb, filepath.Join(dir, ".git", "objects")), gitBlobBytes(tb, dir)
}

// gitBlobBytes sums what the blobs (the configuration texts, without the
// commits and trees) take in the repository's packs, from git verify-pack.
func gitBlobBytes(tb testing.TB, dir string) int64 {
	tb.Helper()
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	var n int64
	for _, f := range idx {
		out, err := exec.Command("git", "verify-pack", "-v", f).Output()
		if err != nil {
			tb.Fatalf("git verify-pack: %v", err)
		}
		// sha type size size-in-pack offset [depth base]
		for _, line := range strings.Split(string(out), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 5 && fields[1] == "blob" {
				v, err := strconv.ParseInt(fields[3], 10, 64)
				if err == nil {
					n += v
				}
			}
		}
	}
	return n
}

// pruneJobsToNights deletes the finished jobs but the newest nights (one
// job a night), as serve's daily pruning leaves a year-old database.
func pruneJobsToNights(tb testing.TB, s *db.Store, nights int) {
	tb.Helper()
	var created string
	if err := s.Reader().QueryRow(`SELECT created_at FROM jobs ORDER BY created_at DESC LIMIT 1 OFFSET ?`, nights-1).Scan(&created); err != nil {
		tb.Fatalf("the %dth newest job: %v", nights, err)
	}
	cutoff, err := time.Parse(db.BackupTimeFormat, created)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.PruneJobs(context.Background(), cutoff); err != nil {
		tb.Fatal(err)
	}
}

// tableBytes sums the pages dbstat counts for a table and all its
// indexes.
func tableBytes(s *db.Store, table string) int64 {
	var n sql.NullInt64
	_ = s.Reader().QueryRow(`SELECT SUM(d.pgsize) FROM dbstat d JOIN sqlite_schema m ON m.name = d.name WHERE m.tbl_name = ?`, table).Scan(&n)
	return n.Int64
}

func dirSize(tb testing.TB, dir string) int64 {
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			size += fi.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return size
}

// BenchmarkStorageYear writes a year of nightly versions of one 60 KB
// configuration and reports the database's size after VACUUM next to
// git gc --aggressive of the same versions, the content read latency of
// the newest and the oldest version and the time of a diff a year wide.
// The timed part (ns/op) is the writing of the year.
func BenchmarkStorageYear(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed: this benchmark compares backupd's storage with git gc --aggressive of the same versions")
	}
	ctx := context.Background()
	empty := emptyDBSize(b)
	for range b.N {
		b.StopTimer()
		s, err := db.Open(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		s.SetEventPolicy(policy.Decide)
		dev := benchDevices(b, s, 1)
		g := newConfigGen(1, benchConfigSize)
		texts := make([]string, 0, benchYear) // one device's year: 22 MB
		ids := make([]string, 0, benchYear)
		w := &nightWriter{s: s}
		b.StartTimer()
		start := time.Now()
		for v := range benchYear {
			if v > 0 {
				g.Next()
			}
			text := g.Text()
			texts = append(texts, text)
			bid, err := w.night(ctx, dev, v == 0, func(int) string { return text })
			if err != nil {
				b.Fatalf("version %d: %v", v+1, err)
			}
			ids = append(ids, bid[0])
		}
		write := time.Since(start)
		b.StopTimer()
		raw := 0
		for _, t := range texts {
			raw += len(t)
		}
		// serve keeps 30 days of finished jobs (backup.JobHistoryDays);
		// the year was written in seconds, so the 30 newest nights' jobs
		// are what it would have kept.
		pruneJobsToNights(b, s, backup.JobHistoryDays)
		unpacked := vacuumedSize(b, s, false)
		size := unpacked
		if storageRepack != nil {
			size = vacuumedSize(b, s, true)
		}
		// Every version reads back byte for byte.
		for i, id := range ids {
			bk, err := s.GetBackup(ctx, id)
			if err != nil || bk.SnapshotHash == nil {
				b.Fatalf("backup of version %d: %v", i+1, err)
			}
			text, err := s.SnapshotText(ctx, *bk.SnapshotHash)
			if err != nil || text != texts[i] {
				b.Fatalf("version %d does not read back as written (%v)", i+1, err)
			}
		}
		gitBytes, gitBlobs := gitYear(b, texts)
		tables := largestTables(s, 8)
		// What holds the configuration texts (git's blobs), and with the
		// version records beside them (git's commits and trees).
		configBytes := tableBytes(s, "snapshots")
		versionBytes := tableBytes(s, "backups")
		newest, oldest := snapstore.Hash(texts[len(texts)-1]), snapstore.Hash(texts[0])
		var cold, warm [3][2]time.Duration // newest, oldest, deepest chain; p50, p99
		cold[0][0], cold[0][1] = readLatency(b, s, newest, 200, true)
		cold[1][0], cold[1][1] = readLatency(b, s, oldest, 200, true)
		warm[0][0], warm[0][1] = readLatency(b, s, newest, 200, false)
		warm[1][0], warm[1][1] = readLatency(b, s, oldest, 200, false)
		deepest, depth, deltas := deepestChain(s)
		if deltas {
			cold[2][0], cold[2][1] = readLatency(b, s, deepest, 200, true)
			warm[2][0], warm[2][1] = readLatency(b, s, deepest, 200, false)
		}
		diffs := make([]time.Duration, 20)
		for i := range diffs {
			if storageResetCache != nil {
				storageResetCache()
			}
			start := time.Now()
			d, err := backup.Diff(ctx, s, ids[0], ids[len(ids)-1], nil)
			diffs[i] = time.Since(start)
			if err != nil || !d.Changed {
				b.Fatalf("diff of versions 1 and %d: %v (changed %v)", len(ids), err, d.Changed)
			}
		}
		slices.Sort(diffs)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(float64(size), "backupd-bytes")
		b.ReportMetric(float64(size-empty), "history-bytes")
		b.ReportMetric(float64(gitBytes), "git-bytes")
		b.ReportMetric(float64(size)/float64(gitBytes), "backupd/git")
		b.ReportMetric(float64(size-empty)/float64(gitBytes), "history/git")
		b.ReportMetric(float64(raw)/float64(size), "raw/backupd")
		if configBytes > 0 {
			b.ReportMetric(float64(configBytes), "configs-bytes")
			b.ReportMetric(float64(gitBlobs), "git-blob-bytes")
			b.ReportMetric(float64(configBytes)/float64(gitBlobs), "configs/git-blobs")
			b.ReportMetric(float64(configBytes+versionBytes)/float64(gitBytes), "configs+versions/git")
		}
		b.ReportMetric(float64(benchYear)/write.Seconds(), "versions/s")
		b.ReportMetric(ms(cold[0][0]), "newest-p50-ms")
		b.ReportMetric(ms(cold[0][1]), "newest-p99-ms")
		b.ReportMetric(ms(cold[1][0]), "oldest-p50-ms")
		b.ReportMetric(ms(cold[1][1]), "oldest-p99-ms")
		if deltas {
			b.ReportMetric(float64(depth), "deepest-chain")
			b.ReportMetric(ms(cold[2][0]), "deepest-p50-ms")
			b.ReportMetric(ms(cold[2][1]), "deepest-p99-ms")
		}
		b.ReportMetric(ms(percentile(diffs, 0.5)), "diff-year-ms")
		b.Logf("%d versions of a %d-line configuration, %d bytes of text; schema alone %d bytes", benchYear, g.Lines(), raw, empty)
		b.Logf("backupd %d bytes after VACUUM (%d before repack), git gc --aggressive %d bytes: backupd/git %.2f, raw/backupd %.1fx",
			size, unpacked, gitBytes, float64(size)/float64(gitBytes), float64(raw)/float64(size))
		if tables != "" {
			b.Logf("largest tables and indexes (bytes): %s", tables)
		}
		if configBytes > 0 {
			b.Logf("configuration texts: backupd %d bytes (snapshots and their indexes), git %d bytes of blobs in its pack: %.2f; with the version records (backups and its indexes, %d bytes) against all of git: %.2f",
				configBytes, gitBlobs, float64(configBytes)/float64(gitBlobs), versionBytes, float64(configBytes+versionBytes)/float64(gitBytes))
		}
		b.Logf("written in %v (%.0f versions/s); diff of versions 1 and %d: median %v", write.Round(time.Millisecond), float64(benchYear)/write.Seconds(), len(ids), percentile(diffs, 0.5))
		for i, name := range []string{"newest", "oldest", fmt.Sprintf("deepest chain (%d deltas)", depth)} {
			if i < 2 || deltas {
				b.Logf("content read %s: p50 %v p99 %v (cache emptied before each read), p50 %v p99 %v (read again)", name, cold[i][0], cold[i][1], warm[i][0], warm[i][1])
			}
		}
	}
}

func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// procStatusKB reads a "Name: N kB" line of /proc/self/status; 0 when
// there is none (not Linux).
func procStatusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// fleetBlock is how many devices are backed up night by night together:
// the generator holds one current version per device of a block, so the
// memory measured is the store's, not 1,000 configurations' worth.
const fleetBlock = 50

// BenchmarkStorageFleet writes BACKUPD_BENCH_STORAGE_DEVICES devices ×
// BACKUPD_BENCH_STORAGE_VERSIONS nightly versions, each device its own
// evolving configuration, through the job queue and reports the write
// throughput, the database's size after VACUUM and the peak resident set.
// Devices go in blocks of 50, night after night within a block.
func BenchmarkStorageFleet(b *testing.B) {
	devices := envInt(b, "BACKUPD_BENCH_STORAGE_DEVICES", 10)
	versions := envInt(b, "BACKUPD_BENCH_STORAGE_VERSIONS", benchYear)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		// Reset the peak resident set to now (Linux): the peak reported
		// is this run's.
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		s, err := db.Open(ctx, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		s.SetEventPolicy(policy.Decide)
		ids := benchDevices(b, s, devices)
		w := &nightWriter{s: s}
		var raw int64
		b.StartTimer()
		start := time.Now()
		for lo := 0; lo < devices; lo += fleetBlock {
			block := ids[lo:min(lo+fleetBlock, devices)]
			gens := make([]*configGen, len(block))
			for i := range gens {
				gens[i] = newConfigGen(uint64(lo+i+1), benchConfigSize)
			}
			for v := range versions {
				_, err := w.night(ctx, block, v == 0, func(i int) string {
					if v > 0 {
						gens[i].Next()
					}
					t := gens[i].Text()
					raw += int64(len(t))
					return t
				})
				if err != nil {
					b.Fatalf("devices %d-%d, version %d: %v", lo+1, lo+len(block), v+1, err)
				}
			}
			if lo/fleetBlock%4 == 3 {
				b.Logf("%d devices written in %v", lo+len(block), time.Since(start).Round(time.Second))
			}
		}
		write := time.Since(start)
		b.StopTimer()
		peakKB := procStatusKB("VmHWM:")
		unpacked := vacuumedSize(b, s, false)
		size := unpacked
		if storageRepack != nil {
			size = vacuumedSize(b, s, true)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		total := devices * versions
		b.ReportMetric(float64(total)/write.Seconds(), "versions/s")
		b.ReportMetric(float64(size), "db-bytes")
		b.ReportMetric(float64(raw)/float64(size), "raw/backupd")
		b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MB")
		b.Logf("%d devices × %d versions = %d versions, %d bytes of text, written in %v (%.0f versions/s); database %d bytes after VACUUM (%d before repack), %.1fx smaller than the text; peak RSS %d MB",
			devices, versions, total, raw, write.Round(time.Millisecond), float64(total)/write.Seconds(), size, unpacked, float64(raw)/float64(size), peakKB/1024)
	}
}
