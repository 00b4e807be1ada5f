package db_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A restore's job in the queue: who may claim and lease it, the backups
// it records while it runs, and its end when its process stops or an
// operator cancels it.

// runningRestore is a restore of a new device whose job owner claimed
// and started.
func runningRestore(t *testing.T, s *db.Store, name, owner string) (db.Restore, queue.Claim) {
	t.Helper()
	ctx := context.Background()
	dev, target := restoreDevice(t, s, name)
	r := approvedRestore(t, s, dev, target, time.Now().Add(time.Hour))
	r, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil || enq.JobID == 0 {
		t.Fatalf("QueueRestore = %+v, %v", enq, err)
	}
	claims, err := s.ClaimJobsOfKinds(ctx, owner, 1, []int64{enq.JobID}, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim of the restore's job = %+v, %v", claims, err)
	}
	if r, err = s.StartRestore(ctx, r.ID, claims[0], nil); err != nil {
		t.Fatal(err)
	}
	return r, claims[0]
}

// Backup claims (the engine's, and `backup run`'s among its own job IDs,
// which may name a restore's job a backup request joined) never take a
// restore or push job; a claim that asks for those kinds does, with the
// first backup row of trigger restore. A remote collector leases backup
// jobs only, and is not woken for others.
func TestClaimsAndLeasesKeepToTheirKinds(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev, target := restoreDevice(t, s, "restored")
	plain := retDevice(t, s, "plain")
	r := approvedRestore(t, s, dev, target, time.Now().Add(time.Hour))
	_, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	backupJob := enqueueNow(t, s, queue.TriggerManual, plain)[0]
	// What `backup run --device restored` would claim: the job its
	// request joined.
	if got, err := s.ClaimJobs(ctx, "cli", 5, []int64{enq.JobID}); err != nil || len(got) != 0 {
		t.Fatalf("a backup claim among the restore's job took %+v, %v", got, err)
	}
	got, err := s.ClaimJobs(ctx, "engine", 5, nil)
	if err != nil || len(got) != 1 || got[0].ID != backupJob || got[0].Kind != queue.KindBackup {
		t.Fatalf("the backup engine claimed %+v, %v; want only job %d", got, err, backupJob)
	}
	if _, err := s.ClaimJobsOfKinds(ctx, "x", 5, nil, []string{"reboot"}); !errors.Is(err, queue.ErrUnknownKind) {
		t.Fatalf("a claim of an unknown kind: %v", err)
	}
	if _, err := s.ClaimJobsOfKinds(ctx, "x", 5, nil, nil); !errors.Is(err, queue.ErrUnknownKind) {
		t.Fatalf("a claim of no kind: %v", err)
	}
	if got, err := s.ClaimJobsOfKinds(ctx, "pusher", 5, nil, []string{queue.KindPush}); err != nil || len(got) != 0 {
		t.Fatalf("a push claim took %+v, %v", got, err)
	}
	got, err = s.ClaimJobsOfKinds(ctx, "restorer", 5, nil, []string{queue.KindRestore, queue.KindPush, queue.KindRestore})
	if err != nil || len(got) != 1 || got[0].ID != enq.JobID || got[0].WorkID != r.ID {
		t.Fatalf("the restore claim took %+v, %v; want job %d", got, err, enq.JobID)
	}
	if b, err := s.GetBackup(ctx, got[0].BackupID); err != nil || b.Trigger != queue.TriggerRestore || b.FinishedAt != nil {
		t.Fatalf("the restore claim's backup: %+v, %v; want running, trigger restore", b, err)
	}

	// A remote zone: its collector leases the backup job, never a
	// restore's (written past EnqueueWork, which refuses remote zones).
	zone, err := s.CreateZone(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	inZone := zoneDevice(t, s, "z-restore", "10.1.1.1", zone.ID)
	inZoneBackup := zoneDevice(t, s, "z-backup", "10.1.1.2", zone.ID)
	if _, err := dbtest.Poke(t, s).Exec(`INSERT INTO jobs (device_id, trigger, state, not_before, created_at, zone_id, kind, work_id)
		VALUES (?, 'restore', 'queued', '2000-01-01T00:00:00.000', '2000-01-01T00:00:00.000', ?, 'restore', 42)`, inZone, zone.ID); err != nil {
		t.Fatal(err)
	}
	col := dbtest.Collector(t, s, zone.ID, "c")
	if due, err := s.ZoneJobsDue(ctx, zone.ID, time.Now()); err != nil || due {
		t.Fatalf("ZoneJobsDue with only a restore job = %v, %v; want false", due, err)
	}
	if leased, err := s.LeaseJobs(ctx, col.ID, zone.ID, 10, time.Now().Add(time.Minute)); err != nil || len(leased) != 0 {
		t.Fatalf("the collector leased %+v, %v; want nothing", leased, err)
	}
	enqueueNow(t, s, queue.TriggerManual, inZoneBackup)
	leased, err := s.LeaseJobs(ctx, col.ID, zone.ID, 10, time.Now().Add(time.Minute))
	if err != nil || len(leased) != 1 || leased[0].DeviceID != inZoneBackup || leased[0].Kind != queue.KindBackup {
		t.Fatalf("the collector leased %+v, %v; want the backup job only", leased, err)
	}
}

// A restore's job records its backups while it runs: the claim's own
// (before the change) and extra ones (after it, after a rollback), each
// stored and ended as a backup's end is, the job still running; and it
// ends with its restore, leaving the backups as they were recorded.
func TestWorkJobRecordsItsBackups(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	r, c := runningRestore(t, s, "r1", "restorer")
	peek := dbtest.Peek(t, s)
	jobState := func() string {
		jobs, err := s.GetJobs(ctx, []int64{c.ID})
		if err != nil || len(jobs) != 1 {
			t.Fatal(jobs, err)
		}
		return jobs[0].State
	}
	pre := queue.Outcome{Success: true, Text: "hostname r1\nbefore\n", Changed: true, FinishedAt: time.Now()}
	if err := s.RecordAttempt(ctx, c, pre); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAttempt(ctx, c, pre); !errors.Is(err, queue.ErrAttemptRecorded) {
		t.Fatalf("RecordAttempt twice: %v; want ErrAttemptRecorded", err)
	}
	b, err := s.GetBackup(ctx, c.BackupID)
	if err != nil || !b.Success || b.FinishedAt == nil || b.SnapshotHash == nil || b.Trigger != queue.TriggerRestore {
		t.Fatalf("the claim's backup: %+v, %v", b, err)
	}
	if text, err := s.SnapshotText(ctx, *b.SnapshotHash); err != nil || text != pre.Text {
		t.Fatalf("the claim's text: %q, %v", text, err)
	}
	if st := jobState(); st != queue.JobRunning {
		t.Fatalf("job %s after the first backup; want running", st)
	}
	var lastOK bool
	if err := peek.QueryRow(`SELECT last_backup_success FROM devices WHERE id = ?`, c.DeviceID).Scan(&lastOK); err != nil || !lastOK {
		t.Fatalf("the device's last backup success = %v, %v; Hooks.Ended did not run", lastOK, err)
	}

	started := time.Now()
	post := queue.Outcome{Success: true, Text: "hostname r1\nafter\n", Changed: true, FinishedAt: started.Add(1500 * time.Millisecond)}
	postID, err := s.RecordExtraAttempt(ctx, c, queue.TriggerRestore, started, post)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRestoreBackup(ctx, r.ID, db.RestorePostBackup, postID); err != nil {
		t.Fatal(err)
	}
	pb, err := s.GetBackup(ctx, postID)
	if err != nil || !pb.Success || !pb.Changed || pb.Trigger != queue.TriggerRestore || pb.DurationMS == nil || *pb.DurationMS != 1500 {
		t.Fatalf("the extra backup: %+v, %v", pb, err)
	}
	failed := queue.Outcome{Error: "connect: timeout", Reason: "connect", FinishedAt: time.Now(), Log: `[{"kind":"note","text":"x"}]`}
	failID, err := s.RecordExtraAttempt(ctx, c, queue.TriggerRestore, time.Now(), failed)
	if err != nil {
		t.Fatal(err)
	}
	if fb, err := s.GetBackup(ctx, failID); err != nil || fb.Success || fb.ErrorMessage == nil || *fb.ErrorMessage != failed.Error {
		t.Fatalf("the failed extra backup: %+v, %v", fb, err)
	}
	if segs, _, err := s.BackupLog(ctx, failID); err != nil || segs != failed.Log {
		t.Fatalf("the failed extra backup's log: %q, %v", segs, err)
	}
	if st := jobState(); st != queue.JobRunning {
		t.Fatalf("job %s after the extra backups; want running", st)
	}
	// Only the claim's owner records; a backup job has none of this.
	other := "someone-else"
	stolen := c
	stolen.Owner = &other
	if _, err := s.RecordExtraAttempt(ctx, stolen, queue.TriggerRestore, time.Now(), post); !errors.Is(err, queue.ErrJobNotOwned) {
		t.Fatalf("RecordExtraAttempt by another owner: %v; want ErrJobNotOwned", err)
	}
	plain := retDevice(t, s, "plain")
	enqueueNow(t, s, queue.TriggerManual, plain)
	bc, err := s.ClaimJobs(ctx, "engine", 1, nil)
	if err != nil || len(bc) != 1 {
		t.Fatal(bc, err)
	}
	if _, err := s.RecordExtraAttempt(ctx, bc[0], queue.TriggerManual, time.Now(), post); !errors.Is(err, queue.ErrNotWork) {
		t.Fatalf("RecordExtraAttempt of a backup job: %v; want ErrNotWork", err)
	}

	var rows int
	if err := peek.QueryRow(`SELECT COUNT(*) FROM backups WHERE device_id = ? AND trigger = 'restore'`, c.DeviceID).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d restore backups, %v; want 3", rows, err)
	}
	r, err = s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreRolledBack, Error: "the restored version did not verify", Reason: "verify"}, &c, nil)
	if err != nil || r.State != db.RestoreRolledBack || r.PostBackupID == nil || *r.PostBackupID != postID {
		t.Fatalf("FinishRestore = %+v, %v", r, err)
	}
	jobs, err := s.GetJobs(ctx, []int64{c.ID})
	if err != nil || jobs[0].State != queue.JobFailed || jobs[0].Error == nil || *jobs[0].Error != "the restored version did not verify" {
		t.Fatalf("the job after a rollback: %+v, %v; want failed with the restore's error", jobs, err)
	}
	if again, err := s.GetBackup(ctx, c.BackupID); err != nil || !again.Success || again.ErrorMessage != nil {
		t.Fatalf("ending the job rewrote the claim's backup: %+v, %v", again, err)
	}
	if err := s.RecordAttempt(ctx, c, pre); !errors.Is(err, queue.ErrJobNotOwned) {
		t.Fatalf("RecordAttempt after the job ended: %v; want ErrJobNotOwned", err)
	}
}

