package testfrr

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// console is an interactive SSH session with a router: a PTY, a shell
// (the router's vtysh, by ForceCommand) and everything it printed, which
// expect reads piece by piece. It keeps a log of what was sent and
// received, in order, for the transcript.
type console struct {
	t       testing.TB
	client  *ssh.Client
	session *ssh.Session
	stdin   io.WriteCloser

	mu      sync.Mutex
	out     []byte // everything received so far
	read    int    // how much of out expect has consumed
	log     []step // sent and received pieces, for the transcript
	changed chan struct{}
	eof     chan struct{} // closed when the output ends
	wg      sync.WaitGroup
}

// step is one piece of the dialogue: sent by the client or received.
type step struct {
	sent bool
	text string
}

// openConsole logs in to r and starts a shell on a PTY of the given
// terminal type, as backupd's SSH transport asks for one (vt100, 511
// columns, 0 rows by default).
func openConsole(t testing.TB, r *Router, term string, rows, cols int) *console {
	t.Helper()
	client, err := r.dial(5 * time.Second)
	if err != nil {
		t.Fatalf("ssh %s: %v", r.Addr, err)
	}
	c := &console{t: t, client: client, changed: make(chan struct{}, 1), eof: make(chan struct{})}
	t.Cleanup(c.close)
	if c.session, err = client.NewSession(); err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = c.session.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.session.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	modes := ssh.TerminalModes{ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := c.session.RequestPty(term, rows, cols, modes); err != nil {
		t.Fatal(err)
	}
	if err := c.session.Shell(); err != nil {
		t.Fatal(err)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(c.eof)
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				c.mu.Lock()
				c.out = append(c.out, buf[:n]...)
				c.mu.Unlock()
				select {
				case c.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// close ends the session and the connection and waits for the reader.
func (c *console) close() {
	_ = c.session.Close()
	_ = c.client.Close()
	c.wg.Wait()
}

// expect waits, at most 10 s, until the output not read yet matches re,
// and returns it up to the end of the match.
func (c *console) expect(re *regexp.Regexp) string {
	c.t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		rest := c.out[c.read:]
		if loc := re.FindIndex(rest); loc != nil {
			got := string(rest[:loc[1]])
			c.read += loc[1]
			c.log = append(c.log, step{text: got})
			c.mu.Unlock()
			return got
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-c.eof:
			// One more look: the last bytes may have come with EOF.
			c.mu.Lock()
			matched := re.Match(c.out[c.read:])
			c.mu.Unlock()
			if !matched {
				c.t.Fatalf("session ended before %q; unread: %q", re, c.unread())
			}
		case <-deadline.C:
			c.t.Fatalf("no %q within 10 s; unread: %q", re, c.unread())
		}
	}
}

func (c *console) unread() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.out[c.read:])
}

// send types line and the end of line backupd sends ("\n").
func (c *console) send(line string) {
	c.t.Helper()
	c.mu.Lock()
	c.log = append(c.log, step{sent: true, text: line + "\n"})
	c.mu.Unlock()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("send %q: %v", line, err)
	}
}

// cmd sends line and returns what came back up to the next prompt that
// matches prompt.
func (c *console) cmd(line string, prompt *regexp.Regexp) string {
	c.t.Helper()
	c.send(line)
	return c.expect(prompt)
}

// waitEOF waits, at most 10 s, for the session to end and returns what
// came after the last expect.
func (c *console) waitEOF() string {
	c.t.Helper()
	select {
	case <-c.eof:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("the session did not end within 10 s; unread: %q", c.unread())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rest := string(c.out[c.read:])
	c.read = len(c.out)
	if rest != "" {
		c.log = append(c.log, step{text: rest})
	}
	return rest
}

// transcript renders the log: every line of a received piece on a line
// of its own as a Go string ("<" in front), with its "\r\n" and any
// escape sequence visible, every sent piece likewise (">"). dir, when
// not empty, becomes "$DIR" (the router's directory changes per run).
func (c *console) transcript(dir string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	for _, s := range c.log {
		mark := "< "
		if s.sent {
			mark = "> "
		}
		text := s.text
		if dir != "" {
			text = strings.ReplaceAll(text, dir, "$DIR")
		}
		for _, line := range strings.SplitAfter(text, "\n") {
			if line != "" {
				b.WriteString(mark + strconv.Quote(line) + "\n")
			}
		}
	}
	return b.Bytes()
}
