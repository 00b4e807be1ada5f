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
		_, p, _ := net.SplitHostPort(d.SSHAddr())
		port, _ := strconv.Atoi(p)
		dev, err := store.CreateDevice(ctx, db.Device{Name: opts.Hostname, Host: "127.0.0.1", Port: port, Platform: "cisco_ios",
			LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, dev.ID)
	}
	return store, ids
}

func TestBackupRunPrintsOneLinePerDevice(t *testing.T) {
	data := t.TempDir()
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
		case strings.HasPrefix(l, "ok ") && strings.Contains(l, "changed"):
			ok++
		case strings.HasPrefix(l, "FAILED ") && strings.Contains(l, "authentication failed") && strings.Contains(l, "sw-03"):
			failed++
		}
	}
	if ok != 3 || failed != 1 {
		t.Fatalf("want 3 ok lines and 1 authentication failure:\n%s", r)
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
	data := t.TempDir()
	store, ids := simFleet(t, data, 40, devsim.Options{
		ConfigSize: devsim.MinConfigSize, DripDelay: 2 * time.Millisecond, DripChunk: 16,
		Failures: []devsim.Failure{devsim.FailSlowDrip},
	})

	cmd := exec.Command(binPath, "backup", "run", "--all", "--workers", "8", "--data", data)
	cmd.Env = cleanEnv()
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
	store.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&running)
	if running == 0 {
		t.Fatal("the kill left no backup in flight; the test proves nothing")
	}

	r := mustRun(t, call{}, "backup", "run", "--all", "--workers", "20", "--data", data)
	if n := strings.Count(r.stdout, "\nok ") + boolInt(strings.HasPrefix(r.stdout, "ok ")); n != len(ids) {
		t.Fatalf("second run backed up %d of %d devices:\n%s", n, len(ids), r)
	}
	var integrity string
	store.Reader().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity)
	var stillRunning, interrupted, jobsRunning, withoutSuccess int
	store.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&stillRunning)
	store.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE error_message = ?`, db.ErrorInterrupted).Scan(&interrupted)
	store.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&jobsRunning)
	store.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM devices WHERE id NOT IN (SELECT device_id FROM backups WHERE success = 1)`).Scan(&withoutSuccess)
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
