package testkit

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// LoginTrap is what an attacker points a device at: a telnet-style
// listener on 127.0.0.1 that asks for a username and a password, as a
// router's telnet login does, and records every byte it receives. Tests
// assert that a device's credential never reaches it.
type LoginTrap struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	got  bytes.Buffer
	conn int
}

// NewLoginTrap starts a trap, closed when the test ends.
func NewLoginTrap(t testing.TB) *LoginTrap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &LoginTrap{ln: ln}
	tr.wg.Add(1)
	go tr.serve()
	t.Cleanup(tr.Close)
	return tr
}

// Port is the port the trap listens on (on 127.0.0.1).
func (tr *LoginTrap) Port() int { return tr.ln.Addr().(*net.TCPAddr).Port }

// Addr is the trap's host:port.
func (tr *LoginTrap) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(tr.Port())) }

// Received is every byte any connection sent, in order of arrival.
func (tr *LoginTrap) Received() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.got.String()
}

// Connections is how many connections the trap accepted.
func (tr *LoginTrap) Connections() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.conn
}

// Close stops the trap and waits for its connections to end.
func (tr *LoginTrap) Close() {
	tr.ln.Close()
	tr.wg.Wait()
}

func (tr *LoginTrap) serve() {
	defer tr.wg.Done()
	for {
		c, err := tr.ln.Accept()
		if err != nil {
			return
		}
		tr.mu.Lock()
		tr.conn++
		tr.mu.Unlock()
		tr.wg.Add(1)
		go func() {
			defer tr.wg.Done()
			tr.login(c)
		}()
	}
}

// login plays a telnet login prompt: a username, then a password, each
// read up to a line end; then it closes. Every read is bounded in time.
func (tr *LoginTrap) login(c net.Conn) {
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	_ = c.SetDeadline(deadline)
	buf := make([]byte, 512)
	for _, prompt := range []string{"\r\nUser Access Verification\r\n\r\nUsername: ", "Password: "} {
		if _, err := c.Write([]byte(prompt)); err != nil {
			return
		}
		for range 64 { // at most 32 KiB per answer
			n, err := c.Read(buf)
			tr.mu.Lock()
			tr.got.Write(buf[:n])
			tr.mu.Unlock()
			if err != nil {
				return // closed, or the deadline passed
			}
			if bytes.ContainsAny(buf[:n], "\r\n") {
				break
			}
		}
	}
	_, _ = c.Write([]byte("\r\n% Authentication failed\r\n"))
}
