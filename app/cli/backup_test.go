package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

const (
	simUser     = "backup"
	simPassword = "cli-test-password"
	simEnable   = "cli-test-enable"
)

// simFleet starts simulated devices and registers them in dataDir with a
// credential sealed under the directory's secret.key, as the API would.
func simFleet(t *testing.T, dataDir string, n int, o devsim.Options, failing ...devsim.Failure) (*db.Store, []int64) {
	t.Helper()
	store, ids, _ := simFleetDevices(t, dataDir, n, o, failing...)
	return store, ids
}

// simFleetDevices is simFleet that also returns the simulated devices.
func simFleetDevices(t *testing.T, dataDir string, n int, o devsim.Options, failing ...devsim.Failure) (*db.Store, []int64, []*devsim.Device) {
	t.Helper()
	ctx := context.Background()
	sealer, err := secret.LoadOrCreate(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t, dataDir)
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: simUser,
		Password:       sealer.Seal(simPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(simEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var sims []*devsim.Device
	for i := range n + len(failing) {
		opts := o
		opts.Platform, opts.Hostname, opts.Seed = "cisco_ios", fmt.Sprintf("sw-%02d", i), int64(i+1)
		opts.Username, opts.Password, opts.EnablePassword = simUser, simPassword, simEnable
		opts.SSHAddr = "127.0.0.1:0"
		if i >= n {
			opts.Failures = []devsim.Failure{failing[i-n]}
		}
		d, err := devsim.NewDevice(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		sims = append(sims, d)
		_, p, _ := net.SplitHostPort(d.SSHAddr())
		port, _ := strconv.Atoi(p)
		dev, err := store.CreateDevice(ctx, db.Device{Name: opts.Hostname, Host: "127.0.0.1", Port: port, Platform: "cisco_ios",
			LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, dev.ID)
	}
	return store, ids, sims
}

func TestBackupRunPrintsOneLinePerDevice(t *testing.T) {
	data := storeDir(t)
	_, ids := simFleet(t, data, 3, devsim.Options{}, devsim.FailWrongPassword)

	r := run(t, call{}, "backup", "run", "--all", "--data", data)
	if r.code == 0 {
		t.Fatalf("a failed backup must make the run fail:\n%s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("want one line per device (4):\n%s", r)
	}
	ok, failed := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "ok ") && strings.Contains(l, "first backup"):
			ok++
		case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, "authentication failed") && strings.Contains(l, "sw-03"):
			failed++
		}
	}
	if ok != 3 || failed != 1 || !strings.Contains(r.stderr, "(0 changed)") {
		t.Fatalf("want 3 ok lines (first backups, not changes) and 1 authentication failure:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, simPassword) {
		t.Fatal("the output holds the device password")
	}

	// One healthy device: exit 0, and nothing changed since the last run.
	r = mustRun(t, call{}, "backup", "run", "--device", strconv.FormatInt(ids[0], 10), "--data", data)
	if !strings.HasPrefix(r.stdout, "ok ") || !strings.Contains(r.stdout, "unchanged") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("second backup of one device:\n%s", r)
	}

	// Retention on demand: device 0 has two good versions; keeping one
	// deletes the older, and nothing else.
	r = mustRun(t, call{}, "backup", "prune", "--keep-last", "1", "--keep-days", "0", "--data", data)
	if !strings.Contains(r.stdout, "deleted 1 backup record(s)") {
		t.Fatalf("prune:\n%s", r)
	}
	mustFail(t, call{}, []string{"exactly one of --device ID, --group ID or --all"}, "backup", "run", "--data", data)
	mustFail(t, call{}, []string{"exactly one of"}, "backup", "run", "--all", "--device", "1", "--data", data)
	mustFail(t, call{}, []string{"no device with ID 999"}, "backup", "run", "--device", "999", "--data", data)
	mustFail(t, call{}, []string{"no group with ID 5"}, "backup", "run", "--group", "5", "--data", data)
}

// kill -9 in the middle of a run, then a second run: the database is
// intact, nothing stays "running", the attempts cut off are recorded as
// interrupted, and every device ends up backed up.
func TestBackupRunSurvivesKill9(t *testing.T) {
	t.Parallel() // see runTests
	data := storeDir(t)
	store, ids := simFleet(t, data, 40, devsim.Options{
		ConfigSize: devsim.MinConfigSize, DripDelay: 2 * time.Millisecond, DripChunk: 16,
		Failures: []devsim.Failure{devsim.FailSlowDrip},
	})

	cmd := exec.Command(binPath, "backup", "run", "--all", "--workers", "8", "--data", data)
	cmd.Env = cleanEnv(storeEnv(cmd.Args)...)
	cmd.Dir = t.TempDir()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	okLines := make(chan struct{}, 100)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ok ") {
				okLines <- struct{}{}
			}
		}
	}()
	for range 3 {
		select {
		case <-okLines:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatal("no backup finished within 60 s")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wg.Wait()

	ctx := context.Background()
	var running int
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&running)
	if running == 0 {
		t.Fatal("the kill left no backup in flight; the test proves nothing")
	}

	r := mustRun(t, call{}, "backup", "run", "--all", "--workers", "20", "--data", data)
	if n := strings.Count(r.stdout, "\nok ") + boolInt(strings.HasPrefix(r.stdout, "ok ")); n != len(ids) {
		t.Fatalf("second run backed up %d of %d devices:\n%s", n, len(ids), r)
	}
	integrity := "ok" // SQLite's own check; PostgreSQL has none to run
	if !store.Postgres() {
		dbtest.Peek(t, store).QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity)
	}
	var stillRunning, interrupted, jobsRunning, withoutSuccess int
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&stillRunning)
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE error_message = ?`, queue.ErrorInterrupted).Scan(&interrupted)
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&jobsRunning)
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM devices WHERE id NOT IN (SELECT device_id FROM backups WHERE success = 1)`).Scan(&withoutSuccess)
	if integrity != "ok" || stillRunning != 0 || interrupted != running || jobsRunning != 0 || withoutSuccess != 0 {
		t.Fatalf("after restart: integrity %q, running records %d, interrupted %d (want %d), active jobs %d, devices never backed up %d",
			integrity, stillRunning, interrupted, running, jobsRunning, withoutSuccess)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Three kill -9 in a row, each while every device's backup is in flight,
// then an ordinary run: the crashes were not the devices' fault, so they
// use up none of the jobs' attempts, and the run the operator starts backs
// every device up now instead of reporting the dead runs' interruptions.
func TestBackupRunAfterRepeatedKill9BacksEveryDeviceUp(t *testing.T) {
	t.Parallel() // see runTests
	const devices, kills = 30, 3
	data := storeDir(t)
	// Each device drips its output for about 2 s, so a run takes a few
	// seconds and the kills land in the middle of it.
	store, _, sims := simFleetDevices(t, data, devices, devsim.Options{
		ConfigSize: devsim.MinConfigSize, DripDelay: 20 * time.Millisecond, DripChunk: 16, DripBudget: 2 * time.Second,
		Failures: []devsim.Failure{devsim.FailSlowDrip},
	})
	ctx := context.Background()
	count := func(query string) int {
		var n int
		if err := dbtest.Peek(t, store).QueryRowContext(ctx, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for round := 1; round <= kills; round++ {
		cmd := exec.Command(binPath, "backup", "run", "--all", "--workers", "50", "--data", data)
		cmd.Env = cleanEnv(storeEnv(cmd.Args)...)
		cmd.Dir = t.TempDir()
		started := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it once every device is sending this run its configuration
		// (slowly): each backup is in flight.
		inFlight := func() bool {
			for _, d := range sims {
				if d.Stats().ConfigShows < int64(round) {
					return false
				}
			}
			return true
		}
		deadline := time.Now().Add(20 * time.Second)
		for !inFlight() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("run %d: the backups were not all in flight within 20 s (records %d)", round, count(`SELECT COUNT(*) FROM backups`))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		t.Logf("run %d killed with %d backups in flight after %s", round, devices, time.Since(started).Round(10*time.Millisecond))
	}
	if ok := count(`SELECT COUNT(*) FROM backups WHERE success = 1`); ok != 0 {
		t.Fatalf("%d backups finished before a kill; the kills prove nothing", ok)
	}

	started := time.Now()
	r := run(t, call{}, "backup", "run", "--all", "--workers", "50", "--data", data)
	t.Logf("run %d after %d kills: exit %d after %s", kills+1, kills, r.code, time.Since(started).Round(10*time.Millisecond))
	if r.code != 0 || strings.Count(r.stdout, "ok ") != devices || strings.Contains(r.stdout, "FAILED") {
		t.Fatalf("the run after %d kills must back up all %d devices:\n%s", kills, devices, r)
	}
	if n := count(`SELECT COUNT(*) FROM devices WHERE id NOT IN (SELECT device_id FROM backups WHERE success = 1)`); n != 0 {
		t.Fatalf("%d devices never backed up", n)
	}
	if n := count(`SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')`); n != 0 {
		t.Fatalf("%d jobs left queued or running", n)
	}
	// Each device's job went through the three kills and succeeded at its
	// first counted attempt: the crashes used up none of its retries.
	if n := count(fmt.Sprintf(`SELECT COUNT(*) FROM jobs WHERE state = 'succeeded' AND attempt = 1 AND interruptions = %d`, kills)); n != devices {
		rows, _ := dbtest.Peek(t, store).QueryContext(ctx, `SELECT state, attempt, interruptions, COUNT(*) FROM jobs GROUP BY 1, 2, 3`)
		var seen []string
		for rows.Next() {
			var state string
			var attempt, interruptions, n int
			_ = rows.Scan(&state, &attempt, &interruptions, &n)
			seen = append(seen, fmt.Sprintf("%d %s at attempt %d after %d interruptions", n, state, attempt, interruptions))
		}
		rows.Close()
		t.Fatalf("%d of %d jobs succeeded at attempt 1 after %d interruptions; jobs: %s", n, devices, kills, strings.Join(seen, "; "))
	}
	if r := mustRun(t, call{}, "db", "check", "--data", data); strings.TrimSpace(r.stdout) != "ok" {
		t.Fatalf("db check after the kills:\n%s", r)
	}
}

// A run the operator starts backs the device up now even when the job a
// dead process left behind has just reached its interruption limit: the
// dead job is ended first, and this run does its own attempt.
func TestBackupRunAfterJobGivenUpForInterruptions(t *testing.T) {
	data := storeDir(t)
	store, ids := simFleet(t, data, 1, devsim.Options{})
	ctx := context.Background()
	job, err := store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: ids[0], Trigger: queue.TriggerSchedule, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	// Processes that took the job and died, one after another; the last
	// one's attempt is still marked running.
	for i := 1; i <= queue.DefaultMaxInterruptions; i++ {
		owner := fmt.Sprintf("crashed-%d", i)
		if claims, err := store.ClaimJobs(ctx, owner, 1, nil); err != nil || len(claims) != 1 {
			t.Fatalf("claim %d: %v, %v", i, claims, err)
		}
		if i < queue.DefaultMaxInterruptions {
			if _, err := store.InterruptJobs(ctx, owner, queue.DefaultMaxInterruptions); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := run(t, call{}, "backup", "run", "--device", strconv.FormatInt(ids[0], 10), "--data", data)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ok ") {
		t.Fatalf("the operator's run must back the device up:\n%s", r)
	}
	got, _ := store.GetJobs(ctx, job)
	if got[0].State != queue.JobFailed || got[0].Error == nil || *got[0].Error != queue.ErrorInterruptedTooOften {
		t.Fatalf("the dead processes' job: %+v; want it given up", got[0])
	}
}
