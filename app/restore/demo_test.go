package restore_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/demo"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
)

// Every device of `serve --demo` whose platform can restore puts an
// older version back, as the README's first steps invite: the simulated
// device as the demo runs it (its size, its seed, the demo's login)
// changes the way the demo changes it, then a restore of the version
// before succeeds, verified (a merge: of every line it may send). A
// simulated configuration the device could not take back as shown
// (a user listed twice, say) fails here.
func TestDemoDevicesRestore(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	restorable := 0
	for _, name := range demo.Names() {
		o, ok := demo.Simulated(name, "demo-password", "demo-enable")
		if !ok {
			continue
		}
		p, _ := driver.Lookup(o.Platform)
		if _, ok := restore.MethodOf(p); !ok {
			continue
		}
		restorable++
		t.Run(name, func(t *testing.T) {
			e := newEngineEnv(t)
			ctx := context.Background()
			o.SSHAddr = "127.0.0.1:0"
			d, err := devsim.NewDevice(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			_, port, _ := net.SplitHostPort(d.SSHAddr())
			n, _ := strconv.Atoi(port)
			cred := db.Credential{Name: name, Username: o.Username, Password: e.sealer.Seal(o.Password, secret.PurposePassword)}
			if o.EnablePassword != "" {
				cred.EnablePassword = e.sealer.Seal(o.EnablePassword, secret.PurposeEnablePassword)
			}
			e.device = e.addDevice(name, o.Platform, n, cred)
			before := e.backup()
			d.Mutate(7)
			if !e.backup().Changed {
				t.Fatal("the demo's change was not seen")
			}
			var lines []int
			if restore.Merges(p) {
				lines = restore.AllLines(p, e.text(*before.SnapshotHash))
			}
			r, err := e.svc.Request(ctx, e.admin, e.device, before.ID, "", lines)
			if err != nil {
				t.Fatal(err)
			}
			r = e.until(r.ID, db.RestorePending, db.RestoreFailed)
			if r.State != db.RestorePending {
				t.Fatalf("preview %s: %s", r.State, deref(r.Error))
			}
			if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
				t.Fatal(err)
			}
			r = e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
			if r.State != db.RestoreSucceeded {
				t.Fatalf("restore of %s (%s) %s (%s): %s", name, o.Platform, r.State, deref(r.ErrorReason), deref(r.Error))
			}
		})
	}
	if restorable < 5 {
		t.Fatalf("only %d demo devices can restore; the README's first steps name more", restorable)
	}
}
