package devsim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Juniper Junos configuration mode: the writable side of the
// juniper_junos personality (personality.go), over the interactive shell.
// Exec requests are unchanged.
//
// Written from Juniper's documentation: the configure command and its
// three forms (junos12.3 command-summary/configure.html and
// reference/general/junos-cli-configure-command-types.html; JUNOS 8.5 CLI
// guide "Using the configure private Command": no commit confirmed in
// private mode, no private mode over a modified shared candidate), load
// (junos13.2 command-summary/load.html and junos14.1 "Loading a
// Configuration from a File or the Terminal": override, merge, set,
// "[Type ^D at a new line to end input]"), rollback (junos13.1
// command-summary/rollback.html: 0 to 49), exit (junos13.2
// command-summary/exit.html), commit and commit confirmed (JUNOS 9.4
// commit.html; dummies.com "How to confirm your Junos configuration" for
// "commit confirmed will be automatically rolled back in N minutes unless
// confirmed", "commit complete", the broadcast "Commit was not
// confirmed; automatic rollback complete." and commit check confirming a
// pending commit). Texts the pages do not print come from captures of
// real devices: the load errors, "load complete (N errors)", "^D" echoed
// before the result and the `show | compare` layout from a vJunos 25.4
// lab capture; "warning: uncommitted changes will be discarded on exit",
// "error: commit confirmed not supported for private configuration" and
// the "# commit confirmed will be rolled back in N minutes" line above
// [edit] from captures in Juniper/py-junos-eznc#954; "The configuration
// has been changed but not committed" / "Exit with uncommitted changes?
// [yes,no] (yes)" from netmiko's Junos driver and expect scripts; the
// "Discard uncommitted changes? [yes,no] (yes)" question from a
// third-party answer table (that private and exclusive mode ask it is
// the simulator's reading). From memory, no capture: the lock error of
// configure exclusive, "error: shared configuration database modified",
// the rollback and missing-file errors, and the layout of the broadcast
// (the BSD wall format).
//
// Approximations, for want of the Junos schema: load merge and set
// commands replace a statement whose keyword a level holds once
// (host-name) and add to those that repeat (address, route…); a set
// command whose path names no existing container becomes one statement at
// the deepest level that exists; load replace is load merge, load update
// is load override; a commit from configure private replaces the active
// configuration with the private candidate; there are no edit levels
// (edit, top, up) — top and up are accepted and do nothing.

// junosEdit is a session's configuration mode.
type junosEdit struct {
	mode    string // "", "private" or "exclusive"
	private *jnode // the candidate of configure private
}

const (
	junosDefaultConfirm = 10
	junosMaxConfirm     = 65535
	junosRollbacks      = 50
)

// junosLine takes the command lines Junos handles itself: configuration
// mode and the commands that enter it.
func (s *session) junosLine(cmd string) (bool, error) {
	if s.config && s.junos != nil {
		return true, s.junosConfig(cmd)
	}
	mode, ok := map[string]string{"configure": "", "configure private": "private", "configure exclusive": "exclusive"}[strings.Join(strings.Fields(cmd), " ")]
	if !ok {
		return false, nil
	}
	return true, s.junosEnter(mode)
}

func (s *session) junosEnter(mode string) error {
	d := s.d
	d.mu.Lock()
	refusal := ""
	switch {
	case mode == "exclusive" && d.cfg.exclusive != nil && d.cfg.exclusive != s:
		refusal = d.junosLockedTextLocked()
	case mode != "" && d.junosSharedChangedLocked():
		refusal = "error: shared configuration database modified\n"
	}
	if refusal != "" {
		d.mu.Unlock()
		return s.plain(refusal)
	}
	e := &junosEdit{mode: mode}
	switch mode {
	case "exclusive":
		d.cfg.exclusive = s
	case "private":
		e.private = d.junosActiveLocked()
	}
	changed := d.junosSharedChangedLocked()
	d.mu.Unlock()
	s.junos, s.config = e, true
	out := ""
	if mode != "" {
		out = "warning: uncommitted changes will be discarded on exit\n"
	}
	out += "Entering configuration mode\n"
	if changed {
		out += "The configuration has been changed but not committed\n"
	}
	return s.plain(out)
}

