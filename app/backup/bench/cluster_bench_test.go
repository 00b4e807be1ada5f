package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/notify/policy"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// BenchmarkClusterNodes measures how many devices a second 1, 2 and 3
// nodes back up together on one PostgreSQL database, and one node on
// SQLite, against the same simulated fleet (a child process). Each node
// is an engine of its own in this process, on a store handle of its own
// (its own connections, liveness lock and claims), as separate serve
// processes would be; they share this process's CPU.
//
//	BACKUPD_TEST_POSTGRES=postgres://postgres@127.0.0.1:5433/postgres?sslmode=disable \
//	go test ./app/backup/bench -run '^$' -bench ClusterNodes -benchtime 1x -count 3
//
// BACKUPD_BENCH_DEVICES (default 500) sets the fleet's size. Without
// BACKUPD_TEST_POSTGRES only the SQLite case runs.
func BenchmarkClusterNodes(b *testing.B) {
	devices := envInt("BACKUPD_BENCH_DEVICES", 500)
	ports := startFleet(b, devices)
	cases := []struct {
		name  string
		pg    bool
		nodes int
	}{{"sqlite-1", false, 1}, {"postgres-1", true, 1}, {"postgres-2", true, 2}, {"postgres-3", true, 3}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.pg != dbtest.Postgres() {
				if c.pg {
					b.Skip("set " + dbtest.Env + " to measure PostgreSQL")
				}
				// SQLite: a store of its own, whatever dbtest chose.
			}
			stores := clusterStores(b, c.pg, c.nodes)
			sealer, ids := clusterFleet(b, stores[0], ports)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			b.ResetTimer()
			for range b.N {
				// Queued first, then the nodes start: none waits for its
				// next look at the queue.
				b.StopTimer()
				reqs := make([]queue.JobRequest, len(ids))
				for i, id := range ids {
					reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now()}
				}
				if _, err := stores[0].EnqueueJobs(context.Background(), reqs); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				ctx, stop := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for _, s := range stores {
					e := backup.New(s, sealer, log, backup.Options{})
					wg.Add(1)
					go func() { defer wg.Done(); _ = e.Run(ctx) }()
				}
				deadline := start.Add(10 * time.Minute)
				for {
					q, r, err := stores[0].JobCounts(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if q == 0 && r == 0 {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("%d queued and %d running after 10 minutes", q, r)
					}
					time.Sleep(20 * time.Millisecond)
				}
				elapsed := time.Since(start)
				b.StopTimer()
				stop()
				wg.Wait()
				var failed int
				if err := dbtest.Peek(b, stores[0]).QueryRow(`SELECT COUNT(*) FROM jobs WHERE state <> 'succeeded'`).Scan(&failed); err != nil {
					b.Fatal(err)
				}
				if failed > 0 {
					b.Fatalf("%d jobs did not succeed", failed)
				}
				b.ReportMetric(float64(len(ids))/elapsed.Seconds(), "devices/s")
				b.StartTimer()
			}
		})
	}
}

// clusterStores opens one store and n-1 more handles on it.
func clusterStores(b *testing.B, pg bool, n int) []*db.Store {
	b.Helper()
	var loc string
	if pg {
		loc = dbtest.Location(b)
	} else {
		loc = b.TempDir()
	}
	stores := make([]*db.Store, n)
	for i := range stores {
		var err error
		if pg {
			stores[i], err = dbtest.OpenAt(b, loc)
		} else {
			stores[i], err = db.Open(context.Background(), loc)
			if err == nil {
				s := stores[i]
				s.SetEventPolicy(policy.Decide)
				b.Cleanup(func() { s.Close() })
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return stores
}

// clusterFleet registers one device per simulated device.
func clusterFleet(b *testing.B, store *db.Store, ports []string) (*secret.Sealer, []int64) {
	b.Helper()
	ctx := context.Background()
	sealer, err := secret.New(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "bench", Username: "bench",
		Password: sealer.Seal(password, secret.PurposePassword), EnablePassword: sealer.Seal(enable, secret.PurposeEnablePassword)})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, 0, len(ports))
	for i, p := range ports {
		port, _ := strconv.Atoi(p)
		d, err := store.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("sw-%d", i), Host: "127.0.0.1", Port: port,
			Platform: "cisco_ios", LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	return sealer, ids
}
