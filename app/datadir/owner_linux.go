package datadir

import (
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// becomeOwner switches a process running as root to the user who owns the
// data directory (its groups, then its group, then the user itself, for
// every thread of the process), so that what the command creates there
// belongs to that user and the service can open it. Root on a directory
// of its own stays root.
func becomeOwner(dataDir string, log *slog.Logger) error {
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
	uid, gid := int(st.Uid), int(st.Gid)
	name := "uid " + strconv.Itoa(uid)
	groups := []int{gid}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		name = u.Username
		if g, err := strconv.Atoi(u.Gid); err == nil {
			gid = g
			groups = []int{gid}
		}
		if ids, err := u.GroupIds(); err == nil {
			for _, s := range ids {
				if g, err := strconv.Atoi(s); err == nil && g != gid {
					groups = append(groups, g)
				}
			}
		}
	}
	fail := func(err error) error {
		return fmt.Errorf("%s belongs to user %s; switching to that user failed (%w); run as that user: %s",
			where, name, err, sudoAs(uid))
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fail(err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fail(err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fail(err)
	}
	if os.Geteuid() != uid || os.Getuid() != uid || os.Getegid() != gid {
		return fail(fmt.Errorf("still uid %d gid %d", os.Geteuid(), os.Getegid()))
	}
	runningAs = name
	log.Info("running as the data directory's owner, not root", "data", where, "user", name, "uid", uid, "gid", gid)
	return nil
}
