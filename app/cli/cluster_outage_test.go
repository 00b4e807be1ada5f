package cli_test

import (
	"context"
	"io"
	"net/http"
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

// Three `backupd serve` nodes on a PostgreSQL server of the test's own
// back up 24 simulated devices (about 2 s each) when the database goes
// away mid-run. While it is away every node says it is not ready and its
// engine does not run (/readyz 503, backupd_engine_running 0); once it
// is back every node runs again by itself (/readyz 200, the gauge 1, a
// restart counted), every job of the cut round ends successfully, and a
// round queued afterwards does too. Before, each node's engine stopped
// for good when its shutdown could not reach the database, and the
// queued jobs waited for ever. The database goes away as a crash does
// (pg_ctl stop -m immediate: connections refused) ...
func TestClusterRunsAgainAfterPostgreSQLRestart(t *testing.T) {
	t.Parallel() // see runTests
	srv := dbtest.StartServer(t)
	loc := srv.CreateDatabase("backupd")
	clusterOutage(t, loc, loc, srv.Stop, srv.Start)
}

// ... or is cut off: nothing refused, nothing closed, every call would
// wait for an answer that does not come.
func TestClusterRunsAgainAfterDatabaseConnectionCut(t *testing.T) {
	t.Parallel() // see runTests
	srv := dbtest.StartServer(t)
	loc := srv.CreateDatabase("backupd")
	proxy := dbtest.NewProxy(t, srv.Addr())
	clusterOutage(t, loc, dbtest.WithHost(loc, proxy.Addr()), proxy.Cut, proxy.Heal)
}

var engineRunningLine = regexp.MustCompile(`(?m)^backupd_engine_running (\d+)$`)
var engineRestartsLine = regexp.MustCompile(`(?m)^backupd_engine_restarts_total (\d+)$`)
var engineFailedToStartTwice = regexp.MustCompile(`msg="backup engine run failed" .*tries=3 `)

// clusterOutage runs the test above: loc is the database as the test
// reaches it, nodeLoc as the nodes do.
func clusterOutage(t *testing.T, loc, nodeLoc string, outage, heal func()) {
	ctx := context.Background()
	const fleetSize = 24
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	pgStores.Store(dirs[0], loc)
	t.Cleanup(func() { pgStores.Delete(dirs[0]) })
	store, fleet, _ := simFleetDevices(t, dirs[0], fleetSize, devsim.Options{
		ConfigSize: devsim.MinConfigSize, DripDelay: 100 * time.Millisecond, DripChunk: 250, DripBudget: 2 * time.Second,
		Failures: []devsim.Failure{devsim.FailSlowDrip},
	})
	key, err := os.ReadFile(filepath.Join(dirs[0], secret.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		if err := os.WriteFile(filepath.Join(d, secret.KeyFile), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.PutSetting(ctx, db.SettingDefaultScheduleCreated, true); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*server, len(dirs))
	for i, d := range dirs {
		// At debug level each failed try of the engine to start is logged.
		nodes[i] = startServe(t, d, "--db", nodeLoc, "--workers", "4", "--metrics-listen", "127.0.0.1:0", "--log-level", "debug")
	}
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	metricsOf := func(n *server) string {
		m := metricsURL.FindStringSubmatch(n.stderr.String())
		if m == nil {
			t.Fatalf("a node did not log its metrics address:\n%s", n.stderr)
		}
		_, body := get(m[1])
		return body
	}
	gauge := func(re *regexp.Regexp, body string) int {
		m := re.FindStringSubmatch(body)
		if m == nil {
			return -1
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	// everyNode asks the nodes at once: while the database is cut off
	// each answer may take the probes' 5 s.
	everyNode := func(cond func(n *server) bool) func() bool {
		return func() bool {
			results := make(chan bool, len(nodes))
			for _, n := range nodes {
				go func() { results <- cond(n) }()
			}
			all := true
			for range nodes {
				all = <-results && all
			}
			return all
		}
	}
	waitUntil := func(d time.Duration, what string, cond func() bool) {
		t.Helper()
		waitForNodes(t, nodes, d, what, cond)
	}
	counts := func(ids []int64) (active, succeeded, failed int) {
		js, err := store.GetJobs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			switch j.State {
			case queue.JobQueued, queue.JobRunning:
				active++
			case queue.JobSucceeded:
				succeeded++
			default:
				failed++
			}
		}
		return active, succeeded, failed
	}
	ready := func(n *server) bool { code, _ := get(n.url + "/readyz"); return code == http.StatusOK }
	notReady := func(n *server) bool {
		code, body := get(n.url + "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, `"not ready"`)
	}
	engineRunning := func(want int) func(n *server) bool {
		return func(n *server) bool { return gauge(engineRunningLine, metricsOf(n)) == want }
	}
	waitUntil(30*time.Second, "every node ready, its engine running", everyNode(func(n *server) bool {
		return ready(n) && engineRunning(1)(n)
	}))

	reqs := make([]queue.JobRequest, len(fleet))
	for i, id := range fleet {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now()}
	}
	jobs, err := store.EnqueueJobs(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(30*time.Second, "backups running on the nodes", func() bool {
		var running int
		if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running'`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		return running >= 4
	})

	began := time.Now()
	outage()
	waitUntil(45*time.Second, "every node not ready, its engine not running", everyNode(func(n *server) bool {
		probe := make(chan bool, 1)
		go func() { probe <- notReady(n) }()
		return engineRunning(0)(n) && <-probe
	}))
	t.Logf("every node not ready %s after the database went away", time.Since(began).Round(100*time.Millisecond))
	// Away long enough for every node's engine to have tried to start
	// again, and failed, twice, and its leader election once.
	waitUntil(45*time.Second, "every node to have found the database away again", everyNode(func(n *server) bool {
		log := n.stderr.String()
		return strings.Contains(log, "cannot reach the database to take part in the leader election") &&
			engineFailedToStartTwice.MatchString(log)
	}))
	t.Logf("the database came back %s after it went away", time.Since(began).Round(100*time.Millisecond))
	heal()
	back := time.Now()
	waitUntil(45*time.Second, "every node ready again, its engine running", everyNode(func(n *server) bool {
		return ready(n) && engineRunning(1)(n)
	}))
	t.Logf("every node ready %s after the database came back", time.Since(back).Round(100*time.Millisecond))
	waitUntil(60*time.Second, "the round the outage cut finished", func() bool { a, _, _ := counts(jobs); return a == 0 })
	t.Logf("the round finished %s after the database came back", time.Since(back).Round(100*time.Millisecond))
	if _, ok, failed := counts(jobs); ok != fleetSize {
		t.Fatalf("the round the outage cut: %d succeeded, %d failed; want all %d succeeded", ok, failed, fleetSize)
	}
	again, err := store.EnqueueJobs(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(60*time.Second, "a round queued after the outage", func() bool { _, ok, _ := counts(again); return ok == fleetSize })
	for i, n := range nodes {
		if r := gauge(engineRestartsLine, metricsOf(n)); r < 1 {
			t.Errorf("node %d: backupd_engine_restarts_total %d; want the restart counted", i, r)
		}
		log := n.stderr.String()
		for _, want := range []string{"backup engine running again"} {
			if !strings.Contains(log, want) {
				t.Errorf("node %d's log lacks %q:\n%s", i, want, lastLines(log, 30))
			}
		}
	}
	for i, n := range nodes {
		if code := n.stop(t); code != 0 {
			t.Errorf("node %d exit code %d:\n%s", i, code, lastLines(n.stderr.String(), 20))
		}
	}
}

// On SQLite too the engine starts again by itself after a failure, and
// /readyz says when it does not run although the database answers: here
// the data directory's run/ folder, where the engine keeps its liveness
// lock, cannot be made (a file is in its way) until it is cleared.
func TestReadyzSaysWhenTheBackupEngineDoesNotRun(t *testing.T) {
	dbtest.SQLiteOnly(t, "the engine's lock file in the data directory")
	data := t.TempDir()
	run := filepath.Join(data, "run")
	if err := os.WriteFile(run, []byte("in the way\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, data, "--metrics-listen", "127.0.0.1:0")
	m := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("serve did not log the metrics address:\n%s", srv.stderr)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	scrape := func(re *regexp.Regexp) int {
		resp, err := client.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if v := re.FindSubmatch(b); v != nil {
			n, _ := strconv.Atoi(string(v[1]))
			return n
		}
		return -1
	}
	within := func(d time.Duration, what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within %s: %s\n%s", d, what, lastLines(srv.stderr.String(), 20))
			}
		}
	}
	within(30*time.Second, "the engine's failure logged", func() bool {
		return strings.Contains(srv.stderr.String(), "backup engine stopped; it starts again once the database answers")
	})
	r := srv.do(t, http.MethodGet, "/readyz", "", "")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "the backup engine is not running") {
		t.Fatalf("/readyz with the engine not running: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), data) {
		t.Errorf("/readyz, which answers anyone, names the data directory: %s", r.body)
	}
	if v := scrape(engineRunningLine); v != 0 {
		t.Errorf("backupd_engine_running = %d with the engine not running; want 0", v)
	}

	if err := os.Remove(run); err != nil {
		t.Fatal(err)
	}
	within(30*time.Second, "/readyz ready once the engine runs", func() bool {
		return srv.do(t, http.MethodGet, "/readyz", "", "").status == http.StatusOK
	})
	if v := scrape(engineRunningLine); v != 1 {
		t.Errorf("backupd_engine_running = %d with the engine running; want 1", v)
	}
	if v := scrape(engineRestartsLine); v != 1 {
		t.Errorf("backupd_engine_restarts_total = %d; want 1", v)
	}
	if !strings.Contains(srv.stderr.String(), "backup engine running again") {
		t.Errorf("the log does not say the engine runs again:\n%s", lastLines(srv.stderr.String(), 20))
	}
}
