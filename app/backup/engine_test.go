package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db/queue"
	"backupd/db/snapstore"
	"backupd/internal/testkit"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

// engEnv is a store with one credential and simulated devices registered
// in it, plus a log that tests search for leaks.
type engEnv struct {
	t      *testing.T
	store  *db.Store
	sealer *secret.Sealer
	credID int64
	log    *testkit.LockedBuffer
	sims   map[int64]*devsim.Device
}

const (
	engUser     = "backup"
	engPassword = "Pa55-word-not-in-logs"
	engEnable   = "En4ble-not-in-logs"
)

func newEngEnv(t *testing.T) *engEnv {
	t.Helper()
	return newEngEnvOn(t, dbtest.Open(t))
}

// newEngEnvOn is newEngEnv on a store of the test's own.
func newEngEnvOn(t *testing.T, store *db.Store) *engEnv {
	t.Helper()
	ctx := context.Background()
	sealer, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: engUser,
		Password:       sealer.Seal(engPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(engEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	return &engEnv{t: t, store: store, sealer: sealer, credID: cred.ID, log: &testkit.LockedBuffer{}, sims: map[int64]*devsim.Device{}}
}

func (e *engEnv) engine(opts backup.Options) *backup.Engine {
	if opts.Timeouts == (collect.Timeouts{}) {
		opts.Timeouts = collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 5 * time.Second, Job: 20 * time.Second}
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = 50 * time.Millisecond
	}
	return backup.New(e.store, e.sealer, slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})), opts)
}

