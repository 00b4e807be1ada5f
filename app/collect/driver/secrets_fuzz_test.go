package driver

import (
	"strings"
	"testing"
)

// FuzzSecretMask masks any text with a custom platform's rules, of any
// expression an administrator may write: no panic, lines stay lines (as
// many, the unmasked ones as they were), and the text-at-once path
// (Secrets.Mask) agrees with the line-at-a-time one (SecretScanner).
func FuzzSecretMask(f *testing.F) {
	f.Add("enable secret 9 $9$abc$def\nsnmp-server community Pub RO\n", `^snmp-server community (?P<secret>\S+)`, "-----BEGIN", "-----END")
	f.Add("a\n-----BEGIN\nx\ny\n-----END\nb", `(?P<secret>)|(?P<secret>a*)`, "BEGIN", "END")
	f.Add("", `(?i)password (?P<secret>\S+)`, "x", "y")
	f.Add("\n\n\nkey 7 ABC\r\n\xff\xfe", `key 7 (?P<secret>.*)`, `^\s*$x`, `.`)
	f.Fuzz(func(t *testing.T, text, match, begin, end string) {
		if len(text) > 1<<16 || len(match) > 512 || len(begin) > 512 || len(end) > 512 {
			return
		}
		s, err := newSecrets([]SecretRule{{Name: "fuzz", Match: match}, {Name: "block", Begin: begin, End: end}})
		if err != nil {
			return // refused, as a definition would be
		}
		mark := func(string) string { return "<secret:000000>" }
		whole := s.Mask(text, mark, make([]int, len(s.Rules())))
		in, out := strings.Split(text, "\n"), strings.Split(whole, "\n")
		if len(in) != len(out) {
			t.Fatalf("%d lines became %d", len(in), len(out))
		}
		sc := s.Scanner()
		for i, l := range in {
			got, _ := sc.Line(l, mark)
			if got != out[i] {
				t.Fatalf("line %d: at once %q, a line at a time %q", i+1, out[i], got)
			}
			if out[i] != l && !strings.Contains(out[i], "<secret:000000>") {
				t.Fatalf("line %d changed without a marker: %q → %q", i+1, l, out[i])
			}
		}
	})
}
