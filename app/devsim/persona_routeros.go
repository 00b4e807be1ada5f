package devsim

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// MikroTik RouterOS scripts: the writable side of the mikrotik_routeros
// personality (personality.go), whose configuration is what "/export
// show-sensitive" prints. Over the shell and exec requests alike.
//
// Written from MikroTik's manual, "Configuration Management"
// (help.mikrotik.com, now manual.mikrotik.com getting-started/
// configuration-management): /import and its properties (file-name;
// verbose "reads the file line by line and executes each separately";
// dry-run "simulates the import without changes… only available in
// verbose mode"), its answer "Opening script file address.rsc" / "Script
// file loaded and executed successfully", the tip that replacing a
// configuration needs /system/reset-configuration no-defaults=yes first,
// and reset-configuration (keep-users, no-defaults, skip-backup,
// run-after-reset: a script run after the reset; the question "Dangerous!
// Reset anyway? [y/N]:"; the router reboots; without keep-users only
// "admin" with an empty password is left). Texts the manual does not
// show come from tools and reports about real routers: "Script Error:
// failure: already have interface with name bridge (/interface/bridge/add;
// line 2)", "Cannot open import file, file does not exist (:import; line
// 1)" and that an import stops at the first failing line, keeping what
// ran before it (measured on RouterOS 7.24.4, in a restore tool's
// source); "Script Error: syntax error (line 4 column 10)" (a user's
// report on 7.19.6); the reset question again and a run-after-reset file
// in flash/ (a user's RouterOS 6.47 transcript). From memory, no
// capture: "no such item" for a file that is not there, the wording
// "already have such entry" for other menus, and that ":put [:len [/file
// find name=…]]" prints the count.
//
// Approximations: the configuration is the export text; an import adds
// each command under its menu (an "add" identical to one the menu has
// fails, a "set" replaces the "set" of the same item, anything else is
// added); a line RejectLines matches is a syntax error, which without
// verbose=yes stops the script before anything runs (RouterOS parses it
// whole), and with it after the lines before; there is no default
// configuration (a reset without no-defaults=yes comes back empty too);
// the only account is the login's, which a reset without keep-users=yes
// replaces by admin without a password; the reboot drops every
// connection and keeps the router away for Options.BootTime; safe mode
// is not modelled.

const (
	rosResetAsk = "Dangerous! Reset anyway? [y/N]: "
	rosLoaded   = "Script file loaded and executed successfully\n"
)

// rosFileCount is the script line a restore asks whether a folder exists
// with.
var rosFileCount = regexp.MustCompile(`^:put \[:len \[/file find (?:where )?name="?([^"\]\s]+)"?\]\]$`)

// rosExec takes the commands that read or write scripts and the
// configuration.
func (s *session) rosExec(cmd string) (bool, error) {
	if m := rosFileCount.FindStringSubmatch(cmd); m != nil {
		return true, s.rosCountFiles(m[1])
	}
	w := splitWords(cmd)
	if len(w) == 0 || strings.HasPrefix(w[0], ":") {
		return false, nil
	}
	// "/system reset-configuration" and "/system/reset-configuration"
	// are one command.
	path := strings.Fields(strings.ReplaceAll(strings.Trim(w[0], "/"), "/", " "))
	words := append(path, w[1:]...)
	if len(words) == 0 {
		return false, nil
	}
	switch {
	case words[0] == "import":
		return true, s.rosImport(cmd, words[1:])
	case len(words) >= 2 && words[0] == "system" && words[1] == "reset-configuration":
		return true, s.rosReset(cmd, words[2:])
	case len(words) >= 2 && words[0] == "file" && words[1] == "remove":
		return true, s.rosRemoveFile(cmd, words[2:])
	}
	return false, nil
}

// rosArgs sorts a command's arguments into name=value properties and bare
// words; values lose their quotes.
func rosArgs(args []string) (props map[string]string, bare []string) {
	props = map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			props[k] = strings.Trim(v, `"`)
		} else {
			bare = append(bare, strings.Trim(a, `"`))
		}
	}
	return props, bare
}

// rosSyntax is RouterOS's answer to an argument it does not take.
func (s *session) rosSyntax(cmd, word string) error {
	col := strings.Index(cmd, word) + 1
	if err := s.plain(fmt.Sprintf("expected end of command (line 1 column %d)\n", max(col, 1))); err != nil {
		return err
	}
	if s.isExec {
		return errUnknownCommand
	}
	return nil
}

