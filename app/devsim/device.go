// Package devsim runs simulated network devices: SSH and telnet servers on
// the loopback interface that log in, page, answer and misbehave like the
// platforms backupd collects from. Tests, benchmarks and the demo mode use
// them instead of real hardware; nothing here ever listens beyond
// 127.0.0.0/8 or ::1.
package devsim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// Failure is a way a device can misbehave, chosen per device.
type Failure string

const (
	// FailWrongPassword rejects every login, whatever the credentials.
	FailWrongPassword Failure = "wrong_password"
	// FailLegacyAlgorithms offers only diffie-hellman-group1-sha1, CBC
	// ciphers, hmac-sha1 and an ssh-rsa host key, like old gear.
	FailLegacyAlgorithms Failure = "legacy_algorithms"
	// FailHangBeforeBanner accepts the TCP connection and never sends a
	// byte.
	FailHangBeforeBanner Failure = "hang_before_banner"
	// FailHangMidOutput stops in the middle of the configuration and keeps
	// the connection open.
	FailHangMidOutput Failure = "hang_mid_output"
	// FailDisconnectMidOutput drops the connection in the middle of the
	// configuration.
	FailDisconnectMidOutput Failure = "disconnect_mid_output"
	// FailSlowDrip sends everything a few bytes at a time with small
	// delays (Options.DripDelay, bounded by Options.DripBudget).
	FailSlowDrip Failure = "slow_drip"
	// FailGarbage interleaves random binary bytes with command output.
	FailGarbage Failure = "garbage"
	// FailEndlessPager ignores the paging-off command and keeps showing
	// the pager until the client leaves (at most Options.EndlessPages).
	FailEndlessPager Failure = "endless_pager"
	// FailNonUTF8 prints in Options.Encoding, or latin-1 when that is
	// UTF-8, whatever the inventory says.
	FailNonUTF8 Failure = "non_utf8"
)

// Failures lists every failure mode.
var Failures = []Failure{
	FailWrongPassword, FailLegacyAlgorithms, FailHangBeforeBanner, FailHangMidOutput,
	FailDisconnectMidOutput, FailSlowDrip, FailGarbage, FailEndlessPager, FailNonUTF8,
}

// Size bounds of the generated configuration, in bytes.
const (
	MinConfigSize     = 5 << 10
	MaxConfigSize     = 500 << 10
	DefaultConfigSize = 16 << 10
)

// ErrNotLoopback is returned for a listen address outside the loopback
// interface.
var ErrNotLoopback = errors.New("devsim: refusing to listen beyond loopback")

// Options describe one simulated device. The zero value of each field is a
// sensible default; Platform is required.
type Options struct {
	// Platform selects the personality, e.g. "cisco_ios".
	Platform string
	// Personality replaces the table entry for Platform when set.
	Personality *Personality
	// Hostname defaults to the personality's.
	Hostname string
	// Username and Password default to "admin" / "admin". EnablePassword
	// empty means the session starts privileged.
	Username, Password, EnablePassword string
	// SSHAddr and TelnetAddr are loopback listen addresses ("127.0.0.1:0"
	// picks a port). When both are empty SSH listens on 127.0.0.1:0.
	SSHAddr, TelnetAddr string
	// ConfigSize is the approximate size of the configuration in bytes,
	// between MinConfigSize and MaxConfigSize (DefaultConfigSize if 0).
	ConfigSize int
	// Seed makes the content and the ed25519 host key reproducible.
	Seed int64
	// Encoding is the character set of everything the device prints (one
	// of Encodings; UTF-8 when empty).
	Encoding string
	// Failures make the device misbehave.
	Failures []Failure
	// HostKey replaces the generated host key.
	HostKey ssh.Signer
	// DripDelay is the pause between chunks of FailSlowDrip (2ms if 0),
	// DripChunk the largest chunk (8 bytes if 0), DripBudget the total
	// pause after which the rest is sent at once (one minute if 0).
	DripDelay  time.Duration
	DripChunk  int
	DripBudget time.Duration
	// EndlessPages caps FailEndlessPager: after that many pages the device
	// hangs up (1000 if 0).
	EndlessPages int
	// IdleTimeout closes a connection that sends nothing for that long (5
	// minutes if 0).
	IdleTimeout time.Duration
	// Clock is the device's clock (time.Now if nil).
	Clock func() time.Time

	// Minute is how long one minute of a confirm timer lasts (Junos
	// "commit confirmed N", IOS-XE "configure replace … time N"): one
	// minute if 0. Tests shorten it to a fraction of a second; the timer
	// still runs on its own and rolls the configuration back.
	Minute time.Duration
	// RejectLines makes the device refuse every configuration line that
	// matches it when the line is loaded or applied, with the platform's
	// own error (Junos "syntax error" at load time, an IOS-XE command that
	// "failed to apply" during configure replace, "% Invalid input" in
	// IOS configuration mode). The refused line never reaches the
	// configuration.
	RejectLines *regexp.Regexp
	// DropLines makes configuration lines that match it vanish silently
	// when a configuration is committed or applied: the device reports
	// success and holds less than it was sent, so a verification that
	// reads the configuration back finds a difference.
	DropLines *regexp.Regexp
	// DisconnectAfter drops the connection right after the device has
	// answered a command line that matches it, e.g. `^commit confirmed`:
	// the session is lost before the change can be confirmed.
	DisconnectAfter *regexp.Regexp
	// BootTime is how long a reboot (a RouterOS reset-configuration, a
	// VyOS commit-confirm running out) keeps the device away: until it
	// has passed, new connections are dropped at once. Zero: the device
	// is back at once.
	BootTime time.Duration
	// NoArchive is an IOS-XE device without the configuration archive
	// (no "archive" / " path flash:…" in its configuration): configure
	// replace with "time" or "revert" is refused with the device's
	// message and "show archive" says the feature is not enabled. Other
	// platforms ignore it.
	NoArchive bool

	// Logger receives connection-level events (discarded if nil). Neither
	// credentials nor configuration text are logged.
	Logger *slog.Logger
}

