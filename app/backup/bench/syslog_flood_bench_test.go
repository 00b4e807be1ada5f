package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/syslog"
	"backupd/db/queue"
)

// Lines a busy network logs that are not configuration changes, some
// naming the simulated devices as their HOSTNAME.
var floodLines = []string{
	"<187>343: sw-0-1: .Sep 21 09:22:01.678: %LINK-3-UPDOWN: Interface GigabitEthernet1/0/12, changed state to up",
	"<189>Sep 23 10:16:52 sw-0-2 rpd[1509]: RPD_OSPF_NBRUP: OSPF neighbor 10.0.0.2 (realm ospf-v2 xe-0/0/1.0 area 0.0.0.0) state changed from Loading to Full",
	`<189>date=2025-04-10 time=05:03:11 logid="0000000013" type="traffic" subtype="forward" level="notice" vd="root" srcip=10.1.1.1 dstip=10.2.2.2 action="accept"`,
	"<14>Apr 14 16:48:54 sw-0-3 1,2020/04/14 16:48:54,unknown,SYSTEM,auth,0,2020/04/14 16:48:54,,auth-fail,,0,0,general,medium,failed authentication",
	`<165>1 2003-10-11T22:14:15.003Z sw-0-4 evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application"] An application event`,
	"<134>Sep 15 12:42:14 sw-0-5 system,info,account user admin logged in from 10.1.101.212 via ssh",
	"<164>Nov 13 15:35:10 10.39.78.109 %ASA-4-106023: Deny udp src dv2interface:10.11.12.18/50426 dst dv3interface:10.1.1.1/389 by access-group \"ACL_111\" [0x0, 0x0]",
}

// Bounds of the flood benchmark.
const (
	floodSenders  = 16              // source addresses 127.0.1.1 … 127.0.1.16
	floodMax      = 50_000_000      // messages sent in one backup run at most
	floodRunLimit = 5 * time.Minute // one backup run of the fleet at most
	floodDrainMax = 2 * time.Second // waiting for the listener to read what is left
)

// BenchmarkSyslogFlood asks whether a flood of syslog lines that are not
// configuration changes slows the backups down, and how many messages the
// listener reads meanwhile. The listener is wired as `serve` wires it
// (backup.StartSyslog on the engine, default caps, a real database); each
// iteration backs up the whole simulated fleet over SSH. "no-flood" is the
// yardstick; in "flood" one goroutine sends UDP datagrams to the listener
// from floodSenders loopback addresses as fast as it can for as long as
// the backups run. Compare backup-s of the two; msgs/s is what the
// listener read per second (every message it counted, those over a
// sender's rate cap included), lost% what the kernel dropped because the
// listener did not keep up, dropped-<class>-<reason>/s the listener's own drops.
//
//	go test -run '^$' -bench SyslogFlood -benchtime 3x -count 3 -cpu 2 ./app/backup/bench/
//
// BACKUPD_BENCH_FLOOD_DEVICES (default 60) sets the fleet's size.
func BenchmarkSyslogFlood(b *testing.B) {
	ports := startFleet(b, envInt("BACKUPD_BENCH_FLOOD_DEVICES", 60))
	b.Run("no-flood", func(b *testing.B) { benchSyslogFlood(b, ports, false) })
	b.Run("flood", func(b *testing.B) { benchSyslogFlood(b, ports, true) })
}

func benchSyslogFlood(b *testing.B, ports []string, flood bool) {
	ctx := context.Background()
	store, sealer, ids := fleetStore(b, ports, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := backup.New(store, sealer, log, backup.Options{})
	trig, err := backup.StartSyslog(ctx, store, engine, backup.SyslogOptions{Addr: "127.0.0.1:0", Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	defer trig.Close()
	var conns []net.Conn
	if flood {
		for i := range floodSenders {
			d := net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 1, byte(1+i))}}
			c, err := d.Dial("udp", trig.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
	}

	var backupTime, floodTime time.Duration
	var sent, received uint64
	var failed int
	dropped := map[syslog.Drop]uint64{}
	b.ResetTimer()
	for range b.N {
		before := trig.Stats()
		floodCtx, stopFlood := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var n atomic.Uint64
		floodStart := time.Now()
		if flood {
			wg.Go(func() { n.Store(sendFlood(floodCtx, conns)) })
		}

		runCtx, cancel := context.WithTimeout(ctx, floodRunLimit)
		start := time.Now()
		jobs, err := engine.Enqueue(runCtx, ids, queue.TriggerManual)
		if err != nil {
			b.Fatal(err)
		}
		err = engine.RunJobs(runCtx, jobs, func(j queue.Job) {
			if j.State != queue.JobSucceeded {
				failed++
				if failed <= 3 && j.Error != nil {
					b.Logf("device %d: %s", j.DeviceID, *j.Error)
				}
			}
		})
		backupTime += time.Since(start)
		cancel()
		stopFlood()
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}

		// What the listener read: wait until its count stops moving
		// (bounded), then take the counters.
		last, lastAt, waitStart := before.Received, time.Now(), time.Now()
		for flood && time.Since(waitStart) < floodDrainMax {
			got := trig.Stats().Received
			if got != last {
				last, lastAt = got, time.Now()
			}
			if got-before.Received >= n.Load() || time.Since(lastAt) > 100*time.Millisecond {
				break
			}
			time.Sleep(time.Millisecond)
		}
		after := trig.Stats()
		if after.Matched != before.Matched {
			b.Fatalf("%d flood lines matched a configuration change pattern", after.Matched-before.Matched)
		}
		if flood {
			floodTime += lastAt.Sub(floodStart)
		}
		sent += n.Load()
		received += after.Received - before.Received
		for _, d := range syslog.Drops {
			dropped[d] += after.Dropped[d] - before.Dropped[d]
		}
	}
	b.StopTimer()
	if failed == b.N*len(ids) {
		b.Fatalf("every backup failed")
	}
	runs := float64(b.N)
	b.ReportMetric(backupTime.Seconds()/runs, "backup-s")
	b.ReportMetric(float64(b.N*len(ids))/backupTime.Seconds(), "devices/s")
	b.ReportMetric(float64(failed)/runs, "failed/op")
	if !flood {
		return
	}
	secs := floodTime.Seconds()
	b.ReportMetric(float64(received)/secs, "msgs/s")
	b.ReportMetric(float64(sent)/secs, "sent-msgs/s")
	if sent > 0 {
		b.ReportMetric(100*float64(sent-min(sent, received))/float64(sent), "lost%")
	}
	for _, d := range syslog.Drops {
		b.ReportMetric(float64(dropped[d])/secs, fmt.Sprintf("dropped-%s-%s/s", d.Class, d.Reason))
	}
}

// sendFlood writes flood lines round-robin over conns until ctx ends or
// floodMax are written, and returns how many the kernel took.
func sendFlood(ctx context.Context, conns []net.Conn) uint64 {
	lines := make([][]byte, len(floodLines))
	for i, l := range floodLines {
		lines[i] = []byte(l)
	}
	var sent uint64
	for i := range uint64(floodMax) {
		if i%256 == 0 && ctx.Err() != nil {
			break
		}
		// A datagram the kernel refuses is lost, as a device's would be;
		// the flood goes on.
		if _, err := conns[i%uint64(len(conns))].Write(lines[i%uint64(len(lines))]); err == nil {
			sent++
		}
	}
	return sent
}