func (s *session) rosImport(cmd string, args []string) error {
	props, bare := rosArgs(args)
	dry := false
	for _, b := range bare {
		switch {
		case b == "dry-run":
			dry = true
		case props["file-name"] == "":
			props["file-name"] = b
		default:
			return s.rosSyntax(cmd, b)
		}
	}
	for k := range props {
		switch k {
		case "file-name", "verbose", "from-line":
		case "dry-run":
			dry = props[k] == "yes"
		default:
			return s.rosSyntax(cmd, k)
		}
	}
	verbose := props["verbose"] == "yes"
	if dry && !verbose {
		return s.rosSyntax(cmd, "dry-run")
	}
	name := props["file-name"]
	if name == "" {
		return s.rosSyntax(cmd, "import")
	}
	d := s.d
	d.mu.Lock()
	data, ok := d.cfg.files[normFilePath(name)]
	if !ok {
		d.mu.Unlock()
		return s.plain("Cannot open import file, file does not exist (:import; line 1)\n")
	}
	before := d.runningLocked()
	after, out := rosRun(before, string(data), d.opts.RejectLines, d.opts.DropLines, dry, verbose)
	if !dry && after != before {
		d.setRunningLocked(after, CommitImport, s.user)
	}
	d.mu.Unlock()
	if out == rosLoaded {
		out = "Opening script file " + name + "\n\n" + out
	}
	return s.plain(out)
}

func (s *session) rosReset(cmd string, args []string) error {
	props, bare := rosArgs(args)
	if len(bare) > 0 {
		return s.rosSyntax(cmd, bare[0])
	}
	for k, v := range props {
		switch k {
		case "no-defaults", "skip-backup", "keep-users", "caps-mode":
			if v != "yes" && v != "no" {
				return s.rosSyntax(cmd, k+"="+v)
			}
		case "run-after-reset":
		default:
			return s.rosSyntax(cmd, k)
		}
	}
	answer, err := s.ask(rosResetAsk)
	if err != nil {
		return err
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		return nil
	}
	d := s.d
	d.mu.Lock()
	text := ""
	if file := props["run-after-reset"]; file != "" {
		if data, ok := d.cfg.files[normFilePath(file)]; ok {
			// The script runs on the empty configuration at boot, as
			// an import without verbose does.
			text, _ = rosRun("", string(data), d.opts.RejectLines, d.opts.DropLines, false, false)
		}
	}
	if props["keep-users"] != "yes" {
		d.cfg.defaultUsers = true
	}
	d.setRunningLocked(text, CommitReset, s.user)
	d.cfg.downUntil = time.Now().Add(d.opts.BootTime)
	shells := make([]*session, 0, len(d.shells))
	for x := range d.shells {
		if x != s {
			shells = append(shells, x)
		}
	}
	conns := make([]net.Conn, 0, len(d.conns))
	for c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	d.log.Info("reset-configuration; rebooting")
	d.goOwned(func() { d.reboot(shells, conns, "") })
	// The login that asked goes down with the router, without a prompt.
	return errDisconnect
}

func (s *session) rosRemoveFile(cmd string, args []string) error {
	_, bare := rosArgs(args)
	if len(bare) != 1 {
		return s.rosSyntax(cmd, "remove")
	}
	d := s.d
	d.mu.Lock()
	_, ok := d.cfg.files[normFilePath(bare[0])]
	delete(d.cfg.files, normFilePath(bare[0]))
	d.mu.Unlock()
	if !ok {
		return s.plain("no such item\n")
	}
	return nil
}

func (s *session) rosCountFiles(name string) error {
	n := 0
	prefix := normFilePath(name) + "/"
	for _, f := range s.d.Files() {
		if f == normFilePath(name) || strings.HasPrefix(f, prefix) {
			n = 1
			break
		}
	}
	return s.plain(fmt.Sprintf("%d\n", n))
}

// rosCommand is one command of a script: its physical lines (a line
// ending in "\" goes on on the next), the command as one line, its menu
// and the number of its first line.
type rosCommand struct {
	line  int
	phys  []string
	text  string
	menu  string // "/ip address"; "" for a line that selects the menu
	isNav bool   // the line selects a menu
}

// rosVerbs start a command within a menu.
var rosVerbs = map[string]bool{"add": true, "set": true, "remove": true, "unset": true, "enable": true, "disable": true, "move": true}