// junosConfig runs one line of configuration mode.
func (s *session) junosConfig(cmd string) error {
	words := splitWords(cmd)
	if len(words) == 0 || cmd == "\x1a" {
		return nil
	}
	switch words[0] {
	case "exit", "quit":
		if len(words) == 1 || len(words) == 2 && words[1] == "configuration-mode" {
			return s.junosExit()
		}
	case "commit":
		return s.junosCommit(cmd, words[1:])
	case "load":
		return s.junosLoad(cmd, words[1:])
	case "rollback":
		return s.junosRollback(cmd, words[1:])
	case "show":
		return s.junosShow(cmd, words[1:])
	case "set", "delete":
		return s.junosSet(cmd, words)
	case "run":
		if len(words) > 1 {
			return s.exec(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cmd), "run")))
		}
	case "top", "up":
		return nil
	}
	return s.invalid(cmd)
}

// junosActiveLocked parses the active configuration.
func (d *Device) junosActiveLocked() *jnode {
	t, _ := parseJunos("active", d.runningLocked(), nil)
	return t
}

func (d *Device) junosSharedChangedLocked() bool {
	return d.cfg.shared != nil && d.cfg.shared.render() != d.runningLocked()
}

// junosCandidateLocked is the candidate the session edits.
func (s *session) junosCandidateLocked() *jnode {
	if s.junos.mode == "private" {
		return s.junos.private
	}
	if s.d.cfg.shared == nil {
		s.d.cfg.shared = s.d.junosActiveLocked()
	}
	return s.d.cfg.shared
}

// junosLockedLocked reports another session's configure exclusive, which
// keeps this one from changing or committing the configuration.
func (s *session) junosLockedLocked() (string, bool) {
	if x := s.d.cfg.exclusive; x != nil && x != s {
		return s.d.junosLockedTextLocked(), true
	}
	return "", false
}

func (d *Device) junosLockedTextLocked() string {
	x := d.cfg.exclusive
	return fmt.Sprintf("error: configuration database locked by:\n  %s terminal pts/%d (pid %d) on since %s\n      exclusive [edit]\n",
		x.user, x.id, 3000+x.id, x.since.UTC().Format("2006-01-02 15:04:05 MST"))
}

func (s *session) junosChanged() bool {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return s.junosCandidateLocked().render() != s.d.runningLocked()
}

func (s *session) junosExit() error {
	if s.junosChanged() {
		q := "The configuration has been changed but not committed\nExit with uncommitted changes? [yes,no] (yes) "
		if s.junos.mode != "" {
			q = "The configuration has been changed but not committed\nDiscard uncommitted changes? [yes,no] (yes) "
		}
		if err := s.plain(q); err != nil {
			return err
		}
		answer, err := s.readLine(true)
		if err != nil {
			return err
		}
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "" && a != "yes" && a != "y" {
			return nil
		}
	}
	s.d.mu.Lock()
	s.junosLeaveLocked()
	s.d.mu.Unlock()
	return s.plain("Exiting configuration mode\n")
}

// junosLeaveLocked ends configuration mode: configure exclusive gives up
// its lock and, like configure private, its uncommitted changes; those of
// the shared candidate stay for the next session.
func (s *session) junosLeaveLocked() {
	if s.junos == nil {
		return
	}
	if s.d.cfg.exclusive == s {
		s.d.cfg.exclusive = nil
		s.d.cfg.shared = nil
	}
	s.junos, s.config = nil, false
}

