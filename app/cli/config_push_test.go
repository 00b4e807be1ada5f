package cli_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testfrr"
	"backupd/internal/testkit"
)

// pushFixture is a restore fixture with the devices of the change-set
// tests: two FRR routers in the group core (edge2 in its subgroup
// core-eu), a disabled FRR router in core, an IOS switch (its platform
// cannot take a push) and an empty group.
type pushFixture struct {
	restoreFixture
	edge1, edge2, ios, off db.Device
}

func newPushFixture(t *testing.T) pushFixture {
	t.Helper()
	f := pushFixture{restoreFixture: newRestoreFixture(t)}
	ctx := context.Background()
	core, err := f.store.CreateGroup(ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	eu, err := f.store.CreateGroup(ctx, "core-eu", &core.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.CreateGroup(ctx, "empty", nil); err != nil {
		t.Fatal(err)
	}
	add := func(name, platform string, group *int64, enabled bool) db.Device {
		d, err := f.store.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: platform,
			LoginMethod: "ssh", Encoding: "utf-8", Enabled: enabled, GroupID: group})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	f.edge1 = add("edge1", "frr", &core.ID, true)
	f.edge2 = add("edge2", "frr", &eu.ID, true)
	f.off = add("off1", "frr", &core.ID, false)
	f.ios = add("ios1", "hp_procurve", nil, true)
	return f
}

// withStdin runs args with stdin.
func (f pushFixture) withStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return run(t, call{stdin: stdin, env: []string{"TZ=UTC"}}, append(args, f.flags...)...)
}

