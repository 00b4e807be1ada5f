package testfrr

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stopWait bounds how long a process has, after SIGTERM, before SIGKILL.
const stopWait = 5 * time.Second

// daemon is one process the harness started and waits for.
type daemon struct {
	name   string
	cmd    *exec.Cmd
	output *capped // its stdout and stderr
	exited chan struct{}
	err    error // from Wait, once exited is closed
}

// startDaemon starts name (a path and its arguments) with an empty
// environment but PATH, and a goroutine that waits for it: exited closes
// when it ends, so that readiness loops can notice an early death and
// stop can bound its wait.
func startDaemon(name string, ownNetwork bool, args ...string) (*daemon, error) {
	d := &daemon{name: name, output: &capped{max: 64 << 10}, exited: make(chan struct{})}
	d.cmd = exec.Command(args[0], args[1:]...)
	d.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	d.cmd.Stdout, d.cmd.Stderr = d.output, d.output
	d.cmd.SysProcAttr = sysProcAttr(ownNetwork)
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.err = d.cmd.Wait(); close(d.exited) }()
	return d, nil
}

func (d *daemon) done() bool {
	select {
	case <-d.exited:
		return true
	default:
		return false
	}
}

// stop ends the processes below d (an sshd's sessions), then d:
// SIGTERM, a bounded wait, then SIGKILL to whatever is left. The
// processes below go deepest first (a session's vtysh, then the sshd of
// its connection), so that each is reaped by its parent, still running,
// where signalling all at once leaves zombies for init. It reports
// processes that survive even SIGKILL.
func (d *daemon) stop(t testing.TB) {
	t.Helper()
	below := descendants(d.cmd.Process.Pid)
	for range 10 { // sshd's sessions are two deep
		ls := leaves(living(below))
		if len(ls) == 0 {
			break
		}
		for _, p := range ls {
			p.signal(syscall.SIGTERM)
		}
		if !waitUntil(stopWait, func() bool { return !anyAlive(ls) }) {
			break
		}
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if waitUntil(stopWait, func() bool { return d.done() && !anyAlive(below) }) {
		return
	}
	for _, p := range below {
		p.signal(syscall.SIGKILL)
	}
	_ = d.cmd.Process.Kill()
	if !waitUntil(stopWait, func() bool { return d.done() && !anyAlive(below) }) {
		t.Errorf("testfrr: %s (pid %d) or a process it started survived SIGKILL", d.name, d.cmd.Process.Pid)
	}
}

func living(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// waitUntil polls cond every 10 ms for d at most.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for range 1000 {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func anyAlive(ps []proc) bool {
	for _, p := range ps {
		if p.alive() {
			return true
		}
	}
	return false
}

// capped keeps the first max bytes written to it and drops the rest: a
// daemon's output stays at hand for a failure message without growing
// without bound.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// tail returns the last n lines of the file at path, for a failure
// message (a daemon's log).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
