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

// replay plays a recording as a device over conn: the banner and first
// prompt, then for each line (or pager key) received, the recorded reply.
// A line that is not the next recorded one gets the answer of a real
// device to an unknown command: the echo, an error and the prompt again;
// an empty line gets the prompt again.
func (rec recording) replay(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
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
		if _, err := conn.Write([]byte(reply)); err != nil {
			return
		}
	}
}

// expected is what a session should return for the step at i (and the
// pager continuations after it): the reply cleaned, without the echo, the
// pager prompt or the final prompt.
func (rec recording) expected(i int) (string, int) {
	text := rec.steps[i].reply
	j := i + 1
	for ; j < len(rec.steps) && rec.steps[j].sent == " "; j++ {
		lines := CleanLines([]byte(text))
		text = strings.Join(lines[:len(lines)-1], "\n") + "\n" + rec.steps[j].reply
	}
	lines := CleanLines([]byte(text))
	lines = lines[1 : len(lines)-1]
	return strings.Join(lines, "\n"), j
}

// TestReplayRealDevices drives a session with the production dialogue of
// each platform against four recorded interactive sessions of real devices
// over loopback TCP, and checks every command's output: complete (up to
// the real prompt, across pagers), with no echo, prompt, escape or carriage
// return left, and the device's own error for commands it rejected.
func TestReplayRealDevices(t *testing.T) {
	for _, c := range []struct {
		name, platform string
		wantLine       string   // a line the configuration must hold
		rejected       []string // commands the recorded device refused
	}{
		{"ios_asr920_16.8.1b", "cisco_xe", "hostname hostname", []string{"show vtp status"}},
		{"nxos_N5548_7.3.13", "cisco_nxos", "feature lacp", []string{"show inventory all"}},
		{"aoscx_6100-48G_PL.10.10.1090", "aruba_aoscx", "hostname TEST-SW1235", nil},
		{"fortigate_FortiGate-501E_vdomHAdown", "fortinet", "config system global", []string{"diagnose hardware deviceinfo psu"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := DialogueFor(c.platform)
			if !ok {
				t.Fatalf("no dialogue for %s", c.platform)
			}
			rec := loadRecording(t, c.name)
			client, server := tcpPair(t)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); rec.replay(server) }()
			defer func() { client.Close(); wg.Wait() }()

			s := NewSession(client, d, 4<<20)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := s.Start(ctx, ""); err != nil {
				t.Fatalf("start: %v", err)
			}
			var all strings.Builder
			for i := 0; i < len(rec.steps); {
				cmd := strings.TrimSuffix(rec.steps[i].sent, "\n")
				if cmd == "exit" {
					break
				}
				want, next := rec.expected(i)
				i = next
				if slices.Contains(d.PagingOff, cmd) {
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
				if strings.ContainsAny(got, "\r\x1b\b") || strings.Contains(got, s.Prompt()) || strings.Contains(got, "--More--") {
					t.Errorf("%s: output keeps terminal debris or the prompt %q", cmd, s.Prompt())
				}
				fmt.Fprintln(&all, got)
			}
			if !strings.Contains(all.String(), "\n"+c.wantLine+"\n") {
				t.Errorf("configuration lacks %q", c.wantLine)
			}
		})
	}
}

// execReplayServer answers SSH exec requests from a recording made over
// SSH exec: the recorded output and exit status 0, or the unknown text and
// status 1 for a command the recording does not hold. It runs until the test
// ends.
func execReplayServer(t *testing.T, rec recording, unknown string) (host string, port int) {
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
	replies := map[string]string{}
	for _, s := range rec.steps {
		replies[strings.TrimSuffix(s.sent, "\n")] = s.reply
	}

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
				serveExec(nc, cfg, replies, unknown)
			}()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port
}

func serveExec(nc net.Conn, cfg *ssh.ServerConfig, replies map[string]string, unknown string) {
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
			if req.Type != "exec" {
				req.Reply(false, nil)
				continue
			}
			var p struct{ Command string }
			if ssh.Unmarshal(req.Payload, &p) != nil {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			reply, ok := replies[p.Command]
			status := uint32(0)
			if !ok {
				reply, status = unknown, 1
			}
			ch.Write([]byte(reply))
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			ch.Close()
		}
	}
}

// TestReplayExecDevices collects from the two devices recorded over SSH
// exec, through the production transport and dialogue: one exec request
// per command, output exactly as recorded (cleaned), nothing added.
func TestReplayExecDevices(t *testing.T) {
	for _, c := range []struct {
		name, platform string
		config         string   // the configuration command
		unknown        string   // what the device answers to an unknown command
		wantLines      []string // lines the configuration must hold
	}{
		{"junos_srx300_22.4", "juniper_junos", "show configuration | display omit",
			"                 ^\nsyntax error, expecting <command>.\n", []string{
				"## Last commit: 2024-12-06 11:41:05 UTC by root",
				"version 22.4R3-S2.11;",
				`        encrypted-password "very-secret-encrypted-password"; ## SECRET-DATA`,
				"        l3-interface irb.0;",
			}},
		{"routeros_CHR_7.10.1", "mikrotik_routeros", "/export show-sensitive",
			"bad command name nothing-such (line 1 column 6)\n", []string{
				"# 2024-10-25 06:08:35 by RouterOS 7.10.1",
				"/interface ethernet",
				"set [ find default-name=ether1 ] disable-running-check=no",
				"set always-allow-password-login=yes",
				"set show-at-login=no",
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := DialogueFor(c.platform)
			if !ok || !d.Exec {
				t.Fatalf("%s: want an exec dialogue", c.platform)
			}
			rec := loadRecording(t, c.name)
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
			for _, debris := range []string{"Screen length set", "uptime:", "installed-version", "interrupted"} {
				if strings.Contains(config, debris) {
					t.Errorf("configuration holds the output of another command (%q)", debris)
				}
			}

			// A command the device rejects fails, rather than becoming
			// part of the backup.
			if _, err := s.Run(ctx, "show nothing-such"); !errors.Is(err, ErrRejected) {
				t.Errorf("rejected command: err = %v, want ErrRejected", err)
			}
		})
	}
}
