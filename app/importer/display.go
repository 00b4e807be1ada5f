package importer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a skipped line shows of itself. A message about a line names its
// number and only the fields that are not secret (name, model, host,
// group, state), each cut to MaxShown characters with its control and
// format characters escaped; a line that does not split as its layout
// says is never echoed (its columns cannot be told apart, a password
// among them), only its length and field count. So a wrong delimiter, a
// NUL or a 10 MB line never reaches a terminal or a page as it is.

// MaxShown is the longest field value a message shows, in characters: a
// device name's limit, so a valid name is never cut.
const MaxShown = 128

// Printable is s as a message may show it: control and format characters
// (NUL, ESC, DEL, bidirectional overrides, …) written as \t, \n, \r,
// \xNN or \uNNNN, bytes that are not UTF-8 as \xNN, and at most MaxShown
// characters, ending in "…" when cut.
func Printable(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		if n == MaxShown {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
		n++
	}
	return b.String()
}

// hasControl reports a control or format character in s (Printable
// would escape it).
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// newSkip is a skipped line whose name and string arguments are made
// Printable: every Skip is built here, so no interface can show more.
func newSkip(line int, name, code string, args ...any) Skip {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Printable(s)
		}
	}
	return Skip{Line: line, Name: Printable(name), Code: code, Args: args}
}
