package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// The restores' store: one open per device, moves by compare-and-set
// with their audit entries, expiry, and a restore's job in the queue.

// goodVersion records a good backup of text for device, started ago
// before now, and returns its ID and its text's hash.
func goodVersion(t *testing.T, s *db.Store, device int64, ago time.Duration, text string) (string, string) {
	t.Helper()
	ctx := context.Background()
	hash, err := s.PutSnapshot(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-ago)
	finished := started.Add(time.Second)
	b := db.Backup{ID: uuid.NewString(), DeviceID: device, StartedAt: started, FinishedAt: &finished,
		Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule}
	if err := s.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b.ID, hash
}

// restoreDevice is a device of the local zone with one good version: the
// target a restore puts back.
func restoreDevice(t *testing.T, s *db.Store, name string) (device int64, target string) {
	t.Helper()
	device = retDevice(t, s, name)
	target, _ = goodVersion(t, s, device, 48*time.Hour, "hostname "+name+"\n")
	return device, target
}

func newRestore(t *testing.T, s *db.Store, device int64, target string, audit *db.AuditEntry) db.Restore {
	t.Helper()
	r, err := s.CreateRestore(context.Background(), db.NewRestore{DeviceID: device, TargetBackupID: target, Method: "frr_vtysh",
		Reason: "undo the bad change", RequestedBy: ptr(int64(7)), RequestedByName: "alice"}, audit)
	if err != nil {
		t.Fatalf("CreateRestore: %v", err)
	}
	return r
}

// approvedRestore takes a new restore of device through its preview to
// approved.
func approvedRestore(t *testing.T, s *db.Store, device int64, target string, expires time.Time) db.Restore {
	t.Helper()
	ctx := context.Background()
	r := newRestore(t, s, device, target, nil)
	preview, hash := goodVersion(t, s, device, time.Minute, "hostname changed\n")
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash, ExpiresAt: expires}, nil); err != nil {
		t.Fatalf("SetRestorePreview: %v", err)
	}
	r, err := s.ApproveRestore(ctx, r.ID, db.Decision{UserID: ptr(int64(8)), Name: "bob"}, hash, expires, nil)
	if err != nil {
		t.Fatalf("ApproveRestore: %v", err)
	}
	return r
}

func wantRestoreState(t *testing.T, err error, have string) {
	t.Helper()
	var st *db.ErrRestoreState
	if !errors.As(err, &st) || st.Have != have {
		t.Fatalf("err = %v; want *ErrRestoreState{Have: %s}", err, have)
	}
}