func (s *session) junosCommit(cmd string, args []string) error {
	var check, confirmed, andQuit bool
	minutes := junosDefaultConfirm
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "check":
			check = true
		case "confirmed":
			confirmed = true
			if i+1 < len(args) {
				if n, err := strconv.Atoi(args[i+1]); err == nil {
					if n < 1 || n > junosMaxConfirm {
						return s.plain(fmt.Sprintf("error: minutes value outside range 1..%d\n", junosMaxConfirm))
					}
					minutes = n
					i++
				}
			}
		case "and-quit":
			andQuit = true
		case "comment":
			i++ // the comment itself, quoted
		case "synchronize":
		default:
			return s.invalid(cmd)
		}
	}
	if check && (confirmed || andQuit) {
		return s.invalid(cmd)
	}
	if confirmed && s.junos.mode == "private" {
		return s.plain("error: commit confirmed not supported for private configuration\n")
	}
	d := s.d
	d.mu.Lock()
	if msg, locked := s.junosLockedLocked(); locked {
		d.mu.Unlock()
		return s.plain(msg)
	}
	if check {
		// Junos takes a commit check as the confirmation too.
		d.confirmLocked()
		d.mu.Unlock()
		return s.plain("configuration check succeeds\n")
	}
	next := s.junosCandidateLocked().clone()
	next.dropLines(d.opts.DropLines)
	text := next.render()
	before := d.runningLocked()
	kind := CommitCommit
	if confirmed {
		kind = CommitConfirmed
	} else {
		d.confirmLocked()
	}
	d.setRunningLocked(text, kind, s.user)
	if confirmed {
		d.armConfirmLocked(before, minutes, s.user, "")
	}
	if s.junos.mode == "private" {
		s.junos.private = d.junosActiveLocked()
	} else {
		d.cfg.shared = nil
	}
	out := ""
	if confirmed {
		out = fmt.Sprintf("commit confirmed will be automatically rolled back in %d minutes unless confirmed\n", minutes)
	}
	out += "commit complete\n"
	if andQuit {
		s.junosLeaveLocked()
		out += "Exiting configuration mode\n"
	}
	d.mu.Unlock()
	return s.plain(out)
}

// maxLoadInput bounds what load … terminal reads.
const maxLoadInput = 8 << 20

func (s *session) junosLoad(cmd string, args []string) error {
	if len(args) != 2 {
		return s.invalid(cmd)
	}
	action, src := args[0], args[1]
	switch action {
	case "override", "merge", "set", "replace", "update":
	default:
		return s.invalid(cmd)
	}
	d := s.d
	d.mu.Lock()
	msg, locked := s.junosLockedLocked()
	d.mu.Unlock()
	if locked {
		return s.plain(msg)
	}
	var text, source string
	if src == "terminal" {
		if err := s.plain("[Type ^D at a new line to end input]\n"); err != nil {
			return err
		}
		in, err := s.readUntilEOT(maxLoadInput)
		if err != nil {
			return err
		}
		text, source = in, "terminal"
	} else {
		data, ok := d.File(src)
		if !ok {
			return s.plain(fmt.Sprintf("error: could not open configuration file: %s: No such file or directory\n", src))
		}
		text, source = string(data), src
	}
	d.mu.Lock()
	cand := s.junosCandidateLocked()
	var errs []junosLoadError
	switch action {
	case "override", "update":
		var tree *jnode
		tree, errs = parseJunos(source, text, d.opts.RejectLines)
		cand.kids = tree.kids
	case "merge", "replace":
		var tree *jnode
		tree, errs = parseJunos(source, text, d.opts.RejectLines)
		cand.merge(tree)
	case "set":
		errs = applySetLines(cand, source, text, d.opts.RejectLines)
	}
	d.mu.Unlock()
	var out strings.Builder
	failed := 0
	for _, e := range errs {
		out.WriteString(e.String() + "\n")
		if !e.warning {
			failed++
		}
	}
	if failed > 0 && action != "set" {
		fmt.Fprintf(&out, "load complete (%d errors)\n", failed)
	} else {
		out.WriteString("load complete\n")
	}
	return s.plain(out.String())
}

// applySetLines runs the set and delete commands of a load set. Errors
// carry the position where the refused word starts, as Junos reports
// them for set commands.
func applySetLines(cand *jnode, source, text string, reject *regexp.Regexp) []junosLoadError {
	var errs []junosLoadError
	for i, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(raw)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		words := splitWords(t)
		at, refused := refusedSet(reject, t)
		switch {
		case words[0] == "set" && len(words) > 1 && !refused:
			cand.applySet(words[1:])
		case words[0] == "delete" && !refused:
			cand.applyDelete(words[1:])
		default:
			indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
			word, start, _ := badWord(t[at:], nil)
			errs = append(errs, junosLoadError{source: source, line: i + 1, col: indent + at + start, word: word, setFormat: true})
		}
	}
	return errs
}

