package driver

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"
)

// SecretGroup is the name of the subexpression a secret rule masks: in
// every match of the rule, the text of each group of that name is a
// secret (a password, its hash, a key, a community), and the rest of the
// line stays as the device wrote it.
const SecretGroup = "secret"

// SecretRule finds one kind of secret in a platform's configuration.
// A line rule (Match) masks the SecretGroup groups of a line; a block
// rule (Begin and End) masks every line between a line Begin matches
// and the next line End matches, both of those kept (a PEM private
// key's body between its BEGIN and END lines). Either Match or Begin
// and End is set. The End line itself is tried by every rule, as any
// other line is.
type SecretRule struct {
	// Name says what the rule masks, in the secrets report: "SNMP
	// community", "enable secret".
	Name  string
	Match string
	Begin string
	End   string
}

// secretRule is a compiled SecretRule.
type secretRule struct {
	match, begin, end *regexp.Regexp
	groups            []int
	// needles are texts one of which every line the rule matches (its
	// Begin line, for a block) holds, lower-cased: a line without any is
	// passed over without running the expression. None: every line is
	// tried.
	needles []string
}

// privateKeyBlock is on every platform: a PEM private key (RSA, EC,
// DSA, PKCS#8, encrypted or not, OpenSSH's) that a configuration
// embeds, as FortiOS, RouterOS scripts, Opengear and Linux files do.
// Certificates are public and stay.
var privateKeyBlock = SecretRule{
	Name:  "private key (PEM)",
	Begin: `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----`,
	End:   `-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`,
}

// compileSecret checks one rule and compiles it; the error names what is
// wrong in words for a definition's author.
func compileSecret(r SecretRule) (secretRule, error) {
	var c secretRule
	if strings.TrimSpace(r.Name) == "" {
		return c, fmt.Errorf("a secret rule needs a name")
	}
	switch {
	case r.Match != "" && (r.Begin != "" || r.End != ""):
		return c, fmt.Errorf("secret rule %q: set either match or begin and end, not both", r.Name)
	case r.Match != "":
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return c, fmt.Errorf("secret rule %q: %w", r.Name, err)
		}
		for i, name := range re.SubexpNames() {
			if name == SecretGroup {
				c.groups = append(c.groups, i)
			}
		}
		if len(c.groups) == 0 {
			return c, fmt.Errorf("secret rule %q: no group named %q marks the secret, as in (?P<secret>\\S+)", r.Name, SecretGroup)
		}
		c.match = re
		c.needles = needlesOf(r.Match)
	case r.Begin != "" && r.End != "":
		b, err := regexp.Compile(r.Begin)
		if err != nil {
			return c, fmt.Errorf("secret rule %q: begin: %w", r.Name, err)
		}
		e, err := regexp.Compile(r.End)
		if err != nil {
			return c, fmt.Errorf("secret rule %q: end: %w", r.Name, err)
		}
		if b.MatchString("") || e.MatchString("") {
			return c, fmt.Errorf("secret rule %q: begin and end must not match an empty line", r.Name)
		}
		c.begin, c.end = b, e
		c.needles = needlesOf(r.Begin)
	default:
		return c, fmt.Errorf("secret rule %q: set match, or begin and end", r.Name)
	}
	return c, nil
}

// needlesOf finds literals of which every match of expr holds one:
// lower-cased, so that they are looked for in lower-cased text (which
// can only find more lines than the expression matches, never fewer).
// None when no such set of literals of 3 bytes or more is found.
func needlesOf(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	set := needles(re.Simplify())
	for i, n := range set {
		// Text is lower-cased for ASCII letters only: a needle with
		// other letters could miss a line, so the rule tries them all.
		for _, c := range n {
			if c >= utf8.RuneSelf {
				return nil
			}
		}
		set[i] = strings.ToLower(n)
	}
	return set
}

// needles is needlesOf on a parsed expression.
func needles(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if lit := string(re.Rune); len(lit) >= 3 {
			return []string{lit}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return needles(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needles(re.Sub[0])
		}
	case syntax.OpConcat:
		// The part whose shortest literal is longest.
		var best []string
		for _, sub := range re.Sub {
			if set := needles(sub); set != nil && (best == nil || shortest(set) > shortest(best)) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set := needles(sub)
			if set == nil {
				return nil
			}
			all = append(all, set...)
		}
		return all
	}
	return nil
}

func shortest(set []string) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// may reports whether a line, lower-cased, can match the rule (its
// Begin, for a block).
func (r *secretRule) may(lower string) bool {
	if r.needles == nil {
		return true
	}
	for _, n := range r.needles {
		if strings.Contains(lower, n) {
			return true
		}
	}
	return false
}

// Secrets are a platform's compiled secret rules, ready to mask text.
type Secrets struct {
	rules []SecretRule
	c     []secretRule
}

// SecretsOf returns the secret rules of a platform: its own and the
// private key block every platform has. An unknown platform has that
// block only.
func SecretsOf(id string) *Secrets {
	if p := lookup(id); p != nil {
		return p.secrets
	}
	return universalSecrets
}

// SecretSet returns the platform's compiled secret rules (those of a
// definition that went through Prepare or the registry).
func (p Platform) SecretSet() *Secrets {
	if p.secrets == nil {
		return universalSecrets
	}
	return p.secrets
}

