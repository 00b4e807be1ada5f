package driver

import (
	"bufio"
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeIOS is a scripted Cisco-like device on one end of a pipe: banner,
// user prompt, enable with a password, paging that can be turned off, and
// a configuration that contains lines ending in '#' and '>'.
type fakeIOS struct {
	enablePassword string
	config         string
	chunk          int // write output in pieces of this many bytes
}

const iosBanner = "\r\n*** Authorised access only # monitored ***\r\n\r\n"

func (f fakeIOS) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	write := func(s string) {
		for len(s) > 0 {
			n := min(f.chunk, len(s))
			if f.chunk == 0 {
				n = len(s)
			}
			if _, err := conn.Write([]byte(s[:n])); err != nil {
				return
			}
			s = s[n:]
		}
	}
	prompt := "R1>"
	paging := true
	write(iosBanner + prompt)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.TrimSpace(line)
		write(cmd + "\r\n")
		switch cmd {
		case "enable":
			write("Password: ")
			pw, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.TrimSpace(pw) == f.enablePassword {
				prompt = "R1#"
			} else {
				write("% Access denied\r\n\r\n")
			}
		case "terminal length 0":
			paging = false
		case "show running-config":
			lines := strings.Split(f.config, "\n")
			for i, l := range lines {
				write(l + "\r\n")
				if paging && i > 0 && i%4 == 0 {
					write(" --More-- ")
					if _, err := r.ReadByte(); err != nil {
						return
					}
					write("\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b")
				}
			}
		default:
			write("                ^\r\n% Invalid input detected at '^' marker.\r\n\r\n")
		}
		write(prompt)
	}
}

var iosDialogue = Dialogue{
	Prompt:         regexp.MustCompile(`^[\w.:/-]+[>#]$`),
	Pager:          regexp.MustCompile(`--More--`),
	PagingOff:      []string{"terminal length 0"},
	Enable:         "enable",
	Privileged:     regexp.MustCompile(`#$`),
	PasswordPrompt: regexp.MustCompile(`(?i)password:\s*$`),
}

const iosConfig = "Building configuration...\n\nhostname R1\n!\nbanner motd #\nWelcome#\n#\ninterface Gi0/1\n description to core>\n!\nend"

// tcpPair connects a client and a server over loopback TCP (net.Pipe has
// no buffering, which real connections have and devices rely on).
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	return client, server
}

func pipeSession(t *testing.T, f fakeIOS) *Session {
	t.Helper()
	return sessionWith(t, f, iosDialogue)
}

func sessionWith(t *testing.T, f fakeIOS, d Dialogue) *Session {
	t.Helper()
	client, server := tcpPair(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.serve(server) }()
	t.Cleanup(func() { client.Close(); wg.Wait() })
	return NewSession(client, d, 1<<20)
}

func TestSessionEnablePagingAndCleanOutput(t *testing.T) {
	for _, chunk := range []int{0, 1, 7} {
		s := pipeSession(t, fakeIOS{enablePassword: "s3cret", config: iosConfig, chunk: chunk})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Start(ctx, "s3cret"); err != nil {
			t.Fatalf("chunk %d: start: %v", chunk, err)
		}
		if s.Prompt() != "R1#" {
			t.Fatalf("chunk %d: prompt %q", chunk, s.Prompt())
		}
		out, err := s.Run(ctx, "show running-config")
		if err != nil {
			t.Fatal(err)
		}
		if out != iosConfig {
			t.Errorf("chunk %d: output\n%q\nwant\n%q", chunk, out, iosConfig)
		}
	}
}

func TestSessionAnswersPager(t *testing.T) {
	d := iosDialogue
	d.PagingOff = nil // leave paging on: the session must answer --More--
	s := sessionWith(t, fakeIOS{enablePassword: "pw", config: iosConfig}, d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx, "pw"); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx, "show running-config")
	if err != nil {
		t.Fatal(err)
	}
	if out != iosConfig {
		t.Errorf("output with pager:\n%q\nwant\n%q", out, iosConfig)
	}
}

