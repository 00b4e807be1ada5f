//go:build unix

package db_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// kill -9 of a process in the middle of a restore. No command runs
// restores yet, so the process is this test binary (TestRestoreHolder):
// it claims the restore's job, records the backup before the change,
// says it is applying, and waits to be killed, holding its liveness as a
// backup engine does (app/backup): a lock file on SQLite, a PostgreSQL
// advisory lock named queue.OwnerLockName(owner) on a session of its own.
// The test then recovers as an engine's Recover does, and the restore
// must end interrupted, never to run again.

const restoreHolderEnv = "BACKUPD_TEST_RESTORE_HOLDER" // "location|owner|lock file"

// TestRestoreHolder is the process TestRestoreSurvivesKill9 kills.
func TestRestoreHolder(t *testing.T) {
	spec := os.Getenv(restoreHolderEnv)
	if spec == "" {
		t.Skip("run by TestRestoreSurvivesKill9")
	}
	parts := strings.SplitN(spec, "|", 3)
	loc, owner, lockPath := parts[0], parts[1], parts[2]
	ctx := context.Background()
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	if s.Postgres() {
		conn, err := engine.InspectPostgres(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		// Held by its one session until the process dies.
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtextextended(?, 0))`, queue.OwnerLockName(owner)); err != nil {
			t.Fatal(err)
		}
	} else {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	claims, err := s.ClaimJobsOfKinds(ctx, owner, 1, nil, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %+v, %v", claims, err)
	}
	c := claims[0]
	if _, err := s.StartRestore(ctx, c.WorkID, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, c, queue.Outcome{Success: true, Text: "hostname r1\nbefore the restore\n", FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRestoreStage(ctx, c.WorkID, "apply"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRestoreTranscript(ctx, c.WorkID, []db.TranscriptSegment{{Kind: "sent", Text: "configure terminal\n"}}); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("HOLDING %d\n", c.ID)
	time.Sleep(60 * time.Second)
	t.Fatal("the restore holder was not killed within 60 s")
}

func TestRestoreSurvivesKill9(t *testing.T) {
	loc := dbtest.Location(t)
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dev, target := restoreDevice(t, s, "r1")
	r := approvedRestore(t, s, dev, target, time.Now().Add(time.Hour))
	r, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil || enq.JobID == 0 {
		t.Fatal(enq, err)
	}
	const owner = "restorer-1"
	lockPath := filepath.Join(t.TempDir(), owner+".lock")

	cmd := exec.Command(os.Args[0], "-test.run", "^TestRestoreHolder$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), restoreHolderEnv+"="+loc+"|"+owner+"|"+lockPath)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	holding := make(chan int64, 1)
	said := make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if id, ok := strings.CutPrefix(sc.Text(), "HOLDING "); ok {
				n, _ := strconv.ParseInt(id, 10, 64)
				holding <- n
			}
		}
		said <- all.String()
	}()
	select {
	case id := <-holding:
		if id != enq.JobID {
			t.Errorf("the holder claimed job %d; want %d", id, enq.JobID)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the holder did not take the restore within 60 s:\n%s\n%s", <-said, stderr.String())
	}

	// While it lives, recovery leaves its restore alone.
	if r, err := s.Restore(ctx, r.ID); err != nil || r.State != db.RestoreRunning || r.Stage != "apply" {
		t.Fatalf("restore before the kill: %+v, %v", r, err)
	}
	if res, dead := recoverOwner(t, s, owner, lockPath); dead || len(res.Work) != 0 {
		t.Fatalf("recovery took the living holder for dead: %+v", res)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	<-said

	// Recovery, as an engine's Recover does it: the owner of running jobs
	// whose liveness is gone. PostgreSQL frees a dead session's locks once
	// it notices the connection closed: give it a few seconds.
	owners, err := s.RunningOwners(ctx)
	if err != nil || len(owners) != 1 || owners[0] != owner {
		t.Fatalf("running owners after the kill = %v, %v", owners, err)
	}
	var res queue.Interrupted
	deadline := time.Now().Add(15 * time.Second)
	for {
		var dead bool
		if res, dead = recoverOwner(t, s, owner, lockPath); dead {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed holder's liveness was still held after 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(res.Work) != 1 || res.Work[0].WorkID != r.ID || res.Attempts != 0 {
		t.Fatalf("recovery = %+v; want the restore's job ended, no backup left open", res)
	}

	got, err := s.Restore(ctx, r.ID)
	if err != nil || got.State != db.RestoreInterrupted || got.Error == nil || *got.Error != queue.ErrorInterruptedUnknown ||
		got.Stage != "apply" || got.PreBackupID == nil {
		t.Fatalf("restore after the kill: %+v, %v; want interrupted at apply, state unknown", got, err)
	}
	jobs, err := s.GetJobs(ctx, []int64{enq.JobID})
	if err != nil || jobs[0].State != queue.JobFailed || jobs[0].Error == nil || *jobs[0].Error != queue.ErrorInterruptedUnknown {
		t.Fatalf("the restore's job after the kill: %+v, %v", jobs, err)
	}
	// What was there before the change is kept, whole.
	pre, err := s.GetBackup(ctx, *got.PreBackupID)
	if err != nil || !pre.Success || pre.SnapshotHash == nil {
		t.Fatalf("the backup before the change: %+v, %v", pre, err)
	}
	if text, err := s.SnapshotText(ctx, *pre.SnapshotHash); err != nil || text != "hostname r1\nbefore the restore\n" {
		t.Fatalf("its text: %q, %v", text, err)
	}
	if segs, _, err := s.RestoreTranscript(ctx, r.ID); err != nil || len(segs) != 1 {
		t.Fatalf("the transcript so far: %+v, %v", segs, err)
	}
	// Nothing runs again: no job active, none to claim, and a second
	// recovery finds nothing.
	var active, open int
	peek := dbtest.Peek(t, s)
	peek.QueryRow(`SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&active)
	peek.QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&open)
	if active != 0 || open != 0 {
		t.Fatalf("after recovery: %d active jobs, %d open backups; want none", active, open)
	}
	if claims, err := s.ClaimJobsOfKinds(ctx, "restorer-2", 10, nil, queue.Kinds); err != nil || len(claims) != 0 {
		t.Fatalf("a claim after recovery took %+v, %v", claims, err)
	}
	if again, _ := recoverOwner(t, s, owner, lockPath); len(again.Work) != 0 {
		t.Fatalf("a second recovery ended %+v", again)
	}
	if !s.Postgres() {
		var integrity string
		peek.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
		if integrity != "ok" {
			t.Fatalf("integrity check: %s", integrity)
		}
	}
}

// recoverOwner ends owner's running jobs if owner is dead, as
// app/backup's Recover does: on PostgreSQL through InterruptDeadOwner
// (dead when its advisory lock can be taken), on SQLite when its lock
// file can be locked.
func recoverOwner(t *testing.T, s *db.Store, owner, lockPath string) (queue.Interrupted, bool) {
	t.Helper()
	ctx := context.Background()
	if s.Postgres() {
		res, dead, err := s.InterruptDeadOwner(ctx, owner, 10)
		if err != nil {
			t.Fatal(err)
		}
		return res, dead
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return queue.Interrupted{}, false
		}
		t.Fatal(err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	res, err := s.InterruptJobs(ctx, owner, 10)
	if err != nil {
		t.Fatal(err)
	}
	return res, true
}
