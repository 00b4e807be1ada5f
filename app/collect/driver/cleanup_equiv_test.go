package driver

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The expressions CleanLines used before it became a line terminal: the
// cursor-left and erase-to-end escapes turned into backspaces and a
// truncation mark, then every other escape removed.
var (
	ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78DEHM])`)
	cursorBack = regexp.MustCompile(`\x1b\[([0-9]{1,3})D`)
	eraseLine  = regexp.MustCompile(`\x1b\[0?K`)
)

// cleanLinesBefore is CleanLines as it was before its fast path: three
// expressions over every output, then "\r\n" replaced in a copy. It is
// the reference for the escapes it knew; the ones it did not (cursor
// forward and column, erase to the start or of the whole line) are
// checked in TestCleanLines.
func cleanLinesBefore(raw []byte) []string {
	raw = cursorBack.ReplaceAllFunc(raw, func(m []byte) []byte {
		n := 0
		for _, d := range m[2 : len(m)-1] {
			n = n*10 + int(d-'0')
		}
		return bytes.Repeat([]byte{'\b'}, n)
	})
	raw = eraseLine.ReplaceAll(raw, []byte{truncateMark})
	raw = ansiEscape.ReplaceAll(raw, nil)
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(resolveLine(line), " \t\r")
	}
	return lines
}

// The session's cleaning (cleanText, CleanLines, hasControl) gives what
// it gave before its fast paths, on every recorded device output and on
// random terminal debris: escapes or none, "\r" runs before "\n",
// backspaces, NULs, control bytes and invalid UTF-8.
func TestCleanFastPathsMatchBefore(t *testing.T) {
	var inputs []string
	files, _ := filepath.Glob(filepath.Join("testdata", "recordings", "*"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(raw), strings.ReplaceAll(string(raw), "\n", "\r\n"))
	}
	if len(inputs) == 0 {
		t.Fatal("no recordings found")
	}
	pieces := []string{"a", "hostname r1", " ", "\t", "\r", "\r\n", "\r\r\n", "\n", "\b", "\x00", "\x01", "\x07",
		"\x1b[K", "\x1b[0K", "\x1b[12D", "\x1b[1;32m", "\x1b]0;title\x07", "\x1b", "\x7f", "é", "\xff", "\xe4\xb8", "中"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	plainSeen := 0
	defer func() {
		if plainSeen < len(files) {
			t.Errorf("only %d outputs were found plain", plainSeen)
		}
	}()
	for _, in := range inputs {
		want := cleanLinesBefore([]byte(in))
		if got := CleanLines([]byte(in)); !slices.Equal(got, want) {
			t.Fatalf("CleanLines(%q) = %q, want %q", in, got, want)
		}
		wantText := cleanLinesBefore([]byte(in))
		if strings.Contains(in, "\x1b]") {
			wantText = cleanLinesBefore(osc.ReplaceAll([]byte(in), nil))
		}
		got, plain := cleanText(in)
		if !slices.Equal(got, wantText) {
			t.Fatalf("cleanText(%q) = %q, want %q", in, got, wantText)
		}
		if plain {
			plainSeen++
			if slices.ContainsFunc(got, hasControl) {
				t.Fatalf("cleanText(%q) reports plain lines, but %q holds control characters", in, got)
			}
		}
		// finish gives the same with plain lines unchecked as checked.
		out, err := finish(Dialogue{}, "show", slices.Clone(got), plain)
		wantOut, wantErr := finish(Dialogue{}, "show", slices.Clone(got), false)
		if out != wantOut || (err == nil) != (wantErr == nil) {
			t.Fatalf("finish of %q: %q, %v; want %q, %v", in, out, err, wantOut, wantErr)
		}
		if got, want := hasControl(in), strings.ContainsFunc(in, isControl); got != want {
			t.Fatalf("hasControl(%q) = %v, want %v", in, got, want)
		}
	}
}
