// Package syslog receives the logs network devices send and turns their
// configuration-change messages into backup triggers.
//
// One Listener serves UDP and TCP on the same address (RFC 5426 and RFC
// 6587; on TCP both octet-counted and newline-terminated framing, chosen
// frame by frame), parses RFC 3164 and RFC 5424 leniently (Parse), tries
// the built-in and user patterns (Matcher), maps the sender to a device
// through Config.Resolve, and calls Config.Trigger once per device after
// a quiet period (Config.Debounce), so a burst of commits is one backup.
//
// Every message is classified first: a line a pattern recognises is a
// change, anything else is other. The two have budgets of their own, so
// that noise never costs a change: a token bucket per sender address for
// other lines, and one per device for change lines (behind a syslog relay
// every device shares one address, and one device's flood of changes must
// not cost another's). Everything is bounded: message size, connections
// in all and per sender (when a cap is reached, the connection idle the
// longest is closed to make room: a new one is never refused), the
// buckets' maps, and the number of devices waiting for their trigger.
// Message text is never logged or kept: a configuration-change line may
// name secrets.
package syslog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Classes of message (the metrics' class label): what a pattern
// recognised as a configuration change, everything else, and a TCP frame
// dropped before it was read (whose class is not known).
const (
	ClassChange = "change"
	ClassOther  = "other"
	ClassUnread = "unread"
)

// Reasons a message is dropped (the metrics' reason label).
const (
	DropRate        = "rate"         // change: the device's change budget was spent; other: the sender's budget
	DropFraming     = "framing"      // a TCP frame longer than the hard cap; the connection is closed
	DropPendingFull = "pending_full" // a device could not wait for its trigger: too many devices waiting
)

// Drop is one kind of dropped message: its class and the reason.
type Drop struct{ Class, Reason string }

// Drops lists every kind of drop the listener counts (the keys of
// Stats.Dropped), for declaring metrics. A dropped change line may cost a
// backup; a dropped other line costs nothing but the count.
var Drops = []Drop{
	{ClassChange, DropRate},
	{ClassChange, DropPendingFull},
	{ClassOther, DropRate},
	{ClassUnread, DropFraming},
}

// Defaults, chosen for a listener that a few thousand devices log to.
const (
	DefaultDebounce          = 60 * time.Second
	DefaultMaxWait           = 10 * time.Minute
	DefaultMaxMessage        = 8 << 10
	DefaultMaxConns          = 256
	DefaultMaxConnsPerSender = 8
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultRate              = 500 // other messages per second per sender address
	DefaultBurst             = 1000
	DefaultChangeRate        = 10 // change messages per second per device
	DefaultChangeBurst       = 100
	DefaultMaxSenders        = 4096
	DefaultMaxPending        = 10000

	// maxFrame is the longest TCP frame read at all (the part beyond
	// MaxMessage is read and discarded); a longer one closes the
	// connection.
	maxFrame = 1 << 20
)

// Config configures a Listener. Addr, Resolve and Trigger are required;
// zero values elsewhere take the defaults above.
type Config struct {
	// Addr is the host:port for both UDP and TCP, e.g. "0.0.0.0:5514".
	// With port 0 both get the same free port.
	Addr string

	// Resolve maps a sender to a device: addr is the packet's or
	// connection's source address (IPv4 unmapped), hostname the HOSTNAME
	// of the message header ("" when it had none). It is called only for
	// configuration-change messages, from several goroutines, and must be
	// fast (an in-memory lookup). A sender it does not know is counted in
	// Stats.UnknownSender and otherwise forgotten.
	Resolve func(addr netip.Addr, hostname string) (deviceID int64, ok bool)

	// Trigger is called once per device when its debounce period ends,
	// from one goroutine, with a context cancelled by Close. It should
	// only queue the backup (trigger "syslog") and return.
	Trigger func(ctx context.Context, deviceID int64)

	// Patterns are user patterns from CompilePattern, tried after the
	// built-in ones.
	Patterns []Pattern

	Debounce          time.Duration // quiet time after a device's last matching message
	MaxWait           time.Duration // longest a device waits from its first matching message
	MaxMessage        int           // bytes kept of one message; the rest is cut off (Stats.Truncated)
	MaxConns          int           // TCP connections at once; at the cap the one idle longest makes room
	MaxConnsPerSender int           // TCP connections at once from one address; likewise
	IdleTimeout       time.Duration // a TCP frame must arrive in full within this
	Rate              float64       // other (not change) messages per second per sender address
	Burst             int           // token bucket size per sender address, for other messages
	ChangeRate        float64       // change messages per second per device
	ChangeBurst       int           // token bucket size per device, for change messages
	MaxSenders        int           // sender addresses, and devices, tracked by the rate limiters (each)
	MaxPending        int           // devices waiting for their trigger at once

	// UDPReaders is how many goroutines read the UDP socket; default half
	// of GOMAXPROCS (at least 1, at most 4), so that a flood can keep at
	// most half the cores busy and the backups keep the rest.
	UDPReaders int

	// Now and Tick drive the debounce: tests pass a fake clock. Tick
	// (default 1 s) is how often waiting devices are checked.
	Now  func() time.Time
	Tick time.Duration

	// Logger receives errors (never message text); default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur(&c.Debounce, DefaultDebounce)
	defDur(&c.MaxWait, DefaultMaxWait)
	if c.MaxWait < c.Debounce {
		c.MaxWait = c.Debounce
	}
	def(&c.MaxMessage, DefaultMaxMessage)
	def(&c.MaxConns, DefaultMaxConns)
	def(&c.MaxConnsPerSender, DefaultMaxConnsPerSender)
	defDur(&c.IdleTimeout, DefaultIdleTimeout)
	if c.Rate <= 0 {
		c.Rate = DefaultRate
	}
	def(&c.Burst, DefaultBurst)
	if c.ChangeRate <= 0 {
		c.ChangeRate = DefaultChangeRate
	}
	def(&c.ChangeBurst, DefaultChangeBurst)
	def(&c.MaxSenders, DefaultMaxSenders)
	def(&c.MaxPending, DefaultMaxPending)
	if c.UDPReaders <= 0 {
		c.UDPReaders = min(max(runtime.GOMAXPROCS(0)/2, 1), 4)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	defDur(&c.Tick, time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Stats is a snapshot of a listener's counters, for metrics. Counters
// only grow; the last three are current sizes. serve publishes them as
// the backupd_syslog_* families (app/metrics), the drops as
// backupd_syslog_dropped_total{class,reason} over Drops.
type Stats struct {
	Received      uint64          // messages read (UDP datagrams, TCP frames), empty ones not counted
	Truncated     uint64          // messages longer than MaxMessage, cut off
	Matched       uint64          // messages a pattern recognised as a configuration change
	UnknownSender uint64          // matched messages whose sender Resolve did not know
	Triggered     uint64          // Trigger calls
	Dropped       map[Drop]uint64 // by class and reason (Drops)
	Evicted       uint64          // TCP connections closed to make room for a new one (a cap was reached)

	PendingDevices int // devices waiting for their trigger
	TrackedSenders int // sender addresses in the rate limiter
	OpenConns      int // TCP connections open
}

// Listener is a running syslog receiver. Close stops it.
type Listener struct {
	cfg     Config
	matcher atomic.Pointer[Matcher]
	limiter *rateLimiter[netip.Addr] // other messages, per sender address
	changes *rateLimiter[int64]      // change messages, per device
	deb     *debouncer

	udp net.PacketConn
	tcp net.Listener

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	conns     map[net.Conn]*tcpConn
	perSender map[netip.Addr]int
	closed    bool
	// seq orders the TCP connections' activity (tcpConn.active): a clock
	// of events, not of time, so the connection idle longest is the one
	// with the smallest number.
	seq atomic.Uint64

	received, truncated, matched, unknown, triggered, evicted atomic.Uint64
	dropped                                                   [4]atomic.Uint64 // in Drops order
}

// tcpConn is an open TCP connection as the caps see it.
type tcpConn struct {
	from netip.Addr
	// active is Listener.seq when a frame last began or ended on the
	// connection, or when it was accepted.
	active atomic.Uint64
}

// Listen binds UDP and TCP on cfg.Addr and starts receiving.
func Listen(cfg Config) (*Listener, error) {
	if cfg.Addr == "" {
		return nil, errors.New("syslog listener: an address (host:port) is required")
	}
	if cfg.Resolve == nil || cfg.Trigger == nil {
		return nil, errors.New("syslog listener: Resolve and Trigger are required")
	}
	cfg = cfg.withDefaults()
	matcher, err := NewMatcher(cfg.Patterns)
	if err != nil {
		return nil, err
	}
	tcp, udp, err := bindBoth(cfg.Addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Listener{
		cfg:       cfg,
		limiter:   newRateLimiter[netip.Addr](cfg.Rate, cfg.Burst, cfg.MaxSenders),
		changes:   newRateLimiter[int64](cfg.ChangeRate, cfg.ChangeBurst, cfg.MaxSenders),
		deb:       newDebouncer(cfg.Debounce, cfg.MaxWait, cfg.MaxPending),
		udp:       udp,
		tcp:       tcp,
		ctx:       ctx,
		cancel:    cancel,
		conns:     make(map[net.Conn]*tcpConn),
		perSender: make(map[netip.Addr]int),
	}
	l.matcher.Store(matcher)
	for range cfg.UDPReaders {
		l.goSafe("udp reader", l.readUDP)
	}
	l.goSafe("tcp accept", l.acceptTCP)
	l.goSafe("debounce", l.flushLoop)
	return l, nil
}

// bindBoth listens on TCP, then on UDP at the same port (when the port
// was 0, the one TCP got; retried a few times should UDP's be taken).
func bindBoth(addr string) (net.Listener, net.PacketConn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("syslog listener: address %q: %w", addr, err)
	}
	var lastErr error
	for range 5 {
		tcp, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("syslog listener: TCP %s: %w", addr, err)
		}
		p := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
		udp, err := net.ListenPacket("udp", net.JoinHostPort(host, p))
		if err == nil {
			// A bigger socket buffer rides out bursts (a commit storm);
			// the kernel caps it at net.core.rmem_max, which is fine.
			_ = udp.(*net.UDPConn).SetReadBuffer(4 << 20)
			return tcp, udp, nil
		}
		tcp.Close()
		lastErr = err
		if port != "0" {
			break
		}
	}
	return nil, nil, fmt.Errorf("syslog listener: UDP %s: %w", addr, lastErr)
}

// UDPAddr and TCPAddr are where the listener receives (the port is known
// once bound, also when Config.Addr asked for port 0).
func (l *Listener) UDPAddr() net.Addr { return l.udp.LocalAddr() }
func (l *Listener) TCPAddr() net.Addr { return l.tcp.Addr() }

// Close stops receiving, closes every connection and returns when all of
// the listener's goroutines have ended. Devices still waiting for their
// trigger are not triggered.
func (l *Listener) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.cancel()
	err := errors.Join(l.tcp.Close(), l.udp.Close())
	l.wg.Wait()
	return err
}

// SetPatterns replaces the user patterns (from CompilePattern) while the
// listener runs; messages read from then on are tried against them. On
// an error the patterns in use stay.
func (l *Listener) SetPatterns(user []Pattern) error {
	m, err := NewMatcher(user)
	if err != nil {
		return err
	}
	l.matcher.Store(m)
	return nil
}

// Stats returns the counters now.
func (l *Listener) Stats() Stats {
	s := Stats{
		Received:       l.received.Load(),
		Truncated:      l.truncated.Load(),
		Matched:        l.matched.Load(),
		UnknownSender:  l.unknown.Load(),
		Triggered:      l.triggered.Load(),
		Dropped:        make(map[Drop]uint64, len(Drops)),
		Evicted:        l.evicted.Load(),
		PendingDevices: l.deb.size(),
		TrackedSenders: l.limiter.size(),
	}
	for i, d := range Drops {
		s.Dropped[d] = l.dropped[i].Load()
	}
	l.mu.Lock()
	s.OpenConns = len(l.conns)
	l.mu.Unlock()
	return s
}

func (l *Listener) drop(class, reason string) {
	for i, d := range Drops {
		if d.Class == class && d.Reason == reason {
			l.dropped[i].Add(1)
			return
		}
	}
}

// goSafe runs f in a goroutine the listener owns: counted for Close and
// recovered, so a bug in one message's handling cannot take the server
// down.
func (l *Listener) goSafe(what string, f func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				l.cfg.Logger.Error("syslog listener: goroutine panicked", "goroutine", what, "panic", r)
			}
		}()
		f()
	}()
}

