package backup

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/db"
)

// Issue 11, defect 4: user regular expressions reach the server as noise
// rules (settings page, "try it") and as configuration searches. RE2 is
// linear, so the fuzz targets check what is ours around it: the length
// and "matches everything" checks, the clarity of the errors, and the
// search's shortcuts (required literal, ASCII folding, whole-text
// candidates), which must find exactly the lines a plain line-by-line
// match finds.

// FuzzSearchQuery compares the search matcher on a text with the
// obvious line-by-line evaluation of the same query.
func FuzzSearchQuery(f *testing.F) {
	text := "hostname core-rtr-01\ninterface GigabitEthernet0/1\n description Uplink to KELVIN \u212a\n ip address 192.0.2.1 255.255.255.0\n!\nsnmp-server community s3cr3t RO\nbanner motd ^C Straße ſtop ^C\nlocation \u212aelvin hall\n"
	for _, s := range []struct {
		q            string
		regex, case_ bool
	}{
		{"interface", false, false},
		{"GIGABIT", false, false},
		{"Straße", false, false},
		{"STRASSE", false, false},
		{"k", false, false},
		{"K", false, true},
		{`^interface \S+`, true, false},
		{`\d+\.\d+\.\d+\.\d+`, true, false},
		{`(?i)kelvin`, true, true},
		{`kelvin\s+\x{212a}`, true, false},
		{`(community) (\w+)`, true, false},
		{`a*`, true, false},
		{`$`, true, false},
		{`\b`, true, false},
		{`(`, true, false},
		{`\z`, true, false},
		{`\Ahostname`, true, false},
		{`!\z`, true, false},
		{`x{1001}`, true, false},
		{`((a{100}){100}){100}`, true, false},
		{`[^a]`, true, false},
		{`ſ`, true, false},
		{`(?-i)Uplink`, true, false},
		{`abc(?i)DEF`, true, true},
		{strings.Repeat("a", 1001), false, false},
		{"a\nb", false, false},
		{"", true, false},
	} {
		f.Add(s.q, s.regex, s.case_, text)
		f.Add(s.q, s.regex, s.case_, strings.Repeat(text, 20))
	}
	f.Add("x", false, false, strings.Repeat("x", 3000)+"\n"+strings.Repeat("é", 700)+"x\n")

	f.Fuzz(func(t *testing.T, q string, regex, caseSensitive bool, text string) {
		opts := SearchOptions{Query: q, Regex: regex, CaseSensitive: caseSensitive}
		m, err := newMatcher(opts)
		if err != nil {
			if !errors.Is(err, ErrInvalidQuery) || len(err.Error()) <= len(ErrInvalidQuery.Error())+2 {
				t.Fatalf("query %q: unclear error %v", q, err)
			}
			return
		}
		if q == "" || len(q) > MaxSearchQuery || strings.Contains(q, "\n") {
			t.Fatalf("query %q was accepted", q)
		}
		want, wantMore := referenceSearch(t, opts, text)
		got, more, err := m.scan(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		if more != wantMore || len(got) != len(want) {
			t.Fatalf("query %q (regex %v, case %v): %d hits (more %v), line by line %d (more %v)\ntext %q\ngot %+v\nwant %+v",
				q, regex, caseSensitive, len(got), more, len(want), wantMore, text, got, want)
		}
		for i, h := range got {
			w := want[i]
			if h.lineNo != w.lineNo {
				t.Fatalf("query %q: hit %d on line %d, line by line %d", q, i, h.lineNo, w.lineNo)
			}
			if len(h.line) > MaxHitLine || !strings.Contains(w.line, h.line) {
				t.Fatalf("query %q: hit line %q is not a window of %q", q, h.line, w.line)
			}
			if len(w.line) <= MaxHitLine && fmt.Sprint(h.matches) != fmt.Sprint(w.matches) {
				t.Fatalf("query %q on line %q: matches %v, line by line %v", q, w.line, h.matches, w.matches)
			}
			for _, r := range h.matches {
				if r[0] < 0 || r[1] > len(h.line) || r[0] >= r[1] {
					t.Fatalf("query %q: match %v outside line %q", q, r, h.line)
				}
			}
			if len(h.matches) == 0 || len(h.matches) > maxMatchesPerLine {
				t.Fatalf("query %q: hit with %d matches", q, len(h.matches))
			}
		}
	})
}

// referenceSearch matches every line on its own, as the documentation
// describes a search: an ASCII substring ignoring case folds ASCII
// letters, everything else is a Go regular expression.
func referenceSearch(t *testing.T, o SearchOptions, text string) ([]lineHit, bool) {
	var find func(line string) [][2]int
	if !o.Regex && (o.CaseSensitive || isASCII(o.Query)) {
		q := o.Query
		fold := func(s string) string { return s }
		if !o.CaseSensitive {
			fold = asciiLower
		}
		q = fold(q)
		find = func(line string) [][2]int {
			line = fold(line)
			var out [][2]int
			for off := 0; len(out) < maxMatchesPerLine; {
				i := strings.Index(line[off:], q)
				if i < 0 {
					break
				}
				out = append(out, [2]int{off + i, off + i + len(q)})
				off += i + len(q)
			}
			return out
		}
	} else {
		pattern := o.Query
		if !o.Regex {
			pattern = regexp.QuoteMeta(pattern)
		}
		if !o.CaseSensitive {
			pattern = "(?i)" + pattern
		}
		re := regexp.MustCompile(pattern)
		find = func(line string) [][2]int {
			var out [][2]int
			for _, r := range re.FindAllStringIndex(line, maxMatchesPerLine) {
				if r[1] > r[0] {
					out = append(out, [2]int{r[0], r[1]})
				}
			}
			return out
		}
	}
	var hits []lineHit
	for i, line := range strings.Split(text, "\n") {
		if i == strings.Count(text, "\n") && line == "" {
			break
		}
		if m := find(line); len(m) > 0 {
			if len(hits) == MaxHitsPerVersion {
				return hits, true
			}
			hits = append(hits, lineHit{lineNo: i + 1, line: line, matches: m})
		}
	}
	return hits, false
}

// FuzzNoiseRule takes a user noise rule as the settings page and the
// "try it" form do: validated, then applied with the platform's built-in
// rules to a configuration.
func FuzzNoiseRule(f *testing.F) {
	platforms := driver.IDs()
	cfg := "Building configuration...\nCurrent configuration : 1234 bytes\n! Last configuration change at 10:00:00 UTC\nhostname r1\n set psksecret ENC abcdef==\n set password ENC SH2xyz\nntp clock-period 17179869\n"
	for i, p := range []string{
		`^! Last configuration change at `,
		`^ntp clock-period \d+$`,
		`set \S+ ENC (?P<mask>\S+)`,
		`(?P<mask>\d+)`,
		`(?P<mask>)x`,
		`(?P<mask>a)|(?P<mask>b)`,
		`(?P<mask>\w)(?P<mask>\w)`,
		`.*`,
		`x*`,
		`\S`,
		`[\x01-\x03]`,
		`(`,
		`[z-a]`,
		`\p{Nope}`,
		`x{1001}`,
		strings.Repeat("a", 1001),
		"   ",
		"",
		`(?i)HOSTNAME`,
		`^$`,
		"\x00",
	} {
		f.Add(p, uint8(i), cfg)
	}

	f.Fuzz(func(t *testing.T, pattern string, platform uint8, text string) {
		p := ""
		if int(platform) < len(platforms) {
			p = platforms[platform]
		}
		rules := []db.NoiseRule{{Pattern: pattern, Platform: p}}
		err := ValidateNoiseRules(rules)
		if err != nil {
			var bad *NoiseRuleError
			if !errors.As(err, &bad) || bad.Index != 0 || bad.Field != "pattern" || bad.Message == "" {
				t.Fatalf("pattern %q: unclear error %#v", pattern, err)
			}
			if _, err := NewNoiseFilter(p, rules); err == nil {
				t.Fatalf("pattern %q: refused by the check, taken by the filter", pattern)
			}
			return
		}
		if strings.TrimSpace(pattern) == "" || len(pattern) > MaxNoisePatternSize {
			t.Fatalf("pattern %q was accepted", pattern)
		}
		filter, err := NewNoiseFilter(p, rules)
		if err != nil {
			t.Fatalf("pattern %q: valid, but the filter refused it: %v", pattern, err)
		}
		if filter.IsNoise(noiseProbe) {
			t.Fatalf("pattern %q makes every line noise", pattern)
		}
		norm := Normalise(text)
		stripped := filter.Strip(norm)
		if len(stripped) > len(norm)+1 {
			t.Fatalf("pattern %q: stripped text is longer (%d) than the text (%d)", pattern, len(stripped), len(norm))
		}
		if Changed(text, text, filter) && text != "" {
			t.Fatalf("pattern %q: a text differs from itself", pattern)
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(norm, "\n"), "\n") {
			out, keep := filter.stripLine(line)
			if keep && len(out) > len(line) {
				t.Fatalf("pattern %q: line %q masked to longer %q", pattern, line, out)
			}
			if !keep && !filter.IsNoise(line) {
				t.Fatalf("pattern %q: line %q dropped but not called noise", pattern, line)
			}
		}
	})
}
