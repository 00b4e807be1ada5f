package devsim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Cisco IOS-XE configuration replace, rollback confirmed change and the
// files they read: the writable side of the cisco_xe personality
// (personality.go), in privileged EXEC, over the shell and exec requests.
//
// Written from Cisco's documentation: the "configure replace", "configure
// confirm" and "configure revert" entries of the IOS XE Configuration
// Fundamentals Command Reference (syntax, the rule that list comes before
// force and time and force before time, the Y/N question, "Total number
// of passes: 1" / "Rollback Done", the !Pass / !List of Commands listing,
// timers of 1-120 minutes) and the configuration guides "Configuration
// Replace and Configuration Rollback" and "Configuration Rollback Confirmed
// Change" (the archive it needs; configure confirm within the time or the
// replace is reversed). Texts those pages do not show come from captures
// and from tools written against real devices: "Rollback Confirmed Change:
// Backing up current running config to …" and "Total number of passes: 0"
// when nothing changed (a Cisco 2901 transcript, gist ryankearney/8920941);
// the aborted replace ("The rollback configlet from the last pass…",
// "Rollback aborted after 5 passes", "The following commands are failed to
// apply to the IOS image.") and the revert-on-error texts (ansible.netcommon
// cli_restore's example output, QualiSystems cloudshell-networking-cisco
// tests); "%The input file is not a valid config file.", "%Please turn
// config archive on" (revert trigger) and "Archive feature not enabled"
// from NAPALM's IOS driver; "%Turn config archive on before using Rollback
// Confirmed Change" (time) from a Cisco NSO NED's prompt patterns; "%No
// Rollback Confirmed Change pending" and the fields of "show archive config
// rollback timer" from NAPALM's driver and its tests; "show archive" from
// the command reference example and a published IOS-XE transcript; dir,
// "verify /md5 (…) = …" and "%Error opening … (No such file or directory)"
// from netmiko's file transfer code. From memory, no capture: the
// Destination filename and Delete questions, "… bytes copied in …", and
// the "Timer type" wording.
//
// Behaviour the simulator chooses: the "Building configuration..." and
// "Current configuration : N bytes" lines of a file are refused like any
// command IOS does not know (the captures show them failing); a replace
// that fails without "revert trigger error" leaves what it could apply
// (IOS does too), and with "time" the timer still runs, so configure
// revert now or the timer restores the original; lines typed in
// configuration mode are accepted without changing the stored
// configuration; copy of a file to running-config only adds what is not
// there.

// xeMaxTimer bounds the confirm and revert timers, in minutes.
const xeMaxTimer = 120

const (
	xeNoPending    = "%No Rollback Confirmed Change pending\n"
	xeReplaceAsk   = "This will apply all necessary additions and deletions\nto replace the current running configuration with the\ncontents of the specified configuration file, which is\nassumed to be a complete configuration, not a partial\nconfiguration. Enter Y if you are sure you want to proceed. ? [no]: "
	xeNotValid     = "%The input file is not a valid config file.\n"
	xeArchiveTime  = "%Turn config archive on before using Rollback Confirmed Change\n"
	xeArchiveOn    = "%Please turn config archive on\n"
	xeFlashTotal   = 7989284864
	xeIncomplete   = "% Incomplete command.\n\n"
	xeArchiveLimit = 14
)

// kw matches an IOS keyword typed in full or abbreviated to at least
// least letters.
func kw(word, keyword string, least int) bool {
	w := strings.ToLower(word)
	return len(w) >= least && strings.HasPrefix(keyword, w)
}

// xeExec takes the commands that change or store the configuration.
func (s *session) xeExec(cmd string) (bool, error) {
	w := strings.Fields(cmd)
	var run func() error
	switch {
	case len(w) >= 2 && kw(w[0], "configure", 4) && kw(w[1], "replace", 3):
		run = func() error { return s.xeReplace(cmd, w) }
	case len(w) == 2 && kw(w[0], "configure", 4) && kw(w[1], "confirm", 5):
		run = s.xeConfirm
	case len(w) >= 2 && kw(w[0], "configure", 4) && kw(w[1], "revert", 3):
		run = func() error { return s.xeRevert(cmd, w) }
	case len(w) == 2 && kw(w[0], "show", 2) && kw(w[1], "archive", 3):
		run = s.xeShowArchive
	case len(w) == 5 && kw(w[0], "show", 2) && kw(w[1], "archive", 3) && kw(w[2], "config", 4) && kw(w[3], "rollback", 4) && kw(w[4], "timer", 3):
		run = s.xeShowTimer
	case len(w) <= 2 && kw(w[0], "write", 2) && (len(w) == 1 || kw(w[1], "memory", 3)):
		run = s.xeWriteMemory
	case kw(w[0], "copy", 3):
		run = func() error { return s.xeCopy(cmd, w) }
	case len(w) <= 2 && kw(w[0], "dir", 3):
		run = func() error { return s.xeDir(w) }
	case len(w) == 3 && kw(w[0], "verify", 4) && strings.EqualFold(w[1], "/md5"):
		run = func() error { return s.xeVerify(w[2]) }
	case kw(w[0], "delete", 3):
		run = func() error { return s.xeDelete(cmd, w) }
	case len(w) == 2 && kw(w[0], "more", 3):
		run = func() error { return s.xeMore(w[1]) }
	default:
		return false, nil
	}
	if !s.priv {
		return true, s.invalid(cmd)
	}
	return true, run()
}

