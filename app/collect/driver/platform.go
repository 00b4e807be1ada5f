// Package driver knows each supported network platform: how to log in, turn
// paging off, which commands capture its configuration, which lines of it
// change without a configuration change, and which log messages say that it
// changed.
//
// A platform is one definition (a Platform value) registered from one small
// file per platform family (platform_<family>.go): adding a platform is one
// reviewable file plus its test data (a recording of a real device in
// testdata/recordings, or a simulator personality in app/devsim). The
// registry is the single source of truth for the platform values the API,
// the web interface and the imports accept.
package driver

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// Platform is everything backupd knows about one platform.
type Platform struct {
	// ID is the value stored on devices and templates, e.g. "cisco_ios".
	ID string
	// Name is how people call the operating system, e.g. "Cisco IOS".
	Name string
	// Vendor makes the device, e.g. "Cisco".
	Vendor string
	// Aliases are the names other tools give the platform (Oxidized
	// models, RANCID device types, Netmiko device types), lower case;
	// imports from those tools map them to ID.
	Aliases []string
	// Transports are the login methods the platform offers, "ssh" and/or
	// "telnet" (both when empty).
	Transports []string
	// DefaultCommands capture the complete, restorable configuration, one
	// command per line.
	DefaultCommands string
	// Dialogue is the command-line behaviour: prompt, pager, enable,
	// questions before the first prompt, errors.
	Dialogue Dialogue
	// Strip are lines removed from every command's output before it is
	// stored: what the device prints about the command rather than the
	// configuration (a "generating configuration…" line). Anchored, one
	// line at a time.
	Strip []string
	// Noise are the lines (or, with a group named MaskGroup, the parts of
	// lines) that change while the configuration does not.
	Noise []string
	// Secrets are what a configuration holds that must not leave the
	// box in clear text: passwords and their hashes, keys, communities.
	// Every platform also masks PEM private keys.
	Secrets []SecretRule
	// Syslog are the log messages by which the device says its
	// configuration changed.
	Syslog []SyslogPattern
	// Restore is how a stored configuration is put back on a device;
	// the zero value when the platform cannot.
	Restore Restore
	// Notes says what an operator should know: dialects, required
	// privileges, what the default commands leave out.
	Notes string
	// Custom marks a platform an administrator defined (stored in the
	// database) rather than one built in.
	Custom bool

	strip   []*regexp.Regexp
	noise   []*regexp.Regexp
	secrets *Secrets
}

// SyslogPattern recognises one kind of configuration-change log message;
// app/syslog matches incoming messages against them. A message matches
// when it holds one of Needles (a cheap literal test; none means Match
// always runs), Match finds it, and Exclude (when set) does not.
type SyslogPattern struct {
	Name    string
	Needles []string
	Match   *regexp.Regexp
	Exclude *regexp.Regexp
}

// OffersTransport reports whether the platform can be reached over method.
func (p Platform) OffersTransport(method string) bool {
	return len(p.Transports) == 0 || slices.Contains(p.Transports, strings.ToLower(method))
}

// TransportList returns the login methods the platform offers.
func (p Platform) TransportList() []string {
	if len(p.Transports) == 0 {
		return []string{"ssh", "telnet"}
	}
	return slices.Clone(p.Transports)
}