// sets is how many change sets the store holds.
func (f pushFixture) sets(t *testing.T) int {
	t.Helper()
	list, _, err := f.store.ListChangeSets(context.Background(), db.ChangeSetFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func (f pushFixture) set(t *testing.T, id int64) db.ChangeSet {
	t.Helper()
	c, err := f.store.ChangeSet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var recordedID = regexp.MustCompile(`(?m)^change set (\d+) "[^"]*" recorded: `)

// push runs config push and returns the new change set's ID and what
// it printed.
func (f pushFixture) push(t *testing.T, stdin string, args ...string) (int64, string) {
	t.Helper()
	r := f.withStdin(t, stdin, append([]string{"config", "push"}, args...)...)
	if r.code != 0 {
		t.Fatalf("backupd config push %s failed:\n%s", strings.Join(args, " "), r)
	}
	m := recordedID.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("config push does not name the change set:\n%s", r)
	}
	if !strings.Contains(r.stdout, "nothing was sent to any device") {
		t.Errorf("config push does not say nothing was sent:\n%s", r.stdout)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id, r.stdout
}

// Every bad input of config push is refused with a one-line error naming
// what is at fault, and records nothing: no change set, no audit entry.
func TestConfigPushRefusals(t *testing.T) {
	f := newPushFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", []byte("router bgp 65001\n neighbor 192.0.2.77 remote-as 65077\n"))
	big := write("big.txt", []byte(strings.Repeat("! a comment line of padding\n", (db.ChangeSetBodyMax/28)+2)))
	latin1 := write("latin1.txt", []byte("router bgp 65001\n neighbor 192.0.2.77 description M\xfcnchen\n"))
	empty := write("empty.txt", []byte("\n  \n"))
	body := "router bgp 65001\n"
	edge1ID := strconv.FormatInt(f.edge1.ID, 10)

	for _, c := range []struct {
		want []string
		args []string
	}{
		{[]string{"exactly one of --file", "--body"}, []string{"x", "--device", "edge1"}},
		{[]string{"exactly one of --file", "--body"}, []string{"x", "--device", "edge1", "--body", body, "--file", good}},
		{[]string{"--device DEVICE", "--group GROUP"}, []string{"x", "--body", body}},
		{[]string{"--device DEVICE", "--group GROUP"}, []string{"x", "--body", body, "--device", "edge1", "--group", "core"}},
		{[]string{"--device", `no device with the name or ID "nope"`}, []string{"x", "--body", body, "--device", "edge1", "--device", "nope"}},
		{[]string{"--group", `no group with the name or ID "nope"`}, []string{"x", "--body", body, "--group", "nope"}},
		{[]string{"--group", "group empty", "no enabled device"}, []string{"x", "--body", body, "--group", "empty"}},
		{[]string{"--device", "edge1", "named twice"}, []string{"x", "--body", body, "--device", "edge1", "--device", edge1ID}},
		{[]string{"--device", "off1", "disabled"}, []string{"x", "--body", body, "--device", "off1"}},
		{[]string{"--var", "add --template"}, []string{"x", "--body", body, "--device", "edge1", "--var", "a=b"}},
		{[]string{`--var "peer"`, "KEY=VALUE"}, []string{"x", "--body", body, "--template", "--device", "edge1", "--var", "peer"}},
		{[]string{`--var "1peer=x"`, "letters, digits and _"}, []string{"x", "--body", body, "--template", "--device", "edge1", "--var", "1peer=x"}},
		{[]string{"--var peer", "twice"}, []string{"x", "--body", body, "--template", "--device", "edge1", "--var", "peer=a", "--var", "peer=b"}},
		{[]string{"--body", "the template does not parse"}, []string{"x", "--body", "{{if}}\n", "--template", "--device", "edge1"}},
		{[]string{"--file", "the template does not parse"}, []string{"x", "--file", write("bad.tmpl", []byte("{{.Vars.peer\n")), "--template", "--device", "edge1"}},
		{[]string{"--body", "line 2 holds a control character"}, []string{"x", "--body", "router bgp 65001\n neighbor \a\n", "--device", "edge1"}},
		{[]string{"--file", "missing.txt", "cannot read"}, []string{"x", "--file", filepath.Join(dir, "missing.txt"), "--device", "edge1"}},
		{[]string{"--file", "larger than 256 KiB"}, []string{"x", "--file", big, "--device", "edge1"}},
		{[]string{"--file", "not UTF-8"}, []string{"x", "--file", latin1, "--device", "edge1"}},
		{[]string{"--file", "no lines to push"}, []string{"x", "--file", empty, "--device", "edge1"}},
		{[]string{"--body", "no lines to push"}, []string{"x", "--body", " \n", "--device", "edge1"}},
		{[]string{"--concurrency", "between 1 and 50"}, []string{"x", "--body", body, "--device", "edge1", "--concurrency", "0"}},
		{[]string{"--concurrency", "between 1 and 50"}, []string{"x", "--body", body, "--device", "edge1", "--concurrency", "51"}},
		{[]string{"--stop-after", "0 (never) or more"}, []string{"x", "--body", body, "--device", "edge1", "--stop-after", "-1"}},
		{[]string{"NAME", "1 to 200 characters"}, []string{" ", "--body", body, "--device", "edge1"}},
		{[]string{"NAME", "1 to 200 characters"}, []string{strings.Repeat("n", 201), "--body", body, "--device", "edge1"}},
	} {
		f.refused(t, c.want, append([]string{"config", "push"}, c.args...)...)
	}
	// Standard input: empty, or too big.
	for stdin, want := range map[string]string{"": "no lines to push", strings.Repeat("!\n", db.ChangeSetBodyMax): "larger than 256 KiB"} {
		r := f.withStdin(t, stdin, "config", "push", "x", "--file", "-", "--device", "edge1")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("config push --file - with %d bytes: want %q\n%s", len(stdin), want, r)
		}
	}
	for _, cmd := range []string{"push-status", "push-approve", "push-cancel"} {
		f.refused(t, []string{`change set ID "x"`, "positive number"}, "config", cmd, "x")
		f.refused(t, []string{"no change set with the ID 99", "config pushes"}, "config", cmd, "99")
	}
	f.refused(t, []string{"--state", "want open or one of"}, "config", "pushes", "--state", "finished")

	if n := f.sets(t); n != 0 {
		t.Fatalf("refused pushes left %d change set(s)", n)
	}
	entries, _, err := f.store.ListAudit(ctx, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "changeset.") {
			t.Errorf("a refused push was audited: %+v", e)
		}
	}
}

// A template pushed to an FRR router and an IOS switch: the dry run
// prints the router's lines, rendered from its fields and the --var
// values, its secret masked, and says why the switch cannot take a push;
// the set stays a draft that cannot be approved. A key the template
// uses and no --var gives is the device's dry-run error.
func TestConfigPushDryRun(t *testing.T) {
	f := newPushFixture(t)
	tmpl := "router bgp 65001\n neighbor {{.Vars.peer}} remote-as {{.Vars.as}}\n neighbor {{.Vars.peer}} description to-{{.Name}}-{{.Platform}}\n" +
		" neighbor {{.Vars.peer}} password T0pS3cret\n\n"
	id, out := f.push(t, "", "new peer", "--body", tmpl, "--template", "--var", "peer=192.0.2.77", "--var", "as=65077",
		"--device", "edge1", "--device", strconv.FormatInt(f.ios.ID, 10))
	for _, want := range []string{
		"edge1 (ID " + strconv.FormatInt(f.edge1.ID, 10) + "): 4 line(s)\n",
		"  | router bgp 65001\n",
		"  |  neighbor 192.0.2.77 remote-as 65077\n",
		"  |  neighbor 192.0.2.77 description to-edge1-frr\n",
		"  |  neighbor 192.0.2.77 password <secret:",
		"ios1 (ID " + strconv.FormatInt(f.ios.ID, 10) + "): cannot be pushed: platform hp_procurve cannot take a push\n",
		"stays a draft", "push-cancel " + strconv.FormatInt(id, 10),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config push lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "T0pS3cret") || strings.Contains(out, "push-approve") {
		t.Errorf("config push prints the secret, or offers to approve a draft:\n%s", out)
	}
	c := f.set(t, id)
	if c.State != db.ChangeSetDraft || c.Kind != db.ChangeSetTemplate || c.CreatedBy != nil || !strings.HasPrefix(c.CreatedByName, "os:") ||
		c.Concurrency != 1 || c.StopAfterFailures != 1 || c.Targets != 2 {
		t.Fatalf("the change set is %+v", c)
	}
	f.refused(t, []string{"is draft and cannot be approved", "cannot be pushed"}, "config", "push-approve", strconv.FormatInt(id, 10))

	// The status says the same; --reveal shows the secret, audited.
	st := f.ok(t, "config", "push-status", strconv.FormatInt(id, 10))
	for _, want := range []string{`change set ` + strconv.FormatInt(id, 10) + ` "new peer": draft`, "cannot be approved",
		"edge1", "pending", "  |  neighbor 192.0.2.77 password <secret:", "ios1 (ID", "cannot be pushed: platform hp_procurve"} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("push-status lacks %q:\n%s", want, st.stdout)
		}
	}
	if strings.Contains(st.stdout, "T0pS3cret") {
		t.Errorf("push-status prints the secret:\n%s", st.stdout)
	}
	st = f.ok(t, "config", "push-status", strconv.FormatInt(id, 10), "--reveal")
	if !strings.Contains(st.stdout, "password T0pS3cret") || !strings.Contains(st.stderr, "audit log") {
		t.Errorf("push-status --reveal:\n%s", st)
	}
	f.ok(t, "config", "push-cancel", strconv.FormatInt(id, 10))

	// A key no --var gives: the device's dry-run error names it.
	id, out = f.push(t, "", "missing var", "--body", "router bgp 65001\n neighbor {{.Vars.peer}} remote-as 65000\n", "--template", "--device", "edge1")
	if !strings.Contains(out, "edge1 (ID") || !strings.Contains(out, "cannot be pushed") || !strings.Contains(out, `"peer"`) ||
		f.set(t, id).State != db.ChangeSetDraft {
		t.Errorf("a missing variable:\n%s", out)
	}
}

