//go:build !(linux || darwin || freebsd)

package metrics

// diskSpace is not measured on this system; the filesystem gauges are
// left out.
func diskSpace(string) (avail, size uint64, ok bool) { return 0, 0, false }
