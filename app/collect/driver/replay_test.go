package driver

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"gopkg.in/yaml.v3"

	"backupd/app/collect/transport"
)

// recording is a session recorded on a real device (testdata/recordings).
type recording struct {
	initPrompt string
	steps      []step // in the order they were recorded
}

type step struct{ sent, reply string }

// unescapeRuby decodes the Ruby-style escapes the recordings use inside
// YAML block scalars.
func unescapeRuby(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			b.WriteByte('\r')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'e':
			b.WriteByte(0x1b)
		case 'a':
			b.WriteByte(0x07) // BEL, in the Onyx 3.10 pager recording
		case 'x':
			if i+2 < len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recordings", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var rec recording
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		switch key {
		case "init_prompt":
			rec.initPrompt = unescapeRuby(val.Value)
		case "commands":
			pairs := func(m *yaml.Node) {
				for j := 0; j+1 < len(m.Content); j += 2 {
					rec.steps = append(rec.steps, step{m.Content[j].Value, unescapeRuby(m.Content[j+1].Value)})
				}
			}
			if val.Kind == yaml.SequenceNode {
				for _, item := range val.Content {
					pairs(item)
				}
			} else {
				pairs(val)
			}
		}
	}
	return rec
}

// replayOptions make a replay harder than the recorded session was.
type replayOptions struct {
	// pager, when set, is printed after every pageLines lines of a reply
	// (the device's own pager prompt), and the replay waits for a key
	// before it goes on: the pager is forced on, whatever paging-off
	// commands the session sent.
	pager     string
	pageLines int
	// telnetLogin puts a telnet login dialogue (username, password)
	// before the recorded session.
	telnetLogin bool
}

// replay plays a recording as a device over conn: the banner and first
// prompt, then for each line (or pager key) received, the recorded reply.
// A line that is not the next recorded one gets the answer of a real
// device to an unknown command: the echo, an error and the prompt again;
// an empty line gets the prompt again. Carriage returns and NULs from the
// client (telnet line ends) are ignored.
func (rec recording) replay(conn net.Conn, o replayOptions) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	readLine := func() bool {
		for n := 0; n < 4096; n++ {
			c, err := r.ReadByte()
			if err != nil {
				return false
			}
			if c == '\n' {
				return true
			}
		}
		return false
	}
	if o.telnetLogin {
		if _, err := conn.Write([]byte("\r\nUser Access Verification\r\n\r\nUsername: ")); err != nil || !readLine() {
			return
		}
		if _, err := conn.Write([]byte("Password: ")); err != nil || !readLine() {
			return
		}
		if _, err := conn.Write([]byte("\r\n")); err != nil {
			return
		}
	}
	if _, err := conn.Write([]byte(rec.initPrompt)); err != nil {
		return
	}
	prompt := rec.initPrompt[strings.LastIndexByte(rec.initPrompt, '\n')+1:]
	next := 0
	var line []byte
	for next < len(rec.steps) {
		c, err := r.ReadByte()
		if err != nil {
			return
		}
		if c == '\r' || c == 0 {
			continue
		}
		line = append(line, c)
		want := rec.steps[next].sent
		if c != '\n' && string(line) != want {
			continue
		}
		reply := strings.TrimSuffix(string(line), "\n") + "\r\n% Invalid input detected at '^' marker.\r\n\r\n" + prompt
		if string(line) == "\n" && want != "\n" {
			reply = "\r\n" + prompt // an empty line: the prompt again
		}
		if string(line) == want {
			reply = rec.steps[next].reply
			next++
			prompt = reply[strings.LastIndexByte(reply, '\n')+1:]
		}
		line = nil
		if !writePaged(conn, r, reply, o) {
			return
		}
	}
}

// writePaged writes a reply, stopping at the pager prompt every pageLines
// lines until a key arrives, then wiping the prompt as terminals do.
func writePaged(conn net.Conn, r *bufio.Reader, reply string, o replayOptions) bool {
	if o.pager == "" || o.pageLines < 2 {
		_, err := conn.Write([]byte(reply))
		return err == nil
	}
	parts := strings.SplitAfter(reply, "\n")
	for len(parts) > o.pageLines {
		page := strings.Join(parts[:o.pageLines], "")
		parts = parts[o.pageLines:]
		if _, err := conn.Write([]byte(page + o.pager)); err != nil {
			return false
		}
		key, err := r.ReadByte() // the key that turns the page
		if err != nil {
			return false
		}
		if b, _ := r.Peek(r.Buffered()); key == '\r' && len(b) > 0 && b[0] == '\n' {
			r.ReadByte()
		}
		if _, err := conn.Write([]byte("\r" + strings.Repeat(" ", len(o.pager)) + "\r")); err != nil {
			return false
		}
	}
	_, err := conn.Write([]byte(strings.Join(parts, "")))
	return err == nil
}

