package devsim

import (
	"slices"
	"strings"
)

// Classic Cisco IOS and NX-OS configuration mode: the writable side of
// the cisco_ios and cisco_nxos personalities (personality.go), over the
// interactive shell. Lines typed after "configure terminal" change the
// running configuration at once; "write memory" (IOS) and "copy
// running-config startup-config" (both) save it.
//
// Written from Cisco's documentation: the "Using the Cisco IOS
// Command-Line Interface" chapter of the IOS Configuration Fundamentals
// guide (configuration mode and its submodes, whose prompts are
// "Router(config-if)#", "Router(config-router)#", "Router(config-line)#";
// "exit" goes up one mode, "end" and Ctrl-Z back to privileged EXEC; a
// command applies as soon as it is entered; the errors "% Invalid input
// detected at '^' marker.", "% Incomplete command.", "% Ambiguous
// command"; "copy running-config startup-config" and "write memory"
// answering "Building configuration..." and "[OK]"), and the NX-OS
// Fundamentals Configuration Guide (the same modes and prompts, "%
// Invalid command at '^' marker.", "copy running-config startup-config"
// with its progress bar and "Copy complete."). From memory, no capture:
// the NX-OS progress bar's width.
//
// Approximations, for want of the command grammar: a line's mode is
// found by its indentation as typed (a line without indentation is a
// global command and leaves every submode; an indented one goes under the
// last line typed with less indentation), where IOS knows which mode
// takes which command and falls back to the global one; it is stored at
// its depth with the configuration's own indentation. A line the device
// already has under the same parents changes nothing; a few settings
// that take one value (hostname, description, ip address, name, ...)
// replace the one there; "no LINE" removes LINE (with its block) from
// the current mode. Options.RejectLines lines are refused with the
// platform's error and never stored; Options.DropLines lines are taken
// without a word and not stored.

// iosEdit is a login's place in configuration mode: the lines that
// opened the submodes it is in, outermost first, as typed.
type iosEdit struct {
	modes []string
}

// iosSingle are the settings that hold one value: typing one replaces
// the one there (by these leading words).
var iosSingle = [][]string{
	{"hostname"}, {"description"}, {"name"}, {"router-id"}, {"switchport", "mode"}, {"switchport", "access", "vlan"},
	{"ip", "domain", "name"}, {"ip", "domain-name"}, {"snmp-server", "location"}, {"snmp-server", "contact"},
	{"logging", "synchronous"}, {"transport", "input"}, {"clock", "timezone"},
}

// iosLine takes the lines of configuration mode and the exec commands
// that save; false leaves the line to the common shell.
func (s *session) iosLine(line string) (bool, error) {
	cmd := strings.TrimSpace(line)
	w := strings.Fields(cmd)
	if !s.config {
		s.ios = nil
		switch {
		case len(w) == 0:
			return false, nil
		case s.p.Platform == "cisco_ios" && len(w) <= 2 && kw(w[0], "write", 2) && (len(w) == 1 || kw(w[1], "memory", 3)),
			len(w) == 3 && kw(w[0], "copy", 3) && isRunning(w[1]) && isStartup(w[2]):
			if !s.priv {
				return true, s.invalid(cmd)
			}
			return true, s.iosSave()
		}
		return false, nil
	}
	if s.ios == nil {
		s.ios = &iosEdit{}
	}
	switch {
	case cmd == "":
		return true, nil
	case cmd == "\x1a" || cmd == "end":
		s.config, s.ios = false, nil
		return true, nil
	case cmd == "exit":
		if n := len(s.ios.modes); n > 0 {
			s.ios.modes = s.ios.modes[:n-1]
		} else {
			s.config, s.ios = false, nil
		}
		return true, nil
	case strings.HasPrefix(cmd, "!"):
		return true, nil
	case w[0] == "do" && len(w) > 1:
		return true, s.exec(strings.TrimSpace(strings.TrimPrefix(cmd, "do")))
	}
	if re := s.d.opts.RejectLines; re != nil && re.MatchString(cmd) {
		return true, s.invalid(cmd)
	}
	// The modes the line is typed in: those opened with less
	// indentation.
	raw := strings.TrimRight(line, " \t\r")
	ind := indentation(raw)
	modes := s.ios.modes
	for len(modes) > 0 && indentation(modes[len(modes)-1]) >= ind {
		modes = modes[:len(modes)-1]
	}
	s.ios.modes = append(slices.Clone(modes), raw)
	if re := s.d.opts.DropLines; re != nil && re.MatchString(cmd) {
		return true, nil
	}
	d := s.d
	d.mu.Lock()
	defer d.mu.Unlock()
	text := iosSet(d.runningLocked(), modes, raw)
	if text != d.runningLocked() {
		d.setRunningLocked(text, CommitManual, s.user)
	}
	return true, nil
}

