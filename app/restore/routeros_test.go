package restore_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/app/collect"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/db"
)

// resets counts the resets in the device's history since commit n.
func resets(d *devsim.Device, n int) int {
	k := 0
	for _, c := range d.Commits()[n:] {
		if c.Kind == devsim.CommitReset {
			k++
		}
	}
	return k
}

const rosIdentity = "/system identity\nset name=lab-mikrotik-routeros\n"

// The router is reset to run the version, reboots, stays away for its
// boot time, and the restore logs in again and verifies.
func TestRestoreRouterOSResetImport(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("mikrotik_routeros", devsim.Options{BootTime: 1500 * time.Millisecond})
	before := e.backup()
	e.changeByHand(d, rosIdentity, "/system identity\nset name=lab-renamed\n")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("mikrotik_routeros", e.text(*before.SnapshotHash)) {
		t.Error("the router does not hold the version")
	}
	if n := resets(d, commits); n != 1 {
		t.Errorf("%d resets, want 1", n)
	}
	if files := d.Files(); len(files) != 0 {
		t.Errorf("files left on the router: %v", files)
	}
	if strings.Contains(e.log.String(), "Pa55-not-in-logs") {
		t.Error("the login password reached the log")
	}
	e.noSecretsInTranscript(d, r.ID)
}

// A line the router would refuse: the dry run says so before anything is
// reset; the restore fails and the router runs what it ran.
func TestRestoreRouterOSRefusedByDryRun(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("mikrotik_routeros", devsim.Options{RejectLines: regexp.MustCompile(`^set name=lab-mikrotik-routeros$`)})
	before := e.backup()
	after := e.changeByHand(d, rosIdentity, "/system identity\nset name=lab-renamed\n")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if !strings.Contains(deref(r.Error), "Script Error: syntax error") {
		t.Errorf("the error does not give the router's answer: %s", deref(r.Error))
	}
	if len(d.Commits()) != commits || !e.holds("mikrotik_routeros", e.text(*after.SnapshotHash)) {
		t.Error("the router changed")
	}
	if files := d.Files(); len(files) != 0 {
		t.Errorf("the script was left on the router: %v", files)
	}
}

// The router loses a line of the script at boot: the backup after
// differs, the router is reset again with the export from before (into
// its flash/ folder, where files survive the reboot), and that is
// verified.
func TestRestoreRouterOSVerifyMismatchResetsBack(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	d := e.sim("mikrotik_routeros", devsim.Options{BootTime: 300 * time.Millisecond, DropLines: regexp.MustCompile(`^add address=192\.0\.2\.124$`)})
	d.PutFile("flash/skin.json", []byte("{}"))
	before := e.backup()
	after := e.changeByHand(d, rosIdentity, "/system identity\nset name=lab-renamed\n")
	commits := len(d.Commits())
	v := e.version(strings.Replace(e.text(*before.SnapshotHash), "add address=192.0.2.123\n", "add address=192.0.2.123\nadd address=192.0.2.124\n", 1))

	r := e.restoreTo(v)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonMismatch {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !e.holds("mikrotik_routeros", e.text(*after.SnapshotHash)) {
		t.Error("the router is not back on its configuration before the restore")
	}
	if n := resets(d, commits); n != 2 {
		t.Errorf("%d resets, want 2 (the restore and its undo)", n)
	}
	segs, _, err := e.store.RestoreTranscript(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, s := range segs {
		all.WriteString(s.Text)
	}
	if !strings.Contains(all.String(), "scp -t flash/backupd-restore.rsc") {
		t.Error("the script was not written to flash/")
	}
}

// A runner whose logins cannot log in again: the router is not reset.
func TestRestoreRouterOSNeedsReconnect(t *testing.T) {
	e := newEngineEnvOpen(t, func(ctx context.Context, t collect.Target) (restore.Shell, error) {
		sh, err := collect.OpenShell(ctx, t)
		if err != nil {
			return nil, err
		}
		return sh, nil
	})
	d := e.sim("mikrotik_routeros", devsim.Options{})
	before := e.backup()
	after := e.changeByHand(d, rosIdentity, "/system identity\nset name=lab-renamed\n")
	commits := len(d.Commits())

	r := e.restoreTo(before)
	if r.State != db.RestoreFailed || !strings.Contains(deref(r.Error), "cannot log in again") || !strings.Contains(deref(r.Error), "nothing was changed") {
		t.Fatalf("restore %s (%s): %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	if len(d.Commits()) != commits || !e.holds("mikrotik_routeros", e.text(*after.SnapshotHash)) {
		t.Error("the router changed")
	}
}