// handle is the path of every message: parse and classify first, then
// the budget of its class. A line that is no change ends at its sender's
// budget, which counts a flood by sender; a change line is charged to its
// device, so that neither noise from its address (a relay's, shared by
// every device behind it) nor another device's changes can crowd it out,
// and then waits for its device's quiet time.
func (l *Listener) handle(msg []byte, from netip.Addr) {
	if len(trimMessage(msg)) == 0 {
		return
	}
	// Counted last, so a reader of Stats that sees a message received
	// also sees everything else it caused.
	defer l.received.Add(1)
	now := l.cfg.Now()
	m := Parse(msg)
	if _, ok := l.matcher.Load().Match(&m); !ok {
		if !l.limiter.allow(from, now) {
			l.drop(ClassOther, DropRate)
		}
		return
	}
	l.matched.Add(1)
	id, ok := l.cfg.Resolve(from, m.Hostname)
	if !ok {
		l.unknown.Add(1)
		return
	}
	if !l.changes.allow(id, now) {
		l.drop(ClassChange, DropRate)
		return
	}
	if !l.deb.note(id, now) {
		l.drop(ClassChange, DropPendingFull)
	}
}

func (l *Listener) readUDP() {
	buf := make([]byte, l.cfg.MaxMessage+1)
	for {
		n, from, err := l.udp.(*net.UDPConn).ReadFromUDPAddrPort(buf)
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			l.cfg.Logger.Warn("syslog listener: UDP read failed", "err", err)
			if !sleepCtx(l.ctx, 10*time.Millisecond) {
				return
			}
			continue
		}
		if n > l.cfg.MaxMessage {
			// The kernel cut the datagram at len(buf); keep MaxMessage.
			l.truncated.Add(1)
			n = l.cfg.MaxMessage
		}
		l.handle(buf[:n], from.Addr().Unmap())
	}
}

