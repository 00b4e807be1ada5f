//go:build !linux

package testfrr

import "syscall"

// FRR and the namespaces the harness uses are Linux's: elsewhere Start
// skips.
const supported = false

type proc struct{ pid int }

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }
func descendants(int) []proc                { return nil }
func leaves([]proc) []proc                  { return nil }
func mentioning(string) []proc              { return nil }
func (proc) alive() bool                    { return false }
func (proc) signal(syscall.Signal)          {}
func (proc) describe() string               { return "" }
func crashDir(string, int) string           { return "" }
