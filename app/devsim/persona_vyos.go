package devsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// VyOS configuration mode: the writable side of the vyos personality
// (personality.go), whose configuration is the set commands `show
// configuration commands` prints.
//
// Written from the VyOS documentation (docs/cli.rst of
// vyos-documentation, branches sagitta and current: configure, set,
// delete, commit, save with "Saving configuration to
// '/config/config.boot'..." / "Done", exit with "Cannot exit:
// configuration modified." / "Use 'exit discard' to discard the changes
// and exit." and "Warning: configuration changes have not been saved.",
// compare, commit-confirm and confirm, rollback rebooting) and, for what
// VyOS 1.4 prints, from its source (vyos-1x python/vyos/config_mgmt.py
// and vyos/utils/io.py): the commit-confirm question "commit-confirm will
// automatically reboot in N minutes unless changes are confirmed. Proceed
// ? [Y/n]" (the documentation still shows 1.3's "Proceed? [confirm]"),
// "Initialized commit-confirm; N minutes to confirm before reboot",
// "Another confirm is pending", "commit-confirm canceled", "You should
// save previous commits before commit-confirm !", "Reboot timer stopped",
// "No confirm pending", "No changes between working and active
// configurations." and the reboot into the saved configuration when no
// confirm comes (1.4 has no reload action). The reboot broadcast follows
// the documentation's rollback example. From memory, no capture: "No
// configuration changes to commit", the set and delete errors.
//
// Approximations, for want of the VyOS schema: the configuration is the
// list of set commands in the order they were typed, a new one after the
// commands it shares most of its path with; a set command replaces one that
// differs only in its last word unless that node repeats (address,
// server, next-hop…); delete removes every command under the path;
// compare shows each changed command under an [edit …] line of its path
// less its last two words, ">" for a changed value; load and rollback are
// not modelled; the reboot drops every connection and the device is back
// at once.

// vyosEdit is a session's configuration mode: its working configuration.
type vyosEdit struct {
	working []string
}

const vyosDefaultConfirm = 10

// vyosMulti are nodes that hold many values.
var vyosMulti = map[string]bool{
	"address": true, "server": true, "name-server": true, "member": true, "next-hop": true,
	"allowed-ip": true, "network": true, "neighbor": true, "prefix": true, "domain-search": true,
}

// vyosWords splits a set command into words without the quotes VyOS puts
// around values, for comparing commands typed either way.
func vyosWords(cmd string) []string {
	w := splitWords(cmd)
	for i, x := range w {
		if len(x) >= 2 && (x[0] == '\'' && x[len(x)-1] == '\'' || x[0] == '"' && x[len(x)-1] == '"') {
			w[i] = x[1 : len(x)-1]
		}
	}
	return w
}

func vyosLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func vyosText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// vyosLine takes configuration mode and the command that enters it.
func (s *session) vyosLine(cmd string) (bool, error) {
	if s.config && s.vyos != nil {
		return true, s.vyosConfig(cmd)
	}
	if strings.Join(strings.Fields(cmd), " ") != "configure" {
		return false, nil
	}
	s.d.mu.Lock()
	s.vyos = &vyosEdit{working: vyosLines(s.d.runningLocked())}
	s.d.mu.Unlock()
	s.config = true
	return true, nil
}

func (s *session) vyosConfig(cmd string) error {
	w := splitWords(cmd)
	if len(w) == 0 || cmd == "\x1a" {
		return nil
	}
	switch w[0] {
	case "set":
		return s.vyosSet(cmd, w)
	case "delete":
		return s.vyosDelete(w)
	case "compare":
		return s.vyosCompare(len(w) == 2 && w[1] == "commands")
	case "commit":
		return s.vyosCommit(0)
	case "commit-confirm":
		minutes := vyosDefaultConfirm
		if len(w) > 1 {
			n, err := strconv.Atoi(w[1])
			if err != nil || n < 1 {
				return s.invalid(cmd)
			}
			minutes = n
		}
		return s.vyosCommit(minutes)
	case "confirm":
		return s.vyosConfirm()
	case "save":
		return s.vyosSave(w[1:])
	case "exit", "quit":
		if len(w) == 1 || len(w) == 2 && w[1] == "discard" {
			return s.vyosExit(len(w) == 2)
		}
	case "run":
		if len(w) > 1 {
			return s.exec(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd), "run")))
		}
	}
	return s.invalid(cmd)
}

