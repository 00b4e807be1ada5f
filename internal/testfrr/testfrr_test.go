package testfrr

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// at matches prompt as the last thing received, at the start of a line.
func at(prompt string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\n)` + regexp.QuoteMeta(prompt) + `\z`)
}

// header is what show running-config prints before the configuration.
const header = "Building configuration...\n\nCurrent configuration:\n!\n"

// configBody is show running-config without its header, its "frr
// version" line and its "end": the configuration as DefaultConfig
// writes it.
func configBody(t *testing.T, running string) string {
	t.Helper()
	running = strings.ReplaceAll(running, "\r\n", "\n")
	body, ok := strings.CutPrefix(running, header)
	if !ok {
		t.Fatalf("show running-config does not start with %q:\n%s", header, running)
	}
	version, body, _ := strings.Cut(body, "\n")
	if !strings.HasPrefix(version, "frr version ") {
		t.Fatalf("first line %q, want frr version …", version)
	}
	body, ok = strings.CutSuffix(body, "end\n")
	if !ok {
		t.Fatalf("show running-config does not end with \"end\":\n%s", running)
	}
	return body
}

// TestStartLoadsConfig: the running configuration is the one given,
// exactly, as FRR writes it; the default and a config of the test's own.
func TestStartLoadsConfig(t *testing.T) {
	r := Start(t, Options{})
	if r.Hostname != "r1" || r.User != "root" || !strings.HasPrefix(r.Addr, "127.0.0.1:") {
		t.Errorf("router = %q %q %q", r.Hostname, r.User, r.Addr)
	}
	if got, want := configBody(t, r.RunningConfig(t)), DefaultConfig("r1"); got != want {
		t.Errorf("running configuration differs from DefaultConfig:\n got: %q\nwant: %q", got, want)
	}

	own := "hostname edge-2\n!\nrouter bgp 64512\n neighbor 198.51.100.1 remote-as 64513\nexit\n!\n"
	r2 := Start(t, Options{Hostname: "edge-2", Config: own})
	want := "frr defaults traditional\nhostname edge-2\nbgp no-rib\nservice integrated-vtysh-config\n!\n" +
		"router bgp 64512\n neighbor 198.51.100.1 remote-as 64513\nexit\n!\n"
	if got := configBody(t, r2.RunningConfig(t)); got != want {
		t.Errorf("running configuration:\n got: %q\nwant: %q", got, want)
	}
}

// TestVtysh: commands given to Vtysh run in order in one vtysh, a change
// shows in the running configuration and over SSH, and a command vtysh
// refuses makes it exit non-zero with FRR's error text.
func TestVtysh(t *testing.T) {
	r := Start(t, Options{})
	r.Vtysh(t, "configure terminal", "router bgp 65001",
		"neighbor 192.0.2.40 remote-as 65040", "neighbor 192.0.2.40 description added-by-vtysh")
	running := r.RunningConfig(t)
	for _, line := range []string{" neighbor 192.0.2.40 remote-as 65040\n", " neighbor 192.0.2.40 description added-by-vtysh\n"} {
		if !strings.Contains(running, line) {
			t.Errorf("running configuration lacks %q", line)
		}
	}

	c := openConsole(t, r, "vt100", 0, 511)
	c.expect(at("r1# "))
	if out := c.cmd("show running-config", at("r1# ")); !strings.Contains(out, "\r\n neighbor 192.0.2.40 remote-as 65040\r\n") {
		t.Errorf("over SSH, show running-config lacks the neighbour Vtysh added:\n%s", out)
	}

	for cmd, want := range map[string]string{
		"foo bar":        "% Unknown command: foo bar",
		"show b":         "% Ambiguous command: show b",
		"sh":             "% Command incomplete: sh",
		"show bgp xyzzy": "% Unknown command: show bgp xyzzy",
	} {
		out, err := r.vtysh("-c", cmd)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("vtysh -c %q = %v, %q; want an exit status and %q", cmd, err, out, want)
		}
	}
}

// TestSessionOverSSH logs in as backupd would (key, pinned host key, a
// vt100 PTY of 511 columns and 0 rows, a shell), lands in the router's
// vtysh, reads and changes the configuration, and checks each prompt,
// each error text and the change on both sides. The dialogue is kept in
// frr_8.4.4_vtysh_ssh.yaml among the driver's recordings of real devices
// (app/collect/driver/testdata/recordings), which TestReplayCaptures
// replays; -update rewrites it.
func TestSessionOverSSH(t *testing.T) {
	r := Start(t, Options{})
	c := openConsole(t, r, "vt100", 0, 511)
	banner := c.expect(at("r1# "))
	if want := "\r\nHello, this is FRRouting (version "; !strings.HasPrefix(banner, want) {
		t.Errorf("banner %q does not start with %q", banner, want)
	}

	steps := []struct{ send, prompt, want string }{
		{"terminal length 0", "r1# ", ""},
		{"show running-config", "r1# ", "\r\nrouter bgp 65001\r\n"},
		{"show b", "r1# ", "\r\n% Ambiguous command: show b\r\n"},
		{"sh", "r1# ", "\r\n% Command incomplete: sh\r\n"},
		{"foo bar", "r1# ", "\r\n% Unknown command: foo bar\r\n"},
		{"configure terminal", "r1(config)# ", ""},
		{"router bgp 65001", "r1(config-router)# ", ""},
		{"neighbor 192.0.2.30 remote-as 65030", "r1(config-router)# ", ""},
		{"neighbor 192.0.2.30 description added-over-ssh", "r1(config-router)# ", ""},
		{"neighbor 192.0.2.31 description no-such-peer", "r1(config-router)# ", "\r\n% Specify remote-as or peer-group commands first\r\n"},
		{"address-family ipv4 unicast", "r1(config-router-af)# ", ""},
		{"neighbor 192.0.2.30 activate", "r1(config-router-af)# ", ""},
		{"exit-address-family", "r1(config-router)# ", ""},
		{"exit", "r1(config)# ", ""},
		{"router bgp 65002", "r1(config)# ", "\r\nBGP is already running; AS is 65001\r\n"},
		{"ip route 192.0.2.128/25 192.0.2.1", "r1(config)# ", "\r\nstaticd is not running\r\n"},
		{"route-map RM-TRANSIT-OUT permit 10", "r1(config-route-map)# ", ""},
		{"end", "r1# ", ""},
		{"show running-config", "r1# ", "\r\n neighbor 192.0.2.30 description added-over-ssh\r\n"},
		{"write memory", "r1# ", "\r\n[OK]\r\n"},
	}
	for _, s := range steps {
		out := c.cmd(s.send, at(s.prompt))
		if echo := s.send + "\r\n"; !strings.HasPrefix(out, echo) {
			t.Errorf("%q: reply %q does not start with the echo", s.send, out)
		}
		if !strings.Contains(out, s.want) {
			t.Errorf("%q: reply lacks %q:\n%s", s.send, s.want, out)
		}
	}
	c.send("exit")
	if rest := c.waitEOF(); rest != "exit\r\n" {
		t.Errorf("after exit: %q, want the echo and the end of the session", rest)
	}
	if err := c.session.Wait(); err != nil {
		t.Errorf("the session ended with %v, want exit status 0", err)
	}

	running := r.RunningConfig(t)
	for _, line := range []string{" neighbor 192.0.2.30 remote-as 65030\n", " neighbor 192.0.2.30 description added-over-ssh\n", "  neighbor 192.0.2.30 activate\n"} {
		if !strings.Contains(running, line) {
			t.Errorf("the change made over SSH is not in Vtysh's show running-config: %q missing", line)
		}
	}
	if strings.Contains(running, "192.0.2.31") || strings.Contains(running, "65002") || strings.Contains(running, "192.0.2.128") {
		t.Error("a refused command changed the configuration")
	}
	saved, err := os.ReadFile(r.path("etc", "frr.conf"))
	if err != nil || !bytes.Contains(saved, []byte(" neighbor 192.0.2.30 remote-as 65030\n")) {
		t.Errorf("write memory did not save the change to etc/frr.conf (%v)", err)
	}

	checkGolden(t, "frr_8.4.4_vtysh_ssh.yaml", recordingYAML(c, r.Dir))
}

// TestFiveRouters runs five routers at once: each its own hostname,
// configuration, sshd, host key and processes, and a change on one is
// not seen on another.
func TestFiveRouters(t *testing.T) {
	start := time.Now()
	var rs []*Router
	for i := 1; i <= 5; i++ {
		h := fmt.Sprintf("r%d", i)
		config := strings.ReplaceAll(DefaultConfig(h), "router bgp 65001", fmt.Sprintf("router bgp 6500%d", i))
		config = strings.ReplaceAll(config, "bgp router-id 192.0.2.1", fmt.Sprintf("bgp router-id 192.0.2.10%d", i))
		t0 := time.Now()
		rs = append(rs, Start(t, Options{Hostname: h, Config: config}))
		t.Logf("%s started in %v", h, time.Since(t0).Round(time.Millisecond))
	}
	t.Logf("five routers started in %v", time.Since(start).Round(time.Millisecond))

	// Each bgpd has a network namespace of its own, none the test's: no
	// BGP packet leaves, no port is shared.
	ownNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	addrs, dirs, keys, netns := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{ownNS: true}
	consoles := make([]*console, len(rs))
	for i, r := range rs {
		addrs[r.Addr], dirs[r.Dir], keys[string(r.HostKey.Marshal())] = true, true, true
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", r.bgpd.cmd.Process.Pid))
		if err != nil || netns[ns] {
			t.Errorf("%s: bgpd's network namespace %q (%v) is shared", r.Hostname, ns, err)
		}
		netns[ns] = true
		if n := len(mentioning(r.path("run", "bgpd.pid"))); n != 1 {
			t.Errorf("%s: %d bgpd processes, want 1", r.Hostname, n)
		}
		consoles[i] = openConsole(t, r, "vt100", 0, 511)
	}
	if len(addrs) != 5 || len(dirs) != 5 || len(keys) != 5 {
		t.Errorf("addresses, directories or host keys shared: %d %d %d distinct", len(addrs), len(dirs), len(keys))
	}
	rs[0].Vtysh(t, "configure terminal", "router bgp 65001", "neighbor 192.0.2.77 remote-as 65077")
	for i, r := range rs {
		n := i + 1
		prompt := fmt.Sprintf("r%d# ", n)
		c := consoles[i]
		c.expect(at(prompt))
		over := strings.ReplaceAll(c.cmd("show running-config", at(prompt)), "\r\n", "\n")
		for _, running := range []string{over, r.RunningConfig(t)} {
			for _, want := range []string{fmt.Sprintf("\nhostname r%d\n", n), fmt.Sprintf("\nrouter bgp 6500%d\n", n), fmt.Sprintf(" bgp router-id 192.0.2.10%d\n", n)} {
				if !strings.Contains(running, want) {
					t.Errorf("%s: show running-config lacks %q", r.Hostname, want)
				}
			}
			if got := strings.Count(running, "\nrouter bgp "); got != 1 {
				t.Errorf("%s: %d router bgp blocks, want 1", r.Hostname, got)
			}
			if strings.Contains(running, "192.0.2.77") != (n == 1) {
				t.Errorf("%s: the neighbour added on r1 shows here: %v", r.Hostname, n != 1)
			}
		}
	}
}

// TestLoginRefused: only the router's key, for root, with the router's
// host key, gets in; the PEM in PrivateKey is that key.
func TestLoginRefused(t *testing.T) {
	r := Start(t, Options{})
	signer, err := ssh.ParsePrivateKey(r.PrivateKey)
	if err != nil {
		t.Fatalf("PrivateKey: %v", err)
	}
	if !bytes.HasPrefix(r.PrivateKey, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")) {
		t.Errorf("PrivateKey is not an OpenSSH PEM: %.40q", r.PrivateKey)
	}
	c, err := dialWith(r.Addr, r.User, ssh.PublicKeys(signer), r.HostKey, 5*time.Second)
	if err != nil {
		t.Fatalf("the router's own key: %v", err)
	}
	c.Close()

	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, _ := ssh.NewSignerFromKey(other)
	for name, tc := range map[string]struct {
		user    string
		auth    ssh.AuthMethod
		hostKey ssh.PublicKey
		want    string
	}{
		"another key":     {"root", ssh.PublicKeys(otherSigner), r.HostKey, "unable to authenticate"},
		"a password":      {"root", ssh.Password("root"), r.HostKey, "unable to authenticate"},
		"another user":    {"admin", ssh.PublicKeys(signer), r.HostKey, "unable to authenticate"},
		"another hostkey": {"root", ssh.PublicKeys(signer), otherSigner.PublicKey(), "host key mismatch"},
	} {
		c, err := dialWith(r.Addr, tc.user, tc.auth, tc.hostKey, 5*time.Second)
		if err == nil {
			c.Close()
			t.Errorf("%s: logged in", name)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestExecRequest: sshd's ForceCommand runs vtysh for an exec request
// too, whatever command it names; without a PTY vtysh reads commands
// from stdin, echoes them after the prompt and ends lines with "\n".
func TestExecRequest(t *testing.T) {
	r := Start(t, Options{})
	c, err := r.dial(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.CombinedOutput("show running-config")
	if err != nil || !strings.HasPrefix(string(out), "\nHello, this is FRRouting") || strings.Contains(string(out), "router bgp") {
		t.Errorf("exec show running-config = %v, %q; want vtysh's banner and prompt only", err, out)
	}
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s.Stdin = strings.NewReader("show running-config no-header\nconfigure terminal\nfoo\nend\n")
	out, err = s.CombinedOutput("ignored")
	for _, want := range []string{"\nr1# show running-config no-header\nfrr version ", "\nrouter bgp 65001\n", "\nr1(config)# foo\n% Unknown command: foo\n", "\nr1(config)# end\nr1# \n"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("exec with commands on stdin = %v; output lacks %q:\n%s", err, want, out)
		}
	}
}

// TestStop: stopping a router ends its SSH sessions, its sshd and bgpd,
// and leaves no process behind that names its directory.
func TestStop(t *testing.T) {
	r := Start(t, Options{})
	c := openConsole(t, r, "vt100", 0, 511)
	c.expect(at("r1# "))
	below := descendants(r.sshd.cmd.Process.Pid)
	var vtysh bool
	for _, p := range below {
		vtysh = vtysh || strings.HasPrefix(p.describe(), fmt.Sprintf("%d: %s ", p.pid, VtyshPath))
	}
	if !vtysh {
		t.Fatalf("no vtysh below sshd during a session: %d processes", len(below))
	}
	bgpd := r.bgpd.cmd.Process.Pid

	r.Stop(t)
	c.waitEOF()
	if left := mentioning(r.Dir + "/"); len(left) > 0 {
		t.Errorf("%d processes still name %s", len(left), r.Dir)
	}
	if anyAlive(below) || !r.sshd.done() || !r.bgpd.done() {
		t.Error("a process of the router is still running")
	}
	if _, err := os.Stat(crashDir("bgpd", bgpd)); !os.IsNotExist(err) {
		t.Errorf("bgpd's crash-log directory is still there (%v)", err)
	}
	if out, err := r.vtysh("-c", "show running-config"); err == nil || !strings.Contains(out, "failed to connect to any daemons") {
		t.Errorf("vtysh after Stop = %v, %q", err, out)
	}
	if _, err := r.dial(2 * time.Second); err == nil {
		t.Error("sshd still lets the key in after Stop")
	}
	r.Stop(t) // again: nothing to do
}

func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		Start(b, Options{}).Stop(b)
	}
}

func BenchmarkStartFive(b *testing.B) {
	for b.Loop() {
		var rs []*Router
		for i := 1; i <= 5; i++ {
			rs = append(rs, Start(b, Options{Hostname: fmt.Sprintf("r%d", i)}))
		}
		for _, r := range rs {
			r.Stop(b)
		}
	}
}
