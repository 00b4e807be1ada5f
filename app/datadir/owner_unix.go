//go:build unix && !linux

package datadir

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"
)

// becomeOwner refuses to run as root on a data directory that belongs to
// another user: what root created there, the service could not open.
// (Linux switches to the owner instead.)
func becomeOwner(dataDir string, _ *slog.Logger) error {
	if os.Geteuid() != 0 {
		return nil
	}
	where, fi, err := ownerOf(dataDir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil
	}
	name := userName(int(st.Uid))
	return fmt.Errorf("data directory %s belongs to user %s; run as that user: %s", where, name, sudoAs(int(st.Uid)))
}
