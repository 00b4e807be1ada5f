package queue_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// The queue is tested on a store's database (its devices, zones and
// collectors are the store's to create), through a queue of the test's
// own on a second engine, with hooks the test writes.

// ownQueue is a queue on s's database with hooks h.
func ownQueue(t *testing.T, s *db.Store, h queue.Hooks) *queue.Queue {
	t.Helper()
	var e *engine.DB
	var err error
	if s.Postgres() {
		e, err = engine.OpenPostgres(context.Background(), s.Location())
	} else {
		e, err = engine.OpenSQLite(s.Path())
	}
	if err != nil {
		t.Fatal(err)
	}
	q := queue.New(e, h)
	t.Cleanup(func() {
		q.Close()
		e.Close()
	})
	return q
}

func device(t *testing.T, s *db.Store, name string, zone int64) int64 {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, ZoneID: zone})
	if err != nil {
		t.Fatalf("create device %s: %v", name, err)
	}
	return d.ID
}

func enqueueNow(t *testing.T, q *queue.Queue, trigger string, ids ...int64) []int64 {
	t.Helper()
	reqs := make([]queue.JobRequest, len(ids))
	for i, id := range ids {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: trigger, NotBefore: time.Now().Add(-time.Second)}
	}
	jobs, err := q.EnqueueJobs(context.Background(), reqs)
	if err != nil {
		t.Fatalf("EnqueueJobs: %v", err)
	}
	return jobs
}

// The queue's frequent statements are prepared: none failed to compile
// when it was made.
func TestStatementsArePrepared(t *testing.T) {
	q := ownQueue(t, dbtest.Open(t), queue.Hooks{})
	prepared, of, failed := q.Statements()
	for query, err := range failed {
		t.Errorf("not prepared: %v\n%s", err, query)
	}
	if prepared != of || of == 0 {
		t.Fatalf("%d of %d statements prepared", prepared, of)
	}
}

// ended is one call of Hooks.Ended.
type ended struct {
	device  int64
	backup  string
	success bool
	at      time.Time
	trigger string
}

// What Hooks.Ended writes commits with the attempt, and its error rolls
// the whole attempt back: the job stays running, its backups row
// unfinished, the text unstored. Hooks.Stored hears of a new latest
// version after the commit, never of a device's first.
func TestFinishJobWritesTheHookInItsTransaction(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	var calls []ended
	var stored []string
	fail := errors.New("the store refused")
	var refuse bool
	q := ownQueue(t, s, queue.Hooks{
		Ended: func(ctx context.Context, tx *sql.Tx, c queue.Claim, o queue.Outcome, at time.Time, trigger string) error {
			if _, err := tx.ExecContext(ctx, `UPDATE devices SET last_backup_success = ? WHERE id = ?`, o.Success, c.DeviceID); err != nil {
				return err
			}
			if refuse {
				return fail
			}
			calls = append(calls, ended{c.DeviceID, c.BackupID, o.Success, at, trigger})
			return nil
		},
		Stored: func(ctx context.Context, deviceID int64, hash string, text []byte) {
			stored = append(stored, hash)
		},
	})
	dev := device(t, s, "r1", db.LocalZone)
	peek := dbtest.Peek(t, s)
	run := func(text string, first bool) (queue.Claim, error) {
		t.Helper()
		enqueueNow(t, q, queue.TriggerManual, dev)
		claims, err := q.ClaimJobs(ctx, "test-owner", 1, nil)
		if err != nil || len(claims) != 1 {
			t.Fatalf("ClaimJobs = %+v, %v", claims, err)
		}
		return claims[0], q.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Text: text, First: first,
			Changed: !first, FinishedAt: time.Now()})
	}

	refuse = true
	c, err := run("hostname r1\n", true)
	if !errors.Is(err, fail) {
		t.Fatalf("FinishJob with the hook failing = %v, want its error", err)
	}
	var state string
	var finished sql.NullString
	var snapshots, success int
	if err := peek.QueryRow(`SELECT state FROM jobs WHERE id = ?`, c.ID).Scan(&state); err != nil || state != queue.JobRunning {
		t.Fatalf("job after a refused end = %q, %v; want still running", state, err)
	}
	if err := peek.QueryRow(`SELECT finished_at FROM backups WHERE id = ?`, c.BackupID).Scan(&finished); err != nil || finished.Valid {
		t.Fatalf("attempt after a refused end finished at %v, %v; want unfinished", finished, err)
	}
	if err := peek.QueryRow(`SELECT COUNT(*) FROM snapshots`).Scan(&snapshots); err != nil || snapshots != 0 {
		t.Fatalf("%d snapshots after a refused end (%v); want none", snapshots, err)
	}
	if err := peek.QueryRow(`SELECT COALESCE(last_backup_success, 0) FROM devices WHERE id = ?`, dev).Scan(&success); err != nil || success != 0 {
		t.Fatalf("the hook's write survived its own error: %d, %v", success, err)
	}
	if res, err := q.InterruptJob(ctx, c, queue.DefaultMaxInterruptions); err != nil || res.Attempts != 1 {
		t.Fatalf("InterruptJob = %+v, %v", res, err)
	}

	refuse = false
	c, err = run("hostname r1\n", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != (ended{dev, c.BackupID, true, calls[0].at, queue.TriggerManual}) || calls[0].at.IsZero() {
		t.Fatalf("hook calls = %+v; want one for the attempt", calls)
	}
	if err := peek.QueryRow(`SELECT last_backup_success FROM devices WHERE id = ?`, dev).Scan(&success); err != nil || success != 1 {
		t.Fatalf("the hook's write = %d, %v; want committed with the attempt", success, err)
	}
	if len(stored) != 0 {
		t.Fatalf("Stored told of a device's first version: %v", stored)
	}
	c, err = run("hostname r1-new\n", false)
	if err != nil {
		t.Fatal(err)
	}
	// The attempt's own row: two attempts can start in the same
	// millisecond, so "the newest" would be a guess.
	var latest string
	if err := peek.QueryRow(`SELECT snapshot_hash FROM backups WHERE id = ?`, c.BackupID).Scan(&latest); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, []string{latest}) {
		t.Fatalf("Stored = %v; want the new latest version %s", stored, latest)
	}
}

