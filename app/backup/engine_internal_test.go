package backup

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"backupd/app/cluster/lock"
	"backupd/app/collect"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// A panic while backing one device up fails that job only, with a message
// that quotes nothing the device sent; the other devices are backed up.
func TestPanicFailsOnlyItsOwnJob(t *testing.T) {
	ctx := context.Background()
	store, sealer, ids := internalFleet(t, "192.0.2.1", "192.0.2.66", "192.0.2.3")
	boomID := ids[1]
	var logs bytes.Buffer
	e := New(store, sealer, slog.New(slog.NewTextHandler(&logs, nil)), Options{Workers: 3})
	// No connection is made: the collector stands in for a driver that
	// panics on what one device sent.
	e.collect = func(_ context.Context, tg collect.Target) (collect.Result, error) {
		if tg.Host == "192.0.2.66" {
			panic("secret line: enable secret 5 $1$abc")
		}
		return collect.Result{Text: "hostname " + tg.Host + "\n"}, nil
	}
	runCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	jobs, err := e.Enqueue(runCtx, ids, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]queue.Job{}
	if err := e.RunJobs(runCtx, jobs, func(j queue.Job) { got[j.DeviceID] = j }); err != nil {
		t.Fatal(err)
	}
	if j := got[boomID]; j.State != queue.JobFailed || j.Error == nil || !strings.Contains(*j.Error, "internal error") {
		t.Fatalf("panicking device: %+v", j)
	}
	for _, id := range []int64{ids[0], ids[2]} {
		if got[id].State != queue.JobSucceeded {
			t.Fatalf("device %d next to the panic: %s", id, got[id].State)
		}
	}
	if strings.Contains(logs.String(), "enable secret") {
		t.Fatal("the panic value, which may quote device output, reached the log")
	}
}

// internalFleet opens a store in a temporary directory with one
// credential and a cisco_ios device (SSH) at each of hosts, and returns
// it, its sealer and the devices' ids in order.
func internalFleet(t *testing.T, hosts ...string) (*db.Store, *secret.Sealer, []int64) {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, _ := secret.New(bytes.Repeat([]byte{1}, 32))
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "c", Username: "u", Password: sealer.Seal("pw", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, host := range hosts {
		d, err := store.CreateDevice(ctx, db.Device{Name: host, Host: host, Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	return store, sealer, ids
}

// An engine's liveness lock held a moment by another session (its own
// previous run's, until the server sees that connection close; another
// node checking for orphaned jobs) does not stop the engine's next run:
// it waits for the lock instead of failing at once, as a run right after
// another under load did.
func TestEngineWaitsForItsLivenessLock(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("the liveness lock is PostgreSQL's (on SQLite it is a lock file); set " + dbtest.Env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store := dbtest.Open(t)
	sealer, _ := secret.New(bytes.Repeat([]byte{1}, 32))
	e := New(store, sealer, slog.New(slog.DiscardHandler), Options{})
	other, err := lock.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := other.TryLock(ctx, queue.OwnerLockName(e.owner())); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	let := time.AfterFunc(300*time.Millisecond, other.Close)
	defer let.Stop()
	release, _, err := e.holdLiveness(ctx, e.owner())
	if err != nil {
		t.Fatalf("holdLiveness while another session let go of the lock: %v", err)
	}
	defer release()
	// The engine holds it now: another session cannot take it.
	probe, err := lock.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if ok, err := probe.TryLock(ctx, queue.OwnerLockName(e.owner())); err != nil || ok {
		t.Fatalf("probe TryLock = %v, %v; want refused while the engine holds its lock", ok, err)
	}
}
