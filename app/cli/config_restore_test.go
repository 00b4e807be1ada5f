package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
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

// restoreFixture is a data directory whose store the test also holds
// open, as a running server would, and the flags naming it.
type restoreFixture struct {
	store  *db.Store
	sealer *secret.Sealer
	flags  []string
	// admin is the built-in administrator, a signed-in person for the
	// service calls the test makes as the web interface would.
	admin restore.Actor
}

func newRestoreFixture(t *testing.T) restoreFixture {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	data := dbtest.DataDir(t, store)
	// As an installed data directory is: the first command would
	// otherwise say it tightened it.
	if err := os.Chmod(data, 0o700); err != nil {
		t.Fatal(err)
	}
	sealer, err := secret.LoadOrCreate(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Bootstrap(ctx, store); err != nil {
		t.Fatal(err)
	}
	u, err := store.UserByName(ctx, auth.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	f := restoreFixture{store: store, sealer: sealer, flags: []string{"--data", data},
		admin: restore.Actor{UserID: &u.ID, Name: u.Username}}
	if store.Postgres() {
		f.flags = append(f.flags, "--db", store.Location())
	}
	return f
}

// cli runs backupd with args and the fixture's store flags.
func (f restoreFixture) cli(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, call{env: []string{"TZ=UTC"}}, append(args, f.flags...)...)
}

func (f restoreFixture) ok(t *testing.T, args ...string) result {
	t.Helper()
	r := f.cli(t, args...)
	if r.code != 0 {
		t.Fatalf("backupd %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// refused runs args, which must fail with exit 1, nothing on stdout and
// one line on stderr holding each of want.
func (f restoreFixture) refused(t *testing.T, want []string, args ...string) {
	t.Helper()
	r := f.cli(t, args...)
	if r.code != 1 || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("backupd %s: want exit 1, no output and a one-line error:\n%s", strings.Join(args, " "), r)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("backupd %s: the error lacks %q:\n%s", strings.Join(args, " "), w, r.stderr)
		}
	}
}

func (f restoreFixture) device(t *testing.T, name, platform string, enabled bool) db.Device {
	t.Helper()
	d, err := f.store.CreateDevice(context.Background(), db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: platform,
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var requestedID = regexp.MustCompile(`(?m)^restore (\d+) requested: `)

// request runs config restore and returns the new restore's ID.
func (f restoreFixture) request(t *testing.T, device, version string, extra ...string) int64 {
	t.Helper()
	r := f.ok(t, append([]string{"config", "restore", device, "--version", version}, extra...)...)
	m := requestedID.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("config restore does not name the restore:\n%s", r)
	}
	for _, want := range []string{"backupd serve", "restore-status " + m[1], "restore-approve " + m[1], "restore-cancel " + m[1]} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("config restore does not say %q:\n%s", want, r.stdout)
		}
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// pending gives restore id the preview b, as the server's dispatcher
// does once the preview's backup ended, waiting for approval until
// expires.
func (f restoreFixture) pending(t *testing.T, id int64, b db.Backup, expires time.Time) {
	t.Helper()
	if _, err := f.store.SetRestorePreview(context.Background(), id, db.RestorePreview{BackupID: b.ID, Hash: *b.SnapshotHash, ExpiresAt: expires}, nil); err != nil {
		t.Fatal(err)
	}
}

func (f restoreFixture) state(t *testing.T, id int64) db.Restore {
	t.Helper()
	r, err := f.store.Restore(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Configurations of an FRR device: the version to put back, the
// configuration now (a neighbour's password changed, one neighbour
// added), and one holding a masked secret as a git mirror would keep it.
const (
	frrOld    = "frr defaults traditional\nhostname edge\n!\nrouter bgp 65001\n neighbor 192.0.2.20 remote-as 64500\n neighbor 192.0.2.20 password 0ldS3cret\nexit\n!\nend\n"
	frrNow    = "frr defaults traditional\nhostname edge\n!\nrouter bgp 65001\n neighbor 192.0.2.20 remote-as 64500\n neighbor 192.0.2.20 password n3wS3cret\n neighbor 192.0.2.99 remote-as 65099\nexit\n!\nend\n"
	frrMasked = "frr defaults traditional\nhostname edge\n!\nrouter bgp 65001\n neighbor 192.0.2.20 password <secret:3f9a1c>\nexit\n"
)

// Every bad request and decision is refused with a one-line error naming
// the flag or argument at fault, and nothing is recorded; the good ones
// move the restore as the web interface would, each audited as the
// command line's.
func TestConfigRestoreRefusals(t *testing.T) {
	f := newRestoreFixture(t)
	ctx := context.Background()
	edge := f.device(t, "edge", "frr", true)
	other := f.device(t, "other", "frr", true)
	ios := f.device(t, "ios1", "cisco_ios", true)
	pc := f.device(t, "pc1", "hp_procurve", true)
	off := f.device(t, "off1", "frr", false)
	old := addBackup(t, f.store, edge.ID, day(20), frrOld, "")
	failed := addBackup(t, f.store, edge.ID, day(21), "", "connection timed out")
	masked := addBackup(t, f.store, edge.ID, day(22), frrMasked, "")
	now := addBackup(t, f.store, edge.ID, day(23), frrNow, "")
	otherV := addBackup(t, f.store, other.ID, day(20), frrOld, "")
	iosV := addBackup(t, f.store, ios.ID, day(20), "!\nhostname ios1\ninterface Gi0/1\n description uplink\n!\nend\n", "")
	pcV := addBackup(t, f.store, pc.ID, day(20), "hostname pc1\n", "")
	offV := addBackup(t, f.store, off.ID, day(20), frrOld, "")

	f.refused(t, []string{`no device with the name or ID "nope"`}, "config", "restore", "nope", "--version", old.ID)
	f.refused(t, []string{"--version", "name the version"}, "config", "restore", "edge")
	f.refused(t, []string{"--version", `no backup with the ID "00000000-0000-0000-0000-000000000000"`},
		"config", "restore", "edge", "--version", "00000000-0000-0000-0000-000000000000")
	f.refused(t, []string{"--version", "a version of device other", "not of edge"}, "config", "restore", "edge", "--version", otherV.ID)
	f.refused(t, []string{"--version", "holds no configuration", "connection timed out"}, "config", "restore", "edge", "--version", failed.ID)
	f.refused(t, []string{"pc1", "platform hp_procurve cannot restore", "docs/restore.md"}, "config", "restore", "pc1", "--version", pcV.ID)
	// A merge platform wants --line, within the version; a replace
	// platform refuses it.
	f.refused(t, []string{"--line", "ios1", "select the lines of the version", "not a full replace"}, "config", "restore", "ios1", "--version", iosV.ID)
	f.refused(t, []string{"--line", "line 7 is not in the version, which has 6 lines"}, "config", "restore", "ios1", "--version", iosV.ID, "--line", "2-9")
	f.refused(t, []string{"--line", "blank lines or comments"}, "config", "restore", "ios1", "--version", iosV.ID, "--line", "1", "--line", "5")
	for _, bad := range []string{"x", "0", "4-2", "-3", "2-"} {
		f.refused(t, []string{"--line " + strconv.Quote(bad)}, "config", "restore", "ios1", "--version", iosV.ID, "--line", bad)
	}
	f.refused(t, []string{"--line", "edge", "replaces the whole configuration"}, "config", "restore", "edge", "--version", old.ID, "--line", "2")
	f.refused(t, []string{"off1", "disabled"}, "config", "restore", "off1", "--version", offV.ID)
	f.refused(t, []string{"edge", "masked secrets"}, "config", "restore", "edge", "--version", masked.ID)
	f.refused(t, []string{"--reason", "at most 2000 characters"}, "config", "restore", "edge", "--version", old.ID, "--reason", strings.Repeat("x", 2001))
	for _, cmd := range []string{"restore-status", "restore-approve", "restore-reject", "restore-cancel"} {
		f.refused(t, []string{`restore ID "x"`, "positive number"}, "config", cmd, "x")
		f.refused(t, []string{"no restore with the ID 99"}, "config", cmd, "99")
	}
	f.refused(t, []string{"--pending-hours", "between 1 and 720"}, "config", "restore-settings", "--pending-hours", "0")
	f.refused(t, []string{"--approved-hours", "between 1 and 720"}, "config", "restore-settings", "--approved-hours", "721")
	f.refused(t, []string{"--four-eyes", "want on or off"}, "config", "restore-settings", "--four-eyes", "maybe")
	f.refused(t, []string{"--state", "want open or one of"}, "config", "restores", "--state", "done")
	f.refused(t, []string{"--device", "no device"}, "config", "restores", "--device", "nope")
	if list, _, err := f.store.ListRestores(ctx, db.RestoreFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("refused requests left restores: %v, %v", list, err)
	}

	// A good request: previewing, a preview backup queued for the
	// server, and a second request for the device refused.
	id := f.request(t, "edge", old.ID, "--reason", "undo the change of this morning")
	r := f.state(t, id)
	if r.State != db.RestorePreviewing || r.RequestedBy != nil || !strings.HasPrefix(r.RequestedByName, "os:") || r.Reason != "undo the change of this morning" {
		t.Fatalf("the request is %+v", r)
	}
	jobs, err := f.store.ActiveJobs(ctx, []int64{edge.ID})
	if err != nil || jobs[edge.ID].State != queue.JobQueued {
		t.Fatalf("no backup queued for the preview: %v, %v", jobs, err)
	}
	st := f.ok(t, "config", "restore-status", strconv.FormatInt(id, 10))
	for _, want := range []string{"restore " + strconv.FormatInt(id, 10) + " of edge: previewing", "fresh backup", "Preview: not ready yet", "undo the change of this morning"} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("restore-status lacks %q:\n%s", want, st.stdout)
		}
	}
	f.refused(t, []string{"edge", "has a restore open already: " + strconv.FormatInt(id, 10) + " (previewing)"}, "config", "restore", "edge", "--version", old.ID)
	f.refused(t, []string{"has no preview yet"}, "config", "restore-approve", strconv.FormatInt(id, 10))

	// The preview: what the restore changes, secrets masked as config
	// diff masks them.
	f.pending(t, id, now, time.Now().Add(time.Hour))
	st = f.ok(t, "config", "restore-status", strconv.FormatInt(id, 10), "--color", "never")
	for _, want := range []string{": pending", "waits for approval", "-" + " neighbor 192.0.2.99 remote-as 65099", "+ neighbor 192.0.2.20 password <secret:",
		"- neighbor 192.0.2.20 password <secret:", "preview " + now.ID} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("restore-status lacks %q:\n%s", want, st.stdout)
		}
	}
	if strings.Contains(st.stdout, "0ldS3cret") || strings.Contains(st.stdout, "n3wS3cret") {
		t.Errorf("restore-status prints a secret:\n%s", st.stdout)
	}
	st = f.ok(t, "config", "restore-status", strconv.FormatInt(id, 10), "--reveal", "--color", "never")
	if !strings.Contains(st.stdout, "+ neighbor 192.0.2.20 password 0ldS3cret") || !strings.Contains(st.stderr, "audit log") {
		t.Errorf("restore-status --reveal:\n%s", st)
	}

	// Decisions refused: a stale preview; four eyes (the command line
	// is nobody signed in); an expired request.
	f.refused(t, []string{"--preview " + old.ID, "preview changed", "restore-status"},
		"config", "restore-approve", strconv.FormatInt(id, 10), "--preview", old.ID)
	f.ok(t, "config", "restore-settings", "--four-eyes", "on")
	f.refused(t, []string{"four eyes", "web interface"}, "config", "restore-approve", strconv.FormatInt(id, 10))
	// A request from the command line is allowed; a signed-in person
	// approves it (the service's rule), never the command line.
	cliReq := f.request(t, "other", otherV.ID)
	f.pending(t, cliReq, otherV, time.Now().Add(time.Hour))
	f.refused(t, []string{"four eyes", "web interface"}, "config", "restore-approve", strconv.FormatInt(cliReq, 10))
	f.ok(t, "config", "restore-cancel", strconv.FormatInt(cliReq, 10))
	set := f.ok(t, "config", "restore-settings", "--four-eyes", "off", "--pending-hours", "48")
	if !strings.Contains(set.stdout, "four eyes       off") || !strings.Contains(set.stdout, "pending hours   48") {
		t.Errorf("restore-settings:\n%s", set.stdout)
	}
	if s, err := restore.LoadSettings(ctx, f.store); err != nil || s.FourEyes || s.PendingHours != 48 || s.ApprovedHours != 1 {
		t.Errorf("settings stored %+v, %v", s, err)
	}
	if r := f.state(t, id); r.State != db.RestorePending {
		t.Fatalf("refused approvals moved the restore: %s", r.State)
	}
	f.ok(t, "config", "restore-cancel", strconv.FormatInt(id, 10))
	f.refused(t, []string{"is cancelled and cannot be approved"}, "config", "restore-approve", strconv.FormatInt(id, 10))

	id = f.request(t, "edge", old.ID)
	f.pending(t, id, now, time.Now().Add(-time.Minute))
	f.refused(t, []string{"expired", "ask for it again"}, "config", "restore-approve", strconv.FormatInt(id, 10))
	if out := f.ok(t, "config", "restore-reject", strconv.FormatInt(id, 10), "--note", "too late").stdout; !strings.Contains(out, "rejected") {
		t.Errorf("restore-reject: %s", out)
	}
	f.refused(t, []string{"is rejected and cannot be cancelled"}, "config", "restore-cancel", strconv.FormatInt(id, 10))

	// Approved with the preview it was shown: queued for the server
	// (it takes the preview's backup job over), then withdrawn.
	id = f.request(t, "edge", old.ID)
	f.pending(t, id, now, time.Now().Add(time.Hour))
	ap := f.ok(t, "config", "restore-approve", strconv.FormatInt(id, 10), "--preview", now.ID, "--note", "checked")
	if !strings.Contains(ap.stdout, "approved") || !strings.Contains(ap.stdout, "queued") {
		t.Errorf("restore-approve:\n%s", ap.stdout)
	}
	r = f.state(t, id)
	if r.State != db.RestoreQueued || r.DecidedBy != nil || restoreDeref(r.DecidedByName) != r.RequestedByName || r.DecisionNote != "checked" {
		t.Fatalf("the approval is %+v", r)
	}
	f.refused(t, []string{"is queued and cannot be rejected"}, "config", "restore-reject", strconv.FormatInt(id, 10))
	f.ok(t, "config", "restore-cancel", strconv.FormatInt(id, 10))
	if jobs, err := f.store.ActiveJobs(ctx, []int64{edge.ID}); err != nil || len(jobs) != 0 {
		t.Errorf("the cancelled restore left a job: %v, %v", jobs, err)
	}

	// A web user's request: the command line cannot approve it with
	// four eyes on, but may reject it.
	f.ok(t, "config", "restore-settings", "--four-eyes", "on")
	svc := &restore.Service{Store: f.store, Engine: backup.New(f.store, f.sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), backup.Options{}),
		Keys: redact.NewKeyring(f.sealer), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	web, err := svc.Request(ctx, f.admin, other.ID, otherV.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.pending(t, web.ID, otherV, time.Now().Add(time.Hour))
	f.refused(t, []string{"four eyes", "signed in", "web interface"}, "config", "restore-approve", strconv.FormatInt(web.ID, 10))
	f.ok(t, "config", "restore-reject", strconv.FormatInt(web.ID, 10))

	// The list, filtered.
	list := f.ok(t, "config", "restores").stdout
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 6 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.Contains(lines[1], "other") || !strings.Contains(lines[1], "rejected") {
		t.Errorf("restores:\n%s", list)
	}
	var items []map[string]any
	if err := json.Unmarshal([]byte(f.ok(t, "config", "restores", "--json", "--device", "edge", "--state", "cancelled").stdout), &items); err != nil || len(items) != 2 {
		t.Fatalf("restores --json --device edge --state cancelled: %v %v", items, err)
	}
	if items[0]["device"].(map[string]any)["name"] != "edge" || items[0]["state"] != "cancelled" {
		t.Errorf("restores --json: %v", items[0])
	}
	if out := f.ok(t, "config", "restores", "--state", "open").stdout; strings.Count(out, "\n") != 1 {
		t.Errorf("restores --state open lists ended restores:\n%s", out)
	}

	// A merge on classic IOS: the lines as ranges, blank lines and
	// comments left out, labelled a merge wherever it shows.
	mid := f.request(t, "ios1", iosV.ID, "--line", "1-2", "--line", "4")
	if m := f.state(t, mid); len(m.Lines) != 2 || m.Lines[0] != 2 || m.Lines[1] != 4 {
		t.Errorf("the merge's lines: %v", m.Lines)
	}
	st = f.ok(t, "config", "restore-status", strconv.FormatInt(mid, 10))
	for _, want := range []string{"Merge of 2 selected lines — not a full replace", "lines  ", "2, 4"} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("restore-status of a merge lacks %q:\n%s", want, st.stdout)
		}
	}

	// Every request and decision is the command line's in the audit
	// log; the refused ones left nothing.
	entries, _, err := f.store.ListAudit(ctx, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range entries {
		if e.Interface == "cli" && strings.HasPrefix(e.Username, "os:") {
			count[e.Action]++
		}
	}
	want := map[string]int{"restore.request": 5, "restore.approve": 1, "restore.reject": 2, "restore.cancel": 3, "settings.update": 3, "config.reveal": 1}
	for action, n := range want {
		if count[action] != n {
			t.Errorf("%d %s entries of the command line, want %d (all: %v)", count[action], action, n, count)
		}
	}
}

// The JSON of restores and restore-status keeps its fields, in order:
// scripts read them.
var (
	restoreJSONKeys = []string{"id", "device", "state", "stage", "method", "lines", "version", "requested_by", "requested_at", "reason",
		"decided_by", "decided_at", "decision_note", "expires_at", "job_id", "started_at", "finished_at", "backups", "outcome",
		"error", "error_reason"}
	statusJSONKeys = append(slices.Clone(restoreJSONKeys), "preview", "transcript", "transcript_truncated")
)

// topKeys returns the keys of the JSON object raw, in their order.
func topKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// frrRestoreServer is what backupd serve runs for restores, in the
// test: an engine whose workers run restore jobs, and the leader's
// dispatcher, ticked by the test.
type frrRestoreServer struct {
	disp *restore.Dispatcher
	eng  *backup.Engine
	log  *testkit.LockedBuffer
}

func startRestoreServer(t *testing.T, f restoreFixture) frrRestoreServer {
	t.Helper()
	buf := &testkit.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	runner := restore.NewRunner(f.store, f.sealer, log)
	eng := backup.New(f.store, f.sealer, log, backup.Options{Workers: 2, Poll: 50 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Second, Job: 60 * time.Second},
		Work:     map[string]backup.WorkRunner{queue.KindRestore: runner}})
	runner.Engine = eng
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return frrRestoreServer{disp: restore.NewDispatcher(f.store, f.sealer, eng, log), eng: eng, log: buf}
}

