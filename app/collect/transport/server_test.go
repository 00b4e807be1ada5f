package transport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// hangGuard is how long a test waits before declaring a dial or read hung.
// It is a safety net far above every bound under test, not a timing claim.
const hangGuard = 15 * time.Second

// tcpServer is a loopback listener whose handler goroutines, and the
// connections they hold, are all closed and waited for at test cleanup.
type tcpServer struct {
	ln       net.Listener
	done     chan struct{} // closed at cleanup: handlers must return
	accepted chan struct{} // one value per accepted connection
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func startTCPServer(t *testing.T, handle func(s *tcpServer, c net.Conn)) *tcpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &tcpServer{ln: ln, done: make(chan struct{}), accepted: make(chan struct{}, 64)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			select {
			case s.accepted <- struct{}{}:
			default:
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(s, c)
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *tcpServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *tcpServer) options() Options {
	host, port, _ := net.SplitHostPort(s.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return Options{Host: host, Port: p, ConnectTimeout: 5 * time.Second, LoginTimeout: 10 * time.Second}
}

// ptyRequest is the payload of an SSH "pty-req" (RFC 4254 §6.2).
type ptyRequest struct {
	Term          string
	Columns, Rows uint32
	Width, Height uint32
	Modes         string
}

// sshServer runs x/crypto's server side on a tcpServer: it accepts one
// session per connection, records the PTY request and runs shell on the
// channel once the client asks for a shell.
type sshServer struct {
	*tcpServer
	ptys chan ptyRequest
}

// serveSSH runs the server side of one SSH connection: the handshake
// (bounded by hangGuard), then session(...) on its own goroutine for every
// session channel, until the client leaves. Goroutines session starts go
// on wg, which serveSSH waits for.
func serveSSH(c net.Conn, cfg *ssh.ServerConfig, session func(sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request, wg *sync.WaitGroup)) {
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); ssh.DiscardRequests(reqs) }()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			session(sc, ch, chReqs, &wg)
		}()
	}
}

func startSSHServer(t *testing.T, cfg *ssh.ServerConfig, shell func(s *tcpServer, ch ssh.Channel)) *sshServer {
	t.Helper()
	ss := &sshServer{ptys: make(chan ptyRequest, 64)}
	ss.tcpServer = startTCPServer(t, func(s *tcpServer, c net.Conn) {
		serveSSH(c, cfg, func(_ *ssh.ServerConn, ch ssh.Channel, chReqs <-chan *ssh.Request, wg *sync.WaitGroup) {
			for req := range chReqs {
				switch req.Type {
				case "pty-req":
					var p ptyRequest
					ok := ssh.Unmarshal(req.Payload, &p) == nil
					if ok {
						ss.ptys <- p
					}
					req.Reply(ok, nil)
				case "shell":
					req.Reply(true, nil)
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer ch.Close()
						shell(s, ch)
					}()
				default:
					req.Reply(false, nil)
				}
			}
		})
	})
	return ss
}

// echoShell greets with a prompt and echoes whatever it receives.
func echoShell(_ *tcpServer, ch ssh.Channel) {
	if _, err := ch.Write([]byte("welcome\r\nrouter# ")); err != nil {
		return
	}
	buf := make([]byte, 1024)
	for {
		n, err := ch.Read(buf)
		if n > 0 {
			if _, werr := ch.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var (
	ed25519HostKey = sync.OnceValue(func() ssh.Signer { return newEd25519Signer() })
	rsaHostKey     = sync.OnceValue(func() ssh.Signer {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		s, err := ssh.NewSignerFromKey(k)
		if err != nil {
			panic(err)
		}
		return s
	})
)

func newEd25519Signer() ssh.Signer {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		panic(err)
	}
	return s
}

// passwordConfig is a server accepting user "admin" with password pw.
func passwordConfig(pw string, hostKeys ...ssh.Signer) *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(m ssh.ConnMetadata, p []byte) (*ssh.Permissions, error) {
			if m.User() == "admin" && string(p) == pw {
				return nil, nil
			}
			return nil, errors.New("denied")
		},
	}
	if len(hostKeys) == 0 {
		hostKeys = []ssh.Signer{ed25519HostKey()}
	}
	for _, k := range hostKeys {
		cfg.AddHostKey(k)
	}
	return cfg
}

// dialResult lets a test bound a dial with hangGuard.
type dialResult struct {
	conn    Conn
	hostKey []byte
	err     error
}

func dialSSHGuarded(t *testing.T, ctx context.Context, o Options) (Conn, []byte, error) {
	t.Helper()
	res := make(chan dialResult, 1)
	go func() {
		c, k, err := DialSSH(ctx, o)
		res <- dialResult{c, k, err}
	}()
	select {
	case r := <-res:
		if r.conn != nil {
			t.Cleanup(func() { r.conn.Close() })
		}
		return r.conn, r.hostKey, r.err
	case <-time.After(hangGuard):
		t.Fatal("DialSSH did not return: a stage is unbounded")
		return nil, nil, nil
	}
}

// readUntilT reads from c until re matches, bounded by a guard context.
func readUntilT(t *testing.T, c Conn, re string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	got, err := ReadUntil(ctx, c, regexp.MustCompile(re), 1<<20)
	if err != nil {
		t.Fatalf("reading until %q: %v (got %q)", re, err, got)
	}
	return string(got)
}