// rosScript cuts a script into its commands, without comments and blank
// lines.
func rosScript(text string) []rosCommand {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []rosCommand
	menu := ""
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		c := rosCommand{line: i + 1, phys: []string{lines[i]}}
		joined := strings.TrimSuffix(t, "\\")
		for strings.HasSuffix(strings.TrimRight(lines[i], " "), "\\") && i+1 < len(lines) {
			i++
			c.phys = append(c.phys, lines[i])
			joined += strings.TrimSuffix(strings.TrimSpace(lines[i]), "\\")
		}
		c.text = joined
		if strings.HasPrefix(joined, "/") {
			// "/ip address" selects the menu; "/ip address add …" is a
			// command in it.
			w := strings.Fields(strings.ReplaceAll(joined, "/", " "))
			at := len(w)
			for k, x := range w {
				if rosVerbs[x] {
					at = k
					break
				}
			}
			menu = "/" + strings.Join(w[:at], " ")
			if at == len(w) {
				c.isNav, c.menu = true, menu
				out = append(out, c)
				continue
			}
			c.text = strings.Join(w[at:], " ")
		}
		c.menu = menu
		out = append(out, c)
	}
	return out
}

// rosBlock is a menu of the configuration and its commands.
type rosBlock struct {
	menu string
	cmds []rosCommand
}

func rosBlocks(text string) []rosBlock {
	var out []rosBlock
	for _, c := range rosScript(text) {
		if c.isNav {
			out = append(out, rosBlock{menu: c.menu})
			continue
		}
		if len(out) == 0 || out[len(out)-1].menu != c.menu {
			out = append(out, rosBlock{menu: c.menu})
		}
		out[len(out)-1].cmds = append(out[len(out)-1].cmds, c)
	}
	return out
}

func rosRender(blocks []rosBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		if len(bl.cmds) == 0 {
			continue
		}
		b.WriteString(bl.menu + "\n")
		for _, c := range bl.cmds {
			for _, p := range c.phys {
				b.WriteString(p + "\n")
			}
		}
	}
	return b.String()
}

// rosItem names the item a set command changes: "set [ find
// default-name=ether1 ]", "set slot1", or the menu's only item.
func rosItem(cmd string) string {
	if strings.HasPrefix(cmd, "set [") {
		if i := strings.Index(cmd, "]"); i > 0 {
			return cmd[:i+1]
		}
	}
	w := strings.Fields(cmd)
	if len(w) > 1 && !strings.Contains(w[1], "=") {
		return w[0] + " " + w[1]
	}
	return w[0]
}

// rosRun runs script on the configuration base and returns the
// configuration after it and what the router prints. A dry run only
// looks for syntax errors and changes nothing.
func rosRun(base, script string, reject, drop *regexp.Regexp, dry, verbose bool) (after, out string) {
	cmds := rosScript(script)
	stop := len(cmds)
	syntax := ""
	for i, c := range cmds {
		if at, refused := refusedSet(reject, c.text); refused {
			stop = i
			syntax = fmt.Sprintf("Script Error: syntax error (line %d column %d)\n", c.line, at+1)
			break
		}
	}
	if dry || syntax != "" && !verbose {
		if syntax != "" {
			return base, syntax
		}
		return base, rosLoaded
	}
	blocks := rosBlocks(base)
	for _, c := range cmds[:stop] {
		if c.isNav || drop != nil && drop.MatchString(c.text) {
			continue
		}
		at := -1
		for k, b := range blocks {
			if b.menu == c.menu {
				at = k
			}
		}
		if at < 0 {
			blocks = append(blocks, rosBlock{menu: c.menu})
			at = len(blocks) - 1
		}
		b := &blocks[at]
		verb := strings.Fields(c.text)[0]
		replaced := false
		for k, old := range b.cmds {
			switch {
			case verb == "add" && old.text == c.text:
				where := strings.ReplaceAll(c.menu, " ", "/")
				return rosRender(blocks), fmt.Sprintf("Script Error: failure: already have such entry (%s/add; line %d)\n", where, c.line)
			case verb == "set" && rosItem(old.text) == rosItem(c.text):
				b.cmds[k], replaced = c, true
			}
			if replaced {
				break
			}
		}
		if !replaced {
			b.cmds = append(b.cmds, c)
		}
	}
	if syntax != "" {
		return rosRender(blocks), syntax
	}
	return rosRender(blocks), rosLoaded
}
