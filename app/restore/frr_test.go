package restore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/app/restore/frrplan"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testfrr"
	"backupd/internal/testkit"
)

// env is a store, an engine that runs restores and the restore service,
// with one real FRR router registered as a device.
type env struct {
	t       testing.TB
	store   *db.Store
	sealer  *secret.Sealer
	engine  *backup.Engine
	svc     *restore.Service
	disp    *restore.Dispatcher
	runner  *restore.Runner
	router  *testfrr.Router
	device  int64
	log     *testkit.LockedBuffer
	admin   restore.Actor
	adminID int64
}

func newEnv(t testing.TB, opts testfrr.Options) *env {
	t.Helper()
	router := testfrr.Start(t, opts)
	e := newEngineEnv(t)
	e.router = router
	_, p, _ := net.SplitHostPort(router.Addr)
	port, _ := strconv.Atoi(p)
	e.device = e.addDevice(router.Hostname, "frr", port, db.Credential{Name: "frr", Username: router.User,
		PrivateKey: e.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)})
	return e
}

// newEngineEnv is a store with an engine running restores and the
// restore service, no device yet.
func newEngineEnv(t testing.TB) *env {
	t.Helper()
	return newEngineEnvOpen(t, restore.OpenShell)
}

// newEngineEnvOpen is newEngineEnv whose runner logs in with open.
//
// Every env has its own store, engine, log and devices, so the restores
// on real FRR or on a simulated device's commit timer, which mostly wait
// for the router or the timer, call t.Parallel. The tests that read the
// process's restore counters (metrics_test.go) or set the custom
// platforms (custom_test.go) do not: they run alone, before those.
func newEngineEnvOpen(t testing.TB, open func(ctx context.Context, t collect.Target) (restore.Shell, error)) *env {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	buf := &testkit.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	keys := redact.NewKeyring(sealer)
	runner := &restore.Runner{Store: store, Keys: keys, Log: log, Open: open}
	engine := backup.New(store, sealer, log, backup.Options{Workers: 4, Poll: 50 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Second, Job: 60 * time.Second},
		Work:     map[string]backup.WorkRunner{queue.KindRestore: runner, queue.KindPush: restore.PushRunner{Runner: runner}}})
	runner.Engine = engine
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = engine.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	svc := &restore.Service{Store: store, Engine: engine, Keys: keys, Log: log}
	uid := int64(1)
	return &env{t: t, store: store, sealer: sealer, engine: engine, svc: svc, disp: &restore.Dispatcher{Service: svc}, runner: runner,
		log: buf, adminID: uid, admin: restore.Actor{UserID: &uid, Name: "admin",
			Audit: func(action string, details map[string]any) *db.AuditEntry {
				return &db.AuditEntry{UserID: &uid, Username: "admin", Interface: "web", Action: action, Details: details}
			}}}
}

// addDevice registers a device on 127.0.0.1:port with its own credential.
func (e *env) addDevice(name, platform string, port int, cred db.Credential) int64 {
	e.t.Helper()
	ctx := context.Background()
	c, err := e.store.CreateCredential(ctx, cred)
	if err != nil {
		e.t.Fatal(err)
	}
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "127.0.0.1", Port: port,
		Platform: platform, LoginMethod: "ssh", CredentialID: &c.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		e.t.Fatal(err)
	}
	return dev.ID
}

