package driver

import (
	"bytes"
	"regexp"
	"strings"
)

// ansiEscape matches the terminal control sequences devices emit: CSI
// sequences (colours, cursor moves, erase), charset selection and the
// two-byte keypad modes.
var ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78DEHM])`)

// cursorBack and eraseLine are the escapes pagers use to wipe their prompt
// ("---- More ----" followed by ESC[42D and spaces); they are turned into
// backspaces and a truncation mark before the other escapes are dropped.
var (
	cursorBack = regexp.MustCompile(`\x1b\[([0-9]{1,3})D`)
	eraseLine  = regexp.MustCompile(`\x1b\[0?K`)
)

// truncateMark stands for "erase to the end of the line" inside resolveLine.
const truncateMark = '\x01'

// CleanLines turns raw terminal output into plain text lines: escape
// sequences removed, backspaces applied, carriage-return overwrites
// resolved, line endings normalised to "\n", trailing spaces trimmed.
func CleanLines(raw []byte) []string {
	if bytes.IndexByte(raw, 0x1b) < 0 {
		// No escape sequence: nothing for the expressions below to do.
		lines, _ := splitLines(string(raw))
		return lines
	}
	raw = cursorBack.ReplaceAllFunc(raw, func(m []byte) []byte {
		n := 0
		for _, d := range m[2 : len(m)-1] {
			n = n*10 + int(d-'0')
		}
		return bytes.Repeat([]byte{'\b'}, n)
	})
	raw = eraseLine.ReplaceAll(raw, []byte{truncateMark})
	raw = ansiEscape.ReplaceAll(raw, nil)
	lines, _ := splitLines(string(raw))
	return lines
}

// splitLines splits text at "\n" (a "\r\n" ends a line as one) and
// resolves and trims each line. The lines share text's memory: a 60 KB
// configuration is not copied again on its way to the lines. plain
// reports that no line holds a control character (see hasControl).
func splitLines(text string) (lines []string, plain bool) {
	lines = make([]string, 0, strings.Count(text, "\n")+1)
	plain = true
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		line, p := cleanLine(strings.TrimSuffix(text[:i], "\r"))
		lines, plain = append(lines, line), plain && p
		text = text[i+1:]
	}
	line, p := cleanLine(text)
	return append(lines, line), plain && p
}

// cleanLine resolves and trims one line; plain reports a line without
// control characters, which has nothing to resolve (one pass over its
// bytes, not two).
func cleanLine(line string) (string, bool) {
	if !hasControl(line) {
		return strings.TrimRight(line, " \t"), true
	}
	return strings.TrimRight(resolveLine(line), " \t\r"), false
}

// resolveLine applies backspaces and bare carriage returns the way a
// terminal would: text after a '\r' overwrites the line from its start.
func resolveLine(line string) string {
	if !strings.ContainsAny(line, "\r\b\x00\x01") {
		return line
	}
	var out []rune
	col := 0
	for _, r := range line {
		switch r {
		case '\r':
			col = 0
		case '\b':
			if col > 0 {
				col--
			}
		case 0:
		case truncateMark:
			if col < len(out) {
				out = out[:col]
			}
		default:
			if col < len(out) {
				out[col] = r
			} else {
				out = append(out, r)
			}
			col++
		}
	}
	return string(bytes.TrimRight([]byte(string(out)), " "))
}