// invalidWord prints IOS's error with the caret under word i of cmd.
func (s *session) invalidWord(cmd string, words []string, i int) error {
	offset := 0
	for j := 0; j <= i && j < len(words); j++ {
		offset += strings.Index(cmd[offset:], words[j])
		if j < i {
			offset += len(words[j])
		}
	}
	return s.plain(strings.ReplaceAll(s.p.InvalidInput, "{caret}", s.caretAt(offset)))
}

func (s *session) ask(question string) (string, error) {
	if err := s.plain(question); err != nil {
		return "", err
	}
	answer, err := s.readLine(true)
	return strings.TrimSpace(answer), err
}

// xeFile reads a file by its IOS URL; nvram:startup-config is the saved
// configuration.
func (s *session) xeFile(url string) ([]byte, bool) {
	if n := normFilePath(url); n == "nvram:startup-config" || n == "startup-config" {
		return []byte(s.d.StartupConfig()), true
	}
	return s.d.File(url)
}

func (s *session) xeReplace(cmd string, w []string) error {
	if len(w) < 3 {
		return s.plain(xeIncomplete)
	}
	url := w[2]
	var list, force, trigger, onError bool
	var minutes int
	timed := false
	at := -1 // position of the last option: nolock, list, force, ignorecase, revert|time
	for i := 3; i < len(w); i++ {
		pos := -1
		switch {
		case kw(w[i], "nolock", 3):
			pos = 0
		case kw(w[i], "list", 2):
			pos, list = 1, true
		case kw(w[i], "force", 2):
			pos, force = 2, true
		case kw(w[i], "ignorecase", 2):
			pos = 3
		case strings.EqualFold(w[i], "time"):
			pos, timed = 4, true
			i++
			if i >= len(w) {
				return s.plain(xeIncomplete)
			}
			n, err := strconv.Atoi(w[i])
			if err != nil || n < 1 || n > xeMaxTimer {
				return s.invalidWord(cmd, w, i)
			}
			minutes = n
		case kw(w[i], "revert", 3):
			pos, trigger = 4, true
			for i+1 < len(w) && kw(w[i+1], "trigger", 3) {
				i++
			}
			if i+1 < len(w) && kw(w[i+1], "error", 3) {
				onError = true
				i++
			}
			if i+1 < len(w) && kw(w[i+1], "timer", 3) {
				i += 2
				if i >= len(w) {
					return s.plain(xeIncomplete)
				}
				n, err := strconv.Atoi(w[i])
				if err != nil || n < 1 || n > xeMaxTimer {
					return s.invalidWord(cmd, w, i)
				}
				minutes = n
			}
		}
		if pos < 0 || pos <= at {
			return s.invalidWord(cmd, w, i)
		}
		at = pos
	}
	if timed || trigger {
		if s.d.opts.NoArchive {
			if timed {
				return s.plain(xeArchiveTime)
			}
			return s.plain(xeArchiveOn)
		}
	}
	if !force {
		answer, err := s.ask(xeReplaceAsk)
		if err != nil {
			return err
		}
		if a := strings.ToLower(answer); a != "y" && a != "yes" {
			return nil
		}
	}
	data, ok := s.xeFile(url)
	if !ok {
		return s.plain(fmt.Sprintf("%%Error opening %s (No such file or directory)\n", url))
	}
	if !validIOSConfig(data) {
		return s.plain(xeNotValid)
	}
	return s.plain(s.d.xeApplyReplace(string(data), s.user, list, onError, minutes, trigger || timed))
}

// validIOSConfig is what configure replace takes for a configuration
// file: text with at least one command.
func validIOSConfig(data []byte) bool {
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "!") {
			return true
		}
	}
	return false
}

