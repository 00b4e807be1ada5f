package transport

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// startExecServer runs an SSH server whose session channels answer exec
// requests with run, which writes the output and returns whether (and
// which) exit status to send.
func startExecServer(t *testing.T, cfg *ssh.ServerConfig, run func(s *tcpServer, sc *ssh.ServerConn, cmd string, ch ssh.Channel) (status uint32, send bool)) *tcpServer {
	t.Helper()
	return startTCPServer(t, func(s *tcpServer, c net.Conn) {
		serveSSH(c, cfg, func(sc *ssh.ServerConn, ch ssh.Channel, chReqs <-chan *ssh.Request, _ *sync.WaitGroup) {
			for req := range chReqs {
				var p struct{ Command string }
				if req.Type != "exec" || ssh.Unmarshal(req.Payload, &p) != nil {
					req.Reply(false, nil)
					continue
				}
				req.Reply(true, nil)
				status, send := run(s, sc, p.Command, ch)
				if send {
					ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
				}
				ch.Close()
			}
		})
	})
}

// execDevice answers like a Junos box: configuration on stdout, errors on
// stderr with status 1; "hang" never ends, "flood" never stops, "drop"
// hangs up mid-output, "nostatus" ends without an exit status.
func execDevice(s *tcpServer, sc *ssh.ServerConn, cmd string, ch ssh.Channel) (uint32, bool) {
	switch cmd {
	case "show configuration":
		ch.Write([]byte("system {\n    host-name srx;\n}\n"))
		return 0, true
	case "hang":
		ch.Write([]byte("partial\n"))
		<-s.done
		return 0, false
	case "flood":
		line := []byte(strings.Repeat("x", 1000) + "\n")
		for {
			if _, err := ch.Write(line); err != nil {
				return 0, false
			}
		}
	case "drop":
		ch.Write([]byte("interfaces {\n"))
		sc.Close()
		return 0, false
	case "nostatus":
		ch.Write([]byte("done\n"))
		return 0, false
	default:
		ch.Stderr().Write([]byte("error: syntax error: " + cmd + "\n"))
		return 1, true
	}
}

func execGuarded(t *testing.T, c *ExecClient, ctx context.Context, cmd string, out *bytes.Buffer) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Exec(ctx, cmd, out) }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		t.Fatalf("Exec(%q) did not return", cmd)
		return nil
	}
}

func dialExec(t *testing.T, srv *tcpServer, pinned []byte) (*ExecClient, []byte, error) {
	t.Helper()
	o := srv.options()
	o.Username, o.Password, o.PinnedHostKey = "admin", "pw", pinned
	c, key, err := DialSSHExec(context.Background(), o)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, key, err
}

func TestSSHExec(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), execDevice)
	c, key, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, ed25519HostKey().PublicKey().Marshal()) {
		t.Error("returned host key is not the server's")
	}
	ctx := context.Background()

	var out bytes.Buffer
	if err := execGuarded(t, c, ctx, "show configuration", &out); err != nil || out.String() != "system {\n    host-name srx;\n}\n" {
		t.Fatalf("show configuration: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := execGuarded(t, c, ctx, "show nonsense", &out); err != nil || out.String() != "error: syntax error: show nonsense\n" {
		t.Errorf("a failing command: %q, %v; want its stderr and no error", out.String(), err)
	}
	out.Reset()
	if err := execGuarded(t, c, ctx, "nostatus", &out); err != nil || out.String() != "done\n" {
		t.Errorf("no exit status on a live connection: %q, %v", out.String(), err)
	}

	// A write error stops the command and comes back as is.
	errFull := errors.New("full")
	w := &limitWriter{max: 10_000, err: errFull}
	done := make(chan error, 1)
	go func() { done <- c.Exec(ctx, "flood", w) }()
	select {
	case err := <-done:
		if !errors.Is(err, errFull) {
			t.Errorf("flood: err = %v, want the writer's error", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("a failing writer did not stop the command")
	}
	out.Reset()
	if err := execGuarded(t, c, ctx, "show configuration", &out); err != nil {
		t.Errorf("the connection did not survive a stopped command: %v", err)
	}
}

type limitWriter struct {
	n, max int
	err    error
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.max {
		return 0, w.err
	}
	w.n += len(p)
	return len(p), nil
}

func TestSSHExecTimeout(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), execDevice)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	if err := execGuarded(t, c, ctx, "hang", &out); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if out.String() != "partial\n" {
		t.Errorf("output before the timeout: %q", out.String())
	}
	if err := execGuarded(t, c, context.Background(), "show configuration", &out); err == nil {
		t.Error("the connection was kept after a command timed out")
	}
}

func TestSSHExecConnectionDropped(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), execDevice)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := execGuarded(t, c, context.Background(), "drop", &out); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("err = %v, want ErrConnectionLost", err)
	}
	if err := execGuarded(t, c, context.Background(), "show configuration", &out); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("next command: err = %v, want ErrConnectionLost", err)
	}
}

func TestSSHExecHostKeyAndAuth(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), execDevice)
	other := newEd25519Signer().PublicKey().Marshal()
	_, presented, err := dialExec(t, srv, other)
	if !errors.Is(err, ErrHostKeyChanged) {
		t.Fatalf("err = %v, want ErrHostKeyChanged", err)
	}
	if !bytes.Equal(presented, ed25519HostKey().PublicKey().Marshal()) {
		t.Error("the presented key is not returned with ErrHostKeyChanged")
	}
	// DialSSH returns it the same way.
	o := srv.options()
	o.Username, o.Password, o.PinnedHostKey = "admin", "pw", other
	if _, presented, err := DialSSH(context.Background(), o); !errors.Is(err, ErrHostKeyChanged) || !bytes.Equal(presented, ed25519HostKey().PublicKey().Marshal()) {
		t.Errorf("DialSSH: err = %v, presented key returned %v", err, presented != nil)
	}

	o.PinnedHostKey, o.Password = nil, "wrong-Pa55"
	if _, _, err := DialSSHExec(context.Background(), o); !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), o.Password) {
		t.Errorf("wrong password: err = %v, want ErrAuth without the password", err)
	}
}

func TestSSHExecNoGoroutineLeaks(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), execDevice)
	base := runtime.NumGoroutine()
	for range 3 {
		c, _, err := dialExec(t, srv, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		execGuarded(t, c, context.Background(), "show configuration", &out)
		if err := c.Exec(context.Background(), "flood", &limitWriter{max: 5000, err: errors.New("full")}); err == nil {
			t.Fatal("flood: no error")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		execGuarded(t, c, ctx, "hang", &out)
		cancel()
		c.Close()
	}
	srv.stop()
	deadline := time.Now().Add(hangGuard)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		var sb strings.Builder
		pprof.Lookup("goroutine").WriteTo(&sb, 1)
		t.Fatalf("%d goroutines, %d before:\n%s", n, base, sb.String())
	}
}
