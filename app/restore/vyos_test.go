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

func TestRestoreVyOSCommitConfirm(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("vyos", devsim.Options{Minute: junosMinute})
	before := e.backup()
	e.changeByHand(d, "set system host-name 'lab-vyos'", "set system host-name 'lab-renamed'")

	r := e.restoreTo(before)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	want := e.text(*before.SnapshotHash)
	if !e.holds("vyos", want) {
		t.Error("the device does not hold the version")
	}
	// Confirmed: no reboot once the time has passed; and saved.
	time.Sleep(6 * junosMinute)
	if d.Rollbacks() != 0 || !e.holds("vyos", want) {
		t.Error("the confirmed restore was undone by the reboot")
	}
	if !strings.Contains(d.StartupConfig(), "lab-vyos") || strings.Contains(d.StartupConfig(), "lab-renamed") {
		t.Error("the version was not saved")
	}
}

// A command VyOS refuses before the commit: the working configuration
// is discarded, nothing changes.
func TestRestoreVyOSRefusedSetChangesNothing(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("vyos", devsim.Options{Minute: junosMinute, RejectLines: regexp.MustCompile(`host-name 'lab-vyos'`)})
	before := e.backup()
	after := e.changeByHand(d, "set system host-name 'lab-vyos'", "set system host-name 'lab-renamed'")
	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if !strings.Contains(deref(r.Error), "Set failed") {
		t.Errorf("the error does not give the device's answer: %s", deref(r.Error))
	}
	if !e.holds("vyos", e.text(*after.SnapshotHash)) {
		t.Error("the device changed")
	}
}

// The session drops right after commit-confirm: the restore logs in
// again, sets the configuration before, commits and stops the reboot;
// the device is back, verified.
func TestRestoreVyOSSessionLostBeforeConfirm(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("vyos", devsim.Options{Minute: lostMinute, DisconnectAfter: regexp.MustCompile(`^commit-confirm`)})
	before := e.backup()
	after := e.changeByHand(d, "set system host-name 'lab-vyos'", "set system host-name 'lab-renamed'")
	r := e.restoreTo(before)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonLost {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("vyos", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before")
	}
}