// expected is what a session should return for the step at i (and the
// pager continuations after it): the reply cleaned, without the echo, the
// pager prompt or the final prompt. A pager prompt on a line of its own
// goes with its line. One printed at the end of a line of output (TNSR
// 23.06, "... read systemvi--More--") stays in the text, and the wipe the
// device sends after the key erases it as a terminal would: what is left
// is the text before it.
func (rec recording) expected(i int, pager string) (string, int) {
	text := rec.steps[i].reply
	pager = strings.TrimSpace(pager)
	j := i + 1
	for ; j < len(rec.steps) && rec.steps[j].sent == " "; j++ {
		lines := CleanLines([]byte(text))
		last := strings.TrimSpace(lines[len(lines)-1])
		if pager != "" && last != pager && strings.HasSuffix(last, pager) {
			text += rec.steps[j].reply
			continue
		}
		text = strings.Join(lines[:len(lines)-1], "\n") + "\n" + rec.steps[j].reply
	}
	lines := CleanLines([]byte(text))
	lines = lines[1 : len(lines)-1]
	return strings.Join(lines, "\n"), j
}

// oxidizedConfig is the configuration in a backup Oxidized stored
// (testdata/recordings/<name>): its lines without the "! " comments it
// prepends, trailing spaces and blank lines dropped as ours are.
func oxidizedConfig(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recordings", name))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "! ") {
			lines = append(lines, strings.TrimRight(l, " \t"))
		}
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// capture is a session recorded on a real device (testdata/recordings)
// that proves a platform: TestReplayCaptures replays every one through the
// production dialogue, and the platform table (docs/platforms.md) counts
// a platform as proven on a real device only when it has one here. Files
// add theirs with addCaptures from an init function, one file per platform
// family (replay_<family>_test.go).
type capture struct {
	file     string // testdata/recordings/<file>.yaml
	platform string
	// wantLines are lines the configuration must hold.
	wantLines []string
	// rejected are commands the recorded device refused.
	rejected []string
	// pager is what the device prints as its pager prompt; the replay
	// forces it on every 20 lines. "" when the platform never pages (or,
	// for exec captures, has no terminal).
	pager string
	// exec marks a session recorded over SSH exec requests: config is
	// the configuration command, unknown the reply to an unknown command.
	exec            bool
	config, unknown string
	// scp marks a capture whose configuration is a file the device
	// hands out over SCP (config names the recorded file, e.g.
	// "config.ini"): it is served over SCP from a loopback SSH server
	// and collected through app/collect (replaySCP); the recording's
	// command-line steps are replayed as usual.
	scp bool
	// oxidizedOutput names the backup Oxidized stored from the same
	// session (testdata/recordings/<oxidizedOutput>): the configuration
	// command's output must equal its lines, without the "! " comments
	// Oxidized prepends — an oracle that does not come from our cleanup.
	oxidizedOutput string
	// configExits marks a session that enters configuration modes and
	// leaves them with "exit": only its last step ends the session.
	configExits bool
}

var captures []capture

func addCaptures(cs ...capture) { captures = append(captures, cs...) }

func init() {
	addCaptures(
		capture{file: "ios_asr920_16.8.1b", platform: "cisco_xe", pager: " --More-- ",
			wantLines: []string{"hostname hostname"}, rejected: []string{"show vtp status"}},
		capture{file: "nxos_N5548_7.3.13", platform: "cisco_nxos", pager: "\x1b[7m--More--\x1b[m",
			wantLines: []string{"feature lacp"}, rejected: []string{"show inventory all"}},
		capture{file: "aoscx_6100-48G_PL.10.10.1090", platform: "aruba_aoscx",
			pager:     "-- MORE --, next page: Space, next line: Enter, quit: Control-C",
			wantLines: []string{"hostname TEST-SW1235"}},
		capture{file: "fortigate_FortiGate-501E_vdomHAdown", platform: "fortinet", pager: "--More-- ",
			wantLines: []string{"config system global"}, rejected: []string{"diagnose hardware deviceinfo psu"}},
		capture{file: "junos_srx300_22.4", platform: "juniper_junos", exec: true,
			config:  "show configuration | display omit",
			unknown: "                 ^\nsyntax error, expecting <command>.\n",
			wantLines: []string{
				"## Last commit: 2024-12-06 11:41:05 UTC by root",
				"version 22.4R3-S2.11;",
				`        encrypted-password "very-secret-encrypted-password"; ## SECRET-DATA`,
				"        l3-interface irb.0;",
			}},
		capture{file: "routeros_CHR_7.10.1", platform: "mikrotik_routeros", exec: true,
			config:  "/export show-sensitive",
			unknown: "bad command name nothing-such (line 1 column 6)\n",
			wantLines: []string{
				"# 2024-10-25 06:08:35 by RouterOS 7.10.1",
				"/interface ethernet",
				"set [ find default-name=ether1 ] disable-running-check=no",
				"set always-allow-password-login=yes",
				"set show-at-login=no",
			}},
	)
}

