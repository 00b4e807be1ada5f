package syslog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is the listener's clock in tests: it moves only when told.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// rig is a listener on 127.0.0.1 with a device table and a trigger log.
type rig struct {
	t     *testing.T
	l     *Listener
	clock *fakeClock

	mu        sync.Mutex
	byAddr    map[netip.Addr]int64
	byHost    map[string]int64
	triggered []int64
}

func newRig(t *testing.T, tweak func(*Config)) *rig {
	t.Helper()
	r := &rig{t: t, clock: newFakeClock(), byAddr: map[netip.Addr]int64{}, byHost: map[string]int64{}}
	cfg := Config{
		Addr: "127.0.0.1:0",
		Resolve: func(addr netip.Addr, hostname string) (int64, bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if id, ok := r.byHost[hostname]; ok && hostname != "" {
				return id, true
			}
			id, ok := r.byAddr[addr]
			return id, ok
		},
		Trigger: func(ctx context.Context, id int64) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.triggered = append(r.triggered, id)
		},
		Now:    r.clock.Now,
		Tick:   time.Hour, // tests flush by hand
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.l = l
	t.Cleanup(func() { l.Close() })
	return r
}

func (r *rig) device(addr string, id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byAddr[netip.MustParseAddr(addr)] = id
}

func (r *rig) triggers() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.triggered)
}

// waitStats waits (bounded) until the listener's counters satisfy ok:
// messages travel through sockets and goroutines, so the test
// synchronises on the counters rather than on time.
func (r *rig) waitStats(what string, ok func(Stats) bool) Stats {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := r.l.Stats()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: stats %+v", what, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// settle waits (bounded) until the listener has read target messages or
// has read nothing new for 50 ms: for UDP floods, where the kernel may
// drop datagrams and the exact count cannot be waited for.
func (r *rig) settle(target uint64) {
	last, lastAt := r.l.Stats().Received, time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		got := r.l.Stats().Received
		if got >= target || (got == last && time.Since(lastAt) > 50*time.Millisecond) {
			return
		}
		if got != last {
			last, lastAt = got, time.Now()
		}
	}
}

