package cli_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// kill -9 of the server in the middle of a restore, then a new server:
// the restore is recorded as interrupted with its state unknown, never
// run again on its own, and the device is free for the backup that
// shows where it stands.
//
// The device is a simulated Junos router whose every answer drips out
// slowly, so the restore spends long enough in each stage for the kill
// to land while the router is being written to or verified; its commit
// confirmed timer (a "minute" of 300 ms) then undoes the uncommitted
// change on its own, as a real router would after the server died.
func TestRestoreKilledMidRunIsInterruptedAndNeverRetried(t *testing.T) {
	t.Parallel() // see runTests
	data := storeDir(t)
	ctx := context.Background()
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, data)
	sim, err := devsim.NewDevice(devsim.Options{Platform: "juniper_junos", Hostname: "edge-1", Seed: 7,
		Username: simUser, Password: simPassword, SSHAddr: "127.0.0.1:0", Minute: 300 * time.Millisecond,
		DripDelay: 3 * time.Millisecond, DripChunk: 64, Failures: []devsim.Failure{devsim.FailSlowDrip}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: simUser,
		Password: sealer.Seal(simPassword, secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(sim.SSHAddr())
	port, _ := strconv.Atoi(p)
	dev, err := store.CreateDevice(ctx, db.Device{Name: "edge-1", Host: "127.0.0.1", Port: port, Platform: "juniper_junos",
		LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(dev.ID, 10)

	// Yesterday's version, then a change by hand.
	mustRun(t, call{}, "backup", "run", "--device", id, "--data", data)
	versions, _, err := store.ListBackups(ctx, dev.ID, 10, 0)
	if err != nil || len(versions) != 1 {
		t.Fatalf("first backup: %d versions, %v", len(versions), err)
	}
	version := versions[0]
	conf := sim.RunningConfig()
	if !strings.Contains(conf, "host-name edge-1;") {
		t.Fatalf("the simulated router has no host-name line:\n%s", conf)
	}
	sim.SetRunningConfig(strings.Replace(conf, "host-name edge-1;", "host-name edge-renamed;", 1))
	mustRun(t, call{}, "backup", "run", "--device", id, "--data", data)

	srv := startServe(t, data)
	r := mustRun(t, call{}, "config", "restore", id, "--version", version.ID, "--data", data)
	m := requestedID.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("config restore printed no restore ID:\n%s", r)
	}
	rid, _ := strconv.ParseInt(m[1], 10, 64)
	rs := waitRestore(t, store, rid, 60*time.Second, func(rs db.Restore) bool { return rs.State != db.RestorePreviewing })
	if rs.State != db.RestorePending || rs.PreviewBackupID == nil {
		t.Fatalf("restore %d after its preview: %s (error %v)", rid, rs.State, rs.Error)
	}
	mustRun(t, call{}, "config", "restore-approve", m[1], "--preview", *rs.PreviewBackupID, "--data", data)

	// Kill the server while it writes to the router or verifies.
	rs = waitRestore(t, store, rid, 60*time.Second, func(rs db.Restore) bool {
		return !rs.Open() || rs.Stage == "apply" || rs.Stage == "verify"
	})
	if !rs.Open() {
		t.Fatalf("the restore ended (%s) before the kill; the test proves nothing", rs.State)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.done
	stage := rs.Stage
	t.Logf("killed during stage %s", stage)

	// A new server finds the restore's job left by a dead process.
	startServe(t, data)
	rs = waitRestore(t, store, rid, 60*time.Second, func(rs db.Restore) bool { return !rs.Open() })
	if rs.State != db.RestoreInterrupted || rs.Error == nil || *rs.Error != queue.ErrorInterruptedUnknown {
		t.Fatalf("restore after the kill: %s, error %v; want interrupted, %q", rs.State, rs.Error, queue.ErrorInterruptedUnknown)
	}
	if !strings.Contains(*rs.Error, "state unknown") {
		t.Fatalf("the interruption does not say the state is unknown: %q", *rs.Error)
	}

	// Several rounds of the leader later, nothing has run it again.
	restoreJobs := func() int {
		var n int
		if err := dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE kind = ?`, queue.KindRestore).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	jobsThen := restoreJobs()
	time.Sleep(7 * time.Second)
	again, err := store.Restore(ctx, rid)
	if err != nil {
		t.Fatal(err)
	}
	if again.State != db.RestoreInterrupted || again.UpdatedAt != rs.UpdatedAt || restoreJobs() != jobsThen || jobsThen != 1 {
		t.Fatalf("after the interruption: restore %s (updated %s, was %s), %d restore jobs (were %d); want it left alone with its one job",
			again.State, again.UpdatedAt, rs.UpdatedAt, restoreJobs(), jobsThen)
	}

	// The device is not held by the dead restore: a backup shows where it
	// stands, which the status command points to.
	out := mustRun(t, call{}, "config", "restore-status", m[1], "--data", data)
	if !strings.Contains(out.stdout, "state unknown") {
		t.Fatalf("restore-status does not say the state is unknown:\n%s", out)
	}
	mustRun(t, call{}, "backup", "run", "--device", id, "--data", data)
}

// waitRestore polls restore id until done holds, for at most limit.
func waitRestore(t *testing.T, store *db.Store, id int64, limit time.Duration, done func(db.Restore) bool) db.Restore {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		rs, err := store.Restore(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if done(rs) {
			return rs
		}
		if time.Now().After(deadline) {
			t.Fatalf("restore %d still %s (stage %q) after %s", id, rs.State, rs.Stage, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