// compile checks a definition and compiles its patterns.
func (p *Platform) compile() error {
	if p.ID == "" || p.Name == "" {
		return fmt.Errorf("platform %q: an ID and a name are required", p.ID)
	}
	if strings.TrimSpace(p.DefaultCommands) == "" {
		return fmt.Errorf("platform %s: no default commands", p.ID)
	}
	if p.Dialogue.Prompt == nil {
		return fmt.Errorf("platform %s: no prompt pattern", p.ID)
	}
	for _, t := range p.Transports {
		if _, ok := LoginMethods[t]; !ok {
			return fmt.Errorf("platform %s: unknown transport %q", p.ID, t)
		}
	}
	p.strip, p.noise = nil, nil
	for _, s := range p.Strip {
		re, err := regexp.Compile(s)
		if err != nil {
			return fmt.Errorf("platform %s: output cleanup rule %q: %w", p.ID, s, err)
		}
		p.strip = append(p.strip, re)
	}
	for _, s := range p.Noise {
		re, err := regexp.Compile(s)
		if err != nil {
			return fmt.Errorf("platform %s: noise rule %q: %w", p.ID, s, err)
		}
		p.noise = append(p.noise, re)
	}
	secrets, err := newSecrets(p.Secrets)
	if err != nil {
		return fmt.Errorf("platform %s: %w", p.ID, err)
	}
	p.secrets = secrets
	for _, s := range p.Syslog {
		if s.Name == "" || s.Match == nil {
			return fmt.Errorf("platform %s: a syslog pattern needs a name and an expression", p.ID)
		}
	}
	if err := p.Restore.check(); err != nil {
		return fmt.Errorf("platform %s: %w", p.ID, err)
	}
	return nil
}

// clone returns a copy whose slices can be changed by the caller.
func (p Platform) clone() Platform {
	p.Aliases = slices.Clone(p.Aliases)
	p.Transports = slices.Clone(p.Transports)
	p.Strip = slices.Clone(p.Strip)
	p.Noise = slices.Clone(p.Noise)
	p.Secrets = slices.Clone(p.Secrets)
	p.Syslog = slices.Clone(p.Syslog)
	p.Dialogue.PagingOff = slices.Clone(p.Dialogue.PagingOff)
	p.Dialogue.PreLogin = slices.Clone(p.Dialogue.PreLogin)
	p.Restore.ConfigEnter = slices.Clone(p.Restore.ConfigEnter)
	p.Restore.ConfigExit = slices.Clone(p.Restore.ConfigExit)
	p.Restore.Save = slices.Clone(p.Restore.Save)
	p.Restore.Drop = slices.Clone(p.Restore.Drop)
	return p
}

var (
	// builtins is filled by Register from init functions, then read only.
	builtins = map[string]*Platform{}
	// custom holds the administrator's platforms; SetCustom replaces the
	// whole map at once, so readers never lock.
	custom atomic.Pointer[map[string]*Platform]
)

// Register adds a built-in platform; a second registration of an ID, or a
// definition that does not compile, panics, since it is a programming error
// found at start-up.
func Register(p Platform) {
	if _, dup := builtins[p.ID]; dup {
		panic("driver: platform registered twice: " + p.ID)
	}
	if err := p.compile(); err != nil {
		panic("driver: " + err.Error())
	}
	p.Custom = false
	builtins[p.ID] = &p
}

// SetCustom replaces the administrator-defined platforms. Their IDs must
// not clash with a built-in platform; each must compile.
func SetCustom(ps []Platform) error {
	m := make(map[string]*Platform, len(ps))
	for _, p := range ps {
		if _, clash := builtins[p.ID]; clash {
			return fmt.Errorf("platform %s: a built-in platform has this ID", p.ID)
		}
		if _, dup := m[p.ID]; dup {
			return fmt.Errorf("platform %s: defined twice", p.ID)
		}
		if err := p.compile(); err != nil {
			return err
		}
		p.Custom = true
		m[p.ID] = &p
	}
	custom.Store(&m)
	return nil
}

// Compile checks a platform definition the way SetCustom would, without
// registering it.
func Compile(p Platform) error { return p.compile() }

// Prepare checks a platform definition and returns it ready to collect
// with outside the registry (a definition tried before it is saved):
// its cleanup rules compiled for StripOutput.
func Prepare(p Platform) (Platform, error) {
	p = p.clone()
	err := p.compile()
	return p, err
}

