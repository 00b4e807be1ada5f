//go:build linux

package testfrr

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const supported = true

// sysProcAttr makes a started process die with the test (SIGKILL when
// the thread that started it ends, which for a test binary means the
// binary) and, with ownNetwork, puts it in a network namespace of its
// own: there only a down loopback exists, so bgpd's connection attempts
// to its configured neighbours fail at once with "network unreachable"
// and never leave the machine. Its vty socket is a path in the file
// system, which namespaces do not split, so vtysh still reaches it.
func sysProcAttr(ownNetwork bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if ownNetwork {
		a.Cloneflags = syscall.CLONE_NEWNET
	}
	return a
}

// proc names one process across time: a pid and the start time the
// kernel gave it, so that a pid used again by another process is not
// mistaken for it.
type proc struct {
	pid   int
	start string
}

// procStat returns the parent pid, the state letter and the start time
// (in clock ticks since boot) of pid, from /proc/PID/stat.
func procStat(pid int) (ppid int, state byte, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, "", false
	}
	// "pid (comm) state ppid …": comm may hold spaces and parentheses,
	// so the fields are counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, "", false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field N is f[N-3]; starttime is 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, "", false
	}
	return ppid, f[0][0], f[19], true
}

// pids lists the processes running now.
func pids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// descendants returns the processes below pid (children, theirs, …).
// sshd's per-connection children call setsid(2), so a process group
// does not hold them; their parent links do, until sshd itself ends.
func descendants(pid int) []proc {
	children := map[int][]proc{}
	for _, p := range pids() {
		if ppid, state, start, ok := procStat(p); ok && state != 'Z' {
			children[ppid] = append(children[ppid], proc{pid: p, start: start})
		}
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 && len(out) < 10000 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// leaves returns the processes of ps that are no parent of another.
func leaves(ps []proc) []proc {
	parents := map[int]bool{}
	for _, p := range ps {
		if ppid, _, _, ok := procStat(p.pid); ok {
			parents[ppid] = true
		}
	}
	var out []proc
	for _, p := range ps {
		if !parents[p.pid] {
			out = append(out, p)
		}
	}
	return out
}

// alive reports whether p still runs (a zombie does not).
func (p proc) alive() bool {
	_, state, start, ok := procStat(p.pid)
	return ok && start == p.start && state != 'Z'
}

func (p proc) signal(sig syscall.Signal) {
	if p.alive() {
		_ = syscall.Kill(p.pid, sig)
	}
}

// mentioning returns the live processes whose command line holds s:
// after a router stops, none may name its directory.
func mentioning(s string) []proc {
	var out []proc
	for _, pid := range pids() {
		if pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		if _, state, start, ok := procStat(pid); ok && state != 'Z' {
			out = append(out, proc{pid: pid, start: start})
		}
	}
	return out
}

// describe is "pid: command line" for a failure message.
func (p proc) describe() string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
	return strconv.Itoa(p.pid) + ": " + strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// crashDir is where FRR's libfrr keeps a daemon's crash log while it
// runs (lib/zlog.c, TMPBASEDIR "/var/tmp/frr"); a clean exit removes it,
// a SIGKILL leaves it behind.
func crashDir(daemon string, pid int) string {
	return filepath.Join("/var/tmp/frr", daemon+"."+strconv.Itoa(pid))
}
