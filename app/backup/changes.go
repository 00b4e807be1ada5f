package backup

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"backupd/app/collect/driver"
	"backupd/db"
)

// noiseMark replaces the masked part of a line in Strip's output. Cleaned
// device output never holds a NUL, so a mask cannot collide with text.
const noiseMark = "\x00"

// noiseRule is one compiled rule: it drops every line it matches, or, when
// it has subexpressions named driver.MaskGroup, masks only their text.
type noiseRule struct {
	re   *regexp.Regexp
	mask []int // submatch indexes of the mask groups; none: drop the line
	// prefix is text every match starts with: a line without it is
	// skipped without running the expression.
	prefix string
}

func newNoiseRule(re *regexp.Regexp) noiseRule {
	r := noiseRule{re: re}
	r.prefix, _ = re.LiteralPrefix()
	for i, name := range re.SubexpNames() {
		if name == driver.MaskGroup {
			r.mask = append(r.mask, i)
		}
	}
	return r
}

// NoiseFilter decides which parts of a configuration are noise: lines a
// device rewrites without any change of configuration (timestamps,
// counters, re-encrypted secrets). It serves comparison only; stored text
// keeps every line.
type NoiseFilter struct {
	rules []noiseRule
}

// NewNoiseFilter combines the platform's built-in rules with the user's
// rules for that platform (a rule with Platform "" applies to all). User
// rules follow the built-in convention: a match ignores the whole line,
// unless the pattern has a group named "mask", whose text alone is then
// ignored. Only the rules that apply to platform are compiled, so a bad
// rule for one platform does not stop the others; its error names it.
func NewNoiseFilter(platform string, user []db.NoiseRule) (*NoiseFilter, error) {
	f := &NoiseFilter{}
	for _, re := range driver.NoiseRules(platform) {
		f.rules = append(f.rules, newNoiseRule(re))
	}
	for i, r := range user {
		if r.Platform != "" && r.Platform != platform {
			continue
		}
		re, err := compileNoiseRule(i, r)
		if err != nil {
			return nil, err
		}
		f.rules = append(f.rules, newNoiseRule(re))
	}
	return f, nil
}

// maskLine applies the rules to one line: drop reports that the whole line
// is noise; otherwise out is the line with masked parts replaced and
// masked whether anything was.
func (f *NoiseFilter) maskLine(line string) (out string, drop, masked bool) {
	out = line
	if f == nil {
		return out, false, false
	}
	for _, r := range f.rules {
		if r.prefix != "" && !strings.Contains(out, r.prefix) {
			continue
		}
		if len(r.mask) == 0 {
			if r.re.MatchString(out) {
				return "", true, false
			}
			continue
		}
		matches := r.re.FindAllStringSubmatchIndex(out, -1)
		if matches == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for _, m := range matches {
			for _, g := range r.mask {
				start, end := m[2*g], m[2*g+1]
				if start < last || end <= start {
					continue // group not taken, empty, or overlapping
				}
				b.WriteString(out[last:start])
				b.WriteString(noiseMark)
				last = end
				masked = true
			}
		}
		if last > 0 {
			b.WriteString(out[last:])
			out = b.String()
		}
	}
	return out, false, masked
}

// IsNoise reports whether a line is noise, wholly or in part: a diff view
// dims such lines.
func (f *NoiseFilter) IsNoise(line string) bool {
	_, drop, masked := f.maskLine(line)
	return drop || masked
}

// stripLine is line as compared: "" and false when it is dropped.
func (f *NoiseFilter) stripLine(line string) (string, bool) {
	out, drop, _ := f.maskLine(line)
	return out, !drop
}

// Strip returns text ("\n"-separated, as Normalise leaves it) without its
// noise: noise lines removed, masked parts replaced by a fixed mark. Two
// versions whose stripped texts are equal differ only by noise. A nil
// filter strips nothing.
func (f *NoiseFilter) Strip(text string) string {
	if f == nil || len(f.rules) == 0 || text == "" {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for line := range strings.SplitSeq(text, "\n") {
		out, keep := f.stripLine(line)
		if !keep {
			continue
		}
		b.WriteString(out)
		b.WriteByte('\n')
	}
	return b.String()
}

// Normalise is the form a configuration is stored and hashed in: "\n"
// line endings, no trailing whitespace on any line, no blank lines at the
// start or end, and exactly one final "\n" ("" stays ""). Nothing else is
// touched; in particular secrets are kept as the device printed them.
func Normalise(text string) string {
	if out, ok := normalForm(text); ok {
		return out
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var b strings.Builder
	b.Grow(len(text) + 1)
	blank := 0 // blank lines seen since the last written line
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, " \t\v\f")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			for range blank {
				b.WriteByte('\n')
			}
		}
		blank = 0
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// normalForm is Normalise(text) when text needs at most its final "\n":
// no '\r', no trailing whitespace on a line, no blank line at the start
// or end. Collected text is mostly so, and one pass over its bytes is
// cheaper than splitting it into lines and joining them again.
func normalForm(text string) (string, bool) {
	if text == "" {
		return "", true
	}
	if text[0] == '\n' {
		return "", false
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\r':
			return "", false
		case '\n':
			if isLineSpace(text[i-1]) {
				return "", false
			}
		}
	}
	switch last := text[len(text)-1]; {
	case last == '\n' && text[len(text)-2] == '\n':
		return "", false
	case last == '\n':
		return text, true
	case isLineSpace(last):
		return "", false
	}
	return text + "\n", true
}

