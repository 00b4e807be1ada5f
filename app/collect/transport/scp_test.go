package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// scpFile is the file the test device hands out; secretLine must never
// appear in an error.
const (
	secretLine = "AccessControl1Community=n0t-in-errors"
	scpFile    = "; generated\n[NetworkSNMP]\n" + secretLine + "\n"
)

// scpDevice answers "scp -f <path>" exec requests with the SCP source
// protocol, the way OpenSSH's scp does, per path: "config.ini" is served,
// "big.ini" announces 1 MiB, "hang.ini" stops after the header, "drop.ini"
// hangs up mid-file, "long.ini" sends more than it announced, "shell.ini"
// answers like a shell that has no scp, "dir" is a directory; any other
// path is refused with a \x01 message and status 1.
func scpDevice(s *tcpServer, sc *ssh.ServerConn, cmd string, ch ssh.Channel) (uint32, bool) {
	path, ok := strings.CutPrefix(cmd, "scp -f ")
	if !ok {
		ch.Stderr().Write([]byte("unknown command\n"))
		return 127, true
	}
	r := bufio.NewReader(ch)
	ack := func() bool { b, err := r.ReadByte(); return err == nil && b == 0 }
	if !ack() {
		return 1, true
	}
	switch path {
	case "config.ini", "hang.ini", "drop.ini", "long.ini":
		fmt.Fprintf(ch, "C0644 %d %s\n", len(scpFile), path)
		if !ack() {
			return 1, true
		}
		switch path {
		case "hang.ini":
			ch.Write([]byte(scpFile[:10]))
			<-s.done
			return 0, false
		case "drop.ini":
			ch.Write([]byte(scpFile[:10]))
			sc.Close()
			return 0, false
		case "long.ini":
			ch.Write([]byte(scpFile + "[extra]\n"))
			return 0, true
		}
		ch.Write([]byte(scpFile + "\x00"))
		if !ack() {
			return 1, true
		}
		return 0, true
	case "big.ini":
		fmt.Fprintf(ch, "C0644 %d %s\n", 1<<20, path)
		ack()
		return 1, true
	case "shell.ini":
		ch.Write([]byte(secretLine + "\r\napc>"))
		return 0, true
	case "dir":
		fmt.Fprintf(ch, "D0755 0 %s\n", path)
		return 1, true
	default:
		fmt.Fprintf(ch, "\x01scp: %s: No such file or directory\n", path)
		return 1, true
	}
}

func fetchGuarded(t *testing.T, ctx context.Context, c *ExecClient, path string, max int) ([]byte, error) {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	done := make(chan res, 1)
	go func() { b, err := c.FetchSCP(ctx, path, max); done <- res{b, err} }()
	select {
	case r := <-done:
		if r.err != nil && strings.Contains(r.err.Error(), secretLine) {
			t.Errorf("%s: the error quotes the file: %v", path, r.err)
		}
		return r.b, r.err
	case <-time.After(hangGuard):
		t.Fatalf("FetchSCP(%q) did not return", path)
		return nil, nil
	}
}

// TestSCPFetch copies a file over SCP on an exec login, and the same
// connection serves more requests after it.
func TestSCPFetch(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), scpDevice)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		got, err := fetchGuarded(t, context.Background(), c, "config.ini", 1<<20)
		if err != nil || string(got) != scpFile {
			t.Fatalf("fetch %d: %q, %v", i, got, err)
		}
	}
	// Exactly at the limit is allowed.
	if got, err := fetchGuarded(t, context.Background(), c, "config.ini", len(scpFile)); err != nil || string(got) != scpFile {
		t.Errorf("at the limit: %q, %v", got, err)
	}
}