// A restore's job whose process stops (a shutdown, a crash found later)
// fails as state unknown and is never queued again: its restore is
// interrupted in the same transaction, its open backup ends as
// interrupted, and no claim finds anything to run; a backup job of the
// same owner is queued again as before.
func TestInterruptedRestoreIsNeverRequeued(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	r, c := runningRestore(t, s, "r1", "engine-a")
	plain := retDevice(t, s, "plain")
	enqueueNow(t, s, queue.TriggerManual, plain)
	bc, err := s.ClaimJobs(ctx, "engine-a", 1, nil)
	if err != nil || len(bc) != 1 {
		t.Fatal(bc, err)
	}

	res, err := s.InterruptJobs(ctx, "engine-a", 10)
	if err != nil || res.Attempts != 2 || len(res.Work) != 1 {
		t.Fatalf("InterruptJobs = %+v, %v; want 2 attempts, 1 work job", res, err)
	}
	if w := res.Work[0]; w.JobID != c.ID || w.Kind != queue.KindRestore || w.WorkID != r.ID || w.DeviceID != c.DeviceID {
		t.Fatalf("interrupted work = %+v", w)
	}
	jobs, err := s.GetJobs(ctx, []int64{c.ID, bc[0].ID})
	if err != nil || len(jobs) != 2 {
		t.Fatal(jobs, err)
	}
	slices.SortFunc(jobs, func(a, b queue.Job) int { return int(a.ID - b.ID) })
	for _, j := range jobs {
		switch j.Kind {
		case queue.KindRestore:
			if j.State != queue.JobFailed || j.Error == nil || *j.Error != queue.ErrorInterruptedUnknown || j.Owner != nil {
				t.Errorf("restore job: %s, error %v; want failed, state unknown", j.State, j.Error)
			}
		default:
			if j.State != queue.JobQueued || j.Interruptions != 1 {
				t.Errorf("backup job: %s, %d interruptions; want queued again", j.State, j.Interruptions)
			}
		}
	}
	got, err := s.Restore(ctx, r.ID)
	if err != nil || got.State != db.RestoreInterrupted || got.Error == nil || *got.Error != queue.ErrorInterruptedUnknown ||
		got.ErrorReason == nil || *got.ErrorReason != queue.ReasonInterrupted || got.FinishedAt == nil {
		t.Fatalf("restore after the interruption: %+v, %v", got, err)
	}
	if b, err := s.GetBackup(ctx, c.BackupID); err != nil || b.FinishedAt == nil || b.Success {
		t.Fatalf("the restore's open backup: %+v, %v; want ended as interrupted", b, err)
	}
	if n := activeJobs(t, s, c.DeviceID); n != 0 {
		t.Fatalf("%d active jobs on the restored device; want none", n)
	}
	if claims, err := s.ClaimJobsOfKinds(ctx, "engine-b", 10, nil, queue.Kinds); err != nil || len(claims) != 1 || claims[0].DeviceID != plain {
		t.Fatalf("after the interruption a claim took %+v, %v; want the backup only", claims, err)
	}
	// Interrupting again finds nothing of the restore.
	if res, err := s.InterruptJobs(ctx, "engine-a", 10); err != nil || len(res.Work) != 0 {
		t.Fatalf("second InterruptJobs = %+v, %v", res, err)
	}
	// One attempt given back (the engine's own, when its result could not
	// be recorded) is the same end.
	r2, c2 := runningRestore(t, s, "r2", "engine-c")
	if res, err := s.InterruptJob(ctx, c2, 10); err != nil || len(res.Work) != 1 {
		t.Fatalf("InterruptJob of a restore job = %+v, %v", res, err)
	}
	if got, err := s.Restore(ctx, r2.ID); err != nil || got.State != db.RestoreInterrupted {
		t.Fatalf("restore after InterruptJob: %+v, %v", got, err)
	}
	// Its runner, come back, can record nothing and end nothing.
	if _, err := s.FinishRestore(ctx, r2.ID, db.RestoreEnd{State: db.RestoreSucceeded}, &c2, nil); err == nil {
		t.Fatal("a runner finished an interrupted restore")
	}
	if err := s.FinishJob(ctx, c2, queue.Outcome{Success: true, Text: "x", FinishedAt: time.Now()}); !errors.Is(err, queue.ErrJobNotOwned) {
		t.Fatalf("FinishJob of an interrupted restore job: %v; want ErrJobNotOwned", err)
	}
}

