//go:build unix

package datadir

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

func setUmask() { syscall.Umask(Umask) }

// sudoAs is how the message tells the operator to rerun the command as
// uid: `sudo -u NAME <the command line>`.
func sudoAs(uid int) string {
	who := "'#" + strconv.Itoa(uid) + "'"
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		who = u.Username
	}
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		args[i] = a
	}
	return "sudo -u " + who + " " + strings.Join(args, " ")
}

// userName is the login name of uid, or "uid N" when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(uid)
}

// checkOwners refuses a data directory in which backupd's files belong to
// someone other than the user the process runs as (root excepted): such a
// file cannot be opened or made private, and the usual cause (a command
// once run as root) has a one-line fix worth saying.
func checkOwners(dataDir string, list []string) error {
	euid := os.Geteuid()
	if euid == 0 {
		return nil
	}
	var foreign []string
	for _, p := range list {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) == euid {
			continue
		}
		if len(foreign) == 5 {
			foreign = append(foreign, "…")
			break
		}
		foreign = append(foreign, fmt.Sprintf("%s (owned by %s)", p, userName(int(st.Uid))))
	}
	if len(foreign) == 0 {
		return nil
	}
	me := strconv.Itoa(euid)
	if u, err := user.LookupId(me); err == nil {
		me = u.Username
	}
	return fmt.Errorf("files in the data directory %s do not belong to user %s, who runs backupd: %s; give them back with: sudo chown -R %s: %s",
		dataDir, me, strings.Join(foreign, ", "), me, dataDir)
}

// CheckOwner refuses unless the process runs as the owner of dataDir
// (root, which Prepare switches to the owner, then runs as the owner
// too): what only the appliance's own account may do.
func CheckOwner(dataDir string) error {
	where, fi, err := ownerOf(dataDir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("data directory %s: no owner", where)
	}
	if me := os.Geteuid(); uint32(me) != st.Uid {
		return fmt.Errorf("only the owner of the data directory %s (user %s) may do this; this runs as user %s",
			where, userName(int(st.Uid)), userName(me))
	}
	return nil
}