func (l *Listener) acceptTCP() {
	for {
		c, err := l.tcp.Accept()
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait a little.
			l.cfg.Logger.Warn("syslog listener: TCP accept failed", "err", err)
			if !sleepCtx(l.ctx, 50*time.Millisecond) {
				return
			}
			continue
		}
		from := netip.Addr{}
		if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			from = ta.AddrPort().Addr().Unmap()
		}
		tc := l.admit(c, from)
		if tc == nil {
			c.Close() // the listener is closing
			continue
		}
		l.goSafe("tcp conn", func() {
			defer l.release(c)
			l.serveConn(c, tc)
		})
	}
}

// admit records c, first closing the connection idle longest of its
// sender when the sender is at its cap, and the one idle longest of all
// when the listener is at its total cap: a sender that left connections
// open (a crashed client, a relay that reconnects) is never locked out,
// and the caps still hold. nil when the listener is closing.
func (l *Listener) admit(c net.Conn, from netip.Addr) *tcpConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	if l.perSender[from] >= l.cfg.MaxConnsPerSender {
		l.evictLocked(from, true)
	}
	if len(l.conns) >= l.cfg.MaxConns {
		l.evictLocked(netip.Addr{}, false)
	}
	tc := &tcpConn{from: from}
	tc.active.Store(l.seq.Add(1))
	l.conns[c] = tc
	l.perSender[from]++
	return tc
}