func (r *rig) udp(t *testing.T, local string) net.Conn {
	t.Helper()
	d := net.Dialer{}
	if local != "" {
		d.LocalAddr = &net.UDPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("udp", r.l.UDPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (r *rig) tcp(t *testing.T, local string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", r.l.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

func octet(msg string) string { return fmt.Sprintf("%d %s", len(msg), msg) }

const (
	iosChange  = "<189>82: *Mar 1 18:46:11: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)"
	iosLink    = "<187>00:00:46: %LINK-3-UPDOWN: Interface Port-channel1, changed state to up"
	junosRFC   = `<165>1 2007-02-15T09:18:02.101Z router1 mgd 3046 UI_COMMIT [junos@2636.1.1.1.2.18 username="user"] User 'user' requested 'commit' operation (comment: none)`
	nxosChange = "<189>2014 Jun 29 19:20:57 Nexus-7000 %VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0"
)

// A burst of changes over UDP is one trigger, 60 s after the last one.
func TestUDPBurstIsOneTriggerAfterDebounce(t *testing.T) {
	r := newRig(t, nil)
	r.device("127.0.0.1", 7)
	c := r.udp(t, "")
	for i := range 3 {
		send(t, c, iosChange)
		send(t, c, iosLink)
		if i < 2 {
			r.waitStats("the change", func(s Stats) bool { return s.Matched == uint64(i+1) })
			r.clock.Advance(20 * time.Second) // commits 20 s apart: one burst
		}
	}
	s := r.waitStats("six messages", func(s Stats) bool { return s.Received == 6 && s.Matched == 3 })
	if s.PendingDevices != 1 || s.UnknownSender != 0 {
		t.Fatalf("stats %+v", s)
	}
	r.clock.Advance(59 * time.Second)
	if n := r.l.flush(); n != 0 || len(r.triggers()) != 0 {
		t.Fatalf("triggered %v 59 s after the last change", r.triggers())
	}
	r.clock.Advance(time.Second)
	if n := r.l.flush(); n != 1 {
		t.Fatalf("flush at 60 s triggered %d", n)
	}
	if got := r.triggers(); !slices.Equal(got, []int64{7}) {
		t.Fatalf("triggers %v, want [7]", got)
	}
	r.clock.Advance(time.Hour)
	r.l.flush()
	if s := r.l.Stats(); len(r.triggers()) != 1 || s.Triggered != 1 || s.PendingDevices != 0 {
		t.Fatalf("after the trigger: %v, %+v", r.triggers(), s)
	}
}

// TCP with both framings, chosen frame by frame, on one connection and
// another; the device is found by the hostname in the message too.
func TestTCPBothFramings(t *testing.T) {
	r := newRig(t, nil)
	r.device("127.0.0.1", 1)
	r.mu.Lock()
	r.byHost["Nexus-7000"] = 2
	r.mu.Unlock()

	c := r.tcp(t, "")
	// octet-counted, newline, octet-counted holding a newline, a blank line,
	// and a last line without its trailer before the close.
	send(t, c, octet(junosRFC)+iosLink+"\n"+octet(iosLink+"\n"+iosLink)+"\n"+nxosChange+"\n"+octet(iosChange))
	r.waitStats("4 frames", func(s Stats) bool { return s.Received == 5 && s.Matched == 3 })

	c2 := r.tcp(t, "")
	send(t, c2, iosLink+"\n"+iosChange)
	c2.Close() // the unterminated last line still counts
	s := r.waitStats("the unterminated line", func(s Stats) bool { return s.Received == 7 && s.Matched == 4 })
	if s.PendingDevices != 2 || s.Truncated != 0 {
		t.Fatalf("stats %+v", s)
	}
	r.clock.Advance(DefaultDebounce)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("triggers %v, want [1 2] (by address and by hostname)", got)
	}
}

// Unknown senders are counted and forgotten.
func TestUnknownSenderCountedNotStored(t *testing.T) {
	r := newRig(t, nil)
	c := r.udp(t, "")
	send(t, c, iosChange)
	send(t, c, iosLink)
	s := r.waitStats("two messages", func(s Stats) bool { return s.Received == 2 })
	if s.Matched != 1 || s.UnknownSender != 1 || s.PendingDevices != 0 {
		t.Fatalf("stats %+v", s)
	}
	r.clock.Advance(time.Hour)
	if r.l.flush(); len(r.triggers()) != 0 {
		t.Fatalf("an unknown sender triggered %v", r.triggers())
	}
}

// Messages over the size cap are cut (and still matched on their start);
// the TCP connection goes on with the next frame; a frame over the hard
// cap ends the connection.
func TestOversizedMessages(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxMessage = 1024 })
	r.device("127.0.0.1", 3)
	big := iosChange + " " + strings.Repeat("x", 20000)

	u := r.udp(t, "")
	send(t, u, big)
	r.waitStats("the big datagram", func(s Stats) bool { return s.Received == 1 && s.Truncated == 1 && s.Matched == 1 })

	c := r.tcp(t, "")
	send(t, c, octet(big)+big+"\n"+octet(iosLink)+iosLink+"\n")
	s := r.waitStats("frames after the big ones", func(s Stats) bool { return s.Received == 5 })
	if s.Truncated != 3 || s.Matched != 3 || s.Dropped[Drop{ClassUnread, DropFraming}] != 0 {
		t.Fatalf("stats %+v", s)
	}

	c2 := r.tcp(t, "")
	send(t, c2, fmt.Sprintf("%d ", maxFrame+1))
	c2.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a frame over the hard cap: read %v, want the listener to close the connection", err)
	}
	c3 := r.tcp(t, "")
	go func() { // a line without end: stop writing once the listener hangs up
		chunk := []byte(strings.Repeat("y", 64<<10))
		for range (maxFrame / len(chunk)) + 4 {
			if _, err := c3.Write(chunk); err != nil {
				return
			}
		}
	}()
	c3.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c3.Read(make([]byte, 1)); err == nil || err == io.ErrNoProgress {
		t.Fatalf("a line over the hard cap: read %v, want the connection closed", err)
	}
	r.waitStats("two framing drops", func(s Stats) bool { return s.Dropped[Drop{ClassUnread, DropFraming}] == 2 })
}