// refusedSet tells whether reject refuses a set command: when it matches
// the command or any tail of it that starts at a word ("boot-server
// 192.0.2.99" of "set system ntp boot-server 192.0.2.99"), so that one
// pattern refuses a statement in either format. at is where the match
// starts.
func refusedSet(reject *regexp.Regexp, cmd string) (at int, refused bool) {
	if reject == nil {
		return 0, false
	}
	for i := 0; i < len(cmd); i++ {
		if i > 0 && cmd[i-1] != ' ' {
			continue
		}
		if loc := reject.FindStringIndex(cmd[i:]); loc != nil {
			return i + loc[0], true
		}
	}
	return 0, false
}

func (s *session) junosRollback(cmd string, args []string) error {
	n := 0
	if len(args) > 1 {
		return s.invalid(cmd)
	}
	if len(args) == 1 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 0 || v >= junosRollbacks {
			return s.invalid(cmd)
		}
		n = v
	}
	d := s.d
	d.mu.Lock()
	msg, locked := s.junosLockedLocked()
	if !locked {
		d.ensureHistoryLocked()
		if h := d.cfg.history; n < len(h) {
			tree, _ := parseJunos("rollback", h[len(h)-1-n].Text, nil)
			s.junosCandidateLocked().kids = tree.kids
			msg = "load complete\n"
		} else {
			msg = fmt.Sprintf("error: rollback %d does not exist\n", n)
		}
	}
	d.mu.Unlock()
	return s.plain(msg)
}

func (s *session) junosShow(cmd string, args []string) error {
	d := s.d
	line := strings.Join(strings.Fields(strings.ReplaceAll(cmd, "|", " | ")), " ")
	d.mu.Lock()
	cand := s.junosCandidateLocked()
	var out string
	switch {
	case line == "show | compare":
		out = compareJunos(d.junosActiveLocked(), cand)
	case strings.Contains(line, "|"):
		d.mu.Unlock()
		return s.invalid(cmd)
	default:
		node, _, rest := cand.descend(args)
		if len(rest) == 0 {
			out = node.render()
		}
	}
	d.mu.Unlock()
	return s.output(out, false)
}

func (s *session) junosSet(cmd string, words []string) error {
	if len(words) < 2 && words[0] == "set" {
		return s.plain(s.caretAt(len(cmd)) + "\nsyntax error, expecting <statement> or <identifier>.\n")
	}
	if at, refused := refusedSet(s.d.opts.RejectLines, cmd); refused && words[0] == "set" {
		_, start, _ := badWord(cmd[at:], nil)
		return s.plain(s.caretAt(at+start) + "\nsyntax error.\n")
	}
	d := s.d
	d.mu.Lock()
	msg, locked := s.junosLockedLocked()
	if !locked {
		cand := s.junosCandidateLocked()
		if words[0] == "set" {
			cand.applySet(words[1:])
		} else if !cand.applyDelete(words[1:]) {
			msg = "warning: statement not found\n"
		}
	}
	d.mu.Unlock()
	return s.plain(msg)
}

// junosPendingLine is the line Junos prints above [edit] while a commit
// confirmed waits.
func (d *Device) junosPendingLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cfg.confirm
	if c == nil {
		return ""
	}
	left := c.deadline.Sub(d.opts.Clock())
	minutes := int((left + d.opts.Minute - 1) / d.opts.Minute)
	return fmt.Sprintf("# commit confirmed will be rolled back in %d minutes\n", max(minutes, 1))
}

// junosRollbackBroadcast is what every terminal gets when a commit
// confirmed was not confirmed in time.
func junosRollbackBroadcast(host string, at time.Time) string {
	return "\n\nBroadcast Message from root@" + host + "\n        (no tty) at " + at.UTC().Format("15:04 MST") +
		"...\n\nCommit was not confirmed; automatic rollback complete.\n\n"
}