func activeJobs(t *testing.T, s *db.Store, device int64) int {
	t.Helper()
	var n int
	if err := dbtest.Peek(t, s).QueryRow(`SELECT COUNT(*) FROM jobs WHERE device_id = ? AND state IN ('queued', 'running')`,
		device).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A device has one open restore at most: the store says which one is
// open, the unique index refuses a second even written past the store,
// and once the first ends a new one may be asked for. What may not be
// restored is refused with the field it concerns.
func TestOneOpenRestorePerDevice(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	r1, t1 := restoreDevice(t, s, "r1")
	r2, t2 := restoreDevice(t, s, "r2")
	first := newRestore(t, s, r1, t1, nil)
	if first.State != db.RestorePreviewing || first.DeviceName != "r1" || first.TargetHash == "" || first.Options != "{}" {
		t.Fatalf("new restore = %+v", first)
	}
	_, err := s.CreateRestore(ctx, db.NewRestore{DeviceID: r1, TargetBackupID: t1, Method: "frr_vtysh", RequestedByName: "carol"}, nil)
	var open *db.ErrOpenRestore
	if !errors.As(err, &open) || open.ID != first.ID || open.State != db.RestorePreviewing {
		t.Fatalf("second restore of r1: %v; want *ErrOpenRestore naming %d", err, first.ID)
	}
	if got, err := s.OpenRestore(ctx, r1); err != nil || got.ID != first.ID {
		t.Fatalf("OpenRestore = %+v, %v", got, err)
	}
	newRestore(t, s, r2, t2, nil) // another device: its own
	// The index, not only the store's look, holds it (another node's
	// insert at the same moment).
	_, err = dbtest.Poke(t, s).Exec(`INSERT INTO restores (device_id, target_backup_id, target_hash, method, state,
		requested_by_name, requested_at, updated_at) VALUES (?, ?, 'x', 'm', 'approved', 'x', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`, r1, t1)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unique") {
		t.Fatalf("a second open restore written past the store: %v; want the unique index's refusal", err)
	}
	if _, err := s.CancelRestore(ctx, first.ID, nil); err != nil {
		t.Fatal(err)
	}
	again := newRestore(t, s, r1, t1, nil)
	if again.ID <= first.ID {
		t.Fatalf("new restore id %d after %d", again.ID, first.ID)
	}

	other, _ := restoreDevice(t, s, "r3")
	failed := retFailure(t, s, other, 1, false)
	for _, tc := range []struct {
		name   string
		n      db.NewRestore
		field  string
		absent bool
	}{
		{"missing device", db.NewRestore{DeviceID: 999999, TargetBackupID: t1, Method: "m", RequestedByName: "a"}, "", true},
		{"no such backup", db.NewRestore{DeviceID: other, TargetBackupID: "nope", Method: "m", RequestedByName: "a"}, "target_backup_id", false},
		{"another device's backup", db.NewRestore{DeviceID: other, TargetBackupID: t2, Method: "m", RequestedByName: "a"}, "target_backup_id", false},
		{"failed backup", db.NewRestore{DeviceID: other, TargetBackupID: failed, Method: "m", RequestedByName: "a"}, "target_backup_id", false},
		{"no method", db.NewRestore{DeviceID: other, TargetBackupID: t1, RequestedByName: "a"}, "method", false},
		{"options not an object", db.NewRestore{DeviceID: other, TargetBackupID: t1, Method: "m", Options: "[1]", RequestedByName: "a"}, "options", false},
		{"reason too long", db.NewRestore{DeviceID: other, TargetBackupID: t1, Method: "m", Reason: strings.Repeat("x", 2001), RequestedByName: "a"}, "reason", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateRestore(ctx, tc.n, nil)
			var field *db.ErrInvalidField
			switch {
			case tc.absent && !errors.Is(err, db.ErrNotFound):
				t.Fatalf("err = %v; want ErrNotFound", err)
			case !tc.absent && (!errors.As(err, &field) || field.Field != tc.field):
				t.Fatalf("err = %v; want *ErrInvalidField on %s", err, tc.field)
			}
		})
	}
	if _, err := s.OpenRestore(ctx, other); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a refused request left a restore: %v", err)
	}
}

