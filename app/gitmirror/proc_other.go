//go:build !unix

package gitmirror

import (
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killTree(p *os.Process) { _ = p.Kill() }