// backup backs the router up now and returns the version.
func (e *env) backup() db.Backup {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := e.engine.Enqueue(ctx, []int64{e.device}, queue.TriggerManual)
	if err != nil {
		e.t.Fatal(err)
	}
	for ctx.Err() == nil {
		js, err := e.store.Queue.GetJobs(ctx, ids)
		if err != nil || len(js) != 1 {
			e.t.Fatal(len(js), err)
		}
		j := js[0]
		if j.State == "succeeded" {
			b, err := e.store.GetBackup(ctx, *j.BackupID)
			if err != nil {
				e.t.Fatal(err)
			}
			return b
		}
		if j.State == "failed" {
			e.t.Fatalf("backup failed: %v\n%s", j.Error, e.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("the backup did not end\n%s", e.log.String())
	return db.Backup{}
}

// until ticks the dispatcher until the restore is in one of states.
func (e *env) until(id int64, states ...string) db.Restore {
	e.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := e.disp.Tick(ctx); err != nil {
			e.t.Fatal(err)
		}
		r, err := e.store.Restore(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if slices.Contains(states, r.State) {
			return r
		}
		time.Sleep(30 * time.Millisecond)
	}
	r, _ := e.store.Restore(ctx, id)
	e.t.Fatalf("restore %d is %s (stage %q), want %v\n%s", id, r.State, r.Stage, states, e.log.String())
	return r
}

func (e *env) text(hash string) string {
	e.t.Helper()
	s, err := e.store.SnapshotText(context.Background(), hash)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// The proof: yesterday's version is put back on a real FRR
// router changed by hand since, through request, preview, approval and
// the run; vtysh then shows that version, and the restore took a backup
// before and one after, both with the trigger "restore".
func TestRestoreYesterdaysVersionOnRealFRR(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEnv(t, testfrr.Options{Hostname: "edge1"})
	ctx := context.Background()
	yesterday := e.backup()
	// By hand: a neighbour added, a description and a password changed,
	// a prefix-list entry and a whole route-map removed.
	e.router.Vtysh(t, "configure terminal",
		"router bgp 65001", "neighbor 192.0.2.99 remote-as 65099", "neighbor 192.0.2.99 description added-by-hand",
		"neighbor 192.0.2.10 description customer-a-renamed", "neighbor 192.0.2.20 password n3w-s3cret", "exit",
		"no route-map RM-TRANSIT-OUT deny 20", "no ip prefix-list PL-CUSTOMER-IN seq 100 deny any")
	today := e.backup()
	if !today.Changed {
		t.Fatal("the change by hand was not seen")
	}

	r, err := e.svc.Request(ctx, e.admin, e.device, yesterday.ID, "undo the change of this morning", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if r.PreviewHash == nil || *r.PreviewHash != *today.SnapshotHash {
		t.Fatalf("the preview is not the device's configuration now: %v", r.PreviewHash)
	}
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, "checked"); err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s: %v (%v)\n%s", r.State, deref(r.Error), deref(r.ErrorReason), e.log.String())
	}
	want := e.text(*yesterday.SnapshotHash)
	got := e.router.RunningConfig(t)
	if !frrplan.Equal(got, want) {
		t.Errorf("vtysh does not show yesterday's version:\n%s", strings.Join(frrplan.Diff(got, want), "\n"))
	}
	if strings.Contains(got, "192.0.2.99") || strings.Contains(got, "n3w-s3cret") || !strings.Contains(got, " neighbor 192.0.2.20 password s3cret-bgp") {
		t.Errorf("the change by hand is still there:\n%s", got)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(deref(r.Outcome)), &out); err != nil || out["verified"] != true {
		t.Errorf("outcome %v (%v): not verified", deref(r.Outcome), err)
	}
	for name, id := range map[string]*string{"before": r.PreBackupID, "after": r.PostBackupID} {
		if id == nil {
			t.Fatalf("no backup %s the restore", name)
		}
		b, err := e.store.GetBackup(ctx, *id)
		if err != nil || !b.Success || b.Trigger != queue.TriggerRestore {
			t.Errorf("backup %s the restore: %+v, %v", name, b, err)
		}
	}
	if strings.Contains(e.log.String(), "s3cret-bgp") || strings.Contains(e.log.String(), "n3w-s3cret") {
		t.Error("a neighbour password reached the log")
	}
	// The session typed the password back: its transcript masks it, in
	// the line sent and in the router's echo behind its prompt.
	segs, _, err := e.store.RestoreTranscript(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sent strings.Builder
	for _, s := range segs {
		sent.WriteString(s.Text)
	}
	if !strings.Contains(sent.String(), "neighbor 192.0.2.20 password <secret:") {
		t.Errorf("the transcript does not show the password line masked:\n%s", sent.String())
	}
	if strings.Contains(sent.String(), "s3cret-bgp") || strings.Contains(sent.String(), "n3w-s3cret") {
		t.Errorf("the transcript shows a neighbour password:\n%s", sent.String())
	}
	// Audited: the request and approval by the admin, the end by the
	// system.
	entries, _, err := e.store.ListAudit(ctx, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range entries {
		if a.TargetType == "restore" && a.TargetID == strconv.FormatInt(r.ID, 10) {
			actions = append(actions, a.Interface+":"+a.Action)
		}
	}
	slices.Sort(actions)
	if strings.Join(actions, ",") != "system:restore.finish,web:restore.approve,web:restore.request" {
		t.Errorf("audit of the restore: %v", actions)
	}
	// Saved ("write memory"): the router starts on the version too.
	saved, err := os.ReadFile(filepath.Join(e.router.Dir, "etc", "frr.conf"))
	if err != nil || !frrplan.Equal(string(saved), want) {
		t.Errorf("the version was not saved (%v):\n%s", err, saved)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// version stores text as a good backup of the device (a version taken
// elsewhere, as an import keeps it) and returns it.
func (e *env) version(text string) db.Backup {
	e.t.Helper()
	ctx := context.Background()
	hash, err := e.store.PutSnapshot(ctx, text)
	if err != nil {
		e.t.Fatal(err)
	}
	at := time.Now().Add(-48 * time.Hour)
	n := int64(len(text))
	b := db.Backup{ID: "00000000-0000-4000-8000-0000000000aa", DeviceID: e.device, StartedAt: at, FinishedAt: &at, Success: true,
		SnapshotHash: &hash, Trigger: queue.TriggerManual, Bytes: &n}
	if err := e.store.InsertBackup(ctx, b); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// A version with a line the router refuses (a static route: staticd
// does not run) is applied up to that line, then the router is put back
// on what it ran before and that is verified: the restore ends
// "rolled_back" with the router's answer, and the router runs its
// configuration of before, line for line.
func TestRestoreRefusedLineRollsBackOnRealFRR(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEnv(t, testfrr.Options{Hostname: "edge2"})
	ctx := context.Background()
	before := e.backup()
	good := e.text(*before.SnapshotHash)
	bad := strings.Replace(good, " neighbor 192.0.2.10 description customer-a\n",
		" neighbor 192.0.2.10 description customer-a-restored\n", 1)
	bad = strings.Replace(bad, "ip prefix-list PL-OWN seq 5 permit 203.0.113.0/24\n",
		"ip prefix-list PL-OWN seq 5 permit 203.0.113.0/24\nip route 192.0.2.128/25 192.0.2.1\n", 1)
	if bad == good || !strings.Contains(bad, "ip route") {
		t.Fatal("the test's version is not what it means to be")
	}
	v := e.version(bad)

	r, err := e.svc.Request(ctx, e.admin, e.device, v.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonRefused {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if !strings.Contains(deref(r.Error), "staticd is not running") || !strings.Contains(deref(r.Error), "put back and verified") {
		t.Errorf("the error does not give the router's answer and the rollback: %s", deref(r.Error))
	}
	if got := e.router.RunningConfig(t); !frrplan.Equal(got, good) || strings.Contains(got, "customer-a-restored") {
		t.Errorf("the router is not back on its configuration:\n%s", strings.Join(frrplan.Diff(got, good), "\n"))
	}
	if r.RollbackBackupID == nil {
		t.Error("no backup verifies the rollback")
	}
	segs, _, err := e.store.RestoreTranscript(ctx, r.ID)
	if err != nil || len(segs) == 0 {
		t.Fatalf("no transcript: %v", err)
	}
	var all strings.Builder
	for _, s := range segs {
		all.WriteString(s.Text)
	}
	if strings.Contains(all.String(), "s3cret-bgp") {
		t.Error("the transcript shows the neighbour password")
	}
}