// A flood of garbage (random bytes over UDP and TCP) hurts nothing: no
// panic, the counters add up, and a real change after it still counts.
func TestGarbageFlood(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Rate = 1e9; c.Burst = 1 << 30 })
	r.device("127.0.0.1", 4)
	rnd := rand.New(rand.NewPCG(1, 2))
	u := r.udp(t, "")
	sent := 0
	for range 2000 {
		b := make([]byte, 1+rnd.IntN(1500))
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		b[0] = 'x' // never an all-blank datagram, which is not counted
		if _, err := u.Write(b); err != nil {
			t.Fatal(err)
		}
		sent++
		if sent%100 == 0 {
			r.settle(uint64(sent)) // let the reader keep up; loopback UDP may still drop some
		}
	}
	c := r.tcp(t, "")
	var tcpGarbage strings.Builder
	for range 500 {
		b := make([]byte, rnd.IntN(300))
		for i := range b {
			b[i] = byte(' ' + rnd.IntN(95)) // no digits-space start guaranteed: both framings get exercised
		}
		tcpGarbage.Write(b)
		tcpGarbage.WriteByte('\n')
	}
	send(t, c, tcpGarbage.String())
	send(t, c, iosChange+"\n")
	s := r.waitStats("the change after the garbage", func(s Stats) bool { return s.PendingDevices == 1 })
	if s.Dropped[Drop{ClassUnread, DropFraming}] != 0 || s.Matched < 1 {
		t.Fatalf("stats %+v", s)
	}
	send(t, u, iosChange) // UDP still serves
	r.waitStats("UDP after the flood", func(s Stats) bool { return s.Matched >= 2 })
}

// Each class has its own budget: lines that are no change are capped per
// sender address, change lines per device. A sender whose budget noise
// has spent still gets its changes through, and behind a relay (one
// address, the device named in the message) one device's changes cannot
// spend another's budget.
func TestBudgetsByClass(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Rate, c.Burst, c.ChangeRate, c.ChangeBurst = 1, 5, 1, 3 })
	r.device("127.0.0.1", 5)
	r.mu.Lock()
	r.byHost["r1"], r.byHost["r2"] = 21, 22
	r.mu.Unlock()
	a, relay := r.udp(t, ""), r.udp(t, "127.0.0.2")
	for i := range 20 {
		send(t, a, iosLink)
		r.waitStats("a's message", func(s Stats) bool { return s.Received == uint64(i+1) })
	}
	s := r.waitStats("20 from a", func(s Stats) bool { return s.Received == 20 })
	if s.Dropped[Drop{ClassOther, DropRate}] != 15 {
		t.Fatalf("dropped %d of 20 lines at burst 5, want 15", s.Dropped[Drop{ClassOther, DropRate}])
	}
	// a's budget is spent; its change still counts.
	send(t, a, iosChange)
	s = r.waitStats("a's change", func(s Stats) bool { return s.Received == 21 })
	if s.Matched != 1 || s.PendingDevices != 1 || s.Dropped[Drop{ClassChange, DropRate}] != 0 {
		t.Fatalf("a's change after its noise: %+v", s)
	}
	// Through the relay: five changes of r1, three within its burst, then
	// one of r2, which has a budget of its own.
	for range 5 {
		send(t, relay, "<189>Nov 25 12:00:00 r1 %SYS-5-CONFIG_I: Configured from console by vty2")
	}
	send(t, relay, "<189>Nov 25 12:00:00 r2 %SYS-5-CONFIG_I: Configured from console by vty2")
	s = r.waitStats("the relay's changes", func(s Stats) bool { return s.Received == 27 })
	if s.Matched != 7 || s.Dropped[Drop{ClassChange, DropRate}] != 2 || s.PendingDevices != 3 {
		t.Fatalf("the relay's changes: %+v", s)
	}
	r.clock.Advance(time.Second) // one more token for r1
	send(t, relay, "<189>Nov 25 12:00:01 r1 %SYS-5-CONFIG_I: Configured from console by vty2")
	s = r.waitStats("r1 after a second", func(s Stats) bool { return s.Received == 28 })
	if s.Dropped[Drop{ClassChange, DropRate}] != 2 || s.Dropped[Drop{ClassOther, DropRate}] != 15 || s.TrackedSenders != 1 {
		t.Fatalf("r1 after a second: %+v", s)
	}
	r.clock.Advance(DefaultDebounce)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{5, 21, 22}) {
		t.Fatalf("triggers %v, want [5 21 22]", got)
	}
}

