package collect

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// modeRouter is a scripted IOS-like command line behind a real SSH
// server on 127.0.0.1, for what the simulator does not do: configuration
// sub-modes with their own prompts, a question before a configuration is
// replaced, a question asked without end, and a block of text typed
// after "load override terminal" (ended by Ctrl-D), which it answers
// with "error: syntax error" when the block holds a line "bogus".
type modeRouter struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	got  []string // lines received outside blocks, answers as "answer:…"
	conn []net.Conn
}

const (
	routerUser     = "admin"
	routerPassword = "R0uter-Secr3t"
	replaceNotice  = "This will apply all necessary additions and deletions\r\n" +
		"to replace the current running configuration with the\r\n" +
		"contents of the specified configuration file, which is\r\n" +
		"assumed to be a complete configuration, not a partial\r\n" +
		"configuration. Enter Y if you are sure you want to proceed. ? [no]: "
)

func startModeRouter(t *testing.T) *modeRouter {
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
		if m.User() == routerUser && string(pw) == routerPassword {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &modeRouter{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conn = append(r.conn, c)
			r.mu.Unlock()
			r.wg.Add(1)
			go func() { defer r.wg.Done(); defer c.Close(); r.serveConn(c, cfg) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for _, c := range r.conn {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
	return r
}

func (r *modeRouter) target(t *testing.T) Target {
	t.Helper()
	host, port, _ := net.SplitHostPort(r.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return Target{Platform: "cisco_ios", Host: host, Port: p, Username: routerUser, Password: routerPassword,
		Timeouts: Timeouts{Connect: 5 * time.Second, Login: 10 * time.Second, Command: 10 * time.Second}}
}

func (r *modeRouter) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func (r *modeRouter) serveConn(c net.Conn, cfg *ssh.ServerConfig) {
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	r.wg.Add(1)
	go func() { defer r.wg.Done(); ssh.DiscardRequests(reqs) }()
	for nch := range chans {
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		for req := range creqs {
			ok := req.Type == "pty-req" || req.Type == "shell"
			req.Reply(ok, nil)
			if req.Type == "shell" {
				r.shell(ch)
				ch.Close()
				return
			}
		}
	}
}

// shell runs the command line on one channel until the client leaves.
func (r *modeRouter) shell(ch ssh.Channel) {
	in := bufio.NewReader(ch)
	host, mode := "R1", ""
	write := func(s string) { _, _ = io.WriteString(ch, s) }
	line := func() (string, bool) {
		l, err := in.ReadString('\n')
		if err != nil {
			return "", false
		}
		l = strings.TrimRight(l, "\r\n")
		write(l + "\r\n")
		return l, true
	}
	answer := func() (string, bool) {
		a, ok := line()
		if ok {
			r.mu.Lock()
			r.got = append(r.got, "answer:"+a)
			r.mu.Unlock()
		}
		return a, ok
	}
	prompt := func() string {
		if mode == "" {
			return host + "#"
		}
		return host + "(" + mode + ")#"
	}
	write("\r\n" + prompt())
	for range 100000 {
		cmd, ok := line()
		if !ok {
			return
		}
		r.mu.Lock()
		r.got = append(r.got, cmd)
		r.mu.Unlock()
		switch f := strings.Fields(cmd); {
		case len(f) == 0, cmd == "terminal length 0", cmd == "terminal width 511":
		case cmd == "configure terminal":
			mode = "config"
			write("Enter configuration commands, one per line.  End with CNTL/Z.\r\n")
		case cmd == "end", cmd == "exit" && mode == "config":
			mode = ""
		case cmd == "exit" && mode != "":
			mode = "config"
		case f[0] == "interface" && mode != "":
			mode = "config-if"
		case f[0] == "router" && mode != "":
			mode = "config-router"
		case strings.HasPrefix(cmd, "configure replace "):
			write(replaceNotice)
			a, ok := answer()
			if !ok {
				return
			}
			if a == "Y" {
				write("Total number of passes: 1\r\nRollback Done\r\n\r\n")
			}
		case cmd == "nag":
			for range 10 {
				write("Proceed with reload? [confirm]")
				if _, ok := answer(); !ok {
					return
				}
			}
		case cmd == "load override terminal":
			write("[Type ^D at a new line to end input]\r\n")
			bogus := false
			for {
				c, err := in.ReadByte()
				if err != nil {
					return
				}
				if c == 0x04 {
					break
				}
				_ = in.UnreadByte()
				l, ok := line()
				if !ok {
					return
				}
				bogus = bogus || l == "bogus"
			}
			if bogus {
				write("error: syntax error: bogus\r\nload complete (1 errors)\r\n")
			} else {
				write("load complete\r\n")
			}
		case mode == "":
			write("                ^\r\n% Invalid input detected at '^' marker.\r\n\r\n")
		}
		write(prompt())
	}
}