// sim starts a simulated device and registers it; method is "ssh" or
// "telnet".
func (e *engEnv) sim(name, platform, method string, o devsim.Options) int64 {
	e.t.Helper()
	o.Platform, o.Hostname, o.Username, o.Password = platform, name, engUser, engPassword
	if p, ok := devsim.Lookup(platform); ok && p.EnableCommand != "" {
		o.EnablePassword = engEnable
	}
	if method == "telnet" {
		o.TelnetAddr = "127.0.0.1:0"
	} else {
		o.SSHAddr = "127.0.0.1:0"
	}
	d, err := devsim.NewDevice(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	addr := d.SSHAddr()
	if method == "telnet" {
		addr = d.TelnetAddr()
	}
	id := e.device(name, platform, method, addr)
	e.sims[id] = d
	return id
}

func (e *engEnv) device(name, platform, method, addr string) int64 {
	e.t.Helper()
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	d, err := e.store.CreateDevice(context.Background(), db.Device{Name: name, Host: "127.0.0.1", Port: port,
		Platform: platform, LoginMethod: method, CredentialID: &e.credID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.ID
}

// run backs the devices up with a fresh engine and returns each job.
func (e *engEnv) run(eng *backup.Engine, ids ...int64) map[int64]queue.Job {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jobs, err := eng.Enqueue(ctx, ids, queue.TriggerManual)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64]queue.Job{}
	if err := eng.RunJobs(ctx, jobs, func(j queue.Job) { out[j.DeviceID] = j }); err != nil {
		e.t.Fatal(err, e.log.String())
	}
	if len(out) != len(ids) {
		e.t.Fatalf("%d of %d jobs reported", len(out), len(ids))
	}
	return out
}

func (e *engEnv) backup(j queue.Job) db.Backup {
	e.t.Helper()
	b, err := e.store.GetBackup(context.Background(), *j.BackupID)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func engClosedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A fleet with healthy devices on several platforms and transports, a
// wrong password and a device that is off: each healthy device's backup is
// exactly its configuration, only the failures fail, with their own
// reasons, and the statuses follow.
func TestEngineBacksUpAndDetectsChanges(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	healthy := []int64{
		e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 1}),
		e.sim("sw2", "huawei_vrp", "ssh", devsim.Options{Seed: 2}),
		e.sim("sw3", "hp_procurve", "telnet", devsim.Options{Seed: 3}),
		e.sim("fw4", "fortinet", "ssh", devsim.Options{Seed: 4, ConfigSize: 80 << 10}),
	}
	wrongPw := e.sim("r5", "cisco_xe", "ssh", devsim.Options{Seed: 5, Failures: []devsim.Failure{devsim.FailWrongPassword}})
	off := e.device("r6", "cisco_ios", "ssh", engClosedPort(t))
	eng := e.engine(backup.Options{Workers: 4, MaxAttempts: 2})

	jobs := e.run(eng, append(append([]int64{}, healthy...), wrongPw, off)...)
	for _, id := range healthy {
		j := jobs[id]
		if j.State != queue.JobSucceeded {
			t.Fatalf("device %d: %s %v", id, j.State, *j.Error)
		}
		b := e.backup(j)
		// The first version is the first backup, not a change.
		if !b.First || b.Changed || b.SnapshotHash == nil || b.Trigger != queue.TriggerManual {
			t.Errorf("device %d first backup: %+v", id, b)
		}
		text, err := e.store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			t.Fatal(err)
		}
		sim := e.sims[id]
		cmd := sim.Personality().ConfigCommands[0]
		want, _ := sim.LastOutput(cmd)
		if text != backup.Normalise(want) {
			t.Errorf("device %d (%s): stored text differs from the device's configuration", id, sim.Platform())
		}
		if *b.Bytes != int64(len(text)) || snapstore.Hash(text) != *b.SnapshotHash {
			t.Errorf("device %d: bytes %d / hash %s do not describe the stored text", id, *b.Bytes, *b.SnapshotHash)
		}
		d, _ := e.store.GetDevice(ctx, id)
		if d.Status != db.StatusReachable || d.LastBackupSuccess == nil || !*d.LastBackupSuccess {
			t.Errorf("device %d after success: status %s", id, d.Status)
		}
		if d.LastChangedAt != nil {
			t.Errorf("device %d: last changed at %s after its first backup only", id, *d.LastChangedAt)
		}
	}
	if j := jobs[wrongPw]; j.State != queue.JobFailed || j.Attempt != 1 || !strings.Contains(strings.ToLower(*j.Error), "auth") {
		t.Errorf("wrong password: state %s attempt %d error %v; want failed at once (no retry) with an authentication error", j.State, j.Attempt, *j.Error)
	}
	if d, _ := e.store.GetDevice(ctx, wrongPw); d.Status != db.StatusReachable {
		t.Errorf("a device that rejects the password still answered: status %s", d.Status)
	}
	if j := jobs[off]; j.State != queue.JobFailed || j.Attempt != 2 {
		t.Errorf("device that is off: state %s attempt %d; want failed after 2 attempts (connection failures are retried)", j.State, j.Attempt)
	}
	if d, _ := e.store.GetDevice(ctx, off); d.Status != db.StatusUnreachable {
		t.Errorf("device that is off: status %s, want unreachable", d.Status)
	}
	var records int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE device_id = ?`, off).Scan(&records)
	if records != 2 {
		t.Errorf("device that is off has %d attempt records, want 2", records)
	}

	// Nothing changed on the devices (only their timestamps moved): no
	// version is marked changed, and the same snapshot is reused.
	again := e.run(eng, healthy...)
	for _, id := range healthy {
		if b := e.backup(again[id]); b.Changed || b.First || !b.Success {
			t.Errorf("device %d (%s) second backup with no real change: changed=%v first=%v success=%v", id, e.sims[id].Platform(), b.Changed, b.First, b.Success)
		}
		if d, _ := e.store.GetDevice(ctx, id); d.LastChangedAt != nil {
			t.Errorf("device %d: last changed at %s, but only noise moved", id, *d.LastChangedAt)
		}
	}
	// A real change on one device is detected there only.
	e.sims[healthy[0]].Mutate(42)
	third := e.run(eng, healthy...)
	for i, id := range healthy {
		b := e.backup(third[id])
		if b.Changed != (i == 0) || b.First {
			t.Errorf("device %d after mutating device %d: changed=%v first=%v", id, healthy[0], b.Changed, b.First)
		}
		d, _ := e.store.GetDevice(ctx, id)
		if want := b.StartedAt.UTC().Format(db.TimeFormat); i == 0 && (d.LastChangedAt == nil || *d.LastChangedAt != want) {
			t.Errorf("changed device %d: last changed at %v, want %s (its newest backup)", id, d.LastChangedAt, want)
		} else if i != 0 && d.LastChangedAt != nil {
			t.Errorf("unchanged device %d: last changed at %s", id, *d.LastChangedAt)
		}
	}

	logs := e.log.String()
	for _, secret := range []string{engPassword, engEnable} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the log holds a device password")
		}
	}
	text, _ := e.store.SnapshotText(ctx, *e.backup(third[healthy[0]]).SnapshotHash)
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 12 && strings.Contains(logs, line) {
			t.Fatalf("the log holds configuration text: %q", line)
		}
	}
}

// A changed host key fails the backup with a clear message and keeps the
// new key aside; after an operator accepts it, backups work again.
func TestEngineHostKeyChange(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	id := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 9})
	eng := e.engine(backup.Options{Workers: 1})
	if j := e.run(eng, id)[id]; j.State != queue.JobSucceeded {
		t.Fatalf("first backup: %v", *j.Error)
	}
	pinned, _, _ := e.store.HostKeys(ctx, id)
	if !bytes.Equal(pinned, e.sims[id].HostKey().Marshal()) {
		t.Fatal("first backup did not pin the device's host key")
	}
	if err := e.sims[id].RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	j := e.run(eng, id)[id]
	if j.State != queue.JobFailed || j.Attempt != 1 || !strings.Contains(*j.Error, "host key changed") {
		t.Fatalf("after the key changed: %s attempt %d %v", j.State, j.Attempt, *j.Error)
	}
	_, pending, _ := e.store.HostKeys(ctx, id)
	if !bytes.Equal(pending, e.sims[id].HostKey().Marshal()) {
		t.Fatal("the changed key was not kept for the operator to accept")
	}
	if _, err := e.store.AcceptHostKey(ctx, id); err != nil {
		t.Fatal(err)
	}
	if j := e.run(eng, id)[id]; j.State != queue.JobSucceeded {
		t.Fatalf("after accepting the new key: %v", *j.Error)
	}
}

// A shutdown cuts a hanging backup off after the grace period: its record
// is failed as interrupted, never left running, and the job waits in the
// queue for the next start, which backs the device up.
func TestEngineShutdownInterruptsAndNextStartResumes(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	hang := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 11, Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	eng := e.engine(backup.Options{Workers: 2, ShutdownGrace: 300 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: time.Minute, Job: time.Minute}})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	jobs, err := eng.Enqueue(ctx, []int64{hang}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.sims[hang].Stats().ConfigShows == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("engine did not stop within the grace period")
	}
	var running int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&running)
	if running != 0 {
		t.Fatalf("%d backup records left running after shutdown", running)
	}
	got, _ := e.store.GetJobs(ctx, jobs)
	if got[0].State != queue.JobQueued || got[0].Error == nil || *got[0].Error != queue.ErrorInterrupted {
		t.Fatalf("job after shutdown: %+v", got[0])
	}
	b, _ := e.store.GetBackup(ctx, *got[0].BackupID)
	if b.ErrorMessage == nil || *b.ErrorMessage != queue.ErrorInterrupted {
		t.Fatalf("record after shutdown: %+v", b)
	}

	// The device recovers; the next start picks the queued job up.
	e.sims[hang].Close()
	healthy := e.sim("r1-replacement", "cisco_ios", "ssh", devsim.Options{Seed: 12})
	if _, err := e.store.UpdateDevice(ctx, hang, func(d *db.Device) error {
		replacement, _ := e.store.GetDevice(ctx, healthy)
		d.Port = replacement.Port
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = e.store.ForgetHostKey(ctx, hang)
	eng2 := e.engine(backup.Options{Workers: 1})
	runCtx2, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	var final queue.Job
	if err := eng2.RunJobs(runCtx2, jobs, func(j queue.Job) { final = j }); err != nil {
		t.Fatal(err)
	}
	// The shutdown was no fault of the device: it cost no attempt.
	if final.State != queue.JobSucceeded || final.Attempt != 1 || final.Interruptions != 1 {
		t.Fatalf("resumed job: %s attempt %d interruptions %d %v", final.State, final.Attempt, final.Interruptions, final.Error)
	}
}

// The server's path: the nightly schedule queued a job, and the server
// running it lost power mid-backup, again and again (each time a new
// process starts and recovers the dead one's jobs). The power cuts use up
// none of the job's attempts, so the next start backs the device up.
func TestEngineRepeatedCrashesDoNotUseUpAttempts(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	dev := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 41})
	jobs, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	const crashes = 2*backup.DefaultMaxAttempts + 1
	for i := 1; i <= crashes; i++ {
		// A server took the job and died: no process holds its owner's
		// liveness lock any more.
		if claims, err := e.store.ClaimJobs(ctx, fmt.Sprintf("server-before-power-cut-%d", i), 1, nil); err != nil || len(claims) != 1 {
			t.Fatalf("crash %d: claim = %v, %v", i, claims, err)
		}
		// The next start recovers it.
		if n, err := e.engine(backup.Options{}).Recover(ctx); err != nil || n != 1 {
			t.Fatalf("recovery after crash %d = %d, %v; want 1", i, n, err)
		}
		got, _ := e.store.GetJobs(ctx, jobs)
		if got[0].State != queue.JobQueued || got[0].Attempt != 0 || got[0].Interruptions != i {
			t.Fatalf("after crash %d: %s attempt %d interruptions %d; want queued, attempt 0, %d", i, got[0].State, got[0].Attempt, got[0].Interruptions, i)
		}
	}
	eng := e.engine(backup.Options{Workers: 1})
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var final queue.Job
	if err := eng.RunJobs(runCtx, jobs, func(j queue.Job) { final = j }); err != nil {
		t.Fatal(err)
	}
	if final.State != queue.JobSucceeded || final.Attempt != 1 || final.Interruptions != crashes {
		t.Fatalf("after %d crashes: %s attempt %d interruptions %d %v", crashes, final.State, final.Attempt, final.Interruptions, final.Error)
	}
	var interrupted int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE error_message = ?`, queue.ErrorInterrupted).Scan(&interrupted)
	if interrupted != crashes {
		t.Fatalf("interrupted records %d, want %d: each cut-off attempt stays in the history", interrupted, crashes)
	}
}