// Stats count what happened on a device, for tests and benchmarks.
type Stats struct {
	Connections  int64 // TCP connections accepted
	Logins       int64 // successful authentications
	FailedLogins int64 // rejected authentications
	Commands     int64 // command lines and exec requests handled
	ConfigShows  int64 // configuration commands answered
	Writes       int64 // write calls on the wire after login
}

// Device is one running simulated device. It serves until Close.
type Device struct {
	opts   Options
	p      Personality
	enc    encoder
	log    *slog.Logger
	failed map[Failure]bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sshLn, telnetLn net.Listener

	mu        sync.Mutex
	model     *model
	units     int
	docs      map[string]doc
	version   doc
	shows     int
	lastNow   time.Time
	changedAt time.Time
	lastShown map[string]string
	signer    ssh.Signer
	rotation  int
	conns     map[net.Conn]struct{}
	closed    bool

	// cfg is what configuration commands wrote; header the lines the
	// configuration shows render fresh every time (see store.go).
	cfg    configStore
	header doc
	// shells are the interactive sessions, for messages to every
	// terminal; sessions counts them for their terminal names.
	shells   map[*session]struct{}
	sessions int

	connections, logins, failedLogins, commands, configShows, writes atomic.Int64
}

// NewDevice builds the device, binds its listeners and starts serving.
func NewDevice(opts Options) (*Device, error) {
	var p Personality
	if opts.Personality != nil {
		p = opts.Personality.clone()
	} else {
		var ok bool
		if p, ok = Lookup(opts.Platform); !ok {
			return nil, fmt.Errorf("devsim: unknown platform %q", opts.Platform)
		}
	}
	if opts.Platform == "" {
		opts.Platform = p.Platform
	}
	render, ok := renderers[p.Platform]
	if !ok {
		return nil, fmt.Errorf("devsim: no configuration generator for %q", p.Platform)
	}
	if opts.Hostname == "" {
		opts.Hostname = p.DefaultHostname
	}
	if opts.Username == "" {
		opts.Username = "admin"
	}
	if opts.Password == "" {
		opts.Password = "admin"
	}
	if opts.ConfigSize == 0 {
		opts.ConfigSize = DefaultConfigSize
	}
	if opts.ConfigSize < MinConfigSize || opts.ConfigSize > MaxConfigSize {
		return nil, fmt.Errorf("devsim: config size %d outside %d..%d", opts.ConfigSize, MinConfigSize, MaxConfigSize)
	}
	if opts.SSHAddr == "" && opts.TelnetAddr == "" {
		opts.SSHAddr = "127.0.0.1:0"
	}
	for _, addr := range []string{opts.SSHAddr, opts.TelnetAddr} {
		if addr != "" {
			if err := checkLoopback(addr); err != nil {
				return nil, err
			}
		}
	}
	if opts.DripDelay <= 0 {
		opts.DripDelay = 2 * time.Millisecond
	}
	if opts.DripChunk <= 0 {
		opts.DripChunk = 8
	}
	if opts.DripBudget <= 0 {
		opts.DripBudget = time.Minute
	}
	if opts.EndlessPages <= 0 {
		opts.EndlessPages = 1000
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 5 * time.Minute
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.BootTime < 0 {
		return nil, fmt.Errorf("devsim: negative boot time %s", opts.BootTime)
	}
	if opts.Minute < 0 {
		return nil, fmt.Errorf("devsim: negative confirm minute %s", opts.Minute)
	}
	if opts.Minute == 0 {
		opts.Minute = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	failed := map[Failure]bool{}
	for _, f := range opts.Failures {
		if !slices.Contains(Failures, f) {
			return nil, fmt.Errorf("devsim: unknown failure mode %q", f)
		}
		failed[f] = true
	}
	encName := opts.Encoding
	if failed[FailNonUTF8] && normEncoding(encName) == "utf-8" {
		encName = "latin-1"
	}
	enc, err := newEncoder(encName)
	if err != nil {
		return nil, err
	}

	d := &Device{
		opts:      opts,
		p:         p,
		enc:       enc,
		failed:    failed,
		log:       opts.Logger.With("component", "devsim", "platform", p.Platform, "host", opts.Hostname),
		model:     newModel(p.Platform, opts.Hostname, opts.Username, opts.Seed, encName),
		lastShown: map[string]string{},
		conns:     map[net.Conn]struct{}{},
		cfg:       configStore{files: map[string][]byte{}},
		shells:    map[*session]struct{}{},
	}
	d.lastNow = opts.Clock()
	d.changedAt = d.lastNow.Add(-36 * time.Hour).Truncate(time.Second)
	d.units = sizeUnits(d.model, render, opts.ConfigSize)
	d.docs = render(d.model, d.units)
	d.header, _ = splitHeader(p.Platform, d.docs[d.configKey()])
	d.version = versionDoc(d.model)
	if err := d.newHostKey(); err != nil {
		return nil, err
	}

	d.ctx, d.cancel = context.WithCancel(context.Background())
	if opts.SSHAddr != "" {
		if d.sshLn, err = net.Listen("tcp", opts.SSHAddr); err != nil {
			d.cancel()
			return nil, fmt.Errorf("devsim: listen ssh: %w", err)
		}
	}
	if opts.TelnetAddr != "" {
		if d.telnetLn, err = net.Listen("tcp", opts.TelnetAddr); err != nil {
			d.cancel()
			if d.sshLn != nil {
				d.sshLn.Close()
			}
			return nil, fmt.Errorf("devsim: listen telnet: %w", err)
		}
	}
	if d.sshLn != nil {
		d.goAccept(d.sshLn, d.serveSSH)
	}
	if d.telnetLn != nil {
		d.goAccept(d.telnetLn, d.serveTelnet)
	}
	return d, nil
}

// checkLoopback refuses every address that is not on the loopback
// interface, including the empty host ("all interfaces").
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("devsim: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNotLoopback, addr)
	}
	return nil
}

// sizeUnits finds how many repeated units bring the configuration near
// the wanted size; sizes grow almost linearly, so a few rounds suffice.
func sizeUnits(m *model, render func(*model, int) map[string]doc, want int) int {
	measure := func(n int) int {
		total := 0
		for _, d := range render(m, n) {
			total += len(d.render(volatile{Now: time.Unix(0, 0), ChangedAt: time.Unix(0, 0), R: mrand.New(mrand.NewPCG(1, 1))}))
		}
		return total
	}
	n := 8
	for round := 0; round < 8; round++ {
		got := measure(n)
		if got >= want*95/100 && got <= want*105/100 {
			break
		}
		// Fixed parts (headers) make the ratio overshoot slightly; it
		// settles within a few rounds.
		next := max(1, int(float64(n)*float64(want)/float64(max(got, 1))))
		if next == n {
			break
		}
		n = next
	}
	return n
}

func (d *Device) has(f Failure) bool { return d.failed[f] }

// newHostKey makes the host key: ed25519 derived from the device's
// identity (stable across restarts of the same fleet), or a fresh
// RSA-1024 key with ssh-rsa signatures for legacy devices.
func (d *Device) newHostKey() error {
	if d.opts.HostKey != nil && d.rotation == 0 {
		d.signer = d.opts.HostKey
		return nil
	}
	if d.has(FailLegacyAlgorithms) {
		key, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			return fmt.Errorf("devsim: host key: %w", err)
		}
		s, err := ssh.NewSignerFromKey(key)
		if err != nil {
			return fmt.Errorf("devsim: host key: %w", err)
		}
		as, ok := s.(ssh.AlgorithmSigner)
		if !ok {
			return errors.New("devsim: host key: RSA signer without algorithms")
		}
		if d.signer, err = ssh.NewSignerWithAlgorithms(as, []string{ssh.KeyAlgoRSA}); err != nil {
			return fmt.Errorf("devsim: host key: %w", err)
		}
		return nil
	}
	seed := sha256.Sum256(fmt.Appendf(nil, "devsim host key|%s|%s|%d|%d", d.p.Platform, d.opts.Hostname, d.opts.Seed, d.rotation))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		return fmt.Errorf("devsim: host key: %w", err)
	}
	d.signer = s
	return nil
}