// isLineSpace is what Normalise trims from the end of a line.
func isLineSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

// Changed decides whether cur is a new version after prev, noise ignored.
// prev is "" when there is nothing to compare with, and then any text is
// new. (The engine does not ask about a device's first version: that is
// recorded as its first backup, which is not a change.)
func Changed(prev, cur string, f *NoiseFilter) bool {
	if prev == "" {
		return true
	}
	prev, cur = Normalise(prev), Normalise(cur)
	if prev == cur {
		return false
	}
	return f.Strip(prev) != f.Strip(cur)
}

// NoiseRuleError is a user noise rule that cannot be used. Index is its
// position in the list (from 0; -1 for the list as a whole) and Field the
// rule's JSON field, so that a form or an API error can point at it.
type NoiseRuleError struct {
	Index   int
	Field   string
	Message string
}

func (e *NoiseRuleError) Error() string {
	if e.Index < 0 {
		return "noise rules: " + e.Message
	}
	return fmt.Sprintf("noise rules[%d].%s: %s", e.Index, e.Field, e.Message)
}

// Limits on a user rule list.
const (
	MaxNoiseRules       = 200
	MaxNoisePatternSize = 1000
)

// noiseProbe is a line no sensible rule matches: a pattern that matches it
// (".*", "x*", "\S") would match every line and hide every change.
const noiseProbe = "\x01\x02\x03"

func compileNoiseRule(i int, r db.NoiseRule) (*regexp.Regexp, error) {
	switch {
	case strings.TrimSpace(r.Pattern) == "":
		return nil, &NoiseRuleError{i, "pattern", "is empty"}
	case len(r.Pattern) > MaxNoisePatternSize:
		return nil, &NoiseRuleError{i, "pattern", fmt.Sprintf("is longer than %d characters", MaxNoisePatternSize)}
	}
	re, err := regexp.Compile(r.Pattern)
	if err != nil {
		return nil, &NoiseRuleError{i, "pattern", fmt.Sprintf("%q is not a valid regular expression: %v", r.Pattern, unwrapSyntax(err))}
	}
	if re.MatchString(noiseProbe) {
		return nil, &NoiseRuleError{i, "pattern", fmt.Sprintf("%q matches any line, so every change would be ignored", r.Pattern)}
	}
	return re, nil
}

// unwrapSyntax drops the "error parsing regexp: " prefix the message of a
// *syntax.Error starts with.
func unwrapSyntax(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// ValidateNoiseRules checks a user rule list before it is saved: each
// pattern must compile as a Go regular expression and must not match
// every line; a platform, when given, must be a known one. The error is a
// *NoiseRuleError naming the first bad rule.
func ValidateNoiseRules(rules []db.NoiseRule) error {
	if len(rules) > MaxNoiseRules {
		return &NoiseRuleError{-1, "", fmt.Sprintf("at most %d rules are allowed", MaxNoiseRules)}
	}
	for i, r := range rules {
		if _, err := compileNoiseRule(i, r); err != nil {
			return err
		}
		if r.Platform != "" {
			if _, ok := driver.Lookup(r.Platform); !ok {
				return &NoiseRuleError{i, "platform", fmt.Sprintf("%q is not a known platform", r.Platform)}
			}
		}
	}
	return nil
}

// SaveNoiseRules validates the user's rules and stores them.
func SaveNoiseRules(ctx context.Context, store *db.Store, rules []db.NoiseRule) error {
	if err := ValidateNoiseRules(rules); err != nil {
		return err
	}
	if rules == nil {
		rules = []db.NoiseRule{}
	}
	return store.PutSetting(ctx, db.SettingNoiseRules, rules)
}