// The flood of issue 23 over real UDP datagrams: one sender address (a
// relay) sends 1,000 %LINK-3-UPDOWN lines every 100 ms for 3 s, with a
// configuration change of another device among them at 1 s and 2 s.
// The changes are not lost in the noise: the device is triggered once,
// and what was dropped is counted as other lines. The fake clock moves
// 100 ms per round, so the sender's bucket refills as it would.
func TestFloodFromOneAddressKeepsChanges(t *testing.T) {
	r := newRig(t, nil)
	r.mu.Lock()
	r.byHost["core-r1"], r.byHost["edge-2"] = 31, 32
	r.mu.Unlock()
	relay := r.udp(t, "")
	const link = "<187>Nov 25 12:00:00 edge-2 %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"
	const change = "<189>Nov 25 12:00:00 core-r1 %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.7)"
	sent := uint64(0)
	flood := func(n int) {
		for i := range n {
			send(t, relay, link)
			sent++
			if (i+1)%100 == 0 {
				// Let the reader keep up, so that the kernel drops
				// nothing: the test is about the listener's budgets.
				r.settle(sent)
			}
		}
	}
	for round := range 30 {
		if round == 10 || round == 20 {
			flood(500)
			send(t, relay, change)
			sent++
			r.waitStats("the change in the flood", func(s Stats) bool { return s.Matched == uint64(round/10) })
			flood(500)
		} else {
			flood(1000)
		}
		r.clock.Advance(100 * time.Millisecond)
	}
	s := r.l.Stats()
	if s.Matched != 2 || s.PendingDevices != 1 || s.UnknownSender != 0 {
		t.Fatalf("after the flood: %+v", s)
	}
	// The noise went over the sender's budget (burst 1,000, then 500/s:
	// 2,500 in 3 s); every line that reached the listener is accounted.
	other, allowed := s.Dropped[Drop{ClassOther, DropRate}], uint64(2+2600)
	if (s.Received > allowed && other < s.Received-allowed) || s.Dropped[Drop{ClassChange, DropRate}] != 0 || s.Dropped[Drop{ClassChange, DropPendingFull}] != 0 {
		t.Fatalf("drops %v of %d received", s.Dropped, s.Received)
	}
	t.Logf("%d of %d datagrams received, %d lines over the sender's budget", s.Received, sent, other)
	r.clock.Advance(DefaultDebounce)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{31}) {
		t.Fatalf("triggers %v, want [31] (core-r1, whose change was in the flood)", got)
	}
}