// A job whose backup stops the process every time is not retried forever:
// at the interruption limit it fails, says why, and the log names the
// device; an operator's next request backs it up afresh.
func TestEngineGivesUpAfterTooManyInterruptions(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	dev := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 42})
	jobs, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: dev, Trigger: queue.TriggerSchedule, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 4
	for i := 1; i <= limit; i++ {
		if _, err := e.store.ClaimJobs(ctx, fmt.Sprintf("crashing-%d", i), 1, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.engine(backup.Options{MaxInterruptions: limit}).Recover(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := e.store.GetJobs(ctx, jobs)
	if got[0].State != queue.JobFailed || got[0].Error == nil || *got[0].Error != queue.ErrorInterruptedTooOften || got[0].Interruptions != limit {
		t.Fatalf("after %d interruptions: %+v", limit, got[0])
	}
	if d, _ := e.store.GetDevice(ctx, dev); d.LastBackupSuccess == nil || *d.LastBackupSuccess {
		t.Fatalf("device after its job was given up: last backup success %v", d.LastBackupSuccess)
	}
	if log := e.log.String(); !strings.Contains(log, "backup given up") || !strings.Contains(log, "device_id="+strconv.FormatInt(dev, 10)) {
		t.Fatalf("the log does not name the device given up:\n%s", log)
	}
	if j := e.run(e.engine(backup.Options{Workers: 1}), dev)[dev]; j.State != queue.JobSucceeded || j.ID == jobs[0] {
		t.Fatalf("an operator's request after the job was given up: %+v", j)
	}
}

// Jobs left running by a process that died (no liveness lock) are failed
// as interrupted and run again by the next engine.
func TestEngineRecoversJobsOfADeadProcess(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	var ids []int64
	for i := range 3 {
		ids = append(ids, e.sim(fmt.Sprintf("r%d", i), "arista_eos", "ssh", devsim.Options{Seed: int64(20 + i)}))
	}
	jobs, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{
		{DeviceID: ids[0], Trigger: queue.TriggerSchedule, NotBefore: time.Now()},
		{DeviceID: ids[1], Trigger: queue.TriggerSchedule, NotBefore: time.Now()},
		{DeviceID: ids[2], Trigger: queue.TriggerSchedule, NotBefore: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A process that claimed two jobs and was killed.
	if _, err := e.store.ClaimJobs(ctx, "killed-process", 2, nil); err != nil {
		t.Fatal(err)
	}
	eng := e.engine(backup.Options{Workers: 3})
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := map[int64]queue.Job{}
	if err := eng.RunJobs(runCtx, jobs, func(j queue.Job) { done[j.ID] = j }); err != nil {
		t.Fatal(err)
	}
	for _, id := range jobs {
		if done[id].State != queue.JobSucceeded {
			t.Errorf("job %d: %s", id, done[id].State)
		}
	}
	var interrupted, running int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE error_message = ?`, queue.ErrorInterrupted).Scan(&interrupted)
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&running)
	if interrupted != 2 || running != 0 {
		t.Fatalf("interrupted records %d (want 2), running %d (want 0)", interrupted, running)
	}
}

// A live engine's jobs are not taken over by another engine's recovery.
func TestEngineRecoverLeavesLiveEngineAlone(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	hang := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 31, Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	slow := e.engine(backup.Options{Workers: 1, ShutdownGrace: 100 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: time.Minute, Job: time.Minute}})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- slow.Run(runCtx) }()
	defer func() { stop(); <-done }()
	if _, err := slow.Enqueue(ctx, []int64{hang}, queue.TriggerManual); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.sims[hang].Stats().ConfigShows == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	other := e.engine(backup.Options{})
	n, err := other.Recover(ctx)
	if err != nil || n != 0 {
		t.Fatalf("Recover took over %d jobs of a live engine (err %v)", n, err)
	}
	var running int
	dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running'`).Scan(&running)
	if running != 1 {
		t.Fatalf("running jobs = %d, want the live engine's 1", running)
	}
}

// The failure matrix: one device per failure mode among many healthy
// ones. Each misbehaving device fails only its own job, with its own
// reason in a clear message, within the job's timeout; the healthy
// devices (and the legacy and non-UTF-8 ones, which work) all succeed.
// BACKUPD_MATRIX_HEALTHY raises the healthy count (500 for the full
// check; the default keeps CI quick).
func TestEngineFailureMatrix(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	healthyCount := 60
	if n, err := strconv.Atoi(os.Getenv("BACKUPD_MATRIX_HEALTHY")); err == nil && n > 0 {
		healthyCount = n
	}
	var healthy []int64
	platforms := devsim.Platforms()
	for i := range healthyCount {
		healthy = append(healthy, e.sim(fmt.Sprintf("ok-%03d", i), platforms[i%len(platforms)], "ssh", devsim.Options{Seed: int64(100 + i)}))
	}
	type bad struct {
		name, platform, method string
		opts                   devsim.Options
		want                   string // in the error message; "" = must succeed
	}
	cases := []bad{
		{"wrong-password", "cisco_ios", "ssh", devsim.Options{Failures: []devsim.Failure{devsim.FailWrongPassword}}, "authentication failed"},
		{"legacy-only", "cisco_ios", "ssh", devsim.Options{Failures: []devsim.Failure{devsim.FailLegacyAlgorithms}}, ""},
		{"hang-before-banner", "cisco_ios", "ssh", devsim.Options{Failures: []devsim.Failure{devsim.FailHangBeforeBanner}}, "did not complete within"},
		{"hang-mid-output", "huawei_vrp", "ssh", devsim.Options{Failures: []devsim.Failure{devsim.FailHangMidOutput}}, "timed out"},
		{"disconnect-mid-output", "arista_eos", "telnet", devsim.Options{Failures: []devsim.Failure{devsim.FailDisconnectMidOutput}}, "closed the connection"},
		{"slow-drip", "cisco_nxos", "ssh", devsim.Options{ConfigSize: 64 << 10, DripDelay: 20 * time.Millisecond, DripChunk: 4,
			Failures: []devsim.Failure{devsim.FailSlowDrip}}, "timed out"},
		{"garbage", "cisco_ios", "ssh", devsim.Options{Failures: []devsim.Failure{devsim.FailGarbage}}, ""},
		{"endless-pager", "cisco_xr", "ssh", devsim.Options{EndlessPages: 1 << 20, Failures: []devsim.Failure{devsim.FailEndlessPager}}, ""},
		{"non-utf8", "huawei_vrp", "ssh", devsim.Options{Encoding: "gbk", Failures: []devsim.Failure{devsim.FailNonUTF8}}, ""},
	}
	badIDs := map[int64]bad{}
	for _, c := range cases {
		badIDs[e.sim(c.name, c.platform, c.method, c.opts)] = c
	}
	// Which devices need their encoding set to read them.
	for id, c := range badIDs {
		if c.opts.Encoding != "" {
			if _, err := e.store.UpdateDevice(ctx, id, func(d *db.Device) error { d.Encoding = c.opts.Encoding; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A device whose host key changed since it was pinned.
	rekeyed := e.sim("rekeyed", "cisco_ios", "ssh", devsim.Options{Seed: 77})
	jobTimeout := 8 * time.Second
	eng := e.engine(backup.Options{Workers: 50, MaxAttempts: 1,
		Timeouts: collect.Timeouts{Connect: 2 * time.Second, Login: 3 * time.Second, Command: 3 * time.Second, Job: jobTimeout}})
	if j := e.run(eng, rekeyed)[rekeyed]; j.State != queue.JobSucceeded {
		t.Fatalf("pinning the key: %v", *j.Error)
	}
	if err := e.sims[rekeyed].RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	badIDs[rekeyed] = bad{name: "rekeyed", want: "host key changed"}

	all := append([]int64{}, healthy...)
	for id := range badIDs {
		all = append(all, id)
	}
	jobs := e.run(eng, all...)
	for _, id := range healthy {
		if j := jobs[id]; j.State != queue.JobSucceeded {
			t.Errorf("healthy device %d (%s): %s %v", id, e.sims[id].Platform(), j.State, *j.Error)
		}
	}
	for id, c := range badIDs {
		j := jobs[id]
		b := e.backup(j)
		if b.DurationMS == nil || time.Duration(*b.DurationMS)*time.Millisecond > jobTimeout+2*time.Second {
			t.Errorf("%s: took %v ms, beyond the %v job timeout", c.name, b.DurationMS, jobTimeout)
		}
		switch {
		case c.name == "garbage" || c.name == "endless-pager":
			// Either outcome is honest for these (garbage may land in
			// between lines; a pager that never ends either times out
			// or hits the size cap), but never silently wrong text.
			if j.State != queue.JobSucceeded && (j.Error == nil || *j.Error == "") {
				t.Errorf("%s failed without a message", c.name)
			}
			if j.State == queue.JobSucceeded && c.name == "endless-pager" {
				t.Errorf("%s succeeded; a pager that never ends cannot yield a complete configuration", c.name)
			}
		case c.want == "":
			if j.State != queue.JobSucceeded {
				t.Errorf("%s: want success, got %v", c.name, *j.Error)
			}
		default:
			if j.State != queue.JobFailed || !strings.Contains(*j.Error, c.want) {
				t.Errorf("%s: state %s, error %q; want failed with %q", c.name, j.State, deref(j.Error), c.want)
			}
		}
		if j.Error != nil && (strings.Contains(*j.Error, engPassword) || strings.Contains(*j.Error, "hostname ")) {
			t.Errorf("%s: error message leaks a password or configuration text: %q", c.name, *j.Error)
		}
	}
	if t.Failed() {
		for id, c := range badIDs {
			t.Logf("%-22s %s %q", c.name, jobs[id].State, deref(jobs[id].Error))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// An operator cancels a running backup, from this process or from another
// one sharing the store: the attempt stops and is recorded as cancelled.
func TestEngineCancelRunningJob(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	long := collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: time.Minute, Job: time.Minute}
	a := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 41, Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	b := e.sim("r2", "cisco_ios", "ssh", devsim.Options{Seed: 42, Failures: []devsim.Failure{devsim.FailHangMidOutput}})
	eng := e.engine(backup.Options{Workers: 2, Timeouts: long})
	runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	jobs, err := eng.Enqueue(runCtx, []int64{a, b}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	other := dbtest.Reopen(t, e.store) // another process's handle
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for (e.sims[a].Stats().ConfigShows == 0 || e.sims[b].Stats().ConfigShows == 0) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := eng.Cancel(ctx, jobs[0]); err != nil {
			t.Error(err)
		}
		// Another process's view of the store.
		if _, err := other.CancelJob(ctx, jobs[1]); err != nil {
			t.Error(err)
		}
	}()
	got := map[int64]queue.Job{}
	if err := eng.RunJobs(runCtx, jobs, func(j queue.Job) { got[j.ID] = j }); err != nil {
		t.Fatal(err)
	}
	for _, id := range jobs {
		j := got[id]
		if j.State != queue.JobCancelled || deref(j.Error) != queue.ErrorCancelled {
			t.Errorf("job %d: %s %q; want cancelled", id, j.State, deref(j.Error))
		}
		if b := e.backup(j); b.FinishedAt == nil || b.Success || deref(b.ErrorMessage) != queue.ErrorCancelled {
			t.Errorf("job %d record: %+v", id, b)
		}
	}
}
