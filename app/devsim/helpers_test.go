package devsim

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// wait bounds every expectation; generous because tests run with -race.
const wait = 15 * time.Second

func startDevice(t *testing.T, opts Options) *Device {
	t.Helper()
	d, err := NewDevice(opts)
	if err != nil {
		t.Fatalf("NewDevice(%s): %v", opts.Platform, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// expecter collects everything a reader yields on one goroutine that ends
// with the reader, and lets the test wait for patterns with a deadline.
type expecter struct {
	mu     sync.Mutex
	data   []byte
	pos    int
	done   bool
	err    error
	notify chan struct{}
}

func newExpecter(r io.Reader) *expecter {
	e := &expecter{notify: make(chan struct{}, 1)}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			e.mu.Lock()
			e.data = append(e.data, b[:n]...)
			if err != nil {
				e.done, e.err = true, err
			}
			e.mu.Unlock()
			select {
			case e.notify <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return e
}

// expect returns everything up to and including the next occurrence of
// pattern.
func (e *expecter) expect(pattern string, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		e.mu.Lock()
		if i := bytes.Index(e.data[e.pos:], []byte(pattern)); i >= 0 {
			out := string(e.data[e.pos : e.pos+i+len(pattern)])
			e.pos += i + len(pattern)
			e.mu.Unlock()
			return out, nil
		}
		if e.done {
			rest := string(e.data[e.pos:])
			e.mu.Unlock()
			return rest, fmt.Errorf("stream ended (%v) before %q; got %q", e.err, pattern, tail(rest))
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-timer.C:
			e.mu.Lock()
			rest := string(e.data[e.pos:])
			e.mu.Unlock()
			return rest, fmt.Errorf("no %q within %s; got %q", pattern, timeout, tail(rest))
		}
	}
}

func (e *expecter) must(t *testing.T, pattern string) string {
	t.Helper()
	out, err := e.expect(pattern, wait)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitEnd waits for the stream to end and returns what was not consumed.
func (e *expecter) waitEnd(timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		e.mu.Lock()
		if e.done {
			rest := string(e.data[e.pos:])
			e.pos = len(e.data)
			e.mu.Unlock()
			return rest, nil
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-timer.C:
			return "", fmt.Errorf("stream still open after %s", timeout)
		}
	}
}

// quiet reports whether nothing arrives and the stream stays open for d:
// the check for a device that must hang.
func (e *expecter) quiet(d time.Duration) (bool, string) {
	e.mu.Lock()
	start := len(e.data)
	e.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-e.notify:
			e.mu.Lock()
			grew, done := len(e.data) > start, e.done
			extra := string(e.data[start:])
			e.mu.Unlock()
			if grew || done {
				return false, extra
			}
		case <-timer.C:
			return true, ""
		}
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func clientConfig(d *Device, user, password string) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.FixedHostKey(d.HostKey()),
		Timeout:         wait,
	}
}

// sshShell logs in and opens an interactive shell with a terminal.
func sshShell(t *testing.T, d *Device) (*ssh.Client, io.Writer, *expecter) {
	t.Helper()
	client, err := ssh.Dial("tcp", d.SSHAddr(), clientConfig(d, d.Username(), d.Password()))
	if err != nil {
		t.Fatalf("ssh dial %s: %v", d.Platform(), err)
	}
	t.Cleanup(func() { client.Close() })
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("vt100", 24, 80, ssh.TerminalModes{ssh.ECHO: 1}); err != nil {
		t.Fatal(err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return client, stdin, newExpecter(stdout)
}

// dialTelnet opens a raw TCP connection to the telnet port.
func dialTelnet(t *testing.T, d *Device) (net.Conn, *expecter) {
	t.Helper()
	c, err := net.DialTimeout("tcp", d.TelnetAddr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, newExpecter(c)
}

func send(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatalf("send %q: %v", s, err)
	}
}