// A flood of nothing but change lines from one device is still one
// trigger after its quiet time; what is over the device's budget is
// counted as dropped changes.
func TestChangeFloodIsDebounced(t *testing.T) {
	r := newRig(t, nil)
	r.device("127.0.0.1", 41)
	c := r.udp(t, "")
	sent := uint64(0)
	for round := range 10 {
		for i := range 200 {
			send(t, c, iosChange)
			sent++
			if (i+1)%100 == 0 {
				r.settle(sent)
			}
		}
		if round < 9 {
			r.clock.Advance(100 * time.Millisecond)
		}
	}
	s := r.waitStats("the changes", func(s Stats) bool { return s.Matched > 0 && s.Received == s.Matched })
	r.settle(sent)
	s = r.l.Stats()
	dropped := s.Dropped[Drop{ClassChange, DropRate}]
	// Burst 100, then 10/s for 0.9 s: 109 noted at most.
	if s.PendingDevices != 1 || dropped == 0 || s.Matched-dropped > DefaultChangeBurst+9 {
		t.Fatalf("after %d changes: %+v", sent, s)
	}
	r.clock.Advance(DefaultDebounce - time.Second)
	if r.l.flush(); len(r.triggers()) != 0 {
		t.Fatalf("triggered %v before the quiet time after the last change", r.triggers())
	}
	r.clock.Advance(time.Second)
	r.l.flush()
	r.clock.Advance(time.Hour)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{41}) {
		t.Fatalf("triggers %v, want one of 41", got)
	}
}

// When a connection cap is reached, the connection idle longest (of the
// sender, at the per-sender cap; of all, at the total cap) is closed to
// make room: a new connection is never refused, and the caps hold.
func TestConnectionCapsEvictIdleLongest(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxConns = 3; c.MaxConnsPerSender = 2 })
	var open []net.Conn
	for i, local := range []string{"127.0.0.1", "127.0.0.1", "127.0.0.2"} {
		c := r.tcp(t, local)
		send(t, c, iosLink+"\n")
		r.waitStats("the connection's line", func(s Stats) bool { return s.Received == uint64(i+1) })
		open = append(open, c)
	}
	r.waitStats("three connections", func(s Stats) bool { return s.OpenConns == 3 })
	closed := func(c net.Conn, what string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: read %v, want the connection closed", what, err)
		}
	}
	// 127.0.0.1 is at its cap: its first connection makes room.
	c4 := r.tcp(t, "127.0.0.1")
	send(t, c4, iosLink+"\n")
	r.waitStats("the new connection's line", func(s Stats) bool { return s.Received == 4 })
	closed(open[0], "127.0.0.1's connection idle longest")
	// The total cap: the connection idle longest of all (127.0.0.1's
	// second) makes room for 127.0.0.3's.
	c5 := r.tcp(t, "127.0.0.3")
	send(t, c5, iosLink+"\n")
	s := r.waitStats("127.0.0.3's line", func(s Stats) bool { return s.Received == 5 })
	closed(open[1], "the connection idle longest of all")
	if s.OpenConns != 3 || s.Evicted != 2 {
		t.Fatalf("open connections %d, evicted %d; want 3 and 2", s.OpenConns, s.Evicted)
	}
	// The others still serve.
	for i, c := range []net.Conn{open[2], c4, c5} {
		send(t, c, iosLink+"\n")
		r.waitStats("a line on a connection kept", func(s Stats) bool { return s.Received == uint64(6+i) })
	}
}