// evictLocked closes the connection idle longest (of sender only, when
// onlySender) and stops counting it at once; its goroutine then ends on
// the closed connection. l.mu must be held.
func (l *Listener) evictLocked(sender netip.Addr, onlySender bool) {
	var victim net.Conn
	var oldest uint64
	for c, tc := range l.conns {
		if onlySender && tc.from != sender {
			continue
		}
		if a := tc.active.Load(); victim == nil || a < oldest {
			victim, oldest = c, a
		}
	}
	if victim == nil {
		return
	}
	victim.Close()
	l.forgetLocked(victim)
	l.evicted.Add(1)
}

// forgetLocked stops counting c (once: an evicted connection is
// forgotten when evicted, not again when its goroutine ends).
func (l *Listener) forgetLocked(c net.Conn) {
	tc, ok := l.conns[c]
	if !ok {
		return
	}
	delete(l.conns, c)
	if l.perSender[tc.from]--; l.perSender[tc.from] <= 0 {
		delete(l.perSender, tc.from)
	}
}

func (l *Listener) release(c net.Conn) {
	c.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(c)
}

// serveConn reads frames until the peer closes, a frame times out, or a
// frame breaks the framing rules. Each frame is octet-counted ("LEN SP
// MSG", RFC 6587 3.4.1) when it starts with digits and a space, else
// newline-terminated (3.4.2).
func (l *Listener) serveConn(c net.Conn, tc *tcpConn) {
	from := tc.from
	br := bufio.NewReaderSize(c, l.cfg.MaxMessage)
	msg := make([]byte, 0, l.cfg.MaxMessage)
	for first := true; l.ctx.Err() == nil; first = false {
		// Between frames the connection is idle: the caps close the one
		// idle longest when they must make room. (Accepting it counted
		// as its first activity.)
		if !first {
			tc.active.Store(l.seq.Add(1)) // a frame ended
		}
		if err := c.SetReadDeadline(time.Now().Add(l.cfg.IdleTimeout)); err != nil {
			return
		}
		size, isCounted, err := octetCount(br)
		if err != nil {
			return
		}
		tc.active.Store(l.seq.Add(1)) // a frame began
		if isCounted {
			if size > maxFrame {
				l.drop(ClassUnread, DropFraming)
				return
			}
			take := min(size, l.cfg.MaxMessage)
			msg = msg[:take]
			if _, err := io.ReadFull(br, msg); err != nil {
				return
			}
			if size > take {
				l.truncated.Add(1)
				if _, err := br.Discard(size - take); err != nil {
					return
				}
			}
			l.handle(msg, from)
			continue
		}
		line, cut, err := readLine(br, msg[:0], l.cfg.MaxMessage)
		if errors.Is(err, errFrameTooLong) {
			l.drop(ClassUnread, DropFraming)
			return
		}
		if len(line) > 0 {
			if cut {
				l.truncated.Add(1)
			}
			l.handle(line, from)
		}
		if err != nil {
			return // EOF after a last unterminated line, timeout, reset
		}
	}
}