// TestSCPFetchFailures: every failure is a clear error, bounded in time,
// that never quotes the file.
func TestSCPFetchFailures(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), scpDevice)
	for _, tc := range []struct {
		path    string
		max     int
		timeout time.Duration
		check   func(error) bool
		want    string
	}{
		{path: "missing.ini", check: func(err error) bool { var e *SCPError; return errors.As(err, &e) },
			want: "the device refused the file: scp: missing.ini: No such file or directory"},
		{path: "big.ini", max: 64 << 10, check: func(err error) bool { return errors.Is(err, ErrFileTooLarge) },
			want: "the device announced 1048576 bytes, the limit is 65536"},
		{path: "config.ini", max: len(scpFile) - 1, check: func(err error) bool { return errors.Is(err, ErrFileTooLarge) }},
		{path: "hang.ini", timeout: 300 * time.Millisecond, check: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{path: "drop.ini", check: func(err error) bool { return errors.Is(err, ErrConnectionLost) }, want: "the file ended after 10 of"},
		{path: "long.ini", check: func(err error) bool { return errors.Is(err, ErrSCPProtocol) }, want: "longer than"},
		{path: "shell.ini", check: func(err error) bool { return errors.Is(err, ErrSCPProtocol) }},
		{path: "dir", check: func(err error) bool { return errors.Is(err, ErrSCPProtocol) }, want: "directory"},
		{path: "a b", check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
		{path: "config.ini\nreboot", check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
		{path: `"config.ini"`, check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
		{path: "x;reboot", check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
		{path: "-t", check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
		{path: "", check: func(err error) bool { return errors.Is(err, ErrSCPPath) }},
	} {
		t.Run(strings.ReplaceAll(tc.path, "\n", `\n`), func(t *testing.T) {
			c, _, err := dialExec(t, srv, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			max := tc.max
			if max == 0 {
				max = 1 << 20
			}
			got, err := fetchGuarded(t, ctx, c, tc.path, max)
			if err == nil || !tc.check(err) || got != nil {
				t.Fatalf("got %d bytes, err %v", len(got), err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// A timed-out fetch closes the connection: the device stalled and is not
// asked again.
func TestSCPFetchTimeoutClosesConnection(t *testing.T) {
	srv := startExecServer(t, passwordConfig("pw"), scpDevice)
	c, _, err := dialExec(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := fetchGuarded(t, ctx, c, "hang.ini", 1<<20); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if _, err := fetchGuarded(t, context.Background(), c, "config.ini", 1<<20); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("after a timeout: err %v, want ErrConnectionLost", err)
	}
}

// An interactive shell's connection fetches a file on a second session
// channel and the shell goes on working.
func TestSCPFetchBesideShell(t *testing.T) {
	cfg := passwordConfig("pw")
	srv := startTCPServer(t, func(s *tcpServer, c net.Conn) {
		serveSSH(c, cfg, func(sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request, wg *sync.WaitGroup) {
			for req := range reqs {
				switch req.Type {
				case "pty-req":
					req.Reply(true, nil)
				case "shell":
					req.Reply(true, nil)
					wg.Add(1)
					go func() { defer wg.Done(); defer ch.Close(); echoShell(s, ch) }()
				case "exec":
					var p struct{ Command string }
					ssh.Unmarshal(req.Payload, &p)
					req.Reply(true, nil)
					status, _ := scpDevice(s, sc, p.Command, ch)
					ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
					ch.Close()
				default:
					req.Reply(false, nil)
				}
			}
		})
	})
	o := srv.options()
	o.Username, o.Password = "admin", "pw"
	conn, _, err := dialSSHGuarded(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	readUntilT(t, conn, `router# $`)
	f, ok := conn.(interface {
		FetchSCP(ctx context.Context, path string, max int) ([]byte, error)
	})
	if !ok {
		t.Fatal("the SSH shell offers no FetchSCP")
	}
	got, err := f.FetchSCP(context.Background(), "config.ini", 1<<20)
	if err != nil || string(got) != scpFile {
		t.Fatalf("fetch: %q, %v", got, err)
	}
	if _, err := conn.Write([]byte("still here\n")); err != nil {
		t.Fatal(err)
	}
	readUntilT(t, conn, `still here`)
}