// ActiveJobs names the queued and the running job of each device asked
// about, and nothing for a device whose jobs have ended or that was not
// asked about; it reads the index of active jobs, not the table.
func TestActiveJobsNamesQueuedAndRunning(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	q := ownQueue(t, s, queue.Hooks{})
	queued, running, ended, other := device(t, s, "queued", db.LocalZone), device(t, s, "running", db.LocalZone),
		device(t, s, "ended", db.LocalZone), device(t, s, "other", db.LocalZone)

	enqueueNow(t, q, queue.TriggerManual, ended)
	claims, err := q.ClaimJobs(ctx, "test-owner", 1, nil)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimJobs = %+v, %v", claims, err)
	}
	if err := q.FinishJob(ctx, claims[0], queue.Outcome{Success: true, Text: "hostname ended\n", First: true, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	runningJob := enqueueNow(t, q, queue.TriggerManual, running)[0]
	if claims, err = q.ClaimJobs(ctx, "test-owner", 1, nil); err != nil || len(claims) != 1 || claims[0].ID != runningJob {
		t.Fatalf("ClaimJobs = %+v, %v", claims, err)
	}
	queuedJob := enqueueNow(t, q, queue.TriggerManual, queued)[0]
	enqueueNow(t, q, queue.TriggerManual, other)

	got, err := q.ActiveJobs(ctx, []int64{queued, running, ended, 999999})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]queue.ActiveJob{queued: {ID: queuedJob, State: queue.JobQueued, Kind: queue.KindBackup},
		running: {ID: runningJob, State: queue.JobRunning, Kind: queue.KindBackup}}
	if len(got) != len(want) || got[queued] != want[queued] || got[running] != want[running] {
		t.Errorf("ActiveJobs = %+v, want %+v", got, want)
	}
	if got, err := q.ActiveJobs(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("ActiveJobs(nil) = %+v, %v", got, err)
	}

	ids := `[1,2,3]`
	if s.Postgres() {
		if p := dbtest.ExplainPG(t, s, queue.ActiveJobsQuery(true), ids); !p.Uses("jobs_active_device") || slices.Contains(p.SeqScans, "jobs") {
			t.Errorf("the active jobs are not read through jobs_active_device:\n%s", p.Text)
		}
		return
	}
	plan := dbtest.PlanSQLite(t, s, queue.ActiveJobsQuery(false), ids)
	if !slices.ContainsFunc(plan, func(d string) bool { return strings.Contains(d, "jobs_active_device") }) {
		t.Errorf("the active jobs are not read through jobs_active_device: %q", plan)
	}
}