// Issue 23: eight idle connections from one address (the per-sender
// cap) no longer lock that address out of TCP syslog. A new connection's
// change message is read and counts, over a connection of its own and
// from util-linux logger --tcp.
func TestIdleConnectionsDoNotLockASenderOut(t *testing.T) {
	r := newRig(t, nil)
	r.device("127.0.0.1", 51)
	var idle []net.Conn
	for range DefaultMaxConnsPerSender {
		idle = append(idle, r.tcp(t, ""))
	}
	r.waitStats("the idle connections", func(s Stats) bool { return s.OpenConns == DefaultMaxConnsPerSender })
	c := r.tcp(t, "")
	send(t, c, octet(iosChange))
	s := r.waitStats("the new connection's change", func(s Stats) bool { return s.Matched == 1 })
	if s.PendingDevices != 1 || s.Evicted != 1 || s.OpenConns != DefaultMaxConnsPerSender {
		t.Fatalf("stats %+v", s)
	}
	idle[0].SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection idle longest: read %v, want it closed to make room", err)
	}
	if _, err := exec.LookPath("logger"); err != nil {
		t.Log("logger (util-linux) not installed; that part is skipped")
		return
	}
	port := fmt.Sprint(r.l.TCPAddr().(*net.TCPAddr).Port)
	out, err := exec.Command("logger", "--server", "127.0.0.1", "--port", port, "--tcp", "--rfc3164", "-t", "ios",
		"%SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.1)").CombinedOutput()
	if err != nil {
		t.Fatalf("logger: %v\n%s", err, out)
	}
	s = r.waitStats("logger's change", func(s Stats) bool { return s.Matched == 2 })
	if s.Evicted != 2 {
		t.Fatalf("stats %+v", s)
	}
	r.clock.Advance(DefaultDebounce)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{51}) {
		t.Fatalf("triggers %v, want [51]", got)
	}
}

// A connection that sends nothing is closed after the idle timeout.
func TestIdleConnectionTimesOut(t *testing.T) {
	r := newRig(t, func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
	c := r.tcp(t, "")
	send(t, c, "5 <13>x") // half a frame, then silence
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF from the listener", err)
	}
	r.waitStats("no open connection", func(s Stats) bool { return s.OpenConns == 0 })
}

// Close ends every goroutine, closes connections, frees the port, and no
// trigger fires afterwards.
func TestCloseEndsEverything(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Tick = time.Millisecond })
	r.device("127.0.0.1", 8)
	conns := []net.Conn{r.tcp(t, ""), r.tcp(t, "")}
	send(t, conns[0], iosChange+"\n")
	r.waitStats("a pending device", func(s Stats) bool { return s.PendingDevices == 1 && s.OpenConns == 2 })

	done := make(chan error, 1)
	go func() { done <- r.l.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return")
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "syslog.(*Listener)") {
		t.Fatalf("listener goroutines left after Close:\n%s", stacks)
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("connection after Close: read %v, want EOF", err)
		}
	}
	r.clock.Advance(time.Hour)
	if r.l.flush(); len(r.triggers()) != 0 {
		t.Fatalf("triggered %v after Close", r.triggers())
	}
	for _, network := range []string{"udp", "tcp"} {
		addr := r.l.UDPAddr().String()
		var err error
		if network == "udp" {
			var pc net.PacketConn
			if pc, err = net.ListenPacket("udp", addr); err == nil {
				pc.Close()
			}
		} else {
			var ln net.Listener
			if ln, err = net.Listen("tcp", r.l.TCPAddr().String()); err == nil {
				ln.Close()
			}
		}
		if err != nil {
			t.Errorf("%s port not freed by Close: %v", network, err)
		}
	}
	if err := r.l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A Trigger that panics costs that trigger only.
func TestTriggerPanicIsContained(t *testing.T) {
	var calls atomic.Int32
	r := newRig(t, func(c *Config) {
		c.Trigger = func(ctx context.Context, id int64) {
			calls.Add(1)
			if id == 1 {
				panic("boom")
			}
		}
	})
	r.mu.Lock()
	r.byHost["a"], r.byHost["b"] = 1, 2
	r.mu.Unlock()
	u := r.udp(t, "")
	send(t, u, "<189>Mar  1 18:46:11 a %SYS-5-CONFIG_I: Configured from console by vty2")
	send(t, u, "<189>Mar  1 18:46:11 b %SYS-5-CONFIG_I: Configured from console by vty2")
	r.waitStats("two devices", func(s Stats) bool { return s.PendingDevices == 2 })
	r.clock.Advance(time.Hour)
	if n := r.l.flush(); n != 2 || calls.Load() != 2 {
		t.Fatalf("flushed %d, Trigger called %d times, want 2 and 2", n, calls.Load())
	}
}