// until ticks the dispatcher until restore id is in one of states.
func (s frrRestoreServer) until(t *testing.T, f restoreFixture, id int64, states ...string) db.Restore {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if err := s.disp.Tick(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := f.state(t, id); slices.Contains(states, r.State) {
			return r
		}
		time.Sleep(30 * time.Millisecond)
	}
	r := f.state(t, id)
	t.Fatalf("restore %d is %s (stage %q), want %v\n%s", id, r.State, r.Stage, states, s.log.String())
	return r
}

// backupNow backs the device up in the test's server and returns the
// version.
func (s frrRestoreServer) backupNow(t *testing.T, f restoreFixture, device int64) db.Backup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := s.eng.Enqueue(ctx, []int64{device}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		js, err := f.store.Queue.GetJobs(ctx, ids)
		if err != nil || len(js) != 1 {
			t.Fatal(len(js), err)
		}
		switch j := js[0]; j.State {
		case queue.JobSucceeded:
			b, err := f.store.GetBackup(ctx, *j.BackupID)
			if err != nil {
				t.Fatal(err)
			}
			return b
		case queue.JobFailed:
			t.Fatalf("backup failed: %v\n%s", restoreDeref(j.Error), s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the backup did not end\n%s", s.log.String())
	return db.Backup{}
}

// The whole flow from the command line on a real FRR router changed by
// hand: config restore asks, restore-status shows it previewing, the
// server (here in the test) takes the preview, restore-status shows
// what the restore changes, restore-approve approves it, the server
// runs it, and restore-status says it succeeded, with a session that
// shows no secret; the router then runs the version.
func TestConfigRestoreOnRealFRR(t *testing.T) {
	t.Parallel() // see runTests
	router := testfrr.Start(t, testfrr.Options{Hostname: "cli-edge"})
	f := newRestoreFixture(t)
	ctx := context.Background()
	cred, err := f.store.CreateCredential(ctx, db.Credential{Name: "frr", Username: router.User,
		PrivateKey: f.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)})
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(router.Addr)
	port, _ := strconv.Atoi(p)
	dev, err := f.store.CreateDevice(ctx, db.Device{Name: router.Hostname, Host: "127.0.0.1", Port: port,
		Platform: "frr", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := startRestoreServer(t, f)
	yesterday := srv.backupNow(t, f, dev.ID)
	router.Vtysh(t, "configure terminal", "router bgp 65001", "neighbor 192.0.2.99 remote-as 65099",
		"neighbor 192.0.2.20 password n3w-s3cret", "exit", "no ip prefix-list PL-CUSTOMER-IN seq 100 deny any")

	id := f.request(t, "cli-edge", yesterday.ID, "--reason", "undo the change by hand")
	sid := strconv.FormatInt(id, 10)
	if st := f.ok(t, "config", "restore-status", sid).stdout; !strings.Contains(st, "of cli-edge: previewing") {
		t.Fatalf("restore-status right after the request:\n%s", st)
	}
	r := srv.until(t, f, id, db.RestorePending, db.RestoreFailed)
	if r.State != db.RestorePending {
		t.Fatalf("the preview failed: %s\n%s", restoreDeref(r.Error), srv.log.String())
	}
	st := f.ok(t, "config", "restore-status", sid, "--color", "never").stdout
	for _, want := range []string{"of cli-edge: pending", "- neighbor 192.0.2.99 remote-as 65099", "+ip prefix-list PL-CUSTOMER-IN seq 100 deny any",
		"- neighbor 192.0.2.20 password <secret:", "+ neighbor 192.0.2.20 password <secret:"} {
		if !strings.Contains(st, want) {
			t.Errorf("the preview lacks %q:\n%s", want, st)
		}
	}
	if strings.Contains(st, "s3cret") {
		t.Errorf("the preview shows a neighbour password:\n%s", st)
	}

	f.ok(t, "config", "restore-approve", sid, "--preview", *r.PreviewBackupID)
	r = srv.until(t, f, id, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed, db.RestoreInterrupted)
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s: %s\n%s", r.State, restoreDeref(r.Error), srv.log.String())
	}
	res := f.ok(t, "config", "restore-status", sid, "--transcript")
	for _, want := range []string{"of cli-edge: succeeded", "the device runs the version", "verified; 1 pass", "before ", "after ",
		"Session with the device", "> configure terminal", "> write memory"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("restore-status after the run lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "s3cret") {
		t.Errorf("restore-status --transcript shows a neighbour password:\n%s", res.stdout)
	}
	if got, want := router.RunningConfig(t), snapshot(t, f.store, yesterday); !frrplan.Equal(got, want) {
		t.Errorf("the router does not run the version:\n%s", strings.Join(frrplan.Diff(got, want), "\n"))
	}

	// The JSON says the same, with its fields in their order.
	raw := []byte(f.ok(t, "config", "restore-status", sid, "--json", "--transcript").stdout)
	if keys := topKeys(t, raw); !slices.Equal(keys, statusJSONKeys) {
		t.Errorf("restore-status --json keys:\n%v\nwant\n%v", keys, statusJSONKeys)
	}
	var js struct {
		ID      int64 `json:"id"`
		State   string
		Version string
		Backups struct{ Preview, Before, After, Rollback *string }
		Outcome struct{ Verified bool }
		Preview struct {
			Diff           string
			Added, Removed int
		}
		Transcript []db.TranscriptSegment
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	if js.ID != id || js.State != db.RestoreSucceeded || js.Version != yesterday.ID || !js.Outcome.Verified || js.Backups.Before == nil ||
		js.Backups.After == nil || js.Backups.Rollback != nil || js.Preview.Added == 0 || js.Preview.Removed == 0 ||
		!strings.Contains(js.Preview.Diff, "<secret:") || len(js.Transcript) == 0 || strings.Contains(string(raw), "s3cret") {
		t.Errorf("restore-status --json:\n%s", raw)
	}
	raw = []byte(f.ok(t, "config", "restores", "--json").stdout)
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) != 1 {
		t.Fatalf("restores --json: %v\n%s", err, raw)
	}
	if keys := topKeys(t, items[0]); !slices.Equal(keys, restoreJSONKeys) {
		t.Errorf("restores --json keys:\n%v\nwant\n%v", keys, restoreJSONKeys)
	}
}

func snapshot(t *testing.T, store *db.Store, b db.Backup) string {
	t.Helper()
	text, err := store.SnapshotText(context.Background(), *b.SnapshotHash)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func restoreDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
