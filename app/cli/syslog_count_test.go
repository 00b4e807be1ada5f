package cli_test

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// A configuration change a device logs is counted, and logged, as what
// it did: a new backup job, the device's job already queued (moved up to
// run now), or its backup already running. Before, all three said
// "backup queued" and counted in backupd_syslog_queued_total.
func TestSyslogCountsWhatItsTriggerDid(t *testing.T) {
	data := storeDir(t)
	store, ids := simFleet(t, data, 1, devsim.Options{}) // sw-00 on 127.0.0.1: no job
	fresh := ids[0]
	waiting := addSim(t, store, "edge-06", "127.0.0.6", true)
	// A device whose backup takes minutes, so that one is running when
	// its change is logged.
	var credID int64
	if err := dbtest.Peek(t, store).QueryRow(`SELECT id FROM credentials WHERE name = 'lab'`).Scan(&credID); err != nil {
		t.Fatal(err)
	}
	slowSim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "slow-07", Username: simUser, Password: simPassword,
		EnablePassword: simEnable, SSHAddr: "127.0.0.7:0", Seed: 78, Failures: []devsim.Failure{devsim.FailSlowDrip},
		DripDelay: 50 * time.Millisecond, DripChunk: 8, DripBudget: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slowSim.Close() })
	_, p, _ := net.SplitHostPort(slowSim.SSHAddr())
	port, _ := strconv.Atoi(p)
	ctx := context.Background()
	slowDev, err := store.CreateDevice(ctx, db.Device{Name: "slow-07", Host: "127.0.0.7", Port: port, Platform: "cisco_ios",
		LoginMethod: "ssh", CredentialID: &credID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	slow := slowDev.ID
	// No nightly schedule: only the test's own jobs.
	if err := store.PutSetting(ctx, db.SettingDefaultScheduleCreated, true); err != nil {
		t.Fatal(err)
	}
	jobs, err := store.EnqueueJobs(ctx, []queue.JobRequest{
		{DeviceID: slow, Trigger: queue.TriggerManual, NotBefore: time.Now()},
		// Waiting for its turn in a schedule's window an hour away.
		{DeviceID: waiting, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}

	srv := startServe(t, data, "--syslog-listen", "127.0.0.1:0", "--syslog-debounce", "1s", "--metrics-listen", "127.0.0.1:0")
	m := syslogListening.FindStringSubmatch(srv.stderr.String())
	mm := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil || mm == nil {
		t.Fatalf("serve did not log the syslog and metrics addresses:\n%s", srv.stderr)
	}
	addr, metricsAt := m[1], mm[1]
	counter := func(name, state string) int {
		samples, _ := testkit.Exposition(t, scrapeMetrics(t, metricsAt))
		for _, s := range samples {
			if s.Name == name && s.Labels["state"] == state {
				v, _ := strconv.Atoi(s.Value)
				return v
			}
		}
		return -1
	}
	waitFor(t, srv, "the slow device's backup running", func() bool {
		js, err := store.GetJobs(ctx, jobs[:1])
		return err == nil && len(js) == 1 && js[0].State == queue.JobRunning
	})

	const change = "%SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.50)"
	for _, from := range []string{"127.0.0.1", "127.0.0.6", "127.0.0.7"} {
		sendFrom(t, "udp", from, addr, "<189>82: *Nov 25 14:00:02: "+change)
	}
	waitFor(t, srv, "the three triggers counted", func() bool {
		return counter("backupd_syslog_queued_total", "") == 1 && counter("backupd_syslog_existing_job_total", queue.JobQueued) == 1 &&
			counter("backupd_syslog_existing_job_total", queue.JobRunning) == 1
	})
	if n := counter("backupd_syslog_triggered_total", ""); n != 3 {
		t.Errorf("backupd_syslog_triggered_total = %d; want 3 (= queued 1 + existing_job 2)", n)
	}
	log := srv.stderr.String()
	for dev, want := range map[int64]string{
		fresh:   `msg="syslog: the device logged a configuration change; backup queued" component=syslog device=sw-00 device_id=%d job_id=`,
		waiting: `msg="syslog: the device logged a configuration change; its backup was already queued and now runs at once (no new job)" component=syslog device=edge-06 device_id=%d job_id=` + strconv.FormatInt(jobs[1], 10),
		slow:    `msg="syslog: the device logged a configuration change; a backup of it is already running (no new job)" component=syslog device=slow-07 device_id=%d job_id=` + strconv.FormatInt(jobs[0], 10),
	} {
		line := strings.Replace(want, "%d", strconv.FormatInt(dev, 10), 1)
		if !regexp.MustCompile(regexp.QuoteMeta(line) + `\b`).MatchString(log) {
			t.Errorf("the log lacks %s\n%s", line, lastLines(log, 20))
		}
	}
	// The queued job the change moved up runs now, as the syslog's.
	waitFor(t, srv, "the waiting device's job run at once", func() bool { return syslogBackups(t, store)[waiting] == 1 })
	if got := syslogBackups(t, store)[fresh]; got != 1 {
		waitFor(t, srv, "the fresh device's syslog backup", func() bool { return syslogBackups(t, store)[fresh] == 1 })
	}
}
