package restore_test

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
)

// junosMinute is a confirm-timer minute of the simulated Junos: the
// platform's 5-minute confirm lasts 1.5 s, long enough for the backup
// that verifies a restore, short enough to see a timer roll back.
const junosMinute = 300 * time.Millisecond

// lostMinute is the confirm-timer minute of the tests where the session
// drops before the confirm: long, so that the restore's own undo, not
// the device's timer, puts the configuration back however loaded the
// machine (a timer running out under the undo leaves the device's state
// to be found by a backup, and the restore says so).
const lostMinute = 2 * time.Second

// sim starts a simulated device of platform and registers it.
func (e *env) sim(platform string, o devsim.Options) *devsim.Device {
	e.t.Helper()
	o.Platform, o.Hostname, o.SSHAddr = platform, "lab-"+strings.ReplaceAll(platform, "_", "-"), "127.0.0.1:0"
	o.Username, o.Password = "netops", "Pa55-not-in-logs"
	d, err := devsim.NewDevice(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	_, p, _ := net.SplitHostPort(d.SSHAddr())
	port, _ := strconv.Atoi(p)
	e.device = e.addDevice(o.Hostname, platform, port, db.Credential{Name: o.Hostname, Username: o.Username,
		Password: e.sealer.Seal(o.Password, secret.PurposePassword)})
	return d
}

// changeByHand changes the device's configuration as an operator would
// and backs it up: the version to restore is the one before.
func (e *env) changeByHand(d *devsim.Device, from, to string) db.Backup {
	e.t.Helper()
	conf := d.RunningConfig()
	if !strings.Contains(conf, from) {
		e.t.Fatalf("the configuration has no %q", from)
	}
	d.SetRunningConfig(strings.Replace(conf, from, to, 1))
	b := e.backup()
	if !b.Changed {
		e.t.Fatal("the change by hand was not seen")
	}
	return b
}

// restoreTo requests, previews and approves a restore of version, and
// waits for its end.
func (e *env) restoreTo(version db.Backup) db.Restore {
	e.t.Helper()
	ctx := context.Background()
	r, err := e.svc.Request(ctx, e.admin, e.device, version.ID, "", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
		e.t.Fatal(err)
	}
	return e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
}

// holds reports whether the device's configuration is text's, noise
// ignored, by a backup taken now.
func (e *env) holds(platform, text string) bool {
	e.t.Helper()
	now := e.text(*e.backup().SnapshotHash)
	f, err := backup.NewNoiseFilter(platform, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return !backup.Changed(text, now, f)
}

func TestRestoreJunosCommitConfirmed(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("juniper_junos", devsim.Options{Minute: junosMinute})
	before := e.backup()
	e.changeByHand(d, "    host-name lab-juniper-junos;", "    host-name lab-renamed;")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("juniper_junos", e.text(*before.SnapshotHash)) {
		t.Error("the device does not hold the version")
	}
	// commit confirmed, then commit: two commits, and no rollback by
	// the timer, even once it would have run out.
	kinds := []string{}
	for _, c := range d.Commits()[commits:] {
		kinds = append(kinds, string(c.Kind))
	}
	if strings.Join(kinds, ",") != string(devsim.CommitConfirmed)+","+string(devsim.CommitCommit) {
		t.Errorf("commits %v, want confirmed then commit", kinds)
	}
	time.Sleep(6 * junosMinute)
	if d.Rollbacks() != 0 || !e.holds("juniper_junos", e.text(*before.SnapshotHash)) {
		t.Error("the confirmed restore was rolled back by the timer")
	}
	if strings.Contains(e.log.String(), "Pa55-not-in-logs") {
		t.Error("the login password reached the log")
	}
}

// A line the device refuses while loading: nothing is committed, the
// restore fails saying so, and the device keeps its configuration.
func TestRestoreJunosRefusedLoadChangesNothing(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("juniper_junos", devsim.Options{Minute: junosMinute, RejectLines: regexp.MustCompile(`host-name lab-juniper-junos;`)})
	before := e.backup()
	after := e.changeByHand(d, "    host-name lab-juniper-junos;", "    host-name lab-renamed;")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	// The answer shown is the device's error line, without its echo of
	// the ^D that ended the input.
	_, answer, _ := strings.Cut(deref(r.Error), `load override)": `)
	if !strings.HasPrefix(answer, "terminal:") || !strings.Contains(answer, "syntax error") || strings.Contains(deref(r.Error), "^D") {
		t.Errorf("the error does not give the device's answer alone: %s", deref(r.Error))
	}
	if len(d.Commits()) != commits || !e.holds("juniper_junos", e.text(*after.SnapshotHash)) {
		t.Error("the device changed")
	}
}

// The session drops right after "commit confirmed": the restore logs in
// again and puts the configuration before back (the timer would have
// too), verifies it, and reports it rolled back.
func TestRestoreJunosSessionLostBeforeConfirm(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("juniper_junos", devsim.Options{Minute: lostMinute, DisconnectAfter: regexp.MustCompile(`^commit confirmed`)})
	before := e.backup()
	after := e.changeByHand(d, "    host-name lab-juniper-junos;", "    host-name lab-renamed;")

	r := e.restoreTo(before)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonLost {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("juniper_junos", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before the restore")
	}
}

// The device takes the version but loses a line at commit: the backup
// after differs, the configuration before is committed again and
// verified.
func TestRestoreJunosVerifyMismatchRollsBack(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("juniper_junos", devsim.Options{Minute: junosMinute, DropLines: regexp.MustCompile(`server 192\.0\.2\.124;`)})
	before := e.backup()
	after := e.changeByHand(d, "    host-name lab-juniper-junos;", "    host-name lab-renamed;")
	// The version has a second NTP server, which the device drops at
	// commit.
	v := e.version(strings.Replace(e.text(*before.SnapshotHash), "        server 192.0.2.123;\n", "        server 192.0.2.123;\n        server 192.0.2.124;\n", 1))
	r := e.restoreTo(v)
	if r.State != db.RestoreRolledBack {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if deref(r.ErrorReason) != restore.ReasonMismatch {
		t.Errorf("reason %s, want %s", deref(r.ErrorReason), restore.ReasonMismatch)
	}
	if !e.holds("juniper_junos", e.text(*after.SnapshotHash)) {
		t.Error("the device is not back on its configuration before the restore")
	}
}

// The undo fails too (the router refuses the configuration before when
// it is loaded again), but the change was committed under "commit
// confirmed", which nobody confirmed: the restore waits for the router's
// own timer, backs it up, finds the configuration before, and reports it
// rolled back by the timer, verified.
func TestRestoreJunosTimerPutsBackWhatTheUndoCouldNot(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	e.runner.Minute = junosMinute
	d := e.sim("juniper_junos", devsim.Options{Minute: junosMinute, DropLines: regexp.MustCompile(`server 192\.0\.2\.124;`),
		RejectLines: regexp.MustCompile(`host-name lab-renamed;`)})
	before := e.backup()
	after := e.changeByHand(d, "    host-name lab-juniper-junos;", "    host-name lab-renamed;")
	v := e.version(strings.Replace(e.text(*before.SnapshotHash), "        server 192.0.2.123;\n", "        server 192.0.2.123;\n        server 192.0.2.124;\n", 1))
	r := e.restoreTo(v)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonMismatch ||
		!strings.Contains(deref(r.Error), "putting the configuration back failed too") || !strings.Contains(deref(r.Error), "confirm timer ran out") {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if r.RollbackBackupID == nil || !strings.Contains(deref(r.Outcome), `"rollback_verified":true`) {
		t.Errorf("no verified backup after the timer: %v, outcome %s", r.RollbackBackupID, deref(r.Outcome))
	}
	if d.Rollbacks() == 0 || !e.holds("juniper_junos", e.text(*after.SnapshotHash)) {
		t.Errorf("the router's timer did not put the configuration back (%d rollbacks)", d.Rollbacks())
	}
}
