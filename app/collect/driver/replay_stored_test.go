package driver

import (
	"context"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestReplayStoredOverSSH backs up recorded real devices the way a
// scheduled backup does — app/collect over SSH with a terminal, the
// platform's default commands, its paging-off and enable steps, output
// cleanup — against a loopback SSH server that plays the recording in
// the shell, and checks the text that would be stored:
//   - Onyx 3.9 breaks a line at the terminal's width with a space and a
//     backspace ("... ecn minimum-re \blative 75 ..."), wraps its output in
//     keypad-mode escapes and pages less-like: the line is stored whole.
//   - TNSR 23.06 prints "--More--" at the end of a line of the
//     configuration; the backup equals the one Oxidized stored.
func TestReplayStoredOverSSH(t *testing.T) {
	if CollectForReplay == nil {
		t.Fatal("CollectForReplay is not set: the external test package wires app/collect in")
	}
	for _, c := range []struct {
		file, platform, unknown string
		pagerAt                 *regexp.Regexp
		want                    func(t *testing.T) string
		wantLines               []string
	}{
		{file: "mlnxos_Onyx_3.9.2504", platform: "mellanox_onyx",
			unknown: "% Unrecognized command \"{cmd}\".\nType \"?\" for help.\n", pagerAt: onyxPagerAt,
			want: func(t *testing.T) string { return recordedOutput(t, "mlnxos_Onyx_3.9.2504", "show running-config") },
			wantLines: []string{
				"   interface ethernet 1/1-1/32 traffic-class 3 congestion-control ecn minimum-relative 75 maximum-relative 95",
				"no cli default prefix-modes enable",
			}},
		{file: "tnsr_TNSR_23.06-3_with-misplaced-pager", platform: "netgate_tnsr",
			unknown: "\rCLI syntax error: \"{cmd}\": Unknown command\n", pagerAt: regexp.MustCompile(`--More--`),
			want: func(t *testing.T) string {
				return oxidizedConfig(t, "tnsr_TNSR_23.06-3_with-misplaced-pager_output.txt")
			},
			wantLines: []string{
				"snmp access group-name ROGroup prefix exact model v2c level noauth read systemvi",
				"    global authentication-type user",
			}},
	} {
		t.Run(c.file, func(t *testing.T) {
			rec := loadRecording(t, c.file)
			host, port := sshShellServer(t, func(conn net.Conn) {
				replayKeyed(conn, rec, replayOptions{}, c.unknown, c.pagerAt)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := CollectForReplay(ctx, c.platform, host, port, "backup", "replay-pw")
			if err != nil {
				t.Fatalf("collect: %v", err)
			}
			if want := strings.TrimRight(c.want(t), "\n") + "\n"; got != want {
				t.Errorf("stored text differs\ngot:\n%s\nwant:\n%s", got, want)
			}
			lines := strings.Split(got, "\n")
			for _, want := range c.wantLines {
				if !slices.Contains(lines, want) {
					t.Errorf("stored text lacks the line %q", want)
				}
			}
		})
	}
}

// sshShellServer is a loopback SSH server (user backup, password
// replay-pw) that grants a terminal and a shell, and plays serve on the
// shell's stream. It serves one connection and stops when the test ends.
func sshShellServer(t *testing.T, serve func(net.Conn)) (host string, port int) {
	t.Helper()
	cfg := replayServerConfig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var nc net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		if nc != nil {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		nc = c
		mu.Unlock()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
		if err != nil {
			return
		}
		defer sc.Close()
		wg.Add(1)
		go func() { defer wg.Done(); ssh.DiscardRequests(reqs) }()
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
				switch req.Type {
				case "pty-req", "env", "window-change":
					req.Reply(req.Type == "pty-req", nil)
				case "shell":
					req.Reply(true, nil)
					wg.Add(1)
					go func() { defer wg.Done(); playShell(ch, serve) }()
				default:
					req.Reply(false, nil)
				}
			}
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	return addr.IP.String(), addr.Port
}

// playShell runs serve on a pipe joined to the shell channel, until
// either side ends.
func playShell(ch ssh.Channel, serve func(net.Conn)) {
	device, stream := net.Pipe()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); serve(device) }()
	go func() { defer wg.Done(); _, _ = io.Copy(stream, ch); stream.Close() }()
	_, _ = io.Copy(ch, stream)
	stream.Close()
	ch.Close()
	wg.Wait()
}
