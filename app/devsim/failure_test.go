package devsim

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// short is how long a test waits to see that nothing happens.
const short = 300 * time.Millisecond

func TestFailWrongPassword(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios", TelnetAddr: "127.0.0.1:0", SSHAddr: "127.0.0.1:0", Failures: []Failure{FailWrongPassword}})
	if _, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin")); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("ssh login with the right password: err %v, want an authentication failure", err)
	}
	conn, e := dialTelnet(t, d)
	e.must(t, "Username: ")
	for i := 0; i < loginAttempts; i++ {
		send(t, conn, "admin\r\n")
		e.must(t, "Password: ")
		send(t, conn, "admin\r\n")
		e.must(t, "% Login invalid")
	}
	rest, err := e.waitEnd(wait)
	if err != nil {
		t.Fatalf("telnet not closed after %d failures: %v", loginAttempts, err)
	}
	if strings.Contains(rest, "R1") {
		t.Errorf("got a prompt after failed logins: %q", rest)
	}
	if s := d.Stats(); s.Logins != 0 || s.FailedLogins < loginAttempts+1 {
		t.Errorf("stats %+v", s)
	}
}

func TestFailLegacyAlgorithms(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios", Failures: []Failure{FailLegacyAlgorithms}})
	if d.HostKey().Type() != ssh.KeyAlgoRSA {
		t.Errorf("host key type %s", d.HostKey().Type())
	}
	if _, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin")); err == nil {
		t.Error("a client with modern defaults connected to a legacy-only server")
	}
	cfg := clientConfig(d, "admin", "admin")
	cfg.KeyExchanges = []string{ssh.InsecureKeyExchangeDH1SHA1}
	cfg.Ciphers = []string{ssh.InsecureCipherAES128CBC}
	cfg.MACs = []string{ssh.HMACSHA1}
	cfg.HostKeyAlgorithms = []string{ssh.KeyAlgoRSA}
	client, err := ssh.Dial("tcp", d.SSHAddr(), cfg)
	if err != nil {
		t.Fatalf("legacy client: %v", err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sess.Output("show version"); err != nil || !strings.Contains(string(out), "Cisco IOS Software") {
		t.Errorf("show version over legacy algorithms: %v %q", err, out)
	}
	for _, cipher := range []string{ssh.InsecureCipherTripleDESCBC} {
		cfg.Ciphers = []string{cipher}
		c, err := ssh.Dial("tcp", d.SSHAddr(), cfg)
		if err != nil {
			t.Errorf("%s: %v", cipher, err)
			continue
		}
		c.Close()
	}
}

func TestFailHangBeforeBanner(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", SSHAddr: "127.0.0.1:0", TelnetAddr: "127.0.0.1:0", Failures: []Failure{FailHangBeforeBanner}})
	for _, addr := range []string{d.SSHAddr(), d.TelnetAddr()} {
		c, err := net.DialTimeout("tcp", addr, wait)
		if err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(short))
		n, err := c.Read(make([]byte, 64))
		var ne net.Error
		if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s: read %d bytes, err %v; want nothing until the deadline", addr, n, err)
		}
		c.Close()
	}
	// An SSH client with a connect deadline gives up.
	c, err := net.DialTimeout("tcp", d.SSHAddr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(short))
	if _, _, _, err := ssh.NewClientConn(c, d.SSHAddr(), clientConfig(d, "admin", "admin")); err == nil {
		t.Error("SSH handshake succeeded against a device that never answers")
	}
}

// configOverSSH logs in, turns paging off and sends the configuration
// command. It returns the stream positioned after the echo and the
// device's rendering of the configuration, read once its first line
// (first) has arrived, so the show has certainly happened.
func configOverSSH(t *testing.T, d *Device, prompt, pagingOff, command, first string) (*expecter, string) {
	t.Helper()
	_, w, e := sshShell(t, d)
	e.must(t, prompt)
	send(t, w, pagingOff+"\n")
	e.must(t, prompt)
	send(t, w, command+"\n")
	e.must(t, command+"\r\n")
	if got := e.must(t, first); got != first {
		t.Fatalf("output starts %q, want %q", got, first)
	}
	shown, ok := d.LastOutput(command)
	if !ok || !strings.HasPrefix(shown, first) {
		t.Fatalf("device rendering starts %q", shown[:min(len(shown), 40)])
	}
	return e, shown
}

func TestFailHangMidOutput(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios", ConfigSize: MinConfigSize, Failures: []Failure{FailHangMidOutput}})
	e, shown := configOverSSH(t, d, "R1#", "terminal length 0", "show running-config", "Building configuration...")
	half := crlf(shown[:len(shown)/2])
	if got := e.must(t, half[len(half)-40:]); "Building configuration..."+got != half {
		t.Fatalf("first half differs")
	}
	if ok, extra := e.quiet(short); !ok {
		t.Errorf("device kept talking or hung up after the first half: %q", tail(extra))
	}
}