// HostKey returns the public host key new connections are offered.
func (d *Device) HostKey() ssh.PublicKey {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.signer.PublicKey()
}

// RotateHostKey replaces the host key, as a re-installed device would;
// clients that pinned the old key should see "changed host key".
func (d *Device) RotateHostKey() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rotation++
	return d.newHostKey()
}

// SSHAddr is the address the SSH server listens on ("" if none).
func (d *Device) SSHAddr() string {
	if d.sshLn == nil {
		return ""
	}
	return d.sshLn.Addr().String()
}

// TelnetAddr is the address the telnet server listens on ("" if none).
func (d *Device) TelnetAddr() string {
	if d.telnetLn == nil {
		return ""
	}
	return d.telnetLn.Addr().String()
}

// Platform returns the platform ID.
func (d *Device) Platform() string { return d.p.Platform }

// Hostname returns the device's hostname.
func (d *Device) Hostname() string { return d.opts.Hostname }

// Username and Password return the accepted credentials.
func (d *Device) Username() string { return d.opts.Username }

// Password returns the accepted login password.
func (d *Device) Password() string { return d.opts.Password }

// EnablePassword returns the enable / super password ("" if none).
func (d *Device) EnablePassword() string { return d.opts.EnablePassword }

// Personality returns a copy of the device's personality.
func (d *Device) Personality() Personality { return d.p.clone() }

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	return Stats{
		Connections:  d.connections.Load(),
		Logins:       d.logins.Load(),
		FailedLogins: d.failedLogins.Load(),
		Commands:     d.commands.Load(),
		ConfigShows:  d.configShows.Load(),
		Writes:       d.writes.Load(),
	}
}

