package syslog

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// Lines a busy network logs that are not configuration changes.
var floodLines = []string{
	"<187>343: .Sep 21 09:22:01.678: %LINK-3-UPDOWN: Interface GigabitEthernet1/0/12, changed state to up",
	"<189>Sep 23 10:16:52 MX204-EDGE rpd[1509]: RPD_OSPF_NBRUP: OSPF neighbor 10.0.0.2 (realm ospf-v2 xe-0/0/1.0 area 0.0.0.0) state changed from Loading to Full",
	`<189>date=2025-04-10 time=05:03:11 logid="0000000013" type="traffic" subtype="forward" level="notice" vd="root" srcip=10.1.1.1 dstip=10.2.2.2 action="accept"`,
	"<14>Apr 14 16:48:54 paloalto.test.net 1,2020/04/14 16:48:54,unknown,SYSTEM,auth,0,2020/04/14 16:48:54,,auth-fail,,0,0,general,medium,failed authentication",
	`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application"] An application event`,
	"<134>Sep 15 12:42:14 mt-edge-01 system,info,account user admin logged in from 10.1.101.212 via telnet",
	"<164>Nov 13 15:35:10 10.39.78.109 %ASA-4-106023: Deny udp src dv2interface:10.11.12.18/50426 dst dv3interface:10.1.1.1/389 by access-group \"ACL_111\" [0x0, 0x0]",
	"garbage \x00\xff without any header at all",
}

// BenchmarkParseMatch: the work per message without the sockets.
func BenchmarkParseMatch(b *testing.B) {
	mx, _ := NewMatcher(nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := Parse([]byte(floodLines[i%len(floodLines)]))
		if _, ok := mx.Match(&m); ok {
			b.Fatal("a flood line matched")
		}
	}
}

// BenchmarkUDPIngest floods the listener over UDP on loopback with lines
// that are not configuration changes, from four sender addresses, and
// reports how many messages per second it read, parsed and matched
// (msgs/s) and what share the kernel dropped because the listener could
// not keep up (lost%). Run with a fixed count, e.g.
//
//	go test -run '^$' -bench BenchmarkUDPIngest -benchtime 200000x -count 5 ./app/syslog/
//
// "no-rate-cap" measures the full work per message; "default-caps" what
// one flooding address costs with the default per-sender rate cap. Every
// message is parsed and classified before any cap applies (a change line
// must never be lost with the noise), so the two differ only by the
// counting of the lines over the cap.
func BenchmarkUDPIngest(b *testing.B) {
	b.Run("no-rate-cap", func(b *testing.B) { benchIngest(b, 1e12) })
	b.Run("default-caps", func(b *testing.B) { benchIngest(b, 0) })
}

func benchIngest(b *testing.B, rate float64) {
	cfg := Config{
		Addr:    "127.0.0.1:0",
		Resolve: func(netip.Addr, string) (int64, bool) { return 0, false },
		Trigger: func(context.Context, int64) {},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if rate > 0 {
		cfg.Rate, cfg.Burst = rate, 1<<30
	}
	l, err := Listen(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const senders = 4
	conns := make([]net.Conn, senders)
	for i := range conns {
		d := net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))}}
		if conns[i], err = d.Dial("udp", l.UDPAddr().String()); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	n := b.N
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; k < n; k += senders {
				_, _ = c.Write([]byte(floodLines[k%len(floodLines)]))
			}
		}()
	}
	wg.Wait()
	// Wait until the listener has read everything that arrived: its count
	// stops moving (bounded: 5 s without progress).
	last, lastAt := uint64(0), time.Now()
	for {
		got := l.Stats().Received
		if got != last {
			last, lastAt = got, time.Now()
		}
		if got >= uint64(n) || time.Since(lastAt) > 200*time.Millisecond {
			break
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := lastAt.Sub(start)
	b.StopTimer()
	s := l.Stats()
	if s.Matched != 0 {
		b.Fatalf("%d flood lines matched", s.Matched)
	}
	b.ReportMetric(float64(s.Received)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(100*float64(uint64(n)-s.Received)/float64(n), "lost%")
	b.ReportMetric(float64(s.Dropped[Drop{ClassOther, DropRate}]), "rate-dropped")
}