var errFrameTooLong = errors.New("frame longer than the hard cap")

// octetCount looks at the start of a frame: 1-9 digits then a space is
// an octet count, consumed and returned. Anything else is left in the
// reader for line framing.
func octetCount(br *bufio.Reader) (int, bool, error) {
	for i := 1; i <= 10; i++ {
		p, err := br.Peek(i)
		if len(p) < i {
			return 0, false, err
		}
		c := p[i-1]
		if isDigit(c) && i <= 9 {
			continue
		}
		if c == ' ' && i > 1 && p[0] != '0' {
			n, _ := strconv.Atoi(string(p[:i-1]))
			_, _ = br.Discard(i)
			return n, true, nil
		}
		return 0, false, nil
	}
	return 0, false, nil
}

// readLine reads up to '\n' (RFC 6587's usual trailer; senders that end
// frames with NUL should use octet counting), keeping at most max bytes
// in dst; cut says the line was longer. A line longer than maxFrame is
// errFrameTooLong.
func readLine(br *bufio.Reader, dst []byte, max int) ([]byte, bool, error) {
	total := 0
	for {
		chunk, err := br.ReadSlice('\n')
		total += len(chunk)
		if room := max - len(dst); room > 0 {
			dst = append(dst, chunk[:min(room, len(chunk))]...)
		}
		if err == nil {
			// Cut only when bytes other than the trailer were left out.
			return dst, total-1 > max, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return dst, total > max, err
		}
		if total > maxFrame {
			return dst, true, errFrameTooLong
		}
	}
}

// flushLoop fires the triggers of devices whose wait is over.
func (l *Listener) flushLoop() {
	t := time.NewTicker(l.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
			l.flush()
		}
	}
}

// flush triggers every device due now and returns how many.
func (l *Listener) flush() int {
	ids := l.deb.due(l.cfg.Now())
	for _, id := range ids {
		if l.ctx.Err() != nil {
			return 0
		}
		l.trigger(id)
	}
	return len(ids)
}

func (l *Listener) trigger(id int64) {
	defer func() {
		if r := recover(); r != nil {
			l.cfg.Logger.Error("syslog listener: trigger panicked", "device_id", id, "panic", r)
		}
	}()
	l.triggered.Add(1)
	l.cfg.Trigger(l.ctx, id)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
