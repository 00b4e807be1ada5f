//go:build !linux

package engine

import "syscall"

// pgSocketControl sets nothing where TCP_USER_TIMEOUT is Linux's: the
// keepalives bound a silent peer.
func pgSocketControl(string, string, syscall.RawConn) error { return nil }
