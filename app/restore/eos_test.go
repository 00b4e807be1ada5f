package restore_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/db"
)

func TestRestoreEOSSession(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute})
	before := e.backup()
	e.changeByHand(d, "hostname lab-arista-eos\n", "hostname lab-renamed\n")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	want := e.text(*before.SnapshotHash)
	if !e.holds("arista_eos", want) {
		t.Error("the device does not hold the version")
	}
	// One commit with a timer, confirmed: never rolled back, even once
	// the timer would have run out; and saved.
	if c := d.Commits(); len(c) != commits+1 || c[len(c)-1].Kind != devsim.CommitConfirmed {
		t.Errorf("commits after the restore: %d, want one commit timer", len(c)-commits)
	}
	time.Sleep(6 * junosMinute)
	if d.Rollbacks() != 0 || !e.holds("arista_eos", want) {
		t.Error("the confirmed restore was rolled back by the timer")
	}
	if !strings.Contains(d.StartupConfig(), "hostname lab-arista-eos\n") {
		t.Error("the version was not saved (write memory)")
	}
	if strings.Contains(e.log.String(), "Pa55-not-in-logs") {
		t.Error("the login password reached the log")
	}
	e.noSecretsInTranscript(d, r.ID)
}

// noSecretsInTranscript fails when the restore's stored transcript
// shows one of the device's secrets.
func (e *env) noSecretsInTranscript(d *devsim.Device, id int64) {
	e.t.Helper()
	segs, _, err := e.store.RestoreTranscript(context.Background(), id)
	if err != nil || len(segs) == 0 {
		e.t.Fatalf("no transcript: %v", err)
	}
	for _, s := range segs {
		for _, secret := range d.Secrets() {
			if strings.Contains(s.Text, secret) {
				e.t.Errorf("the transcript shows a secret of the device (%d characters)", len(secret))
			}
		}
	}
}

// A line EOS refuses in the session: the session is aborted, nothing is
// committed.
func TestRestoreEOSRefusedLineChangesNothing(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute, RejectLines: regexp.MustCompile(`^hostname lab-arista-eos$`)})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-arista-eos\n", "hostname lab-renamed\n")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if !strings.Contains(deref(r.Error), "% Invalid input") {
		t.Errorf("the error does not give the device's answer: %s", deref(r.Error))
	}
	if len(d.Commits()) != commits || !e.holds("arista_eos", e.text(*after.SnapshotHash)) {
		t.Error("the device changed")
	}
}

// Nobody confirms: EOS's commit timer puts the configuration back on its
// own, and Undo, in a login that does not know the session, sees that.
func TestEOSCommitTimerRollsBackUnconfirmed(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	running := e.text(*e.backup().SnapshotHash)
	target := strings.Replace(running, "hostname lab-arista-eos\n", "hostname lab-renamed\n", 1)
	p, _ := driver.Lookup("arista_eos")
	m, ok := restore.MethodOf(p)
	if !ok {
		t.Fatal("arista_eos has no restore method")
	}
	tg, err := e.engine.Target(ctx, e.device)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := collect.OpenShell(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := m.Apply(ctx, sh, p, running, target); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.RunningConfig(), "hostname lab-renamed\n") {
		t.Fatal("the version does not run after commit timer")
	}
	deadline := time.Now().Add(20 * time.Second)
	for d.Rollbacks() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if d.Rollbacks() != 1 || !strings.Contains(d.RunningConfig(), "hostname lab-arista-eos\n") {
		t.Fatal("the unconfirmed commit was not rolled back by the timer")
	}
	other, err := collect.OpenShell(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := m.Undo(ctx, other, p, target, running); err != nil {
		t.Errorf("undo after the timer: %v", err)
	}
}

// The login drops right after commit timer: the restore logs in again
// and waits for the timer, which puts the configuration before back;
// verified, rolled back.
func TestRestoreEOSSessionLostBeforeConfirm(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute, DisconnectAfter: regexp.MustCompile(`^commit timer`)})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-arista-eos\n", "hostname lab-renamed\n")

	r := e.restoreTo(before)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonLost {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if d.Rollbacks() != 1 {
		t.Errorf("rollbacks by the timer: %d, want 1", d.Rollbacks())
	}
	if !e.holds("arista_eos", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before the restore")
	}
}

// The switch loses a line at commit: the backup after differs, the
// session is aborted (EOS puts the configuration back at once) and that
// is verified.
func TestRestoreEOSVerifyMismatchRollsBack(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute, DropLines: regexp.MustCompile(`^ntp server vrf MGMT 192\.0\.2\.124$`)})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-arista-eos\n", "hostname lab-renamed\n")
	v := e.version(strings.Replace(e.text(*before.SnapshotHash), "ntp server vrf MGMT 192.0.2.123\n",
		"ntp server vrf MGMT 192.0.2.123\nntp server vrf MGMT 192.0.2.124\n", 1))

	r := e.restoreTo(v)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonMismatch {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("arista_eos", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before the restore")
	}
	c := d.Commits()
	if d.Rollbacks() != 0 || c[len(c)-1].Kind != devsim.CommitRevert {
		t.Errorf("not put back by the abort (rollbacks %d, last %s)", d.Rollbacks(), c[len(c)-1].Kind)
	}
	if _, pending := d.ConfirmPending(); pending {
		t.Error("a commit timer still runs")
	}
}

// A banner is text up to EOF, which a session typed line by line cannot
// take: the restore is refused before a session is opened.
func TestRestoreEOSBannerRefused(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("arista_eos", devsim.Options{Minute: junosMinute})
	before := e.backup()
	after := e.changeByHand(d, "hostname lab-arista-eos\n", "hostname lab-renamed\n")
	commits := len(d.Commits())
	v := e.version(strings.Replace(e.text(*before.SnapshotHash), "spanning-tree mode mstp\n",
		"spanning-tree mode mstp\n!\nbanner login\nAuthorised access only\nEOF\n", 1))

	r := e.restoreTo(v)
	if r.State != db.RestoreFailed || !strings.Contains(deref(r.Error), `"banner login"`) || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if len(d.Commits()) != commits || !e.holds("arista_eos", e.text(*after.SnapshotHash)) {
		t.Error("the device changed")
	}
	segs, _, _ := e.store.RestoreTranscript(context.Background(), r.ID)
	for _, s := range segs {
		if strings.Contains(s.Text, "configure session") {
			t.Error("a session was opened")
		}
	}
}