// A restore goes from request to success one move at a time, each
// refused (with the state found) when the restore is no longer where it
// may leave from, and each audited in its own transaction: a refused
// move writes no entry.
func TestRestoreMovesAreCompareAndSet(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev, target := restoreDevice(t, s, "r1")
	audit := func(action string) *db.AuditEntry {
		return &db.AuditEntry{Username: "alice", Interface: "api", Action: action}
	}
	r := newRestore(t, s, dev, target, audit("restore.request"))
	expires := time.Now().Add(time.Hour)
	preview, hash := goodVersion(t, s, dev, time.Minute, "hostname drifted\n")

	// Not yet previewed: approval waits.
	_, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, expires, audit("restore.approve"))
	wantRestoreState(t, err, db.RestorePreviewing)
	if r, err = s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash, ExpiresAt: expires}, nil); err != nil ||
		r.State != db.RestorePending || r.PreviewHash == nil || *r.PreviewHash != hash || r.ExpiresAt == nil {
		t.Fatalf("SetRestorePreview = %+v, %v", r, err)
	}
	if _, err := s.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash}, nil); err == nil {
		t.Fatal("a second preview of a pending restore was taken")
	}
	// An approval of another preview than the current one.
	if _, err := s.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, "stale", expires, audit("restore.approve")); !errors.Is(err, db.ErrPreviewStale) {
		t.Fatalf("approval of a stale preview: %v; want ErrPreviewStale", err)
	}

	// Two approvers at once: exactly one wins, the other hears approved.
	const racers = 6
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.ApproveRestore(ctx, r.ID, db.Decision{UserID: ptr(int64(i + 10)), Name: "approver" + strconv.Itoa(i), Note: "ok"},
				hash, expires, audit("restore.approve"))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		wantRestoreState(t, err, db.RestoreApproved)
	}
	if won != 1 {
		t.Fatalf("%d approvals won; want exactly 1 (%v)", won, errs)
	}
	if r, err = s.Restore(ctx, r.ID); err != nil || r.State != db.RestoreApproved || r.DecidedByName == nil ||
		!strings.HasPrefix(*r.DecidedByName, "approver") || r.DecisionNote != "ok" {
		t.Fatalf("approved restore = %+v, %v", r, err)
	}

	// Queued, started by its job's claim, staged, finished with its job.
	r, enq, err := s.QueueRestore(ctx, r.ID, time.Time{}, audit("restore.queue"))
	if err != nil || enq.Busy != nil || enq.JobID == 0 || r.State != db.RestoreQueued || r.JobID == nil || *r.JobID != enq.JobID {
		t.Fatalf("QueueRestore = %+v, %+v, %v", r, enq, err)
	}
	if err := s.SetRestoreStage(ctx, r.ID, "apply"); err == nil {
		t.Fatal("a queued restore took a stage")
	}
	if claims, err := s.ClaimJobs(ctx, "backup-engine", 10, nil); err != nil || len(claims) != 0 {
		t.Fatalf("a backup claim took the restore's job: %+v, %v", claims, err)
	}
	claims, err := s.ClaimJobsOfKinds(ctx, "restorer", 10, nil, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 || claims[0].Kind != queue.KindRestore || claims[0].WorkID != r.ID || claims[0].Trigger != queue.TriggerRestore {
		t.Fatalf("restore claim = %+v, %v", claims, err)
	}
	c := claims[0]
	if _, err := s.CancelRestore(ctx, r.ID, audit("restore.cancel")); err == nil {
		t.Fatal("a restore whose job runs was cancelled")
	} else {
		wantRestoreState(t, err, db.RestoreRunning)
	}
	if r, err = s.StartRestore(ctx, r.ID, c, audit("restore.apply")); err != nil || r.State != db.RestoreRunning ||
		r.PreBackupID == nil || *r.PreBackupID != c.BackupID || r.StartedAt == nil {
		t.Fatalf("StartRestore = %+v, %v", r, err)
	}
	if _, err := s.StartRestore(ctx, r.ID, c, nil); err == nil {
		t.Fatal("a running restore started again")
	}
	for _, bad := range []string{"", "Apply", "apply now", strings.Repeat("a", 65)} {
		if err := s.SetRestoreStage(ctx, r.ID, bad); err == nil {
			t.Errorf("stage %q was taken", bad)
		}
	}
	if err := s.SetRestoreStage(ctx, r.ID, "verify"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRestoreBackup(ctx, r.ID, "target_backup_id", "x"); err == nil {
		t.Fatal("SetRestoreBackup wrote a column it does not own")
	}
	end := db.RestoreEnd{State: db.RestoreSucceeded, Outcome: `{"differences":0}`}
	if r, err = s.FinishRestore(ctx, r.ID, end, &c, audit("restore.succeeded")); err != nil || r.State != db.RestoreSucceeded ||
		r.Stage != "verify" || r.Outcome == nil || *r.Outcome != `{"differences":0}` || r.FinishedAt == nil {
		t.Fatalf("FinishRestore = %+v, %v", r, err)
	}
	if jobs, err := s.GetJobs(ctx, []int64{c.ID}); err != nil || jobs[0].State != queue.JobSucceeded {
		t.Fatalf("the restore's job after it finished: %+v, %v", jobs, err)
	}
	_, err = s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreFailed, Error: "late"}, nil, audit("restore.failed"))
	wantRestoreState(t, err, db.RestoreSucceeded)
	_, err = s.RejectRestore(ctx, r.ID, db.Decision{Name: "bob"}, audit("restore.reject"))
	wantRestoreState(t, err, db.RestoreSucceeded)
	if _, err := s.FinishRestore(ctx, r.ID, db.RestoreEnd{State: db.RestoreExpired}, nil, nil); err == nil {
		t.Fatal("FinishRestore ended a restore as expired")
	}
	if _, err := s.Restore(ctx, 999999); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Restore(missing) = %v", err)
	}
	if _, err := s.CancelRestore(ctx, 999999, nil); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("CancelRestore(missing) = %v", err)
	}

	// The moves that happened are audited, each once, about the restore
	// and its device; the refused ones left nothing.
	entries, _, err := s.SearchAudit(ctx, db.AuditFilter{Action: "restore"}, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.TargetType != "restore" || e.TargetID != strconv.FormatInt(r.ID, 10) {
			t.Errorf("entry %s names %s %s", e.Action, e.TargetType, e.TargetID)
		}
		got = append([]string{e.Action}, got...)
	}
	want := "restore.request restore.approve restore.queue restore.apply restore.succeeded"
	if strings.Join(got, " ") != want {
		t.Fatalf("audited %q; want %q", strings.Join(got, " "), want)
	}
	outside, _, err := s.SearchAudit(ctx, db.AuditFilter{Action: "restore", Scope: &db.Scope{GroupIDs: []int64{}}}, 100, 0)
	if err != nil || len(outside) != 0 {
		t.Fatalf("a user scoped to no group sees %d restore entries (%v): they do not name the device", len(outside), err)
	}

	// Rejections and cancels end a request that never ran.
	r2 := approvedRestore(t, s, dev, target, expires)
	if r2, err = s.RejectRestore(ctx, r2.ID, db.Decision{Name: "carol", Note: "not now"}, nil); err != nil ||
		r2.State != db.RestoreRejected || r2.FinishedAt == nil || r2.DecisionNote != "not now" {
		t.Fatalf("RejectRestore = %+v, %v", r2, err)
	}
	if _, err := s.CancelRestore(ctx, r2.ID, nil); err == nil {
		t.Fatal("a rejected restore was cancelled")
	}
}