// At most MaxPending devices wait; more are counted as dropped.
func TestPendingDevicesBounded(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxPending = 2 })
	r.mu.Lock()
	r.byHost["a"], r.byHost["b"], r.byHost["c"] = 1, 2, 3
	r.mu.Unlock()
	u := r.udp(t, "")
	for _, h := range []string{"a", "b", "c", "a"} {
		send(t, u, "<189>Mar  1 18:46:11 "+h+" %SYS-5-CONFIG_I: Configured from console by vty2")
	}
	s := r.waitStats("four changes", func(s Stats) bool { return s.Matched == 4 })
	if s.PendingDevices != 2 || s.Dropped[Drop{ClassChange, DropPendingFull}] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestListenRejectsBadConfig(t *testing.T) {
	ok := func(netip.Addr, string) (int64, bool) { return 0, false }
	trig := func(context.Context, int64) {}
	for _, c := range []Config{
		{Resolve: ok, Trigger: trig},
		{Addr: "127.0.0.1:0", Trigger: trig},
		{Addr: "127.0.0.1:0", Resolve: ok},
		{Addr: "no-port", Resolve: ok, Trigger: trig},
		{Addr: "127.0.0.1:0", Resolve: ok, Trigger: trig, Patterns: []Pattern{{Name: "x"}}},
	} {
		if l, err := Listen(c); err == nil {
			l.Close()
			t.Errorf("Listen(%+v) accepted", c)
		}
	}
}

// The util-linux logger, a real syslog client, over UDP (RFC 3164), TCP
// with newline framing, and TCP with octet counting (RFC 5424, Junos's
// UI_COMMIT as the MSGID).
func TestRealLoggerClient(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger (util-linux) not installed")
	}
	r := newRig(t, nil)
	r.device("127.0.0.1", 11)
	port := fmt.Sprint(r.l.UDPAddr().(*net.UDPAddr).Port)
	runs := [][]string{
		{"--udp", "--rfc3164", "-t", "ios", "%SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.1)"},
		{"--tcp", "--rfc3164", "-t", "ios", "%LINK-3-UPDOWN: Interface Gi0/1, changed state to up"},
		{"--tcp", "--octet-count", "--rfc5424", "--msgid", "UI_COMMIT", "-t", "mgd", "User 'netops' requested 'commit' operation (comment: none)"},
	}
	for i, args := range runs {
		cmd := exec.Command("logger", append([]string{"--server", "127.0.0.1", "--port", port}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v\n%s", args, err, out)
		}
		r.waitStats("logger message", func(s Stats) bool { return s.Received == uint64(i+1) })
	}
	s := r.l.Stats()
	if s.Matched != 2 || s.PendingDevices != 1 {
		t.Fatalf("stats %+v", s)
	}
	r.clock.Advance(DefaultDebounce)
	r.l.flush()
	if got := r.triggers(); !slices.Equal(got, []int64{11}) {
		t.Fatalf("triggers %v, want [11]", got)
	}
}

func TestDebouncer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDebouncer(time.Minute, 10*time.Minute, 100)
	// A device that logs a change every 50 s never goes quiet for a
	// minute; MaxWait still triggers it 10 minutes after its first.
	for i := range 12 { // 0 s .. 550 s
		now := t0.Add(time.Duration(i) * 50 * time.Second)
		if due := d.due(now); len(due) != 0 {
			t.Fatalf("due %v at %v", due, now.Sub(t0))
		}
		d.note(1, now)
	}
	if due := d.due(t0.Add(10 * time.Minute)); !slices.Equal(due, []int64{1}) {
		t.Fatalf("due at 10 min: %v", due)
	}
	if d.size() != 0 {
		t.Fatal("a triggered device stays pending")
	}
	// A message with an older time (clock skew) does not pull the wait in.
	d.note(2, t0.Add(time.Minute))
	d.note(2, t0)
	if due := d.due(t0.Add(time.Minute + 59*time.Second)); len(due) != 0 {
		t.Fatalf("due early: %v", due)
	}
}

