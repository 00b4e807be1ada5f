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
		return splitLines(string(raw))
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
	return splitLines(string(raw))
}

// splitLines splits text at "\n" (a "\r\n" ends a line as one) and
// resolves and trims each line. The lines share text's memory: a 60 KB
// configuration is not copied again on its way to the lines.
func splitLines(text string) []string {
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, cleanLine(strings.TrimSuffix(text[:i], "\r")))
		text = text[i+1:]
	}
	return append(lines, cleanLine(text))
}

func cleanLine(line string) string { return strings.TrimRight(resolveLine(line), " \t\r") }

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