// Time runs out for pending and approved restores only; the sweep
// returns what it ended, with an audit entry each, and a restore whose
// time ran out but that the sweep has not reached yet is refused
// approval and queuing all the same.
func TestExpireRestores(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	devPending, tPending := restoreDevice(t, s, "pending")
	devApproved, tApproved := restoreDevice(t, s, "approved")
	devFresh, tFresh := restoreDevice(t, s, "fresh")
	devRunning, tRunning := restoreDevice(t, s, "running")

	pending := newRestore(t, s, devPending, tPending, nil)
	prev, hash := goodVersion(t, s, devPending, time.Minute, "x\n")
	if _, err := s.SetRestorePreview(ctx, pending.ID, db.RestorePreview{BackupID: prev, Hash: hash, ExpiresAt: past}, nil); err != nil {
		t.Fatal(err)
	}
	// Expired but not swept: refused.
	if _, err := s.ApproveRestore(ctx, pending.ID, db.Decision{Name: "bob"}, hash, future, nil); !errors.Is(err, db.ErrRestoreExpired) {
		t.Fatalf("approval of an expired restore: %v; want ErrRestoreExpired", err)
	}
	approved := approvedRestore(t, s, devApproved, tApproved, future)
	// Its approval's time is set to run out.
	if _, err := dbtest.Poke(t, s).Exec(`UPDATE restores SET expires_at = ? WHERE id = ?`, past.UTC().Format(db.TimeFormat), approved.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.QueueRestore(ctx, approved.ID, time.Time{}, nil); !errors.Is(err, db.ErrRestoreExpired) {
		t.Fatalf("queuing an expired restore: %v; want ErrRestoreExpired", err)
	}
	fresh := approvedRestore(t, s, devFresh, tFresh, future)
	running := approvedRestore(t, s, devRunning, tRunning, future)
	if _, _, err := s.QueueRestore(ctx, running.ID, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, s).Exec(`UPDATE restores SET expires_at = ? WHERE id = ?`, past.UTC().Format(db.TimeFormat), running.ID); err != nil {
		t.Fatal(err)
	}

	moved, err := s.ExpireRestores(ctx, time.Now(), &db.AuditEntry{Interface: "system", Action: "restore.expire"})
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || moved[0].ID != pending.ID || moved[1].ID != approved.ID ||
		moved[0].State != db.RestoreExpired || moved[1].State != db.RestoreExpired || moved[0].FinishedAt == nil {
		t.Fatalf("ExpireRestores moved %+v; want the pending and the approved restore", moved)
	}
	for id, want := range map[int64]string{fresh.ID: db.RestoreApproved, running.ID: db.RestoreQueued} {
		if r, err := s.Restore(ctx, id); err != nil || r.State != want {
			t.Errorf("restore %d: %+v, %v; want %s", id, r, err, want)
		}
	}
	if again, err := s.ExpireRestores(ctx, time.Now(), nil); err != nil || len(again) != 0 {
		t.Fatalf("a second sweep moved %+v, %v", again, err)
	}
	entries, _, err := s.SearchAudit(ctx, db.AuditFilter{Action: "restore.expire"}, 10, 0)
	if err != nil || len(entries) != 2 {
		t.Fatalf("expiry audit entries: %d, %v; want 2", len(entries), err)
	}
	// An expired restore no longer blocks its device.
	newRestore(t, s, devPending, tPending, nil)
}

// A restore is queued as a job of its kind on its device: a queued
// backup job is taken over (one active job, no second), a running job
// makes the device busy (nothing changes, the caller tries later), and a
// backup asked for meanwhile joins the restore's job and leaves it as it
// is.
func TestQueueRestoreSharesTheDeviceLock(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	future := time.Now().Add(time.Hour)

	// Takeover of a queued backup.
	dev, target := restoreDevice(t, s, "queued-backup")
	later := time.Now().Add(10 * time.Minute)
	out, err := s.EnqueueJobsFound(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: later}})
	if err != nil {
		t.Fatal(err)
	}
	backupJob := out[0].JobID
	r := approvedRestore(t, s, dev, target, future)
	// The restore is to run in a maintenance window five minutes from now.
	window := time.Now().Add(5 * time.Minute).Truncate(time.Millisecond)
	r, enq, err := s.QueueRestore(ctx, r.ID, window, nil)
	if err != nil || !enq.TookOver || enq.JobID != backupJob || r.State != db.RestoreQueued || *r.JobID != backupJob {
		t.Fatalf("QueueRestore over a queued backup = %+v, %+v, %v; want job %d taken over", r, enq, err, backupJob)
	}
	jobs, err := s.GetJobs(ctx, []int64{backupJob})
	if err != nil || jobs[0].Kind != queue.KindRestore || jobs[0].WorkID != r.ID || jobs[0].Trigger != queue.TriggerRestore ||
		jobs[0].State != queue.JobQueued || !jobs[0].NotBefore.Equal(window) {
		t.Fatalf("the taken-over job: %+v, %v; want a restore job not before %s", jobs, err, window)
	}
	if n := activeJobs(t, s, dev); n != 1 {
		t.Fatalf("%d active jobs on the device; want 1", n)
	}

	// A backup asked for now joins the restore's job, as it is: neither
	// an operator's request nor the device's change log moves the
	// restore out of its window or renames its trigger.
	for _, trigger := range []string{queue.TriggerManual, queue.TriggerSyslog, queue.TriggerSchedule} {
		found, err := s.EnqueueJobsFound(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: trigger, NotBefore: time.Now()}})
		if err != nil || found[0].JobID != backupJob || found[0].Found != queue.JobQueued || found[0].Kind != queue.KindRestore {
			t.Fatalf("a %s backup request during the restore: %+v, %v; want it to join job %d as a restore", trigger, found, err, backupJob)
		}
	}
	if again, err := s.GetJobs(ctx, []int64{backupJob}); err != nil || again[0].Trigger != queue.TriggerRestore ||
		!again[0].NotBefore.Equal(jobs[0].NotBefore) {
		t.Fatalf("a backup request changed the restore's job: %+v, %v", again, err)
	}
	if n := activeJobs(t, s, dev); n != 1 {
		t.Fatalf("%d active jobs on the device after backup requests; want 1", n)
	}
	// A device without a restore still gets a plain backup job.
	plain := retDevice(t, s, "plain")
	if found, err := s.EnqueueJobsFound(ctx, []queue.JobRequest{{DeviceID: plain, Trigger: queue.TriggerManual, NotBefore: time.Now()}}); err != nil ||
		found[0].Found != "" || found[0].Kind != queue.KindBackup {
		t.Fatalf("a plain backup request: %+v, %v", found, err)
	}

	// A running backup: busy, nothing changes.
	busy, busyTarget := restoreDevice(t, s, "running-backup")
	enqueueNow(t, s, queue.TriggerManual, busy)
	claims, err := s.ClaimJobs(ctx, "engine", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	var running queue.Claim
	for _, c := range claims {
		if c.DeviceID == busy {
			running = c
		}
	}
	if running.ID == 0 {
		t.Fatalf("the busy device's backup was not claimed: %+v", claims)
	}
	rb := approvedRestore(t, s, busy, busyTarget, future)
	rb2, enq, err := s.QueueRestore(ctx, rb.ID, time.Time{}, nil)
	if err != nil || enq.Busy == nil || enq.Busy.ID != running.ID || enq.Busy.State != queue.JobRunning || enq.Busy.Kind != queue.KindBackup ||
		enq.JobID != 0 || rb2.State != db.RestoreApproved {
		t.Fatalf("QueueRestore while a backup runs = %+v, %+v, %v; want busy, still approved", rb2, enq, err)
	}
	if n := activeJobs(t, s, busy); n != 1 {
		t.Fatalf("%d active jobs on the busy device; want 1", n)
	}
	if err := s.FinishJob(ctx, running, queue.Outcome{Success: true, Text: "hostname x\n", FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	rb2, enq, err = s.QueueRestore(ctx, rb.ID, time.Time{}, nil)
	if err != nil || enq.Busy != nil || enq.TookOver || enq.JobID == 0 || enq.JobID == running.ID || rb2.State != db.RestoreQueued {
		t.Fatalf("QueueRestore once the backup ended = %+v, %+v, %v; want a new job", rb2, enq, err)
	}

	// Another restore's job, queued, makes the device busy for a push.
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		got, err := queue.EnqueueWork(ctx, tx, s.Dialect(), queue.WorkRequest{DeviceID: busy, Kind: queue.KindPush, WorkID: 1})
		if err == nil && (got.Busy == nil || got.Busy.Kind != queue.KindRestore) {
			err = fmt.Errorf("EnqueueWork of a push on a device with a queued restore = %+v; want busy with the restore", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// A remote zone's device is refused: its collector only backs up.
	zone, err := s.CreateZone(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	remote := zoneDevice(t, s, "remote", "10.9.9.9", zone.ID)
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := queue.EnqueueWork(ctx, tx, s.Dialect(), queue.WorkRequest{DeviceID: remote, Kind: queue.KindRestore, WorkID: 1})
		return err
	})
	if !errors.Is(err, queue.ErrWorkRemoteZone) {
		t.Fatalf("EnqueueWork on a remote zone's device: %v; want ErrWorkRemoteZone", err)
	}
}

// Restores are listed newest first, a page at a time, by device, by
// state, and within a user's device groups.
func TestListRestores(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	g := createGroup(t, s, "site", nil)
	inGroup := insertDevice(t, s, "in-group", &g.ID, nil, nil)
	inTarget, _ := goodVersion(t, s, inGroup, time.Hour, "a\n")
	out, outTarget := restoreDevice(t, s, "outside")
	first := newRestore(t, s, inGroup, inTarget, nil)
	if _, err := s.CancelRestore(ctx, first.ID, nil); err != nil {
		t.Fatal(err)
	}
	second := newRestore(t, s, inGroup, inTarget, nil)
	third := newRestore(t, s, out, outTarget, nil)

	ids := func(rs []db.Restore) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    db.RestoreFilter
		want []int64
		next int64
	}{
		{"all", db.RestoreFilter{}, []int64{third.ID, second.ID, first.ID}, 0},
		{"first page", db.RestoreFilter{Limit: 2}, []int64{third.ID, second.ID}, second.ID},
		{"second page", db.RestoreFilter{Limit: 2, BeforeID: second.ID}, []int64{first.ID}, 0},
		{"by device", db.RestoreFilter{DeviceID: inGroup}, []int64{second.ID, first.ID}, 0},
		{"open ones", db.RestoreFilter{States: db.RestoreOpenStates}, []int64{third.ID, second.ID}, 0},
		{"in the user's groups", db.RestoreFilter{Scope: &db.Scope{GroupIDs: []int64{g.ID}}}, []int64{second.ID, first.ID}, 0},
		{"in no group", db.RestoreFilter{Scope: &db.Scope{}}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := s.ListRestores(ctx, tc.f)
			if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(tc.want) || next != tc.next {
				t.Fatalf("ListRestores = %v, next %d, %v; want %v, next %d", ids(got), next, err, tc.want, tc.next)
			}
		})
	}
	if _, _, err := s.ListRestores(ctx, db.RestoreFilter{States: []string{"lost"}}); err == nil {
		t.Fatal("a list by an unknown state was taken")
	}
	if _, _, err := s.ListRestores(ctx, db.RestoreFilter{Limit: 501}); err == nil {
		t.Fatal("a page of 501 was taken")
	}
}
