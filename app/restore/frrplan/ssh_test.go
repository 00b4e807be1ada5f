package frrplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"backupd/internal/testfrr"
)

// shell is an interactive SSH session with a router's vtysh on a PTY,
// as backupd logs in: what a restore over SSH types goes through
// readline, unlike vtysh -c.
type shell struct {
	t      *testing.T
	client *ssh.Client
	stdin  io.WriteCloser
	mu     sync.Mutex
	out    []byte
	more   chan struct{}
	done   chan struct{}
}

var promptRE = regexp.MustCompile(`(?:^|\n)[\w.-]+(?:\([\w-]+\))?# \z`)

func openShell(t *testing.T, r *testfrr.Router) *shell {
	t.Helper()
	key, err := ssh.ParsePrivateKey(r.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", r.Addr, &ssh.ClientConfig{User: r.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(key)},
		HostKeyCallback: ssh.FixedHostKey(r.HostKey), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &shell{t: t, client: client, more: make(chan struct{}, 1), done: make(chan struct{})}
	t.Cleanup(func() { _ = client.Close(); <-s.done })
	session, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if s.stdin, err = session.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := session.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := session.RequestPty("vt100", 0, 511, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := session.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			s.mu.Lock()
			s.out = append(s.out, buf[:n]...)
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	if _, err := s.prompt(); err != nil {
		t.Fatal(err)
	}
	return s
}

// prompt waits, 10 s at most, for vtysh's prompt and returns what came
// before it.
func (s *shell) prompt() (string, error) {
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		out := string(s.out)
		if promptRE.MatchString(out) {
			s.out = nil
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		select {
		case <-s.more:
		case <-s.done:
			return out, errors.New("the session ended")
		case <-deadline:
			return out, fmt.Errorf("no prompt within 10 s after %q", out)
		}
	}
}

// apply types the plan's lines, each through Keystrokes, and fails on
// any reply of vtysh's but the echo: an error, or the help a bare "?"
// would print.
func (s *shell) apply(_ context.Context, cmds Commands) error {
	for _, line := range cmds.Lines() {
		if _, err := io.WriteString(s.stdin, Keystrokes(line)+"\r"); err != nil {
			return err
		}
		out, err := s.prompt()
		if err != nil {
			return err
		}
		reply := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
		if len(reply) != 2 {
			return fmt.Errorf("%q: vtysh answered %q", line, out)
		}
	}
	return nil
}

// TestConvergeOverSSH: a restore typed as over SSH, at vtysh's prompt,
// of lines holding "?" (an as-path expression, a description): with
// Keystrokes they arrive whole; without, readline prints help and drops
// the "?".
func TestConvergeOverSSH(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{})
	original := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal",
		"bgp as-path access-list AS-OPT seq 5 permit ^65010(_65020)?$",
		"router bgp 65001", "neighbor 192.0.2.10 description who? us", "end")
	target := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal", "no bgp as-path access-list AS-OPT seq 5 permit ^65010(_65020)?$",
		"router bgp 65001", "neighbor 192.0.2.10 description customer-a", "bgp router-id 192.0.2.77", "end")
	if running := r.RunningConfig(t); !Equal(running, strings.Replace(original, "router-id 192.0.2.1\n", "router-id 192.0.2.77\n", 1)) {
		t.Fatalf("the router is not where the test put it:\n%s", strings.Join(Diff(original, running), "\n"))
	}

	s := openShell(t, r)
	passes, err := Converge(context.Background(), s.apply, (&device{t: t, r: r}).read, target, MaxPasses)
	if err != nil {
		t.Fatal(err)
	}
	if passes != 1 {
		t.Errorf("passes = %d, want 1", passes)
	}
	sameLines(t, r.RunningConfig(t), target)

	// Without Keystrokes, the "?" is lost.
	if _, err := io.WriteString(s.stdin, "configure terminal\r"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.prompt(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.stdin, "bgp as-path access-list AS-RAW seq 5 permit ^1(_2)?$\r"); err != nil {
		t.Fatal(err)
	}
	// readline prints the help and the line again, without its "?".
	if out, err := s.prompt(); err != nil || !strings.Contains(out, "A regular-expression") {
		t.Fatalf("%q, %v", out, err)
	}
	if running := r.RunningConfig(t); !strings.Contains(running, "bgp as-path access-list AS-RAW seq 5 permit ^1(_2)$\n") {
		t.Errorf("a bare \"?\" was not dropped as this test expects:\n%s", running)
	}
}
