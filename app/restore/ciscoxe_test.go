package restore_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/db"
	"backupd/internal/dbtest"
)

func TestRestoreIOSXEConfigureReplace(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("cisco_xe", devsim.Options{Minute: junosMinute})
	before := e.backup()
	e.changeByHand(d, "hostname lab-cisco-xe\n", "hostname lab-renamed\n")

	r := e.restoreTo(before)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	want := e.text(*before.SnapshotHash)
	if !e.holds("cisco_xe", want) {
		t.Error("the device does not hold the version")
	}
	// Copied to flash without the lines IOS refuses, confirmed (the
	// timer never reverts it) and saved.
	file, ok := d.File("flash:backupd-restore.cfg")
	if !ok || strings.Contains(string(file), "Building configuration") || !strings.Contains(string(file), "hostname lab-cisco-xe\n") {
		t.Errorf("the file on flash: %v\n%s", ok, file)
	}
	time.Sleep(6 * junosMinute)
	if d.Rollbacks() != 0 || !e.holds("cisco_xe", want) {
		t.Error("the confirmed replace was reverted by the timer")
	}
	if !strings.Contains(d.StartupConfig(), "hostname lab-cisco-xe\n") {
		t.Error("the version was not saved (write memory)")
	}
}

// Without the archive IOS refuses the timer: nothing changes, the
// restore fails saying so.
func TestRestoreIOSXEWithoutArchive(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_xe", devsim.Options{Minute: junosMinute, NoArchive: true})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-cisco-xe\n", "hostname lab-renamed\n")
	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || !strings.Contains(deref(r.Error), "archive on") || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if !e.holds("cisco_xe", e.text(*after.SnapshotHash)) {
		t.Error("the device changed")
	}
}

// A line IOS refuses: the replace aborts with part of the file applied,
// and the pending revert puts the configuration before back, verified.
func TestRestoreIOSXERefusedLineReverts(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_xe", devsim.Options{Minute: junosMinute, RejectLines: regexp.MustCompile(`^hostname lab-cisco-xe$`)})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-cisco-xe\n", "hostname lab-renamed\n")
	r := e.restoreTo(before)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonRefused {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("cisco_xe", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before")
	}
}

// The session drops right after the replace: the restore logs in again
// and reverts now; the device is back, verified.
func TestRestoreIOSXESessionLostBeforeConfirm(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_xe", devsim.Options{Minute: lostMinute, DisconnectAfter: regexp.MustCompile(`^configure replace`)})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-cisco-xe\n", "hostname lab-renamed\n")
	r := e.restoreTo(before)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonLost {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("cisco_xe", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before")
	}
}

// A restore that stops before it backs the device up (here: the device's
// platform changed to one that restores by merge since the request)
// leaves no backup behind: the device's history and status show no
// backup that failed for the restore's reason, and nothing was sent.
func TestRestoreStoppedBeforeItsBackupLeavesNone(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	d := e.sim("cisco_xe", devsim.Options{Minute: junosMinute})
	before := e.backup()
	e.changeByHand(d, "hostname lab-cisco-xe\n", "hostname lab-renamed\n")
	r, err := e.svc.Request(ctx, e.admin, e.device, before.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if _, err := e.store.UpdateDevice(ctx, e.device, func(dv *db.Device) error { dv.Platform = "cisco_ios"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestoreFailed, db.RestoreSucceeded, db.RestoreRolledBack, db.RestoreRollbackFailed)
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonNoMethod || r.PreBackupID != nil {
		t.Fatalf("restore %s (%s, backup before %v): %s", r.State, deref(r.ErrorReason), r.PreBackupID, deref(r.Error))
	}
	var failed, all int
	if err := dbtest.Peek(t, e.store).QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN success = 0 THEN 1 ELSE 0 END), 0)
		FROM backups WHERE device_id = ?`, e.device).Scan(&all, &failed); err != nil {
		t.Fatal(err)
	}
	if failed != 0 || all != 3 {
		t.Errorf("the device has %d backups, %d failed; want the 3 taken (two by the test, the preview), none failed", all, failed)
	}
	var jobBackup *string
	if err := dbtest.Peek(t, e.store).QueryRowContext(ctx, `SELECT backup_id FROM jobs WHERE id = ?`, *r.JobID).Scan(&jobBackup); err != nil {
		t.Fatal(err)
	}
	if jobBackup != nil {
		t.Errorf("the restore's job names backup %s, which it never took", *jobBackup)
	}
	if !strings.Contains(d.RunningConfig(), "hostname lab-renamed\n") {
		t.Error("the device was changed")
	}
}
