package backup

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// normaliseBefore is Normalise as it was before its fast path.
func normaliseBefore(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var b strings.Builder
	blank := 0
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

// Normalise gives what it gave before its fast path on random texts of
// lines, blank lines, trailing spaces and tabs, CR and CRLF endings, and
// on each of them with the normal form's final "\n" and without it.
func TestNormaliseFastPathMatchesBefore(t *testing.T) {
	pieces := []string{"hostname r1", "!", " description x", "\n", "\n", "\n", "\r\n", "\r", " ", "\t", "\v", "\f", "é", "\x00"}
	r := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		for _, in := range []string{b.String(), normaliseBefore(b.String()), strings.TrimSuffix(normaliseBefore(b.String()), "\n")} {
			if got, want := Normalise(in), normaliseBefore(in); got != want {
				t.Fatalf("Normalise(%q) = %q, want %q", in, got, want)
			}
			if _, ok := normalForm(in); ok {
				fast++
			}
		}
	}
	if fast < 10000 {
		t.Fatalf("the fast path served only %d of 60,000 texts", fast)
	}
}