// iosHeaderCommand are lines of `show running-config` output that are
// no commands: IOS refuses them in a file it applies.
var iosHeaderCommand = regexp.MustCompile(`^(Building configuration\.\.\.|Current configuration : \d+ bytes)$`)

// iosFileLines cuts a configuration file at its "end" and sorts its lines
// into those IOS applies and those it refuses (with the lines of a refused
// block).
func iosFileLines(text string, reject *regexp.Regexp) (kept, failed []string) {
	refusedBlock := false
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		l = strings.TrimRight(l, " \t\r")
		t := strings.TrimSpace(l)
		nested := strings.HasPrefix(l, " ")
		if !nested {
			refusedBlock = false
		}
		switch {
		case t == "end" && !nested:
			return kept, failed
		case t == "" || strings.HasPrefix(t, "!"):
			kept = append(kept, l)
		case refusedBlock, iosHeaderCommand.MatchString(t), reject != nil && reject.MatchString(t):
			failed = append(failed, l)
			refusedBlock = refusedBlock || !nested
		default:
			kept = append(kept, l)
		}
	}
	return kept, failed
}

// iosText makes lines the stored form of an IOS configuration: header
// lines gone, "end" last.
func iosText(lines []string, drop *regexp.Regexp) string {
	var out []string
	for _, l := range lines {
		if drop != nil && strings.TrimSpace(l) != "" && drop.MatchString(strings.TrimSpace(l)) {
			continue
		}
		out = append(out, l)
	}
	text := normalizeConfig("cisco_xe", strings.Join(out, "\n"))
	if text == "" {
		return "end\n"
	}
	return text + "end\n"
}

// xeApplyReplace replaces the running configuration with a file's and
// returns what the device prints.
func (d *Device) xeApplyReplace(text, user string, list, onError bool, minutes int, archived bool) string {
	kept, failed := iosFileLines(text, d.opts.RejectLines)
	d.mu.Lock()
	defer d.mu.Unlock()
	before := d.runningLocked()
	var out strings.Builder
	archive := ""
	if archived {
		archive = d.xeArchiveLocked(before)
		if minutes > 0 {
			fmt.Fprintf(&out, "Rollback Confirmed Change: Backing up current running config to %s\n", archive)
		}
	}
	if len(failed) > 0 && onError {
		fmt.Fprintf(&out, "Failed to apply command %s\nAborting Rollback.\nRollback failed.Reverting back to the original configuration: %s\nTotal number of passes: 1\nRollback Done\n",
			strings.TrimSpace(failed[0]), archive)
		return out.String()
	}
	after := iosText(kept, d.opts.DropLines)
	if len(failed) > 0 {
		block := strings.Join(failed, "\n")
		fmt.Fprintf(&out, "The rollback configlet from the last pass is listed below:\n********\n!List of Rollback Commands:\n%s\nend\n********\n\n\n"+
			"Rollback aborted after 5 passes\nThe following commands are failed to apply to the IOS image.\n********\n%s\n********\n", block, block)
	} else {
		passes := 0
		if after != before {
			passes = 1
			if list {
				fmt.Fprintf(&out, "!Pass 1\n!List of Commands:\n%send\n", iosChanges(before, after))
			}
		}
		fmt.Fprintf(&out, "Total number of passes: %d\nRollback Done\n", passes)
	}
	d.setRunningLocked(after, CommitReplace, user)
	if minutes > 0 {
		d.armConfirmLocked(before, minutes, user, archive)
	}
	return out.String()
}

// xeArchiveLocked saves text in the configuration archive, named as IOS
// names archive files: path, date, time and a counter from 0.
func (d *Device) xeArchiveLocked(text string) string {
	t := d.opts.Clock().UTC()
	name := fmt.Sprintf("flash:archive-%s-%d", strings.ReplaceAll(t.Format("Jan-_2-15-04-05.000"), " ", "-"), d.cfg.archives)
	d.cfg.archives++
	d.cfg.files[normFilePath(name)] = []byte(text)
	return name
}

// iosBlock is a top-level command and the lines of its submode.
type iosBlock struct {
	head string
	kids []string
}

func iosBlocks(text string) []iosBlock {
	var out []iosBlock
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "!") || t == "end":
		case strings.HasPrefix(l, " ") && len(out) > 0:
			out[len(out)-1].kids = append(out[len(out)-1].kids, l)
		default:
			out = append(out, iosBlock{head: l})
		}
	}
	return out
}

