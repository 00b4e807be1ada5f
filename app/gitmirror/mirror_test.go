package gitmirror_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/devsim"
	"backupd/app/gitmirror"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

const (
	user     = "backup"
	password = "Pa55-word-not-in-git"
	enable   = "En4ble-not-in-git"
)

// env is a data directory with simulated devices, the real backup engine
// and the mirror.
type env struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	store  *db.Store
	sealer *secret.Sealer
	credID int64
	sims   map[int64]*devsim.Device
	eng    *backup.Engine
	mirror *gitmirror.Mirror
	log    *bytes.Buffer
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	needGit(t)
	ctx := context.Background()
	store := dbtest.Open(t)
	dir := dbtest.DataDir(t, store)
	sealer, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: user,
		Password:       sealer.Seal(password, secret.PurposePassword),
		EnablePassword: sealer.Seal(enable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(logBuf, nil))
	eng := backup.New(store, sealer, log, backup.Options{
		Timeouts:     collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 5 * time.Second, Job: 20 * time.Second},
		RetryBackoff: 50 * time.Millisecond})
	m := gitmirror.New(store, sealer, log, dir)
	m.PushBackoff = 10 * time.Millisecond
	return &env{t: t, ctx: ctx, dir: dir, store: store, sealer: sealer, credID: cred.ID,
		sims: map[int64]*devsim.Device{}, eng: eng, mirror: m, log: logBuf}
}

