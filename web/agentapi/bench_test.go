package agentapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"backupd/app/agent"
	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web/agentapi"
)

// BenchmarkZoneBackup backs up the same simulated fleet through a remote
// collector (HTTPS, sealed secrets, leases, uploads) and through the
// server's own engine, with the same number of workers, and reports
// devices/s of each:
//
//	go test ./web/agentapi -run '^$' -bench ZoneBackup -benchtime 3x
func BenchmarkZoneBackup(b *testing.B) {
	const devices, workers = 40, 8
	for _, via := range []string{"engine", "collector"} {
		b.Run(via, func(b *testing.B) {
			e := newEnv(b)
			zone := int64(db.LocalZone)
			if via == "collector" {
				zone = e.zone.ID
			}
			var ids []int64
			for i := range devices {
				ids = append(ids, e.device(b, fmt.Sprintf("%s-%02d", via, i), zone))
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan struct{})
			if via == "collector" {
				token, _, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
				if err != nil {
					b.Fatal(err)
				}
				go func() {
					defer close(done)
					_ = agent.Run(ctx, agent.Config{Server: e.srv.URL, Token: token, DataDir: b.TempDir(), CAFile: e.caFile,
						Workers: workers, Version: "bench", ShutdownGrace: time.Second})
				}()
			} else {
				eng := backup.New(e.store, e.sealer, slog.New(slog.DiscardHandler), backup.Options{Workers: workers,
					Timeouts: collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 10 * time.Second}})
				go func() { defer close(done); _ = eng.Run(ctx) }()
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				reqs := make([]queue.JobRequest, len(ids))
				for i, id := range ids {
					reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerManual, NotBefore: time.Now()}
				}
				jobs, err := e.store.EnqueueJobs(ctx, reqs)
				if err != nil {
					b.Fatal(err)
				}
				for _, j := range e.waitJobs(b, jobs, 2*time.Minute) {
					if j.State != queue.JobSucceeded {
						b.Fatalf("job of device %d: %s", j.DeviceID, j.State)
					}
				}
			}
			b.ReportMetric(float64(devices*b.N)/time.Since(start).Seconds(), "devices/s")
			b.StopTimer()
			stop()
			<-done
		})
	}
}