// A restore's job cancelled while queued (the jobs page) cancels the
// restore; cancelling a queued restore cancels its job; a restore job
// is never retried, whatever its runner asks.
func TestCancelledAndRetriedRestoreJobs(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	future := time.Now().Add(time.Hour)
	dev, target := restoreDevice(t, s, "r1")
	r := approvedRestore(t, s, dev, target, future)
	_, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.CancelJob(ctx, enq.JobID); err != nil || !ok {
		t.Fatalf("CancelJob = %v, %v", ok, err)
	}
	if got, err := s.Restore(ctx, r.ID); err != nil || got.State != db.RestoreCancelled {
		t.Fatalf("restore after its job was cancelled: %+v, %v", got, err)
	}

	r = approvedRestore(t, s, dev, target, future)
	_, enq, err = s.QueueRestore(ctx, r.ID, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.CancelRestore(ctx, r.ID, nil); err != nil || got.State != db.RestoreCancelled {
		t.Fatalf("CancelRestore of a queued restore = %+v, %v", got, err)
	}
	if jobs, err := s.GetJobs(ctx, []int64{enq.JobID}); err != nil || jobs[0].State != queue.JobCancelled {
		t.Fatalf("the cancelled restore's job: %+v, %v", jobs, err)
	}

	_, c := runningRestore(t, s, "r2", "restorer")
	retry := time.Now()
	if err := s.FinishJob(ctx, c, queue.Outcome{Error: "connect: refused", Reason: "connect", FinishedAt: time.Now(), RetryAt: &retry}); err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.GetJobs(ctx, []int64{c.ID}); err != nil || jobs[0].State != queue.JobFailed {
		t.Fatalf("a restore job asked to retry: %+v, %v; want failed, never queued again", jobs, err)
	}
}

// Retention keeps what an open restore needs (the version it puts back,
// its preview, the backup before the change) however old, and the text
// of its target; once the restore ends, the next run may delete them.
func TestRetentionKeepsWhatAnOpenRestoreNeeds(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := retDevice(t, s, "r1")
	target, targetHash := goodVersion(t, s, dev, 40*24*time.Hour, "hostname oldest\n")
	preview, hash := goodVersion(t, s, dev, 30*24*time.Hour, "hostname preview\n")
	goodVersion(t, s, dev, 20*24*time.Hour, "hostname newer\n")
	newest, _ := goodVersion(t, s, dev, 10*24*time.Hour, "hostname newest\n")
	r := newRestore(t, s, dev, target, nil)
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash}, nil); err != nil {
		t.Fatal(err)
	}
	keep := db.Retention{KeepLast: 1, KeepDays: 1}
	res, err := s.ApplyRetention(ctx, keep, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	left := retRemaining(t, s, dev)
	if res.BackupsDeleted != 1 || len(left) != 3 || !slices.Contains(left, target) || !slices.Contains(left, preview) || !slices.Contains(left, newest) {
		t.Fatalf("retention deleted %d, left %v; want the target %s, the preview %s and the newest %s", res.BackupsDeleted, left, target, preview, newest)
	}
	if text, err := s.SnapshotText(ctx, targetHash); err != nil || text != "hostname oldest\n" {
		t.Fatalf("the target's text: %q, %v", text, err)
	}
	// A text only an open restore names (its backup gone, as when the
	// device's history was cut by hand) is not purged as an orphan.
	if _, err := dbtest.Poke(t, s).Exec(`UPDATE restores SET target_hash = ? WHERE id = ?`, "f00d", r.ID); err != nil {
		t.Fatal(err)
	}
	orphan, err := s.PutSnapshot(ctx, "only a restore names me\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, s).Exec(`UPDATE restores SET target_hash = ?, target_backup_id = ? WHERE id = ?`, orphan, target, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyRetention(ctx, keep, time.Now().Add(2*db.SnapshotGrace)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotText(ctx, orphan); err != nil {
		t.Fatalf("the open restore's text was purged: %v", err)
	}

	if _, err := s.CancelRestore(ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyRetention(ctx, keep, time.Now().Add(2*db.SnapshotGrace)); err != nil {
		t.Fatal(err)
	}
	if left := retRemaining(t, s, dev); !slices.Equal(left, []string{newest}) {
		t.Fatalf("after the restore ended, left %v; want only the newest", left)
	}
	if _, err := s.SnapshotText(ctx, orphan); err == nil {
		t.Fatal("the ended restore's text outlived it")
	}
}

// A running restore's transcript grows by appends up to TranscriptMax,
// then says it was cut short; an ended restore takes none.
func TestRestoreTranscriptIsBounded(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	r, c := runningRestore(t, s, "r1", "restorer")
	first := []db.TranscriptSegment{{Kind: "note", Text: "ssh r1"}, {Kind: "sent", Text: "configure terminal\n"}}
	if trunc, err := s.AppendRestoreTranscript(ctx, r.ID, first); err != nil || trunc {
		t.Fatalf("first append: %v, %v", trunc, err)
	}
	big := strings.Repeat("é", db.TranscriptMax/2) // two bytes each: the whole bound
	trunc, err := s.AppendRestoreTranscript(ctx, r.ID, []db.TranscriptSegment{{Kind: "received", Text: big}, {Kind: "sent", Text: "end\n"}})
	if err != nil || !trunc {
		t.Fatalf("append past the bound: %v, %v; want truncated", trunc, err)
	}
	segs, truncated, err := s.RestoreTranscript(ctx, r.ID)
	if err != nil || !truncated || len(segs) != 3 {
		t.Fatalf("transcript: %d segments, truncated %v, %v; want 3, truncated", len(segs), truncated, err)
	}
	size := 0
	for _, sg := range segs {
		size += len(sg.Text)
	}
	if size > db.TranscriptMax || size < db.TranscriptMax-1 || !strings.HasPrefix(segs[2].Text, "é") || strings.ContainsRune(segs[2].Text, '\uFFFD') {
		t.Fatalf("kept %d bytes (bound %d), last segment cut mid-character: %v", size, db.TranscriptMax, strings.ContainsRune(segs[2].Text, '\uFFFD'))
	}
	if trunc, err := s.AppendRestoreTranscript(ctx, r.ID, first); err != nil || !trunc {
		t.Fatalf("append to a truncated transcript: %v, %v", trunc, err)
	}
	if segs, _, _ := s.RestoreTranscript(ctx, r.ID); len(segs) != 3 {
		t.Fatalf("a truncated transcript grew to %d segments", len(segs))
	}
	if _, err := s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreSucceeded}, &c, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.AppendRestoreTranscript(ctx, r.ID, first)
	wantRestoreState(t, err, db.RestoreSucceeded)
	if _, err := s.AppendRestoreTranscript(ctx, 999999, first); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("append to a missing restore: %v", err)
	}
}