// StripOutput removes the platform's cleanup lines from a command's
// output (see Prepare for a platform not in the registry).
func (p Platform) StripOutput(out string) string { return p.stripLines(out) }

func lookup(id string) *Platform {
	if p, ok := builtins[id]; ok {
		return p
	}
	if m := custom.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// Lookup returns the platform with id.
func Lookup(id string) (Platform, bool) {
	p := lookup(id)
	if p == nil {
		return Platform{}, false
	}
	return p.clone(), true
}

// Resolve finds a platform by its ID or one of its aliases, ignoring case.
func Resolve(name string) (Platform, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if p, ok := Lookup(name); ok {
		return p, true
	}
	for _, id := range IDs() {
		p := lookup(id)
		if slices.Contains(p.Aliases, name) {
			return p.clone(), true
		}
	}
	return Platform{}, false
}

// IDs returns every platform ID, built-in and custom, sorted.
func IDs() []string {
	ids := BuiltinIDs()
	if m := custom.Load(); m != nil {
		for id := range *m {
			ids = append(ids, id)
		}
		sort.Strings(ids)
	}
	return ids
}

// IsBuiltin reports whether id is a built-in platform (not a custom one).
func IsBuiltin(id string) bool { _, ok := builtins[id]; return ok }

// BuiltinIDs returns the IDs of the built-in platforms, sorted.
func BuiltinIDs() []string {
	ids := make([]string, 0, len(builtins))
	for id := range builtins {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Builtins returns every built-in platform, sorted by ID.
func Builtins() []Platform {
	out := make([]Platform, 0, len(builtins))
	for _, id := range BuiltinIDs() {
		out = append(out, builtins[id].clone())
	}
	return out
}

// DefaultCommands returns the platform's default command text ("" for an
// unknown platform).
func DefaultCommands(id string) string {
	if p := lookup(id); p != nil {
		return p.DefaultCommands
	}
	return ""
}

// DialogueFor returns the command-line behaviour of a platform.
func DialogueFor(id string) (Dialogue, bool) {
	p := lookup(id)
	if p == nil {
		return Dialogue{}, false
	}
	return p.clone().Dialogue, true
}

// NoiseRules returns the built-in change-detection rules of a platform
// (none for an unknown one). Each rule is tried on one line at a time; see
// MaskGroup for how a rule masks part of a line rather than all of it.
func NoiseRules(id string) []*regexp.Regexp {
	if p := lookup(id); p != nil {
		return slices.Clone(p.noise)
	}
	return nil
}

// StripOutput removes the platform's cleanup lines from a command's
// output.
func StripOutput(id, out string) string {
	p := lookup(id)
	if p == nil {
		return out
	}
	return p.stripLines(out)
}

func (p *Platform) stripLines(out string) string {
	if len(p.strip) == 0 {
		return out
	}
	lines := strings.Split(out, "\n")
	kept := lines[:0]
	for _, l := range lines {
		drop := false
		for _, re := range p.strip {
			if re.MatchString(l) {
				drop = true
				break
			}
		}
		if !drop {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func lines(cmds ...string) string { return strings.Join(cmds, "\n") }

// Encodings are the character sets a device's output can be decoded from.
var Encodings = []string{
	"utf-8", "gbk", "gb18030", "big5", "shift_jis", "euc-jp", "euc-kr",
	"latin-1", "windows-1252", "windows-1251", "koi8-r",
}

// LoginMethods are the transports a device can be reached over, with
// their default ports.
var LoginMethods = map[string]int{"ssh": 22, "telnet": 23}

// ValidHost reports whether h is an IP address or a DNS name a device can
// be dialled at. Every interface that stores a device host checks it.
func ValidHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	// Digits and dots that are no IP address ("999.1.1.1", "10.1.1") are
	// a mistyped address: no top-level domain is all digits (RFC 3696
	// section 2).
	labels := strings.Split(strings.TrimSuffix(h, "."), ".")
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return false
	}
	for _, label := range labels {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