func indentation(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// iosSet is configuration text after line was typed under parents. A
// line's place is its depth (how many parents), not its indentation as
// typed, as a device's command grammar places it: stored lines take the
// configuration's own indentation (one space a level on IOS, two on
// NX-OS).
func iosSet(text string, parents []string, line string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	unit := indentUnit(lines)
	// The block of the parents: [from, to) are their children, ind
	// their indentation.
	from, to, ind := 0, len(lines), 0
	if i := slices.Index(lines, "end"); i >= 0 {
		to = i
	}
	for _, p := range parents {
		at := -1
		for i := from; i < to; i++ {
			if strings.TrimSpace(lines[i]) == strings.TrimSpace(p) && indentation(lines[i]) == ind {
				at = i
				break
			}
		}
		if at < 0 {
			at = blockEnd(lines, from, to)
			lines = slices.Insert(lines, at, strings.Repeat(" ", ind)+strings.TrimSpace(p))
		}
		from, to = at+1, at+1
		for to < len(lines) && (indentation(lines[to]) > ind || strings.TrimSpace(lines[to]) == "") && lines[to] != "end" {
			to++
		}
		ind += unit
	}
	t := strings.TrimSpace(line)
	stored := strings.Repeat(" ", ind) + t
	same := func(l string) bool { return indentation(l) == ind && strings.TrimSpace(l) != "" }
	if rest, ok := strings.CutPrefix(t, "no "); ok {
		for i := from; i < to; i++ {
			if same(lines[i]) && strings.TrimSpace(lines[i]) == rest {
				end := i + 1
				for end < to && indentation(lines[end]) > indentation(lines[i]) {
					end++
				}
				lines = slices.Delete(lines, i, end)
				to -= end - i
				break
			}
		}
		// A negation the device shows elsewhere ("no shutdown" on
		// NX-OS, "no switchport") is a setting it shows here too.
		shown := slices.ContainsFunc(lines, func(l string) bool { return strings.TrimSpace(l) == t })
		if shown && !slices.ContainsFunc(lines[from:to], func(l string) bool { return same(l) && strings.TrimSpace(l) == t }) {
			lines = slices.Insert(lines, blockEnd(lines, from, to), stored)
		}
		return strings.Join(lines, "\n") + "\n"
	}
	// The setting replaces its negation where the device shows one.
	for i := from; i < to; i++ {
		if same(lines[i]) && strings.TrimSpace(lines[i]) == "no "+t {
			lines[i] = stored
			return strings.Join(lines, "\n") + "\n"
		}
	}
	for i := from; i < to; i++ {
		if same(lines[i]) && strings.TrimSpace(lines[i]) == t {
			return text
		}
	}
	if key := iosKey(t); key != "" {
		for i := from; i < to; i++ {
			if same(lines[i]) && iosKey(strings.TrimSpace(lines[i])) == key {
				lines[i] = stored
				return strings.Join(lines, "\n") + "\n"
			}
		}
	}
	// A new line goes at the end of its block (before the blank line
	// that ends a block on NX-OS), a new global one before the final
	// "end" and the "!" in front of it.
	at := blockEnd(lines, from, to)
	for len(parents) == 0 && at > from && strings.TrimSpace(lines[at-1]) == "!" {
		at--
	}
	lines = slices.Insert(lines, at, stored)
	return strings.Join(lines, "\n") + "\n"
}

// blockEnd is where a line added to the block [from, to) goes: after its
// last line, before the blank lines that close it.
func blockEnd(lines []string, from, to int) int {
	for to > from && strings.TrimSpace(lines[to-1]) == "" {
		to--
	}
	return to
}

// indentUnit is the indentation of one level in a configuration: its
// smallest (1 on IOS, 2 on NX-OS; 1 when nothing is indented).
func indentUnit(lines []string) int {
	unit := 0
	for _, l := range lines {
		if n := indentation(l); n > 0 && strings.TrimSpace(l) != "" && (unit == 0 || n < unit) {
			unit = n
		}
	}
	return max(unit, 1)
}

// iosKey names the setting a single-valued line sets, "" for others.
func iosKey(t string) string {
	w := strings.Fields(t)
	for _, k := range iosSingle {
		if len(w) > len(k) && slices.Equal(w[:len(k)], k) && !slices.Contains(w, "secondary") {
			return strings.Join(k, " ")
		}
	}
	return ""
}

// iosSave saves the running configuration.
func (s *session) iosSave() error {
	s.d.mu.Lock()
	s.d.saveLocked()
	s.d.mu.Unlock()
	if s.p.Platform == "cisco_nxos" {
		return s.plain("[########################################] 100%\nCopy complete, now saving to disk (please wait)...\nCopy complete.\n")
	}
	return s.plain("Building configuration...\n[OK]\n")
}

// iosPrompt is the configuration prompt in a submode: the mode of the
// innermost line that opens one ("(config-if)"), else "(config)".
func (s *session) iosPrompt() string {
	mode := "config"
	for i := len(s.ios.modes) - 1; i >= 0; i-- {
		if m := iosModeName(s.ios.modes[i]); m != "" {
			mode = "config-" + m
			break
		}
	}
	return strings.Replace(s.expand(s.p.ConfigPrompt), "(config)", "("+mode+")", 1)
}

// iosModeName is the prompt's name of the submode a line opens.
func iosModeName(line string) string {
	w := strings.Fields(line)
	if len(w) == 0 {
		return ""
	}
	switch {
	case w[0] == "interface":
		return "if"
	case w[0] == "router":
		return "router"
	case w[0] == "line":
		return "line"
	case w[0] == "vlan":
		return "vlan"
	case w[0] == "address-family":
		return "router-af"
	case len(w) >= 3 && w[0] == "ip" && w[1] == "access-list" && w[2] == "extended":
		return "ext-nacl"
	case len(w) >= 3 && w[0] == "ip" && w[1] == "access-list" && w[2] == "standard":
		return "std-nacl"
	case w[0] == "route-map":
		return "route-map"
	case len(w) >= 2 && w[0] == "vrf" && w[1] == "context":
		return "vrf"
	}
	return ""
}
