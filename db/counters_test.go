package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// counterRecounts are the counters that a count of the rows gives again
// (the _ever ones keep what deletions removed).
var counterRecounts = map[string]string{
	"backups_total":         `SELECT COUNT(*) FROM backups`,
	"backups_succeeded":     `SELECT COUNT(*) FROM backups WHERE success = 1`,
	"backups_failed":        `SELECT COUNT(*) FROM backups WHERE success = 0 AND finished_at IS NOT NULL`,
	"snapshots":             `SELECT COUNT(*) FROM snapshots`,
	"snapshot_bytes":        `SELECT COALESCE(SUM(size), 0) FROM snapshots`,
	"snapshot_stored_bytes": `SELECT COALESCE(SUM(stored_size), 0) FROM snapshots`,
	"snapshot_deltas":       `SELECT COUNT(*) FROM snapshots WHERE base_id IS NOT NULL`,
}

// checkCountersExact compares every recountable counter with the rows, in
// one read-only transaction (one snapshot of the store on PostgreSQL).
func checkCountersExact(t testing.TB, s *db.Store, when string) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Reader().BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: repeatableRead(s)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for name, query := range counterRecounts {
		var counter, counted int64
		if err := tx.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = ?`, name).Scan(&counter); err != nil {
			t.Fatalf("%s: counter %s: %v", when, name, err)
		}
		if err := tx.QueryRowContext(ctx, query).Scan(&counted); err != nil {
			t.Fatalf("%s: recount %s: %v", when, name, err)
		}
		if counter != counted {
			t.Errorf("%s: counter %s = %d, the rows count %d", when, name, counter, counted)
		}
	}
}

// repeatableRead is the isolation that gives one snapshot to a whole
// transaction: PostgreSQL's REPEATABLE READ; a SQLite read transaction
// has one anyway.
func repeatableRead(s *db.Store) sql.IsolationLevel {
	if s.Postgres() {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault
}

// pendingDeltas counts the counter deltas not folded yet (PostgreSQL).
func pendingDeltas(t *testing.T, s *db.Store) int64 {
	t.Helper()
	var n int64
	if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM counter_deltas`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// insertSnapshotRow stores a snapshot row as it is (whole, never a delta).
func insertSnapshotRow(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, hash string, size int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO snapshots (hash, size, stored_size, data, created_at) VALUES (?, ?, ?, ?, ?)`,
		hash, size, size, []byte("x"), db.Now())
	return err
}

// A node finishing a job (a new snapshot, then its backup row) and the
// leader's retention on another node (a backup deleted, then its snapshot)
// run at once. They used to update the same counter rows in opposite
// orders and deadlock (SQLSTATE 40P01); counting now only appends rows,
// so neither waits for the other.
func TestCountersFinishAndRetentionDoNotDeadlock(t *testing.T) {
	requirePostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loc := dbtest.Location(t)
	node, leader := openAt(t, loc), openAt(t, loc)

	d := retDevice(t, node, "r1")
	if err := insertSnapshotRow(ctx, node.Writer(), "old-text-hash", 100); err != nil {
		t.Fatal(err)
	}
	if err := insertSnapshotRow(ctx, node.Writer(), "kept-text-hash", 150); err != nil {
		t.Fatal(err)
	}
	// The old version goes; the newer one stays (retention keeps a
	// device's newest version); the running attempt finishes.
	version := func(hash string, age time.Duration) db.Backup {
		started := time.Now().Add(-age)
		finished := started.Add(time.Second)
		return db.Backup{ID: uuid.NewString(), DeviceID: d, StartedAt: started, FinishedAt: &finished,
			Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule}
	}
	oldHash := "old-text-hash"
	old := version(oldHash, 48*time.Hour)
	running := db.Backup{ID: uuid.NewString(), DeviceID: d, StartedAt: time.Now().Add(-time.Minute), Trigger: queue.TriggerSchedule}
	for _, b := range []db.Backup{old, version("kept-text-hash", 24*time.Hour), running} {
		if err := node.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var oldSnapshot int64
	if err := node.Reader().QueryRow(`SELECT id FROM snapshots WHERE hash = ?`, oldHash).Scan(&oldSnapshot); err != nil {
		t.Fatal(err)
	}

	finish, err := node.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer finish.Rollback()
	retention, err := leader.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer retention.Rollback()
	var finishPID int64
	if err := finish.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&finishPID); err != nil {
		t.Fatal(err)
	}

	// 1. The finishing job stores its new text.
	if err := insertSnapshotRow(ctx, finish, "new-text-hash", 200); err != nil {
		t.Fatalf("finish: insert the snapshot: %v", err)
	}
	// 2. Retention deletes the old backup.
	if _, err := retention.ExecContext(ctx, `DELETE FROM backups WHERE id = ?`, old.ID); err != nil {
		t.Fatalf("retention: delete the backup: %v", err)
	}
	// 3. The finishing job records its backup as succeeded (it waited
	// here for retention's counter rows before).
	updated := make(chan error, 1)
	go func() {
		_, err := finish.ExecContext(ctx, `UPDATE backups SET finished_at = ?, success = 1, snapshot_hash = ?, changed = 1
			WHERE id = ?`, db.Now(), "new-text-hash", running.ID)
		updated <- err
	}()
	// Barrier: step 3 is done, or it waits for a lock.
	var stepErr error
	stepDone := false
	for i := 0; i < 1000 && !stepDone; i++ {
		select {
		case stepErr = <-updated:
			stepDone = true
			continue
		default:
		}
		var waiting int
		if err := leader.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks WHERE pid = ? AND NOT granted`, finishPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// 4. Retention deletes the snapshot nothing names any more, and
	// commits.
	_, deleteErr := retention.ExecContext(ctx, `DELETE FROM snapshots WHERE id = ?`, oldSnapshot)
	if deleteErr == nil {
		deleteErr = retention.Commit()
	}
	if !stepDone {
		select {
		case stepErr = <-updated:
		case <-ctx.Done():
			t.Fatal("the finishing job's update never returned")
		}
	}
	if err := errors.Join(stepErr, deleteErr); err != nil {
		t.Fatalf("interleaved finish and retention: %v", err)
	}
	if err := finish.Commit(); err != nil {
		t.Fatalf("finish: commit: %v", err)
	}

	checkCountersExact(t, node, "after the interleaved transactions")
	if pendingDeltas(t, node) == 0 {
		t.Fatal("no counter deltas pending before a fold")
	}
	if _, err := leader.FoldCounters(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingDeltas(t, node); n != 0 {
		t.Fatalf("%d counter deltas left after a fold", n)
	}
	checkCountersExact(t, node, "after the fold")
}

func openAt(t *testing.T, loc string) *db.Store {
	t.Helper()
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Three nodes finish jobs while a fourth applies retention and folds the
// counters, over and over: the counters end equal to a count of the rows
// (and are at every fold).
func TestCountersExactUnderConcurrentFinishRetentionAndFold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loc := dbtest.Location(t)
	nodes := []*db.Store{openAt(t, loc), openAt(t, loc), openAt(t, loc)}
	leader := openAt(t, loc)
	const devices, rounds = 12, 6
	var ids []int64
	for i := range devices {
		ids = append(ids, retDevice(t, leader, fmt.Sprintf("c%d", i)))
	}
	// Retention's now lies past the grace, so orphaned snapshots go too.
	later := time.Now().Add(db.SnapshotGrace + time.Hour)

	var leaderErr error
	leaderDone := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(leaderDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := leader.ApplyRetention(ctx, db.Retention{KeepLast: 2}, later); err != nil {
				leaderErr = fmt.Errorf("retention: %w", err)
				return
			}
			if _, err := leader.FoldCounters(ctx); err != nil {
				leaderErr = err
				return
			}
			if i > 10000 {
				return
			}
		}
	}()

	for round := range rounds {
		reqs := make([]queue.JobRequest, len(ids))
		for i, id := range ids {
			reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now().Add(-time.Second)}
		}
		if _, err := leader.EnqueueJobs(ctx, reqs); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(nodes))
		for n, s := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("engine-%d", n)
				for range devices {
					claims, err := s.ClaimJobs(ctx, owner, 2, nil)
					if err != nil {
						errs[n] = err
						return
					}
					if len(claims) == 0 {
						return
					}
					for _, c := range claims {
						o := queue.Outcome{Success: true, Text: fmt.Sprintf("hostname d%d\n! round %d\n", c.DeviceID, round),
							Changed: true, FinishedAt: time.Now()}
						if (c.DeviceID+int64(round))%4 == 0 {
							o = queue.Outcome{Error: "connect: timeout", FinishedAt: time.Now()}
						}
						if err := s.FinishJob(ctx, c, o); err != nil {
							errs[n] = fmt.Errorf("finish job %d: %w", c.ID, err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			close(stop)
			<-leaderDone
			t.Fatal(err)
		}
		checkCountersExact(t, nodes[round%len(nodes)], fmt.Sprintf("round %d", round))
	}
	close(stop)
	<-leaderDone
	if leaderErr != nil {
		t.Fatal(leaderErr)
	}
	var good, ended int64
	if err := leader.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE success = 1`).Scan(&good); err != nil {
		t.Fatal(err)
	}
	if err := leader.Reader().QueryRow(`SELECT COUNT(*) FROM jobs WHERE state IN ('succeeded', 'failed')`).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	if ended != devices*rounds {
		t.Fatalf("%d jobs ended, want %d", ended, devices*rounds)
	}
	if good == 0 {
		t.Fatal("no good backups were recorded")
	}
	if _, err := leader.FoldCounters(ctx); err != nil {
		t.Fatal(err)
	}
	checkCountersExact(t, leader, "after the last fold")
	if leader.Postgres() {
		if n := pendingDeltas(t, leader); n != 0 {
			t.Fatalf("%d counter deltas left after the last fold", n)
		}
	}
}

// A fold moves exactly the deltas committed before it: one added by a
// transaction still open stays for the next, and deltas added while folds
// run are neither lost nor counted twice.
func TestCounterFoldKeepsConcurrentDeltas(t *testing.T) {
	requirePostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loc := dbtest.Location(t)
	a, b := openAt(t, loc), openAt(t, loc)

	// A transaction open across a fold.
	tx, err := b.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := insertSnapshotRow(ctx, tx, "open-across-a-fold", 7); err != nil {
		t.Fatal(err)
	}
	if n, err := a.FoldCounters(ctx); err != nil || n != 0 {
		t.Fatalf("fold with only an open transaction's deltas = %d, %v; want 0, nil", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	checkCountersExact(t, a, "after the commit")
	// snapshots +1, snapshot_bytes +7, snapshot_stored_bytes +7.
	if n, err := a.FoldCounters(ctx); err != nil || n != 3 {
		t.Fatalf("fold after the commit = %d, %v; want 3, nil", n, err)
	}
	checkCountersExact(t, a, "after the second fold")

	// Writers on three handles while a fourth folds over and over.
	writers := []*db.Store{b, openAt(t, loc), openAt(t, loc)}
	const perWriter = 150
	var folded int64
	stop := make(chan struct{})
	foldDone := make(chan error, 1)
	go func() {
		for i := 0; i < 100000; i++ {
			select {
			case <-stop:
				foldDone <- nil
				return
			default:
			}
			n, err := a.FoldCounters(ctx)
			if err != nil {
				foldDone <- err
				return
			}
			folded += n
		}
		foldDone <- errors.New("the fold loop ran out of rounds")
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(writers))
	for w, s := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				// Some in transactions of several rows, some alone.
				tx, err := s.Writer().BeginTx(ctx, nil)
				if err != nil {
					errs[w] = err
					return
				}
				for j := range 1 + i%3 {
					if err := insertSnapshotRow(ctx, tx, fmt.Sprintf("w%d-%d-%d", w, i, j), int64(1+i+j)); err != nil {
						_ = tx.Rollback()
						errs[w] = err
						return
					}
				}
				if err := tx.Commit(); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := errors.Join(append(errs, <-foldDone)...); err != nil {
		t.Fatal(err)
	}
	checkCountersExact(t, a, "after the concurrent writers")
	// Every row the writers added made three deltas, each folded once or
	// still pending.
	var rows int64
	if err := a.Reader().QueryRow(`SELECT COUNT(*) FROM snapshots WHERE hash LIKE 'w%'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if pending := pendingDeltas(t, a); folded+pending != 3*rows {
		t.Fatalf("folded %d + pending %d deltas, want 3 × %d rows", folded, pending, rows)
	}
	if folded == 0 {
		t.Fatal("no fold moved anything while the writers ran")
	}
}

// schemaVersion is the newest migration applied to the store.
func schemaVersion(t *testing.T, s *db.Store) int {
	t.Helper()
	var v int
	if err := s.Reader().QueryRow(`SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Rolling 00021 back leaves counters a table holding the folded values,
// which the old trigger function keeps again; migrating up again brings
// the deltas back.
func TestCounterDeltasMigrationDownAndUp(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	loc := dbtest.Location(t)
	s := openAt(t, loc)
	if err := insertSnapshotRow(ctx, s.Writer(), "before-down", 11); err != nil {
		t.Fatal(err)
	}
	if pendingDeltas(t, s) == 0 {
		t.Fatal("no deltas pending before the roll-back")
	}
	// Down one version at a time until 00021 is rolled back (the newer
	// ones first).
	for v := int64(schemaVersion(t, s)); v >= 21; v = int64(schemaVersion(t, s)) {
		if err := engine.MigratePostgres(ctx, loc, engine.MigrateDown, nil); err != nil {
			t.Fatal(err)
		}
		if now := int64(schemaVersion(t, s)); now >= v {
			t.Fatalf("rolling back from version %d left version %d", v, now)
		}
	}
	kind := func() string {
		var k string
		if err := s.Reader().QueryRow(`SELECT table_type FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_name = 'counters'`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	if k := kind(); k != "BASE TABLE" {
		t.Fatalf("counters is a %s after the roll-back, want a table", k)
	}
	checkCountersExact(t, s, "after the roll-back")
	if err := insertSnapshotRow(ctx, s.Writer(), "after-down", 13); err != nil {
		t.Fatal(err)
	}
	checkCountersExact(t, s, "a row added after the roll-back")
	if err := engine.MigratePostgres(ctx, loc, engine.MigrateUp, nil); err != nil {
		t.Fatal(err)
	}
	if k := kind(); k != "VIEW" {
		t.Fatalf("counters is a %s after migrating up again, want a view", k)
	}
	if err := insertSnapshotRow(ctx, s.Writer(), "after-up", 17); err != nil {
		t.Fatal(err)
	}
	checkCountersExact(t, s, "a row added after migrating up again")
	if n, err := s.FoldCounters(ctx); err != nil || n != 3 {
		t.Fatalf("fold after migrating up again = %d, %v; want 3, nil", n, err)
	}
	checkCountersExact(t, s, "after the fold")
}

// BenchmarkFinishJobsNodes measures how many jobs a second 1 and 3 nodes
// (store handles, each with its own writer connection) finish together on
// one PostgreSQL database, with the counters kept as deltas (00021) and,
// for comparison, as before it: bd_count updating the shared total rows,
// which every finishing transaction holds until it commits.
//
//	BACKUPD_TEST_POSTGRES=postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable \
//	go test ./db -run '^$' -bench FinishJobsNodes -benchtime 3x -count 3
func BenchmarkFinishJobsNodes(b *testing.B) {
	if !dbtest.Postgres() {
		b.Skip("several nodes share a PostgreSQL store only; set " + dbtest.Env)
	}
	const devices = 300
	for _, counting := range []string{"deltas", "rows"} {
		for _, nodes := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s-%d", counting, nodes), func(b *testing.B) {
				ctx := context.Background()
				loc := dbtest.Location(b)
				stores := make([]*db.Store, nodes)
				for i := range stores {
					s, err := dbtest.OpenAt(b, loc)
					if err != nil {
						b.Fatal(err)
					}
					stores[i] = s
				}
				if counting == "rows" {
					if _, err := stores[0].Exec(ctx, `CREATE OR REPLACE FUNCTION bd_count(counter text, delta bigint) RETURNS void
						LANGUAGE sql AS $$ UPDATE counter_totals SET value = value + delta WHERE name = counter AND delta <> 0 $$`); err != nil {
						b.Fatal(err)
					}
				}
				var ids []int64
				for i := range devices {
					d, err := stores[0].CreateDevice(ctx, db.Device{Name: fmt.Sprintf("f%d", i), Host: "192.0.2.1", Port: 22,
						Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, d.ID)
				}
				var finished int
				var elapsed time.Duration
				b.ResetTimer()
				for round := range b.N {
					b.StopTimer()
					reqs := make([]queue.JobRequest, len(ids))
					for i, id := range ids {
						reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now().Add(-time.Second)}
					}
					if _, err := stores[0].EnqueueJobs(ctx, reqs); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					var wg sync.WaitGroup
					errs := make([]error, nodes)
					for n, s := range stores {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range devices {
								claims, err := s.ClaimJobs(ctx, fmt.Sprintf("engine-%d", n), 4, nil)
								if err != nil || len(claims) == 0 {
									errs[n] = err
									return
								}
								for _, c := range claims {
									if err := s.FinishJob(ctx, c, queue.Outcome{Success: true, Changed: true, FinishedAt: time.Now(),
										Text: fmt.Sprintf("hostname d%d\n! round %d\n", c.DeviceID, round)}); err != nil {
										errs[n] = err
										return
									}
								}
							}
						}()
					}
					wg.Wait()
					elapsed += time.Since(start)
					finished += devices
					if err := errors.Join(errs...); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(finished)/elapsed.Seconds(), "jobs/s")
				checkCountersExact(b, stores[0], "after the benchmark")
			})
		}
	}
}
