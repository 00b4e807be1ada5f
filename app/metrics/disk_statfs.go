//go:build linux || darwin || freebsd

package metrics

import "syscall"

// diskSpace is the space free for an unprivileged user and the size of
// the filesystem holding dir.
func diskSpace(dir string) (avail, size uint64, ok bool) {
	if dir == "" {
		return 0, 0, false
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize), true
}