func TestFailDisconnectMidOutput(t *testing.T) {
	d := startDevice(t, Options{Platform: "huawei_vrp", ConfigSize: MinConfigSize, Failures: []Failure{FailDisconnectMidOutput}})
	e, shown := configOverSSH(t, d, "<HUAWEI>", "screen-length 0 temporary", "display current-configuration", "!Software Version")
	rest, err := e.waitEnd(wait)
	if err != nil {
		t.Fatal(err)
	}
	if want := crlf(shown[:len(shown)/2]); "!Software Version"+rest != want {
		t.Errorf("got %d bytes before the disconnect, want the first half (%d bytes)", len(rest), len(want))
	}
}

func TestFailSlowDrip(t *testing.T) {
	d := startDevice(t, Options{
		Platform: "arista_eos", ConfigSize: MinConfigSize, Failures: []Failure{FailSlowDrip},
		DripDelay: 50 * time.Microsecond, DripChunk: 4,
	})
	before := d.Stats().Writes
	e, shown := configOverSSH(t, d, "leaf1#", "terminal length 0", "show running-config", "! Command: show running-config")
	out := "! Command: show running-config" + e.must(t, "leaf1#")
	if out != crlf(shown)+"leaf1#" {
		t.Error("dripped output differs from the configuration")
	}
	if writes := d.Stats().Writes - before; writes < int64(len(out)/4) {
		t.Errorf("%d bytes in %d writes; want at most 4 bytes a write", len(out), writes)
	}
}

// stripGarbage drops the bytes garbage is made of (C0 controls below
// backspace and bytes from 0x80) so output and configuration compare.
func stripGarbage(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x08 || r >= 0x80 {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

func TestFailGarbage(t *testing.T) {
	d := startDevice(t, Options{Platform: "cisco_ios", ConfigSize: MinConfigSize, Failures: []Failure{FailGarbage}})
	e, shown := configOverSSH(t, d, "R1#", "terminal length 0", "show running-config", "Build")
	out := "Build" + e.must(t, "R1#")
	want := crlf(shown) + "R1#"
	if utf8.ValidString(out) || len(out) <= len(want) {
		t.Fatalf("no garbage: %d bytes, want more than %d and invalid UTF-8", len(out), len(want))
	}
	if stripBytes(out) != stripBytes(want) {
		t.Error("with the garbage removed the output is not the configuration")
	}
}

// stripBytes removes every byte garbage can be made of, from both sides
// of a comparison.
func stripBytes(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, c := range b {
		if c >= 0x08 && c < 0x80 {
			out = append(out, c)
		}
	}
	return string(out)
}

func TestFailEndlessPager(t *testing.T) {
	const pages = 12
	d := startDevice(t, Options{Platform: "cisco_ios", ConfigSize: MinConfigSize, EndlessPages: pages, Failures: []Failure{FailEndlessPager}})
	_, w, e := sshShell(t, d)
	e.must(t, "R1#")
	send(t, w, "terminal length 0\n")
	e.must(t, "R1#")
	send(t, w, "show running-config\n")
	seen := 0
	for ; seen < 2*pages; seen++ {
		if _, err := e.expect(ciscoMore, wait); err != nil {
			break
		}
		if seen == 0 {
			shown, _ := d.LastOutput("show running-config")
			if screens := 1 + strings.Count(shown, "\n")/23; screens >= pages {
				t.Fatalf("test needs a configuration shorter than %d screens, got %d", pages, screens)
			}
		}
		key := " "
		if seen%3 == 2 {
			key = "q" // ignored: the pager never ends
		}
		send(t, w, key)
	}
	if seen != pages {
		t.Errorf("saw %d pager prompts; want the cap of %d", seen, pages)
	}
	if _, err := e.waitEnd(wait); err != nil {
		t.Errorf("device did not hang up at the cap: %v", err)
	}
}

func TestFailNonUTF8(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		decode  func([]byte) (string, error)
		nonUTF8 bool
	}{
		{"latin-1 by failure mode", Options{Platform: "cisco_ios", Failures: []Failure{FailNonUTF8}},
			func(b []byte) (string, error) { return charmap.ISO8859_1.NewDecoder().String(string(b)) }, true},
		{"gbk by encoding", Options{Platform: "huawei_vrp", Encoding: "gbk"},
			func(b []byte) (string, error) { return simplifiedchinese.GBK.NewDecoder().String(string(b)) }, true},
		{"utf-8", Options{Platform: "cisco_ios"},
			func(b []byte) (string, error) { return string(b), nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.ConfigSize = 20 << 10
			d := startDevice(t, tc.opts)
			cmd := d.Personality().ConfigCommands[0]
			client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, "admin", "admin"))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			sess, err := client.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sess.Output(cmd)
			if err != nil {
				t.Fatal(err)
			}
			shown, _ := d.LastOutput(cmd)
			if utf8.Valid(raw) == tc.nonUTF8 {
				t.Errorf("output valid UTF-8 = %v", utf8.Valid(raw))
			}
			if bytes.Equal(raw, []byte(crlf(shown))) == tc.nonUTF8 {
				t.Error("encoding did not change the bytes as expected")
			}
			text, err := tc.decode(raw)
			if err != nil || text != crlf(shown) {
				t.Errorf("decoded output differs from the configuration (err %v)", err)
			}
			if stripGarbage(shown) == shown {
				t.Error("configuration has no non-ASCII text to encode")
			}
		})
	}
}
