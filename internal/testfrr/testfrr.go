package testfrr

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Where Debian 12's frr and openssh-server packages put the programs.
const (
	BgpdPath  = "/usr/lib/frr/bgpd"
	VtyshPath = "/usr/bin/vtysh"
	SshdPath  = "/usr/sbin/sshd"
)

// User is the account the router's sshd lets in: root, because vtysh
// needs to reach the daemons' vty sockets, which only root and the
// frrvty group may open.
const User = "root"

// DefaultHostname names a router whose Options leave Hostname empty.
const DefaultHostname = "r1"

// Options describe a router to start.
type Options struct {
	// Hostname is the router's name, as its prompt ("r1# ") and its
	// running configuration ("hostname r1") show it. Letters, digits,
	// '.', '-'; default DefaultHostname.
	Hostname string
	// Config is the initial frr.conf, loaded with vtysh -b; default
	// DefaultConfig(Hostname). Only bgpd runs, so it may hold what bgpd
	// and FRR's library understand (router bgp, prefix-lists,
	// route-maps, community and as-path lists, …); an interface or a
	// static route fails the start ("zebra is not running").
	Config string
}

// Router is one running FRR instance and the sshd in front of it.
type Router struct {
	// Addr is "127.0.0.1:PORT" of the router's sshd.
	Addr string
	// User is the account to log in as (User).
	User string
	// PrivateKey is the PEM ("OPENSSH PRIVATE KEY", unencrypted) of the
	// ed25519 key sshd accepts, made for this router alone.
	PrivateKey []byte
	// HostKey is the sshd's host key, made for this router alone: a
	// client pins it.
	HostKey ssh.PublicKey
	// Hostname is the router's name (Options.Hostname).
	Hostname string
	// Dir holds everything of this router: etc/ (frr.conf, vtysh.conf,
	// bgpd.conf), run/ (bgpd.vty, bgpd.pid), bgpd.log, the sshd files.
	// It is removed when the test ends.
	Dir string

	signer ssh.Signer
	bgpd   *daemon
	sshd   *daemon
	once   sync.Once
}

var hostnameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$`)

// safeDirRE is what a router's directory may hold: it is written into
// sshd_config and into the shell command sshd runs, unquoted.
var safeDirRE = regexp.MustCompile(`^[A-Za-z0-9/._+-]+$`)

// Start starts a router for t (bgpd, its configuration loaded, and an
// sshd whose sessions are the router's vtysh) and stops it when t ends.
// It returns once sshd accepts the router's key. Without FRR, OpenSSH's
// server or root the test is skipped, except under CI=true, where it
// fails: .ci/run installs Debian's frr and openssh-server and runs as
// root.
func Start(t testing.TB, opts Options) *Router {
	t.Helper()
	checkHost(t)
	if opts.Hostname == "" {
		opts.Hostname = DefaultHostname
	}
	if !hostnameRE.MatchString(opts.Hostname) {
		t.Fatalf("testfrr: hostname %q: letters, digits, '.' and '-' only", opts.Hostname)
	}
	if opts.Config == "" {
		opts.Config = DefaultConfig(opts.Hostname)
	}
	// Not t.TempDir: a unix socket path must stay under 108 bytes, and
	// a test's name can be long.
	dir, err := os.MkdirTemp("", "testfrr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if !safeDirRE.MatchString(dir) {
		t.Fatalf("testfrr: the temporary directory %q holds characters sshd_config would need quoted; set TMPDIR", dir)
	}
	r := &Router{User: User, Hostname: opts.Hostname, Dir: dir}
	// Registered before anything starts, so that a start failing half
	// way stops what did start.
	t.Cleanup(func() { r.Stop(t) })
	r.writeFRRFiles(t, opts)
	r.startBgpd(t)
	r.loadConfig(t, opts.Config)
	r.writeSSHFiles(t)
	r.startSshd(t)
	return r
}

// checkHost skips (or, under CI=true, fails) t when this machine cannot
// run a router.
func checkHost(t testing.TB) {
	t.Helper()
	var why string
	switch {
	case !supported:
		t.Skip("testfrr: FRR runs on Linux only")
	case os.Geteuid() != 0:
		why = "needs root (sshd logs in as root; bgpd gets a network namespace of its own)"
	default:
		for _, bin := range []string{BgpdPath, VtyshPath, SshdPath} {
			if _, err := os.Stat(bin); err != nil {
				why = fmt.Sprintf("needs Debian's frr and openssh-server packages: %v", err)
				break
			}
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("testfrr: CI=true but a real FRR router %s; .ci/run installs frr and openssh-server and runs as root", why)
	}
	t.Skipf("testfrr: a real FRR router %s", why)
}

func (r *Router) path(name ...string) string {
	return filepath.Join(append([]string{r.Dir}, name...)...)
}

// vtyshArgs point vtysh at this router alone: its daemons' sockets, its
// config directory (vtysh.conf, frr.conf) and its own history file.
func (r *Router) vtyshArgs() []string {
	return []string{VtyshPath, "--vty_socket", r.path("run"), "--config_dir", r.path("etc"), "-H", r.path("vtysh.history")}
}

func (r *Router) writeFRRFiles(t testing.TB, opts Options) {
	t.Helper()
	for _, sub := range []string{"etc", "run"} {
		if err := os.Mkdir(r.path(sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		// vtysh's own configuration: its prompt and the "hostname" line
		// of show running-config come from here, since vtysh keeps the
		// hostname command to itself.
		"etc/vtysh.conf": "service integrated-vtysh-config\nhostname " + opts.Hostname + "\n",
		// bgpd's own start file: the only way to give the daemon a
		// hostname other than the machine's (see the package comment).
		"etc/bgpd.conf": "hostname " + opts.Hostname + "\n",
		"etc/frr.conf":  opts.Config,
	}
	for name, text := range files {
		if err := os.WriteFile(r.path(name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// startBgpd starts bgpd in the foreground, in a network namespace of its
// own, and waits until its vty socket accepts connections.
func (r *Router) startBgpd(t testing.TB) {
	t.Helper()
	d, err := startDaemon("bgpd", true, BgpdPath,
		"-Z",      // no zebra: nothing to install routes into
		"-S",      // stay root: no frr user, no capabilities dance
		"-p", "0", // no BGP listener (port 179)
		"-P", "0", // no TCP vty (port 2605)
		"-f", r.path("etc", "bgpd.conf"),
		"-i", r.path("run", "bgpd.pid"),
		"--vty_socket", r.path("run"),
		"--log", "file:"+r.path("bgpd.log"))
	if err != nil {
		t.Fatalf("testfrr: start bgpd: %v", err)
	}
	r.bgpd = d
	sock := r.path("run", "bgpd.vty")
	for range 500 { // 5 s at most; bgpd usually listens within 30 ms
		if d.done() {
			t.Fatalf("testfrr: bgpd exited at start (%v):\n%s\n%s", d.err, d.output, tail(r.path("bgpd.log"), 20))
		}
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("testfrr: bgpd's vty socket %s did not accept within 5 s:\n%s", sock, tail(r.path("bgpd.log"), 20))
}

// loadConfig loads frr.conf as FRR's own start does (vtysh -b), then
// checks that the running configuration has the hostname and every
// "router bgp" block of it.
func (r *Router) loadConfig(t testing.TB, config string) {
	t.Helper()
	if out, err := r.vtysh("-b"); err != nil {
		t.Fatalf("testfrr: vtysh -b did not load frr.conf: %v\n%s", err, out)
	}
	running := r.RunningConfig(t)
	want := []string{"hostname " + r.Hostname}
	for _, line := range strings.Split(config, "\n") {
		if strings.HasPrefix(line, "router bgp ") {
			want = append(want, strings.TrimSpace(line))
		}
	}
	for _, line := range want {
		if !strings.Contains(running, "\n"+line+"\n") {
			t.Fatalf("testfrr: after vtysh -b, show running-config lacks %q", line)
		}
	}
}

// vtysh runs vtysh with this router's paths and args, bounded in time,
// and returns its output (stdout and stderr as they came).
func (r *Router) vtysh(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := r.vtyshArgs()
	cmd := exec.CommandContext(ctx, base[0], append(base[1:], args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "HOME=" + r.Dir}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Vtysh runs the commands in one vtysh on this machine (not over SSH),
// in order, in the enable node: "configure terminal", "router bgp 65001",
// "neighbor … " changes the configuration, "show running-config" reads
// it. It returns the output, stdout and stderr together; a command vtysh
// refuses ("% Unknown command", "% Command incomplete", "bgpd is not
// running") fails the test.
func (r *Router) Vtysh(t testing.TB, commands ...string) string {
	t.Helper()
	args := make([]string, 0, 2*len(commands))
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	out, err := r.vtysh(args...)
	if err != nil {
		t.Fatalf("testfrr: %s: vtysh with %d commands: %v\n%s", r.Hostname, len(commands), err, out)
	}
	return out
}

// RunningConfig is "show running-config" through the router's vtysh:
// the header ("Building configuration...", "", "Current configuration:",
// "!"), the configuration and "end", lines ending in "\n".
func (r *Router) RunningConfig(t testing.TB) string {
	t.Helper()
	return r.Vtysh(t, "show running-config")
}

// Stop stops the router now, sshd (and any SSH session still open) first,
// then bgpd, as the end of the test would. A test uses it to see a
// device go away; calling it again does nothing.
func (r *Router) Stop(t testing.TB) {
	t.Helper()
	r.once.Do(func() {
		if r.sshd != nil {
			r.sshd.stop(t)
		}
		if r.bgpd != nil {
			r.bgpd.stop(t)
			_ = os.RemoveAll(crashDir("bgpd", r.bgpd.cmd.Process.Pid))
		}
		for _, p := range mentioning(r.Dir + "/") {
			t.Errorf("testfrr: %s: process %s outlived its router", r.Hostname, p.describe())
		}
	})
}

// writeSSHFiles makes the host key and the client key, both ed25519 and
// fresh, and writes what sshd reads.
func (r *Router) writeSSHFiles(t testing.TB) {
	t.Helper()
	hostPEM, hostSigner := newKey(t, "testfrr host "+r.Hostname)
	clientPEM, clientSigner := newKey(t, "testfrr client")
	r.PrivateKey, r.signer, r.HostKey = clientPEM, clientSigner, hostSigner.PublicKey()
	files := map[string][]byte{
		// sshd refuses a host key others may read, StrictModes or not.
		"ssh_host_ed25519_key": hostPEM,
		"authorized_keys":      ssh.MarshalAuthorizedKey(clientSigner.PublicKey()),
	}
	for name, data := range files {
		if err := os.WriteFile(r.path(name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// sshd's privilege-separation directory (sshd(8)); Debian's package
	// makes it only when its service starts.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB, comment string) ([]byte, ssh.Signer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), signer
}

var errPortTaken = errors.New("the port was taken")

// startSshd starts sshd on a free port of 127.0.0.1. The port is found
// by listening and closing: another process may take it in between, so
// an sshd that could not bind is started again on another port, a
// bounded number of times.
func (r *Router) startSshd(t testing.TB) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := r.runSshd(t, freePort(t))
		if err == nil {
			return
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			t.Fatalf("testfrr: %v", err)
		}
	}
}

func (r *Router) runSshd(t testing.TB, port int) error {
	t.Helper()
	r.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conf := r.path("sshd_config")
	if err := os.WriteFile(conf, []byte(r.sshdConfig(port)), 0o600); err != nil {
		t.Fatal(err)
	}
	// -D: in the foreground, so the harness owns it; -e: log to stderr.
	d, err := startDaemon("sshd", false, SshdPath, "-D", "-e", "-f", conf)
	if err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	var last error
	for range 250 { // 5 s at most; sshd usually accepts within 30 ms
		if d.done() {
			if strings.Contains(d.output.String(), "Address already in use") {
				return fmt.Errorf("%w: %s", errPortTaken, d.output)
			}
			return fmt.Errorf("sshd exited at start (%v):\n%s", d.err, d.output)
		}
		// A login, not a bare connection, is the proof: it also tells
		// this sshd from another program that took the port.
		if last = r.login(); last == nil {
			r.sshd = d
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.stop(t)
	hint := ""
	if strings.Contains(d.output.String(), "account is locked") {
		hint = "\nroot's password field in /etc/shadow starts with '!': sshd without PAM takes that for a locked account and refuses even a key (usermod -p '*' root unlocks it for keys only)"
	}
	return fmt.Errorf("sshd on %s did not let the key in within 5 s: %v\n%s%s", r.Addr, last, d.output, hint)
}

// login logs in with the router's key, pinning its host key, and leaves.
func (r *Router) login() error {
	c, err := r.dial(2 * time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// dial logs in to the router's sshd with its key, the host key pinned,
// the TCP connection and the handshake bounded by timeout.
func (r *Router) dial(timeout time.Duration) (*ssh.Client, error) {
	return dialWith(r.Addr, r.User, ssh.PublicKeys(r.signer), r.HostKey, timeout)
}

// dialWith logs in to addr as user with auth, the host key pinned to
// hostKey, the TCP connection and the handshake bounded by timeout.
func dialWith(addr, user string, auth ssh.AuthMethod, hostKey ssh.PublicKey, timeout time.Duration) (*ssh.Client, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	_ = nc.SetDeadline(time.Now().Add(timeout))
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{auth}, HostKeyCallback: ssh.FixedHostKey(hostKey)}
	sc, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// sshdConfig lets root in with the router's key only, from 127.0.0.1
// only, and runs the router's vtysh whatever the client asked for.
func (r *Router) sshdConfig(port int) string {
	vtysh := strings.Join(r.vtyshArgs(), " ")
	return fmt.Sprintf(`# testfrr: the sshd of router %s
ListenAddress 127.0.0.1
Port %d
AddressFamily inet
HostKey %s
PidFile %s
AuthorizedKeysFile %s
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
PermitRootLogin prohibit-password
PermitEmptyPasswords no
AllowUsers %s
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
PermitUserEnvironment no
PermitTTY yes
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
AllowStreamLocalForwarding no
PermitTunnel no
LoginGraceTime 30
MaxStartups 50
ForceCommand exec %s
`, r.Hostname, port, r.path("ssh_host_ed25519_key"), r.path("sshd.pid"), r.path("authorized_keys"), User, vtysh)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