// Mutate changes a few lines of the configuration for good, deterministically
// from seed, and moves the "last change" timestamps, as an operator's edit
// would. The next show prints the new text. A configuration written
// before (a commit, SetRunningConfig) gives way to the generated one.
func (d *Device) Mutate(seed int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.model.mutate(seed, d.units)
	d.remodelLocked()
}

// Secrets returns the secrets the device's configuration holds or held
// (passwords, their hashes and salts, keys, communities), as generated,
// sorted: what a backup's masked text must not show, in any case.
func (d *Device) Secrets() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.model.issued))
	for s := range d.model.issued {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// RotateSecret changes one secret of the configuration (the purpose a
// personality names it by: "user", "snmp", "enable"…), as an operator
// changing a password does, and moves the "last change" timestamps.
// Nothing else changes, but that a configuration written before gives way
// to the generated one, as with Mutate.
func (d *Device) RotateSecret(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.model.rotations[name]++
	d.remodelLocked()
}

// tick advances the device clock by at least a second, so that every show
// has a distinct timestamp. Callers hold d.mu.
func (d *Device) tick() time.Time {
	now := d.opts.Clock().Truncate(time.Second)
	if now.Sub(d.lastNow) < time.Second {
		now = d.lastNow.Truncate(time.Second).Add(time.Second)
	}
	d.lastNow = now
	return now
}

// Show answers a configuration command the way the CLI does, counting as a
// show (volatile lines move). ok is false for a command that is not one of
// the personality's configuration commands.
func (d *Device) Show(command string) (text string, ok bool) {
	canon, ok := findCommand(&d.p, command, d.p.ConfigCommands)
	if !ok {
		return "", false
	}
	d.configShows.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, found := d.docs[canon]
	if !found {
		doc = d.docs[""]
	}
	d.shows++
	v := volatile{Show: d.shows, Now: d.tick(), ChangedAt: d.changedAt, R: mrand.New(mrand.NewPCG(d.model.seed, uint64(d.shows)))}
	text = doc.render(v)
	d.lastShown[canon] = text
	return text, true
}

// LastOutput returns exactly what the device printed (as UTF-8 with "\n"
// line endings, before encoding and failure modes) the last time it
// answered a configuration command, so a test can compare a collected
// backup with it.
func (d *Device) LastOutput(command string) (string, bool) {
	canon, ok := findCommand(&d.p, command, d.p.ConfigCommands)
	if !ok {
		return "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	text, ok := d.lastShown[canon]
	return text, ok
}

func (d *Device) versionText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := volatile{Show: d.shows, Now: d.tick(), ChangedAt: d.changedAt, R: mrand.New(mrand.NewPCG(d.model.seed, uint64(d.shows)))}
	return d.version.render(v)
}

// loginName is the account a login name refers to, without console
// options where the platform takes them.
func (d *Device) loginName(user string) string {
	user = strings.TrimSpace(user)
	if d.p.LoginOptions {
		user, _, _ = strings.Cut(user, "+")
	}
	return user
}

func (d *Device) checkLogin(user, password string) bool {
	user = d.loginName(user)
	d.mu.Lock()
	wantUser, wantPassword := d.opts.Username, d.opts.Password
	if d.cfg.defaultUsers {
		// A RouterOS reset without keep-users=yes: only the default
		// account is left.
		wantUser, wantPassword = "admin", ""
	}
	d.mu.Unlock()
	ok := !d.has(FailWrongPassword) && user == wantUser && password == wantPassword
	if ok {
		d.logins.Add(1)
	} else {
		d.failedLogins.Add(1)
	}
	return ok
}

// goAccept serves one listener until Close.
func (d *Device) goAccept(ln net.Listener, serve func(ctx context.Context, c net.Conn)) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if d.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
					return
				}
				// A transient error (file descriptors exhausted): back off
				// briefly, bounded by Close.
				t := time.NewTimer(10 * time.Millisecond)
				select {
				case <-d.ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				continue
			}
			if !d.track(c) {
				c.Close()
				return
			}
			if d.down() {
				// Still booting: nothing answers yet.
				d.untrack(c)
				c.Close()
				continue
			}
			d.connections.Add(1)
			d.goConn(c, serve)
		}
	}()
}