func (s *session) vyosSet(cmd string, w []string) error {
	if len(w) < 2 {
		return s.plain("\n  Configuration path: [] is not valid\n  Set failed\n\n")
	}
	line := strings.Join(w, " ")
	if at, refused := refusedSet(s.d.opts.RejectLines, line); refused {
		path := vyosWords(line[:at])
		if len(path) > 0 {
			path = path[1:]
		}
		if rest := vyosWords(line[at:]); len(rest) > 0 {
			path = append(path, rest[0])
		}
		return s.plain(fmt.Sprintf("\n  Configuration path: [%s] is not valid\n  Set failed\n\n", strings.Join(path, " ")))
	}
	s.vyos.working = vyosSetLine(s.vyos.working, line)
	return nil
}

// vyosSetLine adds a set command to lines, replacing the one it gives a
// new value.
func vyosSetLine(lines []string, line string) []string {
	nw := vyosWords(line)
	for _, l := range lines {
		if slices.Equal(vyosWords(l), nw) {
			return lines
		}
	}
	if len(nw) >= 3 && !vyosMulti[nw[len(nw)-2]] {
		for i, l := range lines {
			if ow := vyosWords(l); len(ow) == len(nw) && slices.Equal(ow[:len(ow)-1], nw[:len(nw)-1]) {
				out := slices.Clone(lines)
				out[i] = line
				return out
			}
		}
	}
	// A new node goes after its closest relatives, as VyOS keeps a node's
	// children together.
	at, best := len(lines), 1
	for i, l := range lines {
		ow, n := vyosWords(l), 0
		for n < len(ow) && n < len(nw)-1 && ow[n] == nw[n] {
			n++
		}
		if n >= best {
			at, best = i+1, n
		}
	}
	return slices.Insert(slices.Clone(lines), at, line)
}

func (s *session) vyosDelete(w []string) error {
	path := vyosWords(strings.Join(w[1:], " "))
	kept := slices.DeleteFunc(slices.Clone(s.vyos.working), func(l string) bool {
		lw := vyosWords(l)
		return len(path) > 0 && len(lw) > len(path) && slices.Equal(lw[1:len(path)+1], path)
	})
	if len(kept) == len(s.vyos.working) {
		return s.plain("\n  Nothing to delete (the specified node does not exist)\n  Delete failed\n\n")
	}
	s.vyos.working = kept
	return nil
}

// vyosChanges lists what the working configuration removes from and adds
// to the active one.
func vyosChanges(active, working []string) (removed, added []string) {
	has := func(lines []string, l string) bool {
		return slices.ContainsFunc(lines, func(x string) bool { return slices.Equal(vyosWords(x), vyosWords(l)) })
	}
	for _, l := range active {
		if !has(working, l) {
			removed = append(removed, l)
		}
	}
	for _, l := range working {
		if !has(active, l) {
			added = append(added, l)
		}
	}
	return removed, added
}

