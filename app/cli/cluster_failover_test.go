package cli_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

var (
	leadsLine = regexp.MustCompile(`msg="this node leads`)
	firedLine = regexp.MustCompile(`msg="schedule fired" .*schedule_id=(\d+) .*tick=(\S+)`)
)

// Three `backupd serve` nodes on one PostgreSQL database back up 500
// simulated devices queued at once; mid-run the test kills (SIGKILL) a
// node running backups, then the leader. Every device ends with exactly
// one successful backup, no job is left queued or running, the killed
// nodes' attempts were requeued and run elsewhere, and the every-minute
// schedule the leader fires has each tick fired once, none skipped, also
// after the leader's death.
func TestClusterFailover(t *testing.T) {
	t.Parallel() // see runTests
	if !dbtest.Postgres() {
		t.Skip("several nodes share a PostgreSQL store only; set " + dbtest.Env)
	}
	ctx := context.Background()
	const fleetSize = 500
	dirs := []string{storeDir(t), t.TempDir(), t.TempDir()}
	loc, _ := pgStores.Load(dirs[0])
	for _, d := range dirs[1:] {
		pgStores.Store(d, loc)
		t.Cleanup(func() { pgStores.Delete(d) })
	}
	// Each backup takes a few hundred milliseconds (the device drips its
	// output), so that the run lasts long enough to kill nodes in it.
	store, fleet, _ := simFleetDevices(t, dirs[0], fleetSize, devsim.Options{
		ConfigSize: devsim.MinConfigSize, DripDelay: 40 * time.Millisecond, DripChunk: 1500, DripBudget: 400 * time.Millisecond,
		Failures: []devsim.Failure{devsim.FailSlowDrip},
	})
	for _, d := range dirs[1:] {
		key, err := os.ReadFile(filepath.Join(dirs[0], secret.KeyFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, secret.KeyFile), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// No nightly schedule: only the test's own fires.
	if err := store.PutSetting(ctx, db.SettingDefaultScheduleCreated, true); err != nil {
		t.Fatal(err)
	}
	// A device the every-minute schedule backs up, quickly.
	probeSim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "probe", Seed: 9999,
		Username: simUser, Password: simPassword, EnablePassword: simEnable, SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probeSim.Close() })
	cred, err := store.GetDevice(ctx, fleet[0])
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(probeSim.SSHAddr())
	port, _ := strconv.Atoi(p)
	probe, err := store.CreateDevice(ctx, db.Device{Name: "probe", Host: "127.0.0.1", Port: port, Platform: "cisco_ios",
		LoginMethod: "ssh", CredentialID: cred.CredentialID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	firstTick := time.Now().UTC().Truncate(time.Minute)
	sc, err := store.CreateSchedule(ctx, db.Schedule{Name: "every minute", Cron: "* * * * *", Timezone: "UTC",
		Target: db.ScheduleTargetDevices, TargetIDs: []int64{probe.ID}, Enabled: true, NextRunAt: &firstTick})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([]queue.JobRequest, len(fleet))
	for i, id := range fleet {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now()}
	}
	if _, err := store.EnqueueJobs(ctx, reqs); err != nil {
		t.Fatal(err)
	}

	nodes := make([]*server, len(dirs))
	for i, d := range dirs {
		nodes[i] = startServe(t, d, "--workers", "8")
	}
	done := func() int {
		var n int
		if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE device_id <> ? AND state NOT IN ('queued', 'running')`,
			probe.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitUntil := func(d time.Duration, what string, cond func() bool) {
		t.Helper()
		waitForNodes(t, nodes, d, what, cond)
	}
	alive := map[int]bool{0: true, 1: true, 2: true}
	// The node that leads now: the alive node that logged that it leads
	// (here the lead moves only when its holder dies).
	leader := func() int {
		for i := range nodes {
			if alive[i] && leadsLine.MatchString(nodes[i].stderr.String()) {
				return i
			}
		}
		return -1
	}
	waitUntil(20*time.Second, "a leader", func() bool { return leader() >= 0 })
	kill := func(i int) {
		t.Helper()
		if err := nodes[i].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-nodes[i].done
		delete(alive, i)
	}

	// A node running backups (not the leader) dies first.
	waitUntil(60*time.Second, "100 backups done", func() bool { return done() >= 100 })
	follower := (leader() + 1) % len(nodes)
	kill(follower)
	t.Logf("killed node %d (follower) after %d backups", follower, done())

	waitUntil(60*time.Second, "200 backups done", func() bool { return done() >= 200 })
	old := leader()
	kill(old)
	leaderDied := time.Now()
	t.Logf("killed node %d (leader) after %d backups", old, done())
	var survivor int
	for i := range alive {
		survivor = i
	}
	waitUntil(20*time.Second, "the survivor to lead", func() bool { return leader() == survivor })

	waitUntil(90*time.Second, "every backup done", func() bool { return done() == fleetSize })
	// A tick after the leader's death, fired by the new one.
	waitUntil(75*time.Second, "a schedule tick after the leader died", func() bool {
		got, err := store.GetSchedule(ctx, sc.ID)
		return err == nil && got.LastRunAt != nil && got.LastRunAt.After(leaderDied)
	})
	lastTick := func() time.Time {
		got, err := store.GetSchedule(ctx, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		return *got.LastRunAt
	}()
	// Its backup done too, then stop the survivor.
	waitUntil(30*time.Second, "the probe's backups done", func() bool {
		var active int
		_ = dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&active)
		return active == 0
	})
	if code := nodes[survivor].stop(t); code != 0 {
		t.Errorf("survivor exit code %d:\n%s", code, lastLines(nodes[survivor].stderr.String(), 20))
	}

	// Every device of the run: exactly one successful backup, one job,
	// succeeded.
	rows, err := dbtest.Peek(t, store).Query(`SELECT d.id, COUNT(b.id) FROM devices d
		LEFT JOIN backups b ON b.device_id = d.id AND b.success = 1
		WHERE d.id <> ? GROUP BY d.id`, probe.ID)
	if err != nil {
		t.Fatal(err)
	}
	devices := 0
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		devices++
		if n != 1 {
			t.Errorf("device %d has %d successful backups; want exactly 1", id, n)
		}
	}
	rows.Close()
	if devices != fleetSize {
		t.Fatalf("%d devices counted, want %d", devices, fleetSize)
	}
	var jobs, succeeded, active, interrupted, interruptions int
	q := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*), COALESCE(SUM(state = 'succeeded'), 0), COALESCE(SUM(state IN ('queued', 'running')), 0),
		COALESCE(SUM(interruptions), 0) FROM jobs WHERE device_id <> ?`, probe.ID)
	if err := q.Scan(&jobs, &succeeded, &active, &interruptions); err != nil {
		t.Fatal(err)
	}
	if jobs != fleetSize || succeeded != fleetSize || active != 0 {
		t.Errorf("jobs: %d, %d succeeded, %d queued or running; want %d, all succeeded", jobs, succeeded, active, fleetSize)
	}
	if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM backups WHERE error_message = ?`, queue.ErrorInterrupted).
		Scan(&interrupted); err != nil {
		t.Fatal(err)
	}
	// The kills hit running backups: they were recorded as interrupted
	// and their jobs run again (an interruption, not an attempt).
	if interrupted == 0 || interruptions != interrupted {
		t.Errorf("%d interrupted attempts, %d interruptions counted on jobs; want some, equal", interrupted, interruptions)
	}
	t.Logf("%d attempts interrupted by the kills, run again on the other nodes", interrupted)

	// The schedule: each tick from the first to the last fired once (one
	// job of the probe device per tick), none logged twice by two nodes.
	ticks := int(lastTick.Sub(firstTick)/time.Minute) + 1
	var probeJobs int
	if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE device_id = ? AND trigger = 'schedule'`, probe.ID).
		Scan(&probeJobs); err != nil {
		t.Fatal(err)
	}
	if probeJobs != ticks {
		t.Errorf("the probe device has %d scheduled jobs for ticks %s to %s; want %d, one per tick",
			probeJobs, firstTick.Format(time.TimeOnly), lastTick.Format(time.TimeOnly), ticks)
	}
	fired := map[string]int{}
	for _, n := range nodes {
		for _, m := range firedLine.FindAllStringSubmatch(n.stderr.String(), -1) {
			if m[1] == strconv.FormatInt(sc.ID, 10) {
				fired[m[2]]++
			}
		}
	}
	for tick, n := range fired {
		if n != 1 {
			t.Errorf("tick %s fired %d times", tick, n)
		}
	}
	if len(fired) > ticks {
		t.Errorf("%d ticks fired, want at most %d", len(fired), ticks)
	}
	var dropped int
	for _, n := range nodes {
		dropped += strings.Count(n.stderr.String(), "backup result dropped")
	}
	t.Logf("%d ticks fired (%s to %s); %d results dropped as requeued", ticks, firstTick.Format(time.TimeOnly),
		lastTick.Format(time.TimeOnly), dropped)
}

// lastLines is the end of a log, for a failure message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// waitForNodes polls cond every 100 ms until it holds, or fails the test
// after d with what and the last lines each node logged.
func waitForNodes(t *testing.T, nodes []*server, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			var logs strings.Builder
			for i, n := range nodes {
				fmt.Fprintf(&logs, "--- node %d:\n%s\n", i, lastLines(n.stderr.String(), 20))
			}
			t.Fatalf("not within %s: %s\n%s", d, what, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
