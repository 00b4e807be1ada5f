package engine

import (
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pgSocketControl sets TCP_USER_TIMEOUT on a TCP connection to
// PostgreSQL: sent data unacknowledged for pgUserTimeout fails the
// connection. Where the option cannot be set the keepalives still bound a
// silent peer.
func pgSocketControl(network, _ string, rc syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") {
		return nil
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(pgUserTimeout/time.Millisecond))
	})
	return nil
}