// TestReplayCaptures drives the production session of each captured
// platform against its recordings of real devices over loopback: raw TCP
// with the pager forced on, a telnet login (where the platform offers
// telnet), or SSH exec requests. Every command's output must be complete
// (up to the real prompt, across pagers), with no echo, prompt, pager,
// escape or carriage return left, and the device's own error for commands
// it rejected.
func TestReplayCaptures(t *testing.T) {
	if len(captures) == 0 {
		t.Fatal("no captures registered")
	}
	for _, c := range captures {
		p, ok := Lookup(c.platform)
		if !ok {
			t.Errorf("%s: unknown platform %s", c.file, c.platform)
			continue
		}
		if c.exec {
			t.Run(c.file+"/exec", func(t *testing.T) { replayExec(t, c) })
			continue
		}
		if c.scp {
			t.Run(c.file+"/scp", func(t *testing.T) { replaySCP(t, c) })
		}
		t.Run(c.file+"/paged", func(t *testing.T) {
			replayInteractive(t, c, replayOptions{pager: c.pager, pageLines: 20})
		})
		if p.OffersTransport("telnet") {
			t.Run(c.file+"/telnet", func(t *testing.T) { replayInteractive(t, c, replayOptions{telnetLogin: true}) })
		}
	}
}

func replayInteractive(t *testing.T, c capture, o replayOptions) {
	d, ok := DialogueFor(c.platform)
	if !ok {
		t.Fatalf("no dialogue for %s", c.platform)
	}
	rec := loadRecording(t, c.file)
	if rec.initPrompt == "" {
		t.Fatalf("%s: recorded over exec, not interactively", c.file)
	}
	if c.scp {
		rec.steps = slices.DeleteFunc(rec.steps, func(st step) bool { return st.sent == c.config })
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var conn Conn
	if o.telnetLogin {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if server, err := ln.Accept(); err == nil {
				rec.replay(server, o)
			}
		}()
		defer wg.Wait()
		port := ln.Addr().(*net.TCPAddr).Port
		tc, err := transport.DialTelnet(ctx, transport.Options{Host: "127.0.0.1", Port: port})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		if err := transport.TelnetLogin(ctx, tc, "backup", "replay-pw"); err != nil {
			t.Fatalf("telnet login: %v", err)
		}
		conn = tc
		d.LineEnd = "\r\n" // the telnet NVT newline, as collect sends it
	} else {
		client, server := tcpPair(t)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); rec.replay(server, o) }()
		defer func() { client.Close(); wg.Wait() }()
		conn = client
	}
	s := NewSession(conn, d, 4<<20)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatalf("start: %v", err)
	}
	var all strings.Builder
	for i := 0; i < len(rec.steps); {
		cmd := strings.TrimSuffix(rec.steps[i].sent, "\n")
		if (cmd == "exit" || cmd == "quit" || cmd == "logout") && (!c.configExits || i == len(rec.steps)-1) {
			break
		}
		want, next := rec.expected(i, c.pager)
		i = next
		if slices.Contains(d.PagingOff, cmd) || cmd == "" {
			continue // sent by Start
		}
		got, err := s.Run(ctx, cmd)
		if slices.Contains(c.rejected, cmd) {
			if !errors.Is(err, ErrRejected) {
				t.Errorf("%s: err = %v, want ErrRejected (the device refused it)", cmd, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if got != want {
			t.Errorf("%s: output differs from the recording\ngot:\n%s\nwant:\n%s", cmd, got, want)
		}
		if strings.ContainsAny(got, "\r\x1b\b") || strings.Contains(got, s.Prompt()) {
			t.Errorf("%s: output keeps terminal debris or the prompt %q", cmd, s.Prompt())
		}
		if c.pager != "" && d.Pager.MatchString(strings.TrimSpace(c.pager)) && strings.Contains(got, strings.TrimSpace(CleanLines([]byte(c.pager))[0])) {
			t.Errorf("%s: output keeps the pager prompt", cmd)
		}
		if c.oxidizedOutput != "" && cmd == DefaultCommands(c.platform) {
			// Trailing blank lines go when the backup is stored.
			if want := oxidizedConfig(t, c.oxidizedOutput); strings.TrimRight(got, "\n") != want {
				t.Errorf("%s: output differs from the backup Oxidized stored\ngot:\n%s\nwant:\n%s", cmd, got, want)
			}
		}
		fmt.Fprintln(&all, got)
	}
	if c.scp {
		return // the configuration is the file: replaySCP checks its lines
	}
	lines := strings.Split(all.String(), "\n")
	for _, want := range c.wantLines {
		if !slices.Contains(lines, want) {
			t.Errorf("configuration lacks the line %q", want)
		}
	}
}

// execReplayServer answers SSH exec requests from a recording made over
// SSH exec: the recorded output and exit status 0, or the unknown text and
// status 1 for a command the recording does not hold. It runs until the test
// ends.
func execReplayServer(t *testing.T, rec recording, unknown string) (host string, port int) {
	t.Helper()
	replies := map[string]string{}
	for _, s := range rec.steps {
		replies[strings.TrimSuffix(s.sent, "\n")] = s.reply
	}
	return sshExecServer(t, func(cmd string) (func(ssh.Channel) uint32, bool) {
		return func(ch ssh.Channel) uint32 {
			reply, ok := replies[cmd]
			if !ok {
				ch.Write([]byte(unknown))
				return 1
			}
			ch.Write([]byte(reply))
			return 0
		}, true
	})
}

// sshExecServer is a loopback SSH server (user backup, password
// replay-pw) that opens no shell and answers each exec request with
// handle: handle says whether it takes the command and returns what writes
// the reply and the exit status. It runs until the test ends.
func sshExecServer(t *testing.T, handle func(cmd string) (func(ssh.Channel) uint32, bool)) (host string, port int) {
	t.Helper()
	cfg := replayServerConfig(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				serveExec(nc, cfg, handle)
			}()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port
}

func serveExec(nc net.Conn, cfg *ssh.ServerConfig, handle func(cmd string) (func(ssh.Channel) uint32, bool)) {
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	var discard sync.WaitGroup
	defer discard.Wait()
	defer sc.Close()
	discard.Add(1)
	go func() { defer discard.Done(); ssh.DiscardRequests(reqs) }()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			continue
		}
		for req := range chReqs {
			var p struct{ Command string }
			if req.Type != "exec" || ssh.Unmarshal(req.Payload, &p) != nil {
				req.Reply(false, nil)
				continue
			}
			run, ok := handle(p.Command)
			if !ok {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			status := run(ch)
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			ch.Close()
		}
	}
}

// replayExec collects from a device recorded over SSH exec, through the
// production transport and dialogue: one exec request per command, output
// exactly as recorded (cleaned), nothing added.
func replayExec(t *testing.T, c capture) {
	d, ok := DialogueFor(c.platform)
	if !ok || !d.Exec {
		t.Fatalf("%s: want an exec dialogue", c.platform)
	}
	rec := loadRecording(t, c.file)
	host, port := execReplayServer(t, rec, c.unknown)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, _, err := transport.DialSSHExec(ctx, transport.Options{Host: host, Port: port, Username: "backup", Password: "replay-pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s := NewExecSession(client, d, 4<<20)

	var config string
	for _, st := range rec.steps {
		cmd := strings.TrimSuffix(st.sent, "\n")
		if cmd == "exit" || cmd == "quit" {
			continue
		}
		got, err := s.Run(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if want := strings.Join(CleanLines([]byte(st.reply)), "\n"); got != want {
			t.Errorf("%s: output differs from the recording\ngot:\n%s\nwant:\n%s", cmd, got, want)
		}
		if strings.ContainsAny(got, "\r\x1b\b") {
			t.Errorf("%s: output keeps terminal debris", cmd)
		}
		if cmd == c.config {
			config = got
		}
	}
	if config == "" {
		t.Fatalf("the recording has no %q", c.config)
	}
	lines := strings.Split(config, "\n")
	for _, want := range c.wantLines {
		if !slices.Contains(lines, want) {
			t.Errorf("configuration lacks the line %q", want)
		}
	}
	// A command the device rejects fails, rather than becoming part of
	// the backup.
	if _, err := s.Run(ctx, "show nothing-such"); !errors.Is(err, ErrRejected) {
		t.Errorf("rejected command: err = %v, want ErrRejected", err)
	}
}

// replayServerConfig is the configuration of the loopback SSH servers the
// replays log in to: a fresh host key, user backup with password
// replay-pw.
func replayServerConfig(t *testing.T) *ssh.ServerConfig {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PasswordCallback: func(m ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if m.User() == "backup" && string(pw) == "replay-pw" {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	cfg.AddHostKey(signer)
	return cfg
}