func TestRateLimiterMapIsBounded(t *testing.T) {
	rl := newRateLimiter[netip.Addr](1, 1, 4)
	t0 := time.Unix(0, 0)
	for i := range 1000 {
		a := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
		if !rl.allow(a, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("a new sender's first message was dropped")
		}
		if rl.size() > 4 {
			t.Fatalf("%d senders tracked, cap 4", rl.size())
		}
	}
}

// A frame is octet-counted only when it starts with a count (no leading
// zero, at most 9 digits) and a space; anything else is a line.
func TestOctetCountDetection(t *testing.T) {
	for in, want := range map[string]int{"12 <13>": 12, "0 x": -1, "82: x": -1, "<13>x": -1, "1234567890 x": -1, "7 ": 7} {
		n, ok, _ := octetCount(bufio.NewReader(strings.NewReader(in)))
		if (want < 0 && ok) || (want >= 0 && (!ok || n != want)) {
			t.Errorf("octetCount(%q) = %d %v, want %d", in, n, ok, want)
		}
	}
}

// A line of exactly the cap is whole; one byte more is cut; the trailer
// does not count.
func TestReadLineCutAtCap(t *testing.T) {
	const max = 16
	for _, tt := range []struct {
		in      string
		wantLen int
		cut     bool
	}{
		{strings.Repeat("a", 16) + "\n", 16, false},
		{strings.Repeat("a", 15) + "\n", 16, false}, // the trailer is kept; Parse trims it
		{strings.Repeat("a", 17) + "\n", 16, true},
		{strings.Repeat("a", 40) + "\n", 16, true},
		{strings.Repeat("a", 16), 16, false}, // last line without trailer
	} {
		br := bufio.NewReaderSize(strings.NewReader(tt.in), max)
		got, cut, _ := readLine(br, make([]byte, 0, max), max)
		if len(got) != tt.wantLen || cut != tt.cut {
			t.Errorf("readLine(%d bytes) = %d bytes, cut %v; want %d, %v", len(tt.in), len(got), cut, tt.wantLen, tt.cut)
		}
	}
}

// Over IPv6 the sender's address reaches Resolve as it is.
func TestIPv6Sender(t *testing.T) {
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		ln.Close()
	}
	r := newRig(t, func(c *Config) { c.Addr = "[::1]:0" })
	r.device("::1", 12)
	send(t, r.udp(t, ""), iosChange)
	send(t, r.tcp(t, ""), octet(nxosChange))
	s := r.waitStats("two changes", func(s Stats) bool { return s.Received == 2 })
	if s.Matched != 2 || s.UnknownSender != 0 || s.PendingDevices != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// User patterns changed while the listener runs apply to the messages
// read from then on; a bad set is refused and the patterns in use stay.
func TestSetPatternsWhileRunning(t *testing.T) {
	r := newRig(t, nil)
	r.device("127.0.0.1", 7)
	c := r.udp(t, "")
	const custom = "<189>Nov 25 12:00:00 sw1 cfgmgr: configuration saved by admin"
	send(t, c, custom)
	r.waitStats("the first message", func(s Stats) bool { return s.Received == 1 })
	if s := r.l.Stats(); s.Matched != 0 {
		t.Fatalf("matched before the pattern was set: %+v", s)
	}
	p, err := CompilePattern("extreme-saved", `cfgmgr: .*saved`)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.l.SetPatterns([]Pattern{p}); err != nil {
		t.Fatal(err)
	}
	send(t, c, custom)
	r.waitStats("the second message, matched", func(s Stats) bool { return s.Received == 2 && s.Matched == 1 })
	if err := r.l.SetPatterns([]Pattern{p, p}); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("a duplicate name was accepted: %v", err)
	}
	send(t, c, custom)
	r.waitStats("the third message, still matched", func(s Stats) bool { return s.Received == 3 && s.Matched == 2 })
}