func TestSessionWrongEnablePassword(t *testing.T) {
	s := pipeSession(t, fakeIOS{enablePassword: "right", config: iosConfig})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx, "wrong"); !errors.Is(err, ErrEnable) {
		t.Fatalf("want ErrEnable, got %v", err)
	}
}

func TestSessionSilentDeviceTimesOut(t *testing.T) {
	client, server := tcpPair(t)
	defer client.Close()
	defer server.Close()
	s := NewSession(client, iosDialogue, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Start(ctx, ""); !errors.Is(err, ErrTimeout) {
		t.Fatalf("want ErrTimeout, got %v", err)
	}
}

func TestSessionOutputCap(t *testing.T) {
	client, server := tcpPair(t)
	defer client.Close()
	go func() {
		defer server.Close()
		server.Write([]byte("R1#"))
		buf := make([]byte, 64)
		for range 10 { // an empty line (the prompt probe) prints the prompt again
			n, _ := server.Read(buf)
			if strings.TrimSpace(string(buf[:n])) != "" {
				break
			}
			server.Write([]byte("\r\nR1#"))
		}
		line := []byte(strings.Repeat("x", 1000) + "\r\n")
		for i := 0; i < 1000; i++ {
			if _, err := server.Write(line); err != nil {
				return
			}
		}
	}()
	s := NewSession(client, Dialogue{Prompt: iosDialogue.Prompt}, 64*1024)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "show tech"); !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("want ErrOutputTooLarge, got %v", err)
	}
}

// With no prompt known yet, a prompt-like line is confirmed by an empty
// command (a real prompt prints itself again) instead of by waiting for
// the device to fall silent; a line that only looks like a prompt and is
// followed by more output is not taken for it.
func TestSessionProbesFirstPrompt(t *testing.T) {
	client, server := tcpPair(t)
	defer client.Close()
	got := make(chan string, 1)
	go func() {
		defer server.Close()
		server.Write([]byte("Authorised access only#\r\n"))
		server.Write([]byte("R1#"))
		r := bufio.NewReader(server)
		var seen []string
		for range 5 {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			seen = append(seen, line)
			if strings.TrimSpace(line) == "" {
				server.Write([]byte("\r\nR1#"))
				continue
			}
			server.Write([]byte(strings.TrimSpace(line) + "\r\nhostname R1\r\nR1#"))
			break
		}
		got <- strings.Join(seen, "|")
	}()
	s := NewSession(client, Dialogue{Prompt: iosDialogue.Prompt}, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "R1#" {
		t.Fatalf("prompt = %q", s.Prompt())
	}
	out, err := s.Run(ctx, "show running-config")
	if err != nil || out != "hostname R1" {
		t.Fatalf("output %q, %v", out, err)
	}
	if lines := <-got; lines != "\n|show running-config\n" {
		t.Fatalf("device received %q; want one empty probe line, then the command", lines)
	}
}

// TestSessionPagerAfterText: a pager prompt at the end of a line of output
// rather than on a line of its own (TNSR 23.06) is answered, also after a
// line longer than any pager prompt, and the text before it is kept —
// whether the device then wipes the prompt with backspaces, spaces and
// backspaces or just goes on with a new line.
func TestSessionPagerAfterText(t *testing.T) {
	long := "snmp access group-name ROGroup prefix exact model v2c level noauth read systemview write none " + strings.Repeat("x", 120)
	wipe := "\b\b\b\b\b\b\b\b        \b\b\b\b\b\b\b\b"
	s := scripted(t, "netgate_tnsr", "\r\nr1 tnsr# ",
		step{"show configuration running cli\n", "show configuration running cli\r\n\rline one\r\n    read systemvi--More--"},
		step{" ", wipe + "\r\n" + long + "--More--"},
		step{" ", wipe + "\r\n    indented--More--"},
		step{" ", "\r\n--More--"},
		step{" ", wipe + "    on its own line\r\n\r\rr1 tnsr# "},
	)
	ctx := testCtx(t)
	if err := s.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(ctx, "show configuration running cli")
	if err != nil {
		t.Fatal(err)
	}
	want := "line one\n    read systemvi\n" + long + "\n    indented\n    on its own line"
	if got != want {
		t.Errorf("output\n%q\nwant\n%q", got, want)
	}
}
