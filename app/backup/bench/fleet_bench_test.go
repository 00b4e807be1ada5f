// Package bench measures the backup engine against a fleet of simulated
// devices. The simulator runs in a child process (this test binary
// re-executed), so the CPU time and memory reported are the engine's own.
//
//	go test ./app/backup/bench -run '^$' -bench Fleet -benchtime 1x
//	go test ./app/backup/bench -run '^$' -bench SyslogFlood -benchtime 3x -count 3 -cpu 2
//
// BACKUPD_BENCH_DEVICES (default 1000) sets the number of simulated
// devices, BACKUPD_BENCH_RECORDS_PER_DEVICE (default 1; 10 for the
// 10,000-device memory run) how many device records point at each. The
// store is SQLite, or PostgreSQL when BACKUPD_TEST_POSTGRES names a server
// (see internal/dbtest).
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

const (
	childEnv   = "BACKUPD_BENCH_FLEET_CHILD"
	configSize = 60 << 10
	password   = "bench-password"
	enable     = "bench-enable"
)

// TestMain turns the test binary into the simulator when re-executed.
func TestMain(m *testing.M) {
	if n := os.Getenv(childEnv); n != "" {
		os.Exit(runFleet(n))
	}
	os.Exit(m.Run())
}

// runFleet starts count devices, prints their SSH ports as one JSON line
// and serves until stdin closes.
func runFleet(count string) int {
	n, err := strconv.Atoi(count)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fleet, err := devsim.StartFleet(devsim.FleetOptions{
		Count:     n,
		Platforms: []string{"cisco_ios"},
		Template: devsim.Options{
			Username: "bench", Password: password, EnablePassword: enable,
			SSHAddr: "127.0.0.1:0", ConfigSize: configSize, Seed: 1,
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer fleet.Close()
	var ports []string
	for _, d := range fleet.Devices() {
		addr := d.SSHAddr()
		ports = append(ports, addr[strings.LastIndexByte(addr, ':')+1:])
	}
	line, _ := json.Marshal(ports)
	fmt.Println(string(line))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// rssKB is this process's resident set now, from /proc.
func rssKB() int64 { return procStatusKB("VmRSS:") }

// peakRSSKB is the high-water mark of this process's resident set.
func peakRSSKB() int64 { return procStatusKB("VmHWM:") }

func procStatusKB(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			v, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return v
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startFleet starts count simulated devices in a child process (stopped
// when b ends) and returns their SSH ports on 127.0.0.1.
func startFleet(b *testing.B, count int) []string {
	b.Helper()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(count))
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = child.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("simulator: %v", err)
	}
	var ports []string
	if err := json.Unmarshal([]byte(line), &ports); err != nil {
		b.Fatal(err)
	}
	return ports
}

// fleetStore opens a store from dbtest (SQLite in b.TempDir(), or a fresh
// PostgreSQL database when BACKUPD_TEST_POSTGRES is set) holding perDevice
// device records for each simulated device (closed when b ends).
func fleetStore(b *testing.B, ports []string, perDevice int) (*db.Store, *secret.Sealer, []int64) {
	b.Helper()
	ctx := context.Background()
	store := dbtest.Open(b)
	sealer, err := secret.New(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "bench", Username: "bench",
		Password: sealer.Seal(password, secret.PurposePassword), EnablePassword: sealer.Seal(enable, secret.PurposeEnablePassword)})
	if err != nil {
		b.Fatal(err)
	}
	var ids []int64
	for r := range perDevice {
		for i, p := range ports {
			port, _ := strconv.Atoi(p)
			d, err := store.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("sw-%d-%d", r, i), Host: "127.0.0.1", Port: port,
				Platform: "cisco_ios", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
	}
	return store, sealer, ids
}

func BenchmarkFleet(b *testing.B) {
	devices := envInt("BACKUPD_BENCH_DEVICES", 1000)
	perDevice := envInt("BACKUPD_BENCH_RECORDS_PER_DEVICE", 1)

	ports := startFleet(b, devices)

	ctx := context.Background()
	store, sealer, ids := fleetStore(b, ports, perDevice)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := backup.New(store, sealer, log, backup.Options{})

	runtime.GC()
	rssBefore := rssKB()
	b.ResetTimer()
	for range b.N {
		start, cpu0 := time.Now(), cpuTime()
		jobs, err := engine.Enqueue(ctx, ids, queue.TriggerManual)
		if err != nil {
			b.Fatal(err)
		}
		var done, failed int
		var samples []string
		err = engine.RunJobs(ctx, jobs, func(j queue.Job) {
			done++
			if j.State != queue.JobSucceeded {
				failed++
				if failed <= 3 {
					b.Logf("device %d: %s", j.DeviceID, *j.Error)
				}
			}
			if done%1000 == 0 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				samples = append(samples, fmt.Sprintf("%d: rss %.0f MB heap %.0f MB", done, float64(rssKB())/1024, float64(ms.HeapInuse)/(1<<20)))
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		elapsed, cpu, peak := time.Since(start), cpuTime()-cpu0, peakRSSKB()
		if failed > 0 {
			b.Errorf("%d of %d backups failed", failed, len(ids))
		}
		b.ReportMetric(float64(len(ids))/elapsed.Seconds(), "devices/s")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(len(ids)), "cpu-ms/device")
		b.ReportMetric(float64(peak)/1024, "peak-rss-MB")
		b.Logf("%d backups in %s; rss before %.0f MB, peak %.0f MB; every 1,000: %s", len(ids), elapsed.Round(time.Millisecond),
			float64(rssBefore)/1024, float64(peak)/1024, strings.Join(samples, "; "))
	}
	b.StopTimer()
	var sizes []int64
	rows, err := dbtest.Peek(b, store).QueryContext(ctx, `SELECT bytes FROM backups WHERE success = 1`)
	if err == nil {
		for rows.Next() {
			var n int64
			_ = rows.Scan(&n)
			sizes = append(sizes, n)
		}
		rows.Close()
	}
	if len(sizes) > 0 {
		sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
		b.Logf("config size median %d bytes", sizes[len(sizes)/2])
	}
}
