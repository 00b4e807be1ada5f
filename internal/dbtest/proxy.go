package dbtest

import (
	"net"
	"sync"
	"testing"
)

// Proxy relays TCP connections on 127.0.0.1 to a target (a PostgreSQL
// server) and can cut them: while cut, nothing passes either way and
// nothing is closed, as in a network partition or with a server that
// hangs. The kernel still acknowledges what clients send, so no error
// tells them; only their own deadlines do. Connections opened meanwhile
// are accepted and held. Heal lets everything held go on, closes
// included, as a partition that ends does.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	healed chan struct{} // closed while the proxy relays
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

// NewProxy starts a proxy to target, closed when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, healed: make(chan struct{})}
	close(p.healed)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut stops every connection where it is.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default: // already cut
	}
}

// Heal lets the connections go on.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
}

// pass waits while the proxy is cut; false once it closed.
func (p *Proxy) pass() bool {
	p.mu.Lock()
	healed, closed := p.healed, p.closed
	p.mu.Unlock()
	if closed {
		return false
	}
	<-healed
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if !p.pass() {
				c.Close()
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			if !p.track(s) {
				c.Close()
				return
			}
			p.wg.Add(2)
			go p.pipe(c, s)
			go p.pipe(s, c)
		}()
	}
}

// pipe copies from to to; what it read while cut (an end included) goes
// on once healed.
func (p *Proxy) pipe(from, to net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if !p.pass() {
			return
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				from.Close()
				return
			}
		}
		if err != nil {
			to.Close()
			from.Close()
			return
		}
	}
}

// close stops the proxy and closes every connection.
func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}
