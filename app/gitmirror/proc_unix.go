//go:build unix

package gitmirror

import (
	"os"
	"syscall"
)

// sysProcAttr starts git in its own process group, so that a timeout
// also ends the ssh it started.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func killTree(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}
