package syslog

import (
	"fmt"
	"regexp"
	"strings"

	"backupd/app/collect/driver"
)

// Pattern recognises one kind of configuration-change message.
//
// A message matches when it holds one of Needles (a cheap literal test
// that keeps a flood of unrelated lines away from the regular
// expression; none means the expression always runs), Match finds it,
// and Exclude (when set) does not: the ASA and Huawei command records
// also log read-only commands such as "show".
//
// Platforms names the driver IDs (app/collect/driver) the pattern was
// written for. It documents and groups; it does not filter: a message
// matches whatever platform its device is set to, because a device set
// to the wrong platform should still get its backup.
type Pattern struct {
	Name      string
	Platforms []string
	Needles   []string
	Match     *regexp.Regexp
	Exclude   *regexp.Regexp
	BuiltIn   bool
}

// matches reports whether text is a configuration change for p.
func (p *Pattern) matches(text string) bool {
	if len(p.Needles) > 0 {
		found := false
		for _, n := range p.Needles {
			if strings.Contains(text, n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if !p.Match.MatchString(text) {
		return false
	}
	return p.Exclude == nil || !p.Exclude.MatchString(text)
}

// Limits on user patterns: a name fits a form field, an expression stays
// small enough that matching every message against it stays cheap (Go's
// regexp runs in time linear in the input, so there is no catastrophic
// backtracking to fear, only size).
const (
	MaxPatternName = 64
	MaxPatternExpr = 512
	MaxUserPattern = 50
)

// CompilePattern validates a user pattern: a name and a Go regular
// expression (RE2 syntax, https://golang.org/s/re2syntax) matched
// anywhere in the message text. Errors say what is wrong in words a user
// can act on.
func CompilePattern(name, expr string) (Pattern, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return Pattern{}, fmt.Errorf("syslog pattern: a name is required")
	case len(name) > MaxPatternName:
		return Pattern{}, fmt.Errorf("syslog pattern %q: the name is longer than %d characters", name[:MaxPatternName], MaxPatternName)
	case strings.TrimSpace(expr) == "":
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression is empty", name)
	case len(expr) > MaxPatternExpr:
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression is %d characters long, at most %d are allowed", name, len(expr), MaxPatternExpr)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, fmt.Errorf("syslog pattern %q: not a valid regular expression: %w", name, err)
	}
	if re.MatchString("") {
		return Pattern{}, fmt.Errorf("syslog pattern %q: the regular expression matches an empty message, so every message would trigger a backup", name)
	}
	return Pattern{Name: name, Match: re}, nil
}

// BuiltinPatterns returns the configuration-change messages backupd
// knows, one Pattern per kind of message, from the platform definitions
// (app/collect/driver): a pattern several platforms share appears once,
// naming all of them. The sample lines in patterns_test.go, each with
// where it was found, prove every one.
func BuiltinPatterns() []Pattern {
	var out []Pattern
	at := map[string]int{}
	for _, p := range driver.Builtins() {
		for _, s := range p.Syslog {
			if i, ok := at[s.Name]; ok {
				out[i].Platforms = append(out[i].Platforms, p.ID)
				continue
			}
			at[s.Name] = len(out)
			out = append(out, Pattern{Name: s.Name, Platforms: []string{p.ID}, Needles: s.Needles, Match: s.Match, Exclude: s.Exclude})
		}
	}
	return out
}

// Matcher holds the patterns a listener tries, built-in ones first.
type Matcher struct {
	patterns []Pattern
}

// NewMatcher returns a matcher over the built-in patterns plus user's,
// which must come from CompilePattern (at most MaxUserPattern of them).
func NewMatcher(user []Pattern) (*Matcher, error) {
	if len(user) > MaxUserPattern {
		return nil, fmt.Errorf("syslog patterns: %d user patterns, at most %d are allowed", len(user), MaxUserPattern)
	}
	seen := make(map[string]bool)
	all := BuiltinPatterns()
	for i := range all {
		all[i].BuiltIn = true
		seen[all[i].Name] = true
	}
	for _, p := range user {
		if p.Match == nil {
			return nil, fmt.Errorf("syslog pattern %q: not compiled (use CompilePattern)", p.Name)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("syslog pattern %q: the name is already used", p.Name)
		}
		seen[p.Name] = true
		p.BuiltIn = false
		all = append(all, p)
	}
	return &Matcher{patterns: all}, nil
}

// Match returns the name of the first pattern m matches.
func (x *Matcher) Match(m *Message) (string, bool) {
	text := m.matchText()
	for i := range x.patterns {
		if x.patterns[i].matches(text) {
			return x.patterns[i].Name, true
		}
	}
	return "", false
}