func (s *session) vyosCompare(commands bool) error {
	s.d.mu.Lock()
	active := vyosLines(s.d.runningLocked())
	s.d.mu.Unlock()
	removed, added := vyosChanges(active, s.vyos.working)
	if len(removed)+len(added) == 0 {
		return s.plain("No changes between working and active configurations.\n")
	}
	var out strings.Builder
	if commands {
		for _, l := range removed {
			out.WriteString("delete " + strings.Join(vyosWords(l)[1:], " ") + "\n")
		}
		for _, l := range added {
			out.WriteString(l + "\n")
		}
		return s.output(out.String(), false)
	}
	split := func(l string) (edit, leaf string) {
		w := splitWords(l)[1:]
		cut := max(0, len(w)-2)
		return strings.Join(w[:cut], " "), strings.Join(w[cut:], " ")
	}
	type change struct{ sign, leaf string }
	byEdit := map[string][]change{}
	var order []string
	note := func(edit string, c change) {
		if _, ok := byEdit[edit]; !ok {
			order = append(order, edit)
		}
		byEdit[edit] = append(byEdit[edit], c)
	}
	replaced := map[string]bool{}
	for _, a := range added {
		edit, leaf := split(a)
		sign := "+"
		for _, r := range removed {
			if re, rl := split(r); re == edit && firstWord(rl) == firstWord(leaf) && !replaced[r] {
				sign, replaced[r] = ">", true
				break
			}
		}
		note(edit, change{sign, leaf})
	}
	for _, r := range removed {
		if !replaced[r] {
			edit, leaf := split(r)
			note(edit, change{"-", leaf})
		}
	}
	for _, edit := range order {
		out.WriteString(editPath(strings.Fields(edit)) + "\n")
		for _, c := range byEdit[edit] {
			out.WriteString(c.sign + c.leaf + "\n")
		}
	}
	return s.output(out.String(), false)
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// vyosCommit commits the working configuration; minutes > 0 is
// commit-confirm.
func (s *session) vyosCommit(minutes int) error {
	d := s.d
	if minutes > 0 {
		d.mu.Lock()
		pending := d.cfg.confirm != nil
		unsaved := d.runningLocked() != d.startupLocked()
		d.mu.Unlock()
		if pending {
			return s.plain("Another confirm is pending\n")
		}
		q := fmt.Sprintf("\ncommit-confirm will automatically reboot in %d minutes unless changes\nare confirmed.\n\nProceed ? [Y/n] ", minutes)
		if unsaved {
			q = "\nYou should save previous commits before commit-confirm !\n" + q
		}
		answer, err := s.ask(q)
		if err != nil {
			return err
		}
		if a := strings.ToLower(answer); a != "" && a != "y" && a != "ye" && a != "yes" {
			return s.plain("commit-confirm canceled\n")
		}
	}
	d.mu.Lock()
	active := vyosLines(d.runningLocked())
	removed, added := vyosChanges(active, s.vyos.working)
	var out string
	if minutes > 0 {
		c := d.armConfirmLocked("", minutes, s.user, "")
		c.toSaved = true
		out = fmt.Sprintf("Initialized commit-confirm; %d minutes to confirm before reboot\n", minutes)
	}
	if len(removed)+len(added) == 0 {
		out += "No configuration changes to commit\n"
	} else {
		var kept []string
		for _, l := range s.vyos.working {
			if drop := d.opts.DropLines; drop == nil || !drop.MatchString(l) {
				kept = append(kept, l)
			}
		}
		kind := CommitCommit
		if minutes > 0 {
			kind = CommitConfirmed
		}
		d.setRunningLocked(vyosText(kept), kind, s.user)
		s.vyos.working = kept
	}
	d.mu.Unlock()
	return s.plain(out)
}

func (s *session) vyosConfirm() error {
	s.d.mu.Lock()
	ok := s.d.confirmLocked()
	s.d.mu.Unlock()
	if !ok {
		return s.plain("No confirm pending\n")
	}
	return s.plain("Reboot timer stopped\n")
}

func (s *session) vyosSave(args []string) error {
	d := s.d
	target := "/config/config.boot"
	if len(args) > 0 {
		target = args[0]
	}
	d.mu.Lock()
	if len(args) == 0 {
		d.saveLocked()
	} else {
		d.cfg.files[normFilePath(target)] = []byte(d.runningLocked())
	}
	d.mu.Unlock()
	return s.plain(fmt.Sprintf("Saving configuration to '%s'...\nDone\n", target))
}

func (s *session) vyosExit(discard bool) error {
	d := s.d
	d.mu.Lock()
	removed, added := vyosChanges(vyosLines(d.runningLocked()), s.vyos.working)
	unsaved := d.runningLocked() != d.startupLocked()
	d.mu.Unlock()
	if !discard && len(removed)+len(added) > 0 {
		return s.plain("Cannot exit: configuration modified.\nUse 'exit discard' to discard the changes and exit.\n")
	}
	s.vyos, s.config = nil, false
	out := ""
	if unsaved {
		out = "Warning: configuration changes have not been saved.\n"
	}
	return s.plain(out + s.p.ConfigExitReply)
}

// vyosRebootBroadcast is what the terminals get when a commit-confirm
// was not confirmed and VyOS reboots into its saved configuration.
func vyosRebootBroadcast(host string, at time.Time) string {
	return "\nBroadcast message from root@" + host + " (" + at.UTC().Format("Mon 2006-01-02 15:04:05 MST") + "):\n\nThe system is going down for reboot NOW!\n\n"
}
