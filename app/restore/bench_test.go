package restore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"backupd/app/restore"
	"backupd/app/restore/frrplan"
	"backupd/db"
	"backupd/internal/testfrr"
)

// BenchmarkRestoreRealFRR measures a whole restore of a real FRR router
// (request, the preview's backup, approval, the run: backup, apply,
// backup, save) against its yardstick, one backup of the same router
// through the same engine (BenchmarkBackupRealFRR). Each iteration
// changes the router by hand first, so that the restore has work to do.
//
//	go test ./app/restore -run '^$' -bench 'RealFRR' -count 5
func BenchmarkRestoreRealFRR(b *testing.B) {
	e := newEnv(b, testfrr.Options{Hostname: "bench1"})
	ctx := context.Background()
	version := e.backup()
	want := e.text(*version.SnapshotHash)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e.router.Vtysh(b, "configure terminal", "router bgp 65001", "neighbor 192.0.2.10 description moved-by-hand")
		b.StartTimer()
		r, err := e.svc.Request(ctx, e.admin, e.device, version.ID, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		r = e.until(r.ID, db.RestorePending)
		if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
			b.Fatal(err)
		}
		r = e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
		if r.State != db.RestoreSucceeded {
			b.Fatalf("restore %s: %s", r.State, deref(r.Error))
		}
	}
	b.StopTimer()
	if got := e.router.RunningConfig(b); !frrplan.Equal(got, want) || strings.Contains(got, "moved-by-hand") {
		b.Fatal("the router does not run the version")
	}
}

// BenchmarkBackupRealFRR is the yardstick: one backup of the router.
func BenchmarkBackupRealFRR(b *testing.B) {
	e := newEnv(b, testfrr.Options{Hostname: "bench2"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.backup()
	}
}

// BenchmarkPushFiveRealFRR measures a change set pushed to 5 real FRR
// routers, all at once (the dry run, the approval, and per router: a
// backup, the lines, the save, a backup after), against its yardstick,
// one backup of each of the 5 routers one after the other through the
// same engine (BenchmarkBackupFiveRealFRR). Each iteration sends another
// description, so that every push changes the routers.
//
//	go test ./app/restore -run '^$' -bench 'FiveRealFRR' -count 5
func BenchmarkPushFiveRealFRR(b *testing.B) {
	e := newEngineEnv(b)
	ctx := context.Background()
	_, ids := e.routers(5)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "bench", Concurrency: 5, DeviceIDs: ids,
			Body: fmt.Sprintf("router bgp 65001\n neighbor 192.0.2.10 description bench-%d\n", i)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
			b.Fatal(err)
		}
		if c = e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped); c.State != db.ChangeSetDone {
			b.Fatalf("change set %s: %s", c.State, deref(c.Error))
		}
	}
}

// BenchmarkBackupFiveRealFRR is the yardstick: a backup of each of the 5
// routers, one after the other.
func BenchmarkBackupFiveRealFRR(b *testing.B) {
	e := newEngineEnv(b)
	_, ids := e.routers(5)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, id := range ids {
			e.device = id
			e.backup()
		}
	}
}