// The JSON of pushes and push-status keeps its fields, in order: scripts
// read them.
var (
	changeSetJSONKeys = []string{"id", "name", "state", "kind", "devices", "counts", "concurrency", "stop_after_failures",
		"created_by", "created_at", "decided_by", "decided_at", "decision_note", "expires_at", "started_at", "finished_at", "error"}
	changeSetStatusJSONKeys = append(slices.Clone(changeSetJSONKeys), "targets")
	targetJSONKeys          = []string{"device", "state", "stage", "rendered", "render_error", "job_id", "backups", "started_at",
		"finished_at", "error", "error_reason", "transcript_truncated"}
)

// A snippet from standard input to a group: ready; approval refused from
// the command line with four eyes on (the set unmoved) and accepted with
// them off, the set then running for the server; the list and the
// status in text and JSON; a cancel skips the devices not started.
func TestConfigPushApproveListCancel(t *testing.T) {
	f := newPushFixture(t)
	ctx := context.Background()
	snippet := "router bgp 65001\n neighbor 192.0.2.77 remote-as 65077\n"
	id, out := f.push(t, snippet, "peer 77", "--file", "-", "--group", "core", "--concurrency", "2", "--stop-after", "0")
	sid := strconv.FormatInt(id, 10)
	for _, want := range []string{"2 device(s), ready", "edge1 (ID", "edge2 (ID", "  |  neighbor 192.0.2.77 remote-as 65077\n",
		"push-status " + sid, "push-approve " + sid, "push-cancel " + sid} {
		if !strings.Contains(out, want) {
			t.Errorf("config push lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "off1") {
		t.Errorf("the group's disabled device is in the set:\n%s", out)
	}
	if c := f.set(t, id); c.State != db.ChangeSetReady || c.Concurrency != 2 || c.StopAfterFailures != 0 || c.Kind != db.ChangeSetSnippet {
		t.Fatalf("the change set is %+v", c)
	}

	// Four eyes on: config push says who approves, push-approve refuses.
	f.ok(t, "config", "restore-settings", "--four-eyes", "on")
	id2, out := f.push(t, "", "second", "--body", snippet, "--device", "edge2")
	if !strings.Contains(out, "four eyes are on") || !strings.Contains(out, "web interface") || strings.Contains(out, "push-approve") {
		t.Errorf("config push with four eyes on:\n%s", out)
	}
	f.refused(t, []string{"change set " + sid, "four eyes", "signed in", "web interface", "not from the command line"}, "config", "push-approve", sid)
	if c := f.set(t, id); c.State != db.ChangeSetReady || c.DecidedAt != nil {
		t.Fatalf("a refused approval moved the set: %+v", c)
	}
	// A signed-in person approves a set made from the command line.
	if _, err := (&restore.Service{Store: f.store}).ApproveChangeSet(ctx, f.admin, id2, "looked at it"); err != nil {
		t.Fatalf("the web's approval of a set made from the command line: %v", err)
	}
	f.ok(t, "config", "restore-settings", "--four-eyes", "off")
	ap := f.ok(t, "config", "push-approve", sid, "--note", "checked the dry run")
	if !strings.Contains(ap.stdout, "approved; it is running") || !strings.Contains(ap.stdout, "push-status "+sid) {
		t.Errorf("push-approve:\n%s", ap.stdout)
	}
	c := f.set(t, id)
	if c.State != db.ChangeSetRunning || c.DecidedBy != nil || !strings.HasPrefix(restoreDeref(c.DecidedByName), "os:") || c.DecisionNote != "checked the dry run" {
		t.Fatalf("the approval is %+v", c)
	}
	f.refused(t, []string{"is running and cannot be approved"}, "config", "push-approve", sid)

	// The list: text, filtered, JSON.
	list := f.ok(t, "config", "pushes").stdout
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.Contains(lines[1], "second") || !strings.Contains(lines[2], "peer 77") || !strings.Contains(lines[2], "running") {
		t.Errorf("pushes:\n%s", list)
	}
	raw := []byte(f.ok(t, "config", "pushes", "--json", "--state", "running").stdout)
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) != 2 {
		t.Fatalf("pushes --json --state running: %v\n%s", err, raw)
	}
	if keys := topKeys(t, items[0]); !slices.Equal(keys, changeSetJSONKeys) {
		t.Errorf("pushes --json keys:\n%v\nwant\n%v", keys, changeSetJSONKeys)
	}
	var first struct {
		ID      int64
		Name    string
		State   string
		Devices int
		Counts  map[string]int
	}
	if err := json.Unmarshal(items[1], &first); err != nil || first.ID != id || first.Name != "peer 77" || first.Devices != 2 ||
		first.Counts[db.TargetPending] != 2 || len(first.Counts) != len(db.TargetStates) {
		t.Errorf("pushes --json: %+v %v", first, err)
	}
	if out := f.ok(t, "config", "pushes", "--state", "draft").stdout; strings.Count(out, "\n") != 1 {
		t.Errorf("pushes --state draft lists other sets:\n%s", out)
	}

	// The status: text, JSON, and the session of one device.
	st := f.ok(t, "config", "push-status", sid, "--transcript", "edge2").stdout
	for _, want := range []string{`change set ` + sid + ` "peer 77": running`, "2 at a time, stop never", "checked the dry run",
		"DEVICE", "edge1", "edge2", "Dry run", "Session with edge2", "no session recorded"} {
		if !strings.Contains(st, want) {
			t.Errorf("push-status lacks %q:\n%s", want, st)
		}
	}
	f.refused(t, []string{"--transcript", "ios1", "not a device of change set " + sid}, "config", "push-status", sid, "--transcript", "ios1")
	raw = []byte(f.ok(t, "config", "push-status", sid, "--json", "--transcript", "edge1").stdout)
	if keys := topKeys(t, raw); !slices.Equal(keys, changeSetStatusJSONKeys) {
		t.Errorf("push-status --json keys:\n%v\nwant\n%v", keys, changeSetStatusJSONKeys)
	}
	var js struct {
		State   string
		Targets []json.RawMessage
	}
	if err := json.Unmarshal(raw, &js); err != nil || js.State != db.ChangeSetRunning || len(js.Targets) != 2 {
		t.Fatalf("push-status --json: %v\n%s", err, raw)
	}
	if keys := topKeys(t, js.Targets[1]); !slices.Equal(keys, targetJSONKeys) {
		t.Errorf("a target's keys:\n%v\nwant\n%v", keys, targetJSONKeys)
	}
	var t0 struct {
		Device     struct{ Name string }
		State      string
		Rendered   *string
		Transcript *[]db.TranscriptSegment
	}
	if err := json.Unmarshal(js.Targets[0], &t0); err != nil || t0.Device.Name != "edge1" || t0.State != db.TargetPending ||
		t0.Rendered == nil || *t0.Rendered != snippet || t0.Transcript == nil {
		t.Errorf("push-status --json's first target: %+v %v", t0, err)
	}

	// Cancelled while running: its devices not started are skipped.
	cn := f.ok(t, "config", "push-cancel", sid, "--reason", "wrong peer")
	if !strings.Contains(cn.stdout, "cancelled: 2 device(s) skipped") {
		t.Errorf("push-cancel:\n%s", cn.stdout)
	}
	if c := f.set(t, id); c.State != db.ChangeSetCancelled || restoreDeref(c.Error) != "wrong peer" {
		t.Errorf("the cancel is %+v", c)
	}
	f.refused(t, []string{"is cancelled and cannot be cancelled"}, "config", "push-cancel", sid)
	f.refused(t, []string{"--reason", "at most"}, "config", "push-cancel", strconv.FormatInt(id2, 10), "--reason", strings.Repeat("x", 2001))

	// Every step is the command line's in the audit log.
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
	for action, n := range map[string]int{"changeset.create": 2, "changeset.dry_run": 2, "changeset.approve": 1, "changeset.cancel": 1} {
		if count[action] != n {
			t.Errorf("%d %s entries of the command line, want %d (all: %v)", count[action], action, n, count)
		}
	}
}

// The whole flow from the command line on two real FRR routers: config
// push prints the dry run, push-approve starts the set, the server (here
// in the test: an engine running push jobs and the dispatcher, ticked)
// pushes one router and stops at the line the other refuses, and
// push-status shows each device's end, its backups with the trigger
// "push" and its session, secrets masked.
func TestConfigPushOnRealFRR(t *testing.T) {
	t.Parallel() // see runTests
	f := newRestoreFixture(t)
	ctx := context.Background()
	var names []string
	for _, host := range []string{"cli-push1", "cli-push2"} {
		router := testfrr.Start(t, testfrr.Options{Hostname: host})
		cred, err := f.store.CreateCredential(ctx, db.Credential{Name: host, Username: router.User,
			PrivateKey: f.sealer.Seal(string(router.PrivateKey), secret.PurposePrivateKey)})
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(router.Addr)
		port, _ := strconv.Atoi(p)
		if _, err := f.store.CreateDevice(ctx, db.Device{Name: router.Hostname, Host: "127.0.0.1", Port: port,
			Platform: "frr", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		names = append(names, router.Hostname)
	}
	buf := &testkit.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	runner := restore.NewRunner(f.store, f.sealer, log)
	eng := backup.New(f.store, f.sealer, log, backup.Options{Workers: 2, Poll: 50 * time.Millisecond,
		Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Second, Job: 60 * time.Second},
		Work:     map[string]backup.WorkRunner{queue.KindRestore: runner, queue.KindPush: restore.PushRunner{Runner: runner}}})
	runner.Engine = eng
	sctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(sctx) }()
	t.Cleanup(func() { cancel(); <-done })
	disp := restore.NewDispatcher(f.store, f.sealer, eng, log)

	// cli-push2 is already in AS 65001: "router bgp 65099" is refused there.
	tmpl := `router bgp {{if eq .Name "cli-push2"}}65099{{else}}65001{{end}}
 neighbor 192.0.2.88 remote-as 65088
 neighbor 192.0.2.88 password Pu5hS3cret
`
	r := run(t, call{stdin: tmpl, env: []string{"TZ=UTC"}}, append([]string{"config", "push", "peer 88", "--file", "-", "--template",
		"--device", names[0], "--device", names[1], "--stop-after", "0"}, f.flags...)...)
	m := recordedID.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil || !strings.Contains(r.stdout, "  | router bgp 65099\n") || strings.Contains(r.stdout, "Pu5hS3cret") {
		t.Fatalf("config push:\n%s", r)
	}
	sid := m[1]
	id, _ := strconv.ParseInt(sid, 10, 64)
	f.ok(t, "config", "push-approve", sid)

	deadline := time.Now().Add(90 * time.Second)
	var c db.ChangeSet
	for time.Now().Before(deadline) {
		if err := disp.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		var err error
		if c, err = f.store.ChangeSet(ctx, id); err != nil {
			t.Fatal(err)
		}
		if c.State == db.ChangeSetDone || c.State == db.ChangeSetStopped {
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	if c.State != db.ChangeSetDone {
		t.Fatalf("change set %s\n%s", c.State, buf.String())
	}

	st := f.ok(t, "config", "push-status", sid, "--transcript", names[1]).stdout
	for _, want := range []string{`"peer 88": done`, "2: 1 succeeded, 1 failed", "cli-push1  succeeded", "cli-push2  failed",
		`the device refused "router bgp 65099"`, "BGP is already running; AS is 65001", "(refused)",
		"Session with cli-push2", "> configure terminal", "> router bgp 65099"} {
		if !strings.Contains(st, want) {
			t.Errorf("push-status lacks %q:\n%s", want, st)
		}
	}
	raw := []byte(f.ok(t, "config", "push-status", sid, "--json", "--transcript", names[0]).stdout)
	if strings.Contains(st, "Pu5hS3cret") || strings.Contains(string(raw), "Pu5hS3cret") {
		t.Errorf("push-status shows the pushed secret:\n%s\n%s", st, raw)
	}
	var js struct {
		Targets []struct {
			State      string
			Backups    struct{ Before, After *string }
			Transcript *[]db.TranscriptSegment
		}
	}
	if err := json.Unmarshal(raw, &js); err != nil || len(js.Targets) != 2 {
		t.Fatalf("push-status --json: %v\n%s", err, raw)
	}
	for i, tg := range js.Targets {
		for name, b := range map[string]*string{"before": tg.Backups.Before, "after": tg.Backups.After} {
			if b == nil {
				t.Errorf("%s: no backup %s", names[i], name)
				continue
			}
			if bk, err := f.store.GetBackup(ctx, *b); err != nil || bk.Trigger != queue.TriggerPush {
				t.Errorf("%s: backup %s: %+v %v", names[i], name, bk, err)
			}
		}
	}
	if t0 := js.Targets[0]; t0.State != db.TargetSucceeded || t0.Transcript == nil || len(*t0.Transcript) == 0 {
		t.Errorf("cli-push1 in push-status --json: %+v", t0)
	}
}