// iosChanges lists the commands that turn configuration a into b, as the
// list keyword shows them: removals ("no …") first, then additions, each
// submode line under its command.
func iosChanges(a, b string) string {
	ab, bb := iosBlocks(a), iosBlocks(b)
	index := func(bs []iosBlock) map[string]iosBlock {
		m := make(map[string]iosBlock, len(bs))
		for _, x := range bs {
			m[x.head] = x
		}
		return m
	}
	am, bm := index(ab), index(bb)
	var out strings.Builder
	for _, x := range ab {
		if _, ok := bm[x.head]; !ok {
			out.WriteString("no " + x.head + "\n")
		}
	}
	for _, x := range bb {
		old, ok := am[x.head]
		if !ok {
			out.WriteString(x.head + "\n")
			for _, k := range x.kids {
				out.WriteString(k + "\n")
			}
			continue
		}
		var changes []string
		for _, k := range old.kids {
			if !slices.Contains(x.kids, k) {
				trimmed := strings.TrimLeft(k, " ")
				changes = append(changes, k[:len(k)-len(trimmed)]+"no "+trimmed)
			}
		}
		for _, k := range x.kids {
			if !slices.Contains(old.kids, k) {
				changes = append(changes, k)
			}
		}
		if len(changes) > 0 {
			out.WriteString(x.head + "\n" + strings.Join(changes, "\n") + "\n")
		}
	}
	return out.String()
}

func (s *session) xeConfirm() error {
	s.d.mu.Lock()
	ok := s.d.confirmLocked()
	s.d.mu.Unlock()
	if !ok {
		return s.plain(xeNoPending)
	}
	return nil
}

func (s *session) xeRevert(cmd string, w []string) error {
	d := s.d
	switch {
	case len(w) == 3 && kw(w[2], "now", 3):
		d.mu.Lock()
		ok := d.revertLocked(CommitRevert, s.user)
		d.mu.Unlock()
		if !ok {
			return s.plain(xeNoPending)
		}
		return nil
	case len(w) >= 4 && kw(w[2], "timer", 3):
		i := 3
		if kw(w[i], "idle", 2) {
			i++
		}
		if i != len(w)-1 {
			return s.invalidWord(cmd, w, min(i+1, len(w)-1))
		}
		n, err := strconv.Atoi(w[i])
		if err != nil || n < 1 || n > xeMaxTimer {
			return s.invalidWord(cmd, w, i)
		}
		d.mu.Lock()
		c := d.cfg.confirm
		if c != nil {
			d.armConfirmLocked(c.restore, n, c.user, c.archive)
		}
		d.mu.Unlock()
		if c == nil {
			return s.plain(xeNoPending)
		}
		return nil
	case len(w) < 3:
		return s.plain(xeIncomplete)
	}
	return s.invalidWord(cmd, w, 2)
}

func (s *session) xeShowArchive() error {
	d := s.d
	if d.opts.NoArchive {
		return s.plain("Archive feature not enabled\n")
	}
	d.mu.Lock()
	n := d.cfg.archives
	var names []string
	for name := range d.cfg.files {
		if strings.HasPrefix(name, "flash:archive-") {
			names = append(names, name)
		}
	}
	d.mu.Unlock()
	sortArchives(names)
	if len(names) > xeArchiveLimit {
		names = names[len(names)-xeArchiveLimit:]
	}
	var out strings.Builder
	fmt.Fprintf(&out, "The maximum archive configurations allowed is %d.\nThere are currently %d archive configurations saved.\n", xeArchiveLimit, len(names))
	fmt.Fprintf(&out, "The next archive file will be named flash:archive-<timestamp>-%d\n Archive #  Name\n", n)
	for i, name := range names {
		recent := ""
		if i == len(names)-1 {
			recent = " <- Most Recent"
		}
		fmt.Fprintf(&out, "   %-2d       %s%s\n", i+1, name, recent)
	}
	return s.plain(out.String())
}

// sortArchives orders archive files by their counter.
func sortArchives(names []string) {
	num := func(n string) int {
		v, _ := strconv.Atoi(n[strings.LastIndex(n, "-")+1:])
		return v
	}
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && num(names[j]) < num(names[j-1]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}

func (s *session) xeShowTimer() error {
	d := s.d
	d.mu.Lock()
	c := d.cfg.confirm
	var out string
	if c != nil {
		out = fmt.Sprintf("Time configured(or reset): %s\nTimer type: absolute timer\nTimer value: %d min\nUser: %s\n",
			ciscoTime(c.configured), c.minutes, c.user)
	}
	d.mu.Unlock()
	if c == nil {
		return s.plain(xeNoPending)
	}
	return s.plain(out)
}

func (s *session) xeWriteMemory() error {
	s.d.mu.Lock()
	s.d.saveLocked()
	s.d.mu.Unlock()
	return s.plain("Building configuration...\n[OK]\n")
}
