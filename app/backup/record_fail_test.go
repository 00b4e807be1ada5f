package backup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// refuseFirstSuccess makes the store refuse to finish a device's
// successful backups row until one of its backups has been interrupted:
// the first recording of a good backup fails (with a plain error, or on
// PostgreSQL with code when given), the requeue that follows and later
// recordings pass.
func refuseFirstSuccess(t *testing.T, s *db.Store) {
	t.Helper()
	ctx := context.Background()
	cond := `NEW.success = 1 AND NOT EXISTS (SELECT 1 FROM backups b
		WHERE b.device_id = NEW.device_id AND b.error_message = '` + queue.ErrorInterrupted + `')`
	stmts := []string{`CREATE TRIGGER test_refuse_finish BEFORE UPDATE OF finished_at ON backups
		WHEN ` + cond + ` BEGIN SELECT RAISE(ABORT, 'test: recording refused'); END`}
	if s.Postgres() {
		stmts = []string{`CREATE FUNCTION test_refuse_finish() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF ` + cond + ` THEN
					RAISE EXCEPTION 'test: recording refused';
				END IF;
				RETURN NEW;
			END $$`,
			`CREATE TRIGGER test_refuse_finish BEFORE UPDATE OF finished_at ON backups
				FOR EACH ROW EXECUTE FUNCTION test_refuse_finish()`}
	}
	for _, q := range stmts {
		if _, err := dbtest.Poke(t, s).ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// A backup whose result cannot be recorded (FinishJob fails) is not left
// running, which would hold its device until the engine restarts: the
// engine queues the job again as interrupted, costing no attempt, and the
// next claim backs the device up and records it.
func TestEngineRequeuesJobWhoseResultIsNotRecorded(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	dev := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 61})
	refuseFirstSuccess(t, e.store)
	eng := e.engine(backup.Options{Workers: 1})
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	jobs, err := eng.Enqueue(runCtx, []int64{dev}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	var final queue.Job
	if err := eng.RunJobs(runCtx, jobs, func(j queue.Job) { final = j }); err != nil {
		var state string
		_ = dbtest.Peek(t, e.store).QueryRow(`SELECT state FROM jobs WHERE id = ?`, jobs[0]).Scan(&state)
		t.Fatalf("the job did not finish (it is %s after the engine stopped): %v\n%s", state, err, e.log.String())
	}
	if final.State != queue.JobSucceeded || final.Attempt != 1 || final.Interruptions != 1 {
		t.Fatalf("job: %s attempt %d interruptions %d, want succeeded at attempt 1 after 1 interruption", final.State, final.Attempt, final.Interruptions)
	}
	var running, unfinished int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&unfinished); err != nil {
		t.Fatal(err)
	}
	if running != 0 || unfinished != 0 {
		t.Errorf("%d jobs and %d backups left running", running, unfinished)
	}
	// The first attempt's row says it was interrupted; the second holds
	// the configuration.
	var interrupted, good int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE device_id = ? AND error_message = ?`,
		dev, queue.ErrorInterrupted).Scan(&interrupted); err != nil {
		t.Fatal(err)
	}
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE device_id = ? AND success = 1`, dev).Scan(&good); err != nil {
		t.Fatal(err)
	}
	if interrupted != 1 || good != 1 {
		t.Errorf("backups of the device: %d interrupted and %d good, want 1 and 1", interrupted, good)
	}
	if b := e.backup(final); b.SnapshotHash == nil {
		t.Errorf("the recorded backup holds no configuration: %+v", b)
	}
	logs := e.log.String()
	if !strings.Contains(logs, "recording a backup failed; queuing the job again") {
		t.Errorf("the failed recording was not logged:\n%s", logs)
	}
	if strings.Contains(logs, engPassword) || strings.Contains(logs, engEnable) || strings.Contains(logs, "hostname r1") {
		t.Errorf("the log holds a secret or configuration text:\n%s", logs)
	}
}

// On PostgreSQL a recording the server aborts with a serialization
// failure is run again at once (InTx): the backup is recorded on its
// first attempt, with no interruption.
func TestEngineRecordingRetriesSerializationFailure(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: SQLite never aborts a transaction for a conflict")
	}
	e := newEngEnv(t)
	ctx := context.Background()
	dev := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 62})
	for _, q := range []string{`CREATE SEQUENCE test_refuse_seq`,
		// nextval is not rolled back with the transaction: the first
		// successful finish fails, the retry passes.
		`CREATE FUNCTION test_refuse_finish() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.success = 1 AND nextval('test_refuse_seq') = 1 THEN
					RAISE EXCEPTION 'test: could not serialize access' USING ERRCODE = '40001';
				END IF;
				RETURN NEW;
			END $$`,
		`CREATE TRIGGER test_refuse_finish BEFORE UPDATE OF finished_at ON backups
			FOR EACH ROW EXECUTE FUNCTION test_refuse_finish()`} {
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	j := e.run(e.engine(backup.Options{Workers: 1}), dev)[dev]
	if j.State != queue.JobSucceeded || j.Attempt != 1 || j.Interruptions != 0 {
		t.Fatalf("job: %s attempt %d interruptions %d, want succeeded at attempt 1 with no interruption\n%s",
			j.State, j.Attempt, j.Interruptions, e.log.String())
	}
	var calls int64
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT last_value FROM test_refuse_seq`).Scan(&calls); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("the successful finish ran %d times, want 2 (refused once, then recorded)", calls)
	}
	if strings.Contains(e.log.String(), "recording a backup failed") {
		t.Errorf("the retried recording was logged as failed:\n%s", e.log.String())
	}
}