func (e *env) sim(name, platform string, seed int64, group *int64) int64 {
	e.t.Helper()
	o := devsim.Options{Seed: seed, Platform: platform, Hostname: "h" + strconv.FormatInt(seed, 10),
		Username: user, Password: password, SSHAddr: "127.0.0.1:0"}
	if p, ok := devsim.Lookup(platform); ok && p.EnableCommand != "" {
		o.EnablePassword = enable
	}
	d, err := devsim.NewDevice(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	_, p, _ := net.SplitHostPort(d.SSHAddr())
	port, _ := strconv.Atoi(p)
	dev, err := e.store.CreateDevice(e.ctx, db.Device{Name: name, Host: "127.0.0.1", Port: port, GroupID: group,
		Platform: platform, LoginMethod: "ssh", CredentialID: &e.credID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.sims[dev.ID] = d
	return dev.ID
}

// run backs every device up (one run) and fails on a failed backup.
func (e *env) run(trigger string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	var ids []int64
	for id := range e.sims {
		ids = append(ids, id)
	}
	jobs, err := e.eng.Enqueue(ctx, ids, trigger)
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	if err := e.eng.RunJobs(ctx, jobs, func(j queue.Job) {
		n++
		if j.State != queue.JobSucceeded {
			e.t.Errorf("backup of device %d: %s", j.DeviceID, j.State)
		}
	}); err != nil {
		e.t.Fatal(err)
	}
	if n != len(ids) {
		e.t.Fatalf("%d of %d jobs reported", n, len(ids))
	}
}

func (e *env) sync() gitmirror.Result {
	e.t.Helper()
	res, err := e.mirror.Sync(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// git runs the real git program on dir.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %v: %v %s", args, err, msg)
	}
	return string(out)
}

func commits(t *testing.T, dir string) []string {
	out := strings.TrimSpace(git(t, dir, "log", "--format=%s"))
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// latestText is the text the mirror holds of a device's version: the
// stored text with its secrets masked (as the default setting asks).
func (e *env) latestText(id int64) string {
	e.t.Helper()
	vs, err := e.store.MirrorVersions(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range vs {
		if v.DeviceID == id {
			return e.mirrored(v)
		}
	}
	e.t.Fatalf("device %d has no version", id)
	return ""
}

// mirrored is a version's stored text as the mirror writes it: masked
// with the device's masker when the setting masks the mirror.
func (e *env) mirrored(v db.MirrorVersion) string {
	e.t.Helper()
	text, err := e.store.SnapshotText(e.ctx, v.SnapshotHash)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := e.store.SecretMaskingSettings(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if m.Git {
		text = redact.NewKeyring(e.sealer).Device(v.DeviceID, v.Platform).Text(text)
	}
	return text
}

func TestOneCommitPerRunNothingWhenNothingChanged(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("core-r1", "cisco_ios", 1, nil)
	sw2 := e.sim("edge/sw2", "huawei_vrp", 2, nil)
	e.run(queue.TriggerManual)
	res := e.sync()
	if res.Commit == "" || len(res.Changes) != 2 {
		t.Fatalf("first run: %+v", res)
	}
	repo := e.mirror.Dir()
	if got := commits(t, repo); len(got) != 1 {
		t.Fatalf("commits after the first run: %q", got)
	}
	// Byte for byte what the store holds, secrets masked; the unsafe name
	// is made safe.
	if got := git(t, repo, "show", "HEAD:core-r1"); got != e.latestText(r1) {
		t.Fatal("core-r1 in git differs from the stored text")
	}
	if got := git(t, repo, "show", "HEAD:edge_sw2"); got != e.latestText(sw2) {
		t.Fatal("edge_sw2 in git differs from the stored text")
	}
	body := git(t, repo, "log", "-1", "--format=%B")
	if !strings.Contains(body, "core-r1: first backup (trigger: manual)") || !strings.Contains(body, "edge/sw2: first backup") {
		t.Fatalf("commit message: %s", body)
	}
	if strings.Contains(body, password) || strings.Contains(e.log.String(), password) {
		t.Fatal("a password leaked")
	}

	// A second run: the devices' shows differ only by noise (timestamps),
	// so nothing is committed.
	e.run(queue.TriggerSchedule)
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("unchanged run committed: %+v", res)
	}
	if got := commits(t, repo); len(got) != 1 {
		t.Fatalf("commits after an unchanged run: %q", got)
	}

	// One device changes: one commit naming it and its trigger only.
	e.sims[r1].Mutate(42)
	e.run(queue.TriggerSchedule)
	res = e.sync()
	if res.Commit == "" || len(res.Changes) != 1 || res.Changes[0].Device != "core-r1" {
		t.Fatalf("changed run: %+v", res)
	}
	if got := commits(t, repo); len(got) != 2 || got[0] != "backupd: core-r1" {
		t.Fatalf("commits after a change: %q", got)
	}
	if body := git(t, repo, "log", "-1", "--format=%B"); !strings.Contains(body, "core-r1: changed (trigger: schedule)") {
		t.Fatalf("commit message: %s", body)
	}
	if got := git(t, repo, "show", "HEAD:core-r1"); got != e.latestText(r1) {
		t.Fatal("core-r1 in git differs from its new stored text")
	}
	if diff := git(t, repo, "log", "-p", "--format=", "--", "core-r1"); !strings.Contains(diff, "\n+") {
		t.Fatal("git log -p shows no change on core-r1")
	}

	// A deleted device's file goes, in its own commit.
	if err := e.store.DeleteDevice(e.ctx, sw2); err != nil {
		t.Fatal(err)
	}
	res = e.sync()
	if res.Commit == "" || len(res.Changes) != 1 || !res.Changes[0].Removed {
		t.Fatalf("deleted device: %+v", res)
	}
	if files := strings.Fields(git(t, repo, "ls-files")); len(files) != 1 || files[0] != "core-r1" {
		t.Fatalf("files after deleting edge/sw2: %q", files)
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("sync with nothing new committed: %+v", res)
	}

	// A renamed device: its file moves, in one commit that says so.
	if _, err := e.store.UpdateDevice(e.ctx, r1, func(d *db.Device) error { d.Name = "core-r1-new"; return nil }); err != nil {
		t.Fatal(err)
	}
	if res := e.sync(); res.Commit == "" || len(res.Changes) != 2 {
		t.Fatalf("renamed device: %+v", res)
	}
	body = git(t, repo, "log", "-1", "--format=%B")
	if !strings.Contains(body, "- core-r1: removed (device deleted or renamed)") || !strings.Contains(body, "- core-r1-new: added (trigger: schedule)") {
		t.Fatalf("rename commit message: %s", body)
	}
	if git(t, repo, "show", "HEAD:core-r1-new") != e.latestText(r1) {
		t.Fatal("the renamed device's file differs from its stored text")
	}
}

func TestLayoutGroupsAndCollisions(t *testing.T) {
	e := newEnv(t)
	core, err := e.store.CreateGroup(e.ctx, "core", nil)
	if err != nil {
		t.Fatal(err)
	}
	dc1, err := e.store.CreateGroup(e.ctx, "dc 1", &core.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := e.sim("r 1", "cisco_ios", 1, &dc1.ID)
	b := e.sim("R/1", "cisco_ios", 2, &dc1.ID) // the same safe name but for case
	c := e.sim("core", "cisco_ios", 3, nil)    // the group folder's name
	d := e.sim("..", "cisco_ios", 4, nil)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, Groups: true}); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
	e.sync()
	repo := e.mirror.Dir()
	files := strings.Fields(git(t, repo, "ls-files"))
	want := []string{"_.", "core/dc_1/R_1@" + strconv.FormatInt(b, 10), "core/dc_1/r_1", "core@" + strconv.FormatInt(c, 10)}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files: %q, want %q", files, want)
	}
	for path, id := range map[string]int64{want[0]: d, want[1]: b, want[2]: a, want[3]: c} {
		if git(t, repo, "show", "HEAD:"+path) != e.latestText(id) {
			t.Errorf("%s differs from device %d's stored text", path, id)
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"core-r1":                "core-r1",
		"../../etc":              "_._.._etc",
		".git":                   "_git",
		"":                       "_",
		"a b/c\\d":               "a_b_c_d",
		"核心交换机":                  "核心交换机",
		"x\x00y\ny":              "x_y_y",
		"r1@7":                   "r1_7",
		strings.Repeat("a", 300): strings.Repeat("a", 200),
	} {
		if got := gitmirror.SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBackfillHistoryInTimeOrder(t *testing.T) {
	e := newEnv(t)
	r1 := e.sim("r1", "cisco_ios", 1, nil)
	r2 := e.sim("r2", "cisco_ios", 2, nil)
	e.run(queue.TriggerManual)
	e.sims[r1].Mutate(7)
	e.run(queue.TriggerSchedule) // r1 changes, r2 only noise
	e.sims[r1].Mutate(8)
	e.sims[r2].Mutate(9)
	e.run(queue.TriggerSchedule)
	n, err := e.mirror.Backfill(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 { // one commit per run: r1 and r2 first, r1 changed, both changed
		t.Fatalf("backfill wrote %d commits, want 3", n)
	}
	repo := e.mirror.Dir()
	if got := len(strings.Split(strings.TrimSpace(git(t, repo, "log", "--format=%H", "--", "r1")), "\n")); got != 3 {
		t.Fatalf("r1 has %d commits, want 3", got)
	}
	if got := len(strings.Split(strings.TrimSpace(git(t, repo, "log", "--format=%H", "--", "r2")), "\n")); got != 2 {
		t.Fatalf("r2 has %d commits, want 2 (its unchanged run has none)", got)
	}
	// Each run's commit holds its versions byte for byte (secrets
	// masked), dated when its
	// last backup started; dates never go back.
	h, err := e.store.MirrorHistory(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	runs := gitmirror.Runs(h)
	revs := strings.Fields(git(t, repo, "log", "--reverse", "--format=%H"))
	if len(revs) != len(runs) {
		t.Fatalf("%d commits for %d runs", len(revs), len(runs))
	}
	var last int64
	for i, run := range runs {
		for _, v := range run {
			if git(t, repo, "show", revs[i]+":"+v.Name) != e.mirrored(v) {
				t.Fatalf("commit %d: %s differs from version %s", i, v.Name, v.BackupID)
			}
		}
		at, _ := strconv.ParseInt(strings.TrimSpace(git(t, repo, "log", "-1", "--format=%at", revs[i])), 10, 64)
		if want := run[len(run)-1].StartedAt.Unix(); at != want || at < last {
			t.Fatalf("commit %d dated %d, want %d, after %d", i, at, want, last)
		}
		last = at
	}
	if body := git(t, repo, "log", "-1", "--format=%B", revs[0]); !strings.Contains(body, "- r1: first backup (trigger: manual)\n- r2: first backup (trigger: manual)") {
		t.Fatalf("first commit's message: %s", body)
	}
	if git(t, repo, "show", "HEAD:r1") != e.latestText(r1) || git(t, repo, "show", "HEAD:r2") != e.latestText(r2) {
		t.Fatal("the backfilled mirror is not the current state")
	}
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("working clone not clean: %q", st)
	}
	// A second backfill is refused; a sync then finds nothing to commit.
	if _, err := e.mirror.Backfill(e.ctx); err == nil {
		t.Fatal("a second backfill was not refused")
	}
	if res := e.sync(); res.Commit != "" {
		t.Fatalf("sync after backfill committed: %+v", res)
	}
}

func TestNoGitIsAClearError(t *testing.T) {
	e := newEnv(t)
	t.Setenv("PATH", t.TempDir())
	_, err := e.mirror.Sync(e.ctx)
	if err == nil || err.Error() != "git mirror: the git program is not installed: apt install git" {
		t.Fatalf("without git: %v", err)
	}
}

// The server's loop: once the run's queue has drained, one commit, then
// a push; a second run without changes adds nothing.
func TestRunCommitsAfterTheQueueDrains(t *testing.T) {
	e := newEnv(t)
	e.sim("r1", "cisco_ios", 1, nil)
	e.sim("r2", "cisco_ios", 2, nil)
	bare := bareRepo(t)
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, db.GitMirror{Enabled: true, RemoteURL: bare, AllowLocalRemote: true}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); e.mirror.Run(ctx, gitmirror.LoopOptions{Poll: 20 * time.Millisecond}) }()
	defer func() { cancel(); <-done }()
	waitPushed := func(want int) {
		t.Helper()
		for range 500 { // bounded: 10 s
			st, err := e.mirror.PushStatus(e.ctx)
			if err == nil && st.OK && st.Commit != "" {
				if n := len(strings.Fields(git(t, bare, "log", "--format=%H", "main"))); n == want {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("the remote never got %d commits", want)
	}
	e.run(queue.TriggerSchedule)
	waitPushed(1)
	e.run(queue.TriggerSchedule)
	e.sims[1].Mutate(11)
	e.run(queue.TriggerSchedule)
	waitPushed(2)
	if got := commits(t, bare); len(got) != 2 || got[0] != "backupd: r1" {
		t.Fatalf("remote commits: %q", got)
	}
	// No run: a deleted device is noticed too.
	if err := e.store.DeleteDevice(e.ctx, 2); err != nil {
		t.Fatal(err)
	}
	waitPushed(3)
}

func TestRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	v := func(dev int64, min int) db.MirrorVersion {
		return db.MirrorVersion{DeviceID: dev, StartedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	got := gitmirror.Runs([]db.MirrorVersion{v(1, 0), v(2, 1), v(1, 2), v(3, 9), v(4, 25), v(5, 30)})
	var shape []string
	for _, run := range got {
		var ids []string
		for _, x := range run {
			ids = append(ids, strconv.FormatInt(x.DeviceID, 10))
		}
		shape = append(shape, strings.Join(ids, ","))
	}
	// Device 1 twice: a second run; 16 minutes of quiet: a third.
	if strings.Join(shape, " ") != "1,2 1,3 4,5" {
		t.Fatalf("runs: %q", shape)
	}
	if gitmirror.Runs(nil) != nil {
		t.Fatal("runs of nothing")
	}
}

// pushRun stores gm as the mirror's settings, backs up, commits the run and
// pushes it to bare, and checks that the remote's main is that commit with
// device's file equal to its stored text. over names the way in messages.
func (e *env) pushRun(gm db.GitMirror, bare string, device int64, file, over string) gitmirror.Result {
	e.t.Helper()
	t := e.t
	if err := e.store.PutSetting(e.ctx, db.SettingGitMirror, gm); err != nil {
		t.Fatal(err)
	}
	e.run(queue.TriggerManual)
	res := e.sync()
	if err := e.mirror.Push(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git(t, bare, "rev-parse", "main")); got != res.Commit {
		t.Fatalf("remote main is %s, want %s", got, res.Commit)
	}
	if git(t, bare, "show", "main:"+file) != e.latestText(device) {
		t.Fatalf("the file pushed %s differs from the stored text", over)
	}
	return res
}