var universalSecrets = mustSecrets(nil)

func mustSecrets(rules []SecretRule) *Secrets {
	s, err := newSecrets(rules)
	if err != nil {
		panic("driver: " + err.Error())
	}
	return s
}

func newSecrets(rules []SecretRule) (*Secrets, error) {
	all := append(append([]SecretRule{}, rules...), privateKeyBlock)
	s := &Secrets{rules: all, c: make([]secretRule, len(all))}
	for i, r := range all {
		c, err := compileSecret(r)
		if err != nil {
			return nil, err
		}
		s.c[i] = c
	}
	return s, nil
}

// Rules returns the rules, in the order their counts are reported.
func (s *Secrets) Rules() []SecretRule { return append([]SecretRule(nil), s.rules...) }

// SecretScanner masks a text one line at a time, remembering whether it
// is inside a block rule's lines.
type SecretScanner struct {
	s     *Secrets
	block int // index of the open block rule, -1 outside any
	spans [][2]int
}

// Scanner starts masking a text.
func (s *Secrets) Scanner() *SecretScanner { return &SecretScanner{s: s, block: -1} }

// Line masks one line: each secret's text is replaced by mark(secret).
// It returns the line as masked and the rule that masked it (the first,
// when several did), -1 when none did.
func (sc *SecretScanner) Line(line string, mark func(secret string) string) (string, int) {
	if sc.block >= 0 {
		r := &sc.s.c[sc.block]
		if !r.end.MatchString(line) {
			body := strings.TrimSpace(line)
			if body == "" {
				return line, -1
			}
			i := strings.Index(line, body)
			return line[:i] + mark(body) + line[i+len(body):], sc.block
		}
		// The end line is a line like any other: it may hold a secret,
		// or open the next block (YAML's "auth-sha:" key, its value's
		// line, then "encrypt-aes:").
		sc.block = -1
	}
	lower := asciiLower(line)
	sc.spans = sc.spans[:0]
	first := -1
	for i := range sc.s.c {
		r := &sc.s.c[i]
		if !r.may(lower) {
			continue
		}
		if r.begin != nil {
			// The Begin line itself keeps its text, but for the
			// secrets line rules find on it.
			if sc.block < 0 && r.begin.MatchString(line) {
				sc.block = i
			}
			continue
		}
		for _, m := range r.match.FindAllStringSubmatchIndex(line, -1) {
			for _, g := range r.groups {
				if start, end := m[2*g], m[2*g+1]; start >= 0 && end > start {
					sc.spans = append(sc.spans, [2]int{start, end})
					if first < 0 {
						first = i
					}
				}
			}
		}
	}
	if len(sc.spans) == 0 {
		return line, first
	}
	return replaceSpans(line, sc.spans, mark), first
}

// replaceSpans replaces the parts of line that spans cover (overlapping
// spans merge into one) with mark of their text.
func replaceSpans(line string, spans [][2]int, mark func(string) string) string {
	// Few spans per line: an insertion sort keeps it allocation free.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j][0] < spans[j-1][0]; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	var b strings.Builder
	b.Grow(len(line) + 16)
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] < end; i++ {
			end = max(end, spans[i][1])
		}
		if start < last {
			start = last
		}
		b.WriteString(line[last:start])
		b.WriteString(mark(line[start:end]))
		last = end
	}
	b.WriteString(line[last:])
	return b.String()
}

// asciiLower lower-cases the ASCII letters of s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Mask masks every secret of a text ("\n"-separated lines): each is
// replaced by mark(secret), and counts[i] (when counts has a place for
// every rule) grows by the lines rule i masked. Lines stay lines. Only
// the lines holding one of a rule's needles, and those inside a block,
// run an expression: the needles are found in the whole text at once.
func (s *Secrets) Mask(text string, mark func(secret string) string, counts []int) string {
	if text == "" {
		return text
	}
	lower := asciiLower(text)
	// Line starts, to turn the offsets of needles into lines.
	starts := make([]int, 1, strings.Count(text, "\n")+1)
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	every := false
	candidate := make([]bool, len(starts))
	seen := map[string]bool{}
	for i := range s.c {
		r := &s.c[i]
		if r.needles == nil {
			every = true
			break
		}
		for _, n := range r.needles {
			if seen[n] {
				continue
			}
			seen[n] = true
			for at := 0; ; {
				k := strings.Index(lower[at:], n)
				if k < 0 {
					break
				}
				at += k
				line := sort.SearchInts(starts, at+1) - 1
				candidate[line] = true
				// On to the next line: one hit is enough.
				if line+1 >= len(starts) {
					break
				}
				at = starts[line+1]
			}
		}
	}
	sc := s.Scanner()
	var b strings.Builder
	b.Grow(len(text) + len(text)/32)
	for i, start := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1] - 1
		}
		line := text[start:end]
		if i > 0 {
			b.WriteByte('\n')
		}
		if !every && !candidate[i] && sc.block < 0 {
			b.WriteString(line)
			continue
		}
		out, rule := sc.Line(line, mark)
		if rule >= 0 && rule < len(counts) {
			counts[rule]++
		}
		b.WriteString(out)
	}
	return b.String()
}