// goConn runs serve for one connection in a goroutine owned by the
// device; a panic fails that connection only.
func (d *Device) goConn(c net.Conn, serve func(ctx context.Context, c net.Conn)) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer d.untrack(c)
		defer c.Close()
		defer func() {
			if r := recover(); r != nil {
				d.log.Error("connection handler panicked", "panic", fmt.Sprint(r))
			}
		}()
		serve(d.ctx, c)
	}()
}

// goOwned runs fn in a goroutine the device waits for on Close.
func (d *Device) goOwned(fn func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				d.log.Error("session goroutine panicked", "panic", fmt.Sprint(r))
			}
		}()
		fn()
	}()
}

func (d *Device) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.conns[c] = struct{}{}
	return true
}

func (d *Device) untrack(c net.Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.conns, c)
}

// closeTimeout bounds Close; every goroutine ends once its connection is
// closed, so this is only reached on a bug.
const closeTimeout = 10 * time.Second

// Close stops the listeners, drops every connection and waits for every
// goroutine of the device.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()

	d.cancel()
	if d.sshLn != nil {
		d.sshLn.Close()
	}
	if d.telnetLn != nil {
		d.telnetLn.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("devsim: %s did not stop within %s", d.opts.Hostname, closeTimeout)
	}
}

// waitClose holds a connection open without answering until the peer
// leaves, the idle timeout passes or the device closes.
func (d *Device) waitClose(c net.Conn) {
	buf := make([]byte, 512)
	for {
		c.SetReadDeadline(time.Now().Add(d.opts.IdleTimeout))
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// findCommand matches input against a command list, with abbreviations
// where the platform allows them; it returns the full command.
func findCommand(p *Personality, input string, cmds []string) (string, bool) {
	in := strings.Fields(input)
	if len(in) == 0 {
		return "", false
	}
	for _, c := range cmds {
		if matchWords(in, strings.Fields(c), p.Abbreviations) {
			return c, true
		}
	}
	return "", false
}

func matchWords(in, want []string, abbrev bool) bool {
	if len(in) != len(want) {
		return false
	}
	for i := range in {
		if abbrev {
			if !strings.HasPrefix(strings.ToLower(want[i]), strings.ToLower(in[i])) {
				return false
			}
		} else if in[i] != want[i] {
			return false
		}
	}
	return true
}
