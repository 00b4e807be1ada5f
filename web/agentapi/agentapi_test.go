package agentapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/agent"
	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
	"backupd/web/agentapi"
)

const (
	simUser     = "backup"
	simPassword = "Remote-Pa55word-secret"
	simEnable   = "Remote-En4ble-secret"
)

type env struct {
	store   *db.Store
	sealer  *secret.Sealer
	srv     *httptest.Server
	api     *agentapi.Server
	zone    db.Zone
	credID  int64
	log     *testkit.LockedBuffer
	caFile  string
	devices map[int64]*devsim.Device
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.New(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{store: store, sealer: sealer, log: &testkit.LockedBuffer{}, devices: map[int64]*devsim.Device{}}
	log := slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if e.zone, err = store.CreateZone(ctx, "site"); err != nil {
		t.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: simUser,
		Password:       sealer.Seal(simPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(simEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	e.credID = cred.ID
	engine := backup.New(store, sealer, log.With("component", "backup"), backup.Options{})
	e.api = agentapi.New(store, sealer, engine, log.With("component", "collectors"), agentapi.Options{Lease: 3 * time.Second})
	mux := http.NewServeMux()
	e.api.Mount(mux)
	e.srv = httptest.NewTLSServer(mux)
	t.Cleanup(e.srv.Close)
	e.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(e.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) device(t testing.TB, name string, zone int64, failures ...devsim.Failure) int64 {
	t.Helper()
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: name, Username: simUser, Password: simPassword,
		EnablePassword: simEnable, SSHAddr: "127.0.0.1:0", Seed: int64(len(e.devices) + 1), Failures: failures,
		DripDelay: 20 * time.Millisecond, DripChunk: 8, DripBudget: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	p, _ := strconv.Atoi(port)
	d, err := e.store.CreateDevice(context.Background(), db.Device{Name: name, Host: "127.0.0.1", Port: p, Platform: "cisco_ios",
		LoginMethod: "ssh", CredentialID: &e.credID, Encoding: "utf-8", Enabled: true, ZoneID: zone})
	if err != nil {
		t.Fatal(err)
	}
	e.devices[d.ID] = sim
	return d.ID
}

// waitJobs waits (bounded) until every job has ended and returns them.
func (e *env) waitJobs(t testing.TB, ids []int64, within time.Duration) []queue.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		jobs, err := e.store.GetJobs(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, j := range jobs {
			if j.State != queue.JobQueued && j.State != queue.JobRunning {
				done++
			}
		}
		if done == len(ids) {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ended within %s: %+v", done, len(ids), within, jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A collector enrolled in a zone, over HTTPS with the server's
// certificate pinned by --ca-file, backs up every device of its zone and
// none of another; the server records each capture (the same text the
// device printed, normalised); the collector keeps no secret on disk and
// logs none; a revoked collector is refused and stops.
func TestCollectorBacksUpItsZone(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var remote []int64
	for i := range 4 {
		remote = append(remote, e.device(t, fmt.Sprintf("site-r%d", i), e.zone.ID))
	}
	local := e.device(t, "local-r1", db.LocalZone)
	token, _, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	clog := &testkit.LockedBuffer{}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- agent.Run(runCtx, agent.Config{Server: e.srv.URL, Token: token, DataDir: dataDir, CAFile: e.caFile,
			Name: "edge-1", Workers: 2, Version: "test-1",
			Log: slog.New(slog.NewTextHandler(clog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	}()

	reqs := []queue.JobRequest{}
	for _, id := range append(remote, local) {
		reqs = append(reqs, queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now()})
	}
	ids, err := e.store.EnqueueJobs(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	jobs := e.waitJobs(t, ids[:len(remote)], 60*time.Second)
	for _, j := range jobs {
		if j.State != queue.JobSucceeded {
			t.Fatalf("job of device %d: %s %v", j.DeviceID, j.State, j.Error)
		}
		b, err := e.store.GetBackup(ctx, *j.BackupID)
		if err != nil || !b.Success || !b.First || b.SnapshotHash == nil {
			t.Fatalf("backup of device %d = %+v, %v", j.DeviceID, b, err)
		}
		text, err := e.store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			t.Fatal(err)
		}
		printed, ok := e.devices[j.DeviceID].LastOutput("show running-config")
		if !ok || backup.Normalise(printed) != text {
			t.Fatalf("device %d: the stored text is not what the device printed", j.DeviceID)
		}
	}
	if lj, _ := e.store.GetJobs(ctx, ids[len(remote):]); len(lj) != 1 || lj[0].State != queue.JobQueued {
		t.Fatalf("the local zone's job was taken by the collector: %+v", lj)
	}
	cs, err := e.store.ListCollectors(ctx)
	if err != nil || len(cs) != 1 || cs[0].Name != "edge-1" || cs[0].Version != "test-1" || cs[0].LastSeenAt == nil || cs[0].ZoneID != e.zone.ID {
		t.Fatalf("collectors = %+v, %v", cs, err)
	}

	// Its identity file is private and holds no device secret.
	fi, err := os.Stat(filepath.Join(dataDir, agent.IdentityFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("identity file: %v %v", fi, err)
	}
	for _, leak := range []string{simPassword, simEnable} {
		entries, _ := os.ReadDir(dataDir)
		for _, de := range entries {
			raw, _ := os.ReadFile(filepath.Join(dataDir, de.Name()))
			if bytes.Contains(raw, []byte(leak)) {
				t.Fatalf("%s holds a device secret", de.Name())
			}
		}
		if strings.Contains(clog.String(), leak) || strings.Contains(e.log.String(), leak) {
			t.Fatal("a log holds a device secret")
		}
	}
	if strings.Contains(clog.String(), token) || strings.Contains(e.log.String(), token) {
		t.Fatal("a log holds the enrolment token")
	}

	// Revoked: refused at its next poll, and it stops.
	if err := e.store.RevokeCollector(ctx, cs[0].ID, queue.DefaultMaxInterruptions); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, agent.ErrRevoked) {
			t.Fatalf("a revoked collector ended with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a revoked collector kept running")
	}
}

func post(t *testing.T, e *env, path, token, body string) (int, agent.ErrorResponse) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+agent.PathPrefix+path, strings.NewReader(body))
	return send(t, e, req, token)
}

// send makes a call with token (none when empty) and reads the refusal
// the server answered with, if any.
func send(t *testing.T, e *env, req *http.Request, token string) (int, agent.ErrorResponse) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var er agent.ErrorResponse
	_ = json.NewDecoder(resp.Body).Decode(&er)
	return resp.StatusCode, er
}

// Bad calls get a clear refusal, never a 500: no or a wrong token, a
// spent enrolment token, bad JSON, a body too large, a result for a job
// the collector does not hold.
func TestCollectorProtocolRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	token, _, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := agent.NewKeyPair()
	enrol := fmt.Sprintf(`{"token":%q,"name":"edge","public_key":%q,"version":"v"}`, token, agent.EncodeKey(key.Public))
	status, _ := post(t, e, "enrol", "", enrol)
	if status != http.StatusOK {
		t.Fatalf("enrol: %d", status)
	}
	cases := []struct {
		name, path, token, body string
		status                  int
		code                    string
	}{
		{"spent token", "enrol", "", enrol, 403, agent.CodeEnrolment},
		{"unknown token", "enrol", "", strings.Replace(enrol, token, "bke_nope", 1), 403, agent.CodeEnrolment},
		{"bad key", "enrol", "", `{"token":"bke_x","name":"e","public_key":"short","version":"v"}`, 400, agent.CodeBadRequest},
		{"unknown field", "enrol", "", `{"token":"bke_x","nmae":"e"}`, 400, agent.CodeBadRequest},
		{"not json", "enrol", "", `{`, 400, agent.CodeBadRequest},
		{"no bearer", "poll", "", `{}`, 401, agent.CodeUnauthorized},
		{"wrong bearer", "poll", "bkc_wrong", `{}`, 401, agent.CodeUnauthorized},
		{"enrolment token as bearer", "poll", token, `{}`, 401, agent.CodeUnauthorized},
		{"bad job id", "jobs/x/result", "bkc_wrong", `{}`, 401, agent.CodeUnauthorized},
		{"too large", "enrol", "", `{"token":"` + strings.Repeat("a", 70<<10) + `"}`, 413, agent.CodeTooLarge},
		{"unknown call", "nothing", "", `{}`, 404, agent.CodeBadRequest},
	}
	for _, c := range cases {
		status, er := post(t, e, c.path, c.token, c.body)
		if status != c.status || er.Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, er.Code, c.status, c.code)
		}
	}
}

// An operator's cancel of a job in a collector's hands stops the
// collection there, and the job ends as cancelled, as a job of the
// server's own engine does.
func TestCollectorJobCancelled(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	slow := e.device(t, "slow", e.zone.ID, devsim.FailSlowDrip)
	token, _, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- agent.Run(runCtx, agent.Config{Server: e.srv.URL, Token: token, DataDir: t.TempDir(), CAFile: e.caFile,
			Workers: 2, Version: "test-1", ShutdownGrace: time.Second})
	}()
	defer func() { stop(); <-done }()
	ids, err := e.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: slow, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	// In the collector's hands, and the device has started printing.
	deadline := time.Now().Add(30 * time.Second)
	for e.devices[slow].Stats().ConfigShows == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the collector never started the slow device's backup")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, err := e.store.CancelJob(ctx, ids[0]); err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	jobs := e.waitJobs(t, ids, 60*time.Second)
	if jobs[0].State != queue.JobCancelled {
		t.Fatalf("job = %s %v, want cancelled", jobs[0].State, jobs[0].Error)
	}
	b, err := e.store.GetBackup(ctx, *jobs[0].BackupID)
	if err != nil || b.Success || b.ErrorMessage == nil || *b.ErrorMessage != queue.ErrorCancelled {
		t.Fatalf("backup = %+v, %v; want failed as cancelled", b, err)
	}
}
