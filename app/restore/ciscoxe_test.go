package restore_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/db"
)

func TestRestoreIOSXEConfigureReplace(t *testing.T) {
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
