package driver

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// truncateMark stands for "erase to the end of the line" inside
// resolveLine (a NUL-like byte no device text holds).
const truncateMark = '\x01'

// CleanLines turns raw terminal output into plain text lines, each as a
// terminal would show it: escape sequences applied or removed, backspaces
// and carriage-return overwrites resolved, line endings normalised to
// "\n", trailing spaces trimmed.
func CleanLines(raw []byte) []string {
	if bytes.IndexByte(raw, 0x1b) < 0 {
		// No escape sequence: nothing for the terminal below to do.
		lines, _ := splitLines(string(raw))
		return lines
	}
	text := string(raw)
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, strings.TrimRight(terminalLine(text[:i], true), " \t\r"))
		text = text[i+1:]
	}
	return append(lines, strings.TrimRight(terminalLine(text, false), " \t\r"))
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
	var t lineTerminal
	for _, r := range line {
		t.put(r)
	}
	return t.String()
}

// lineTerminal is one line of a terminal screen: the cells written so far
// and the cursor column. It is enough for what devices print inside a
// line — pager prompts wiped with backspaces or a carriage return,
// less-like "ESC[K" erases, a line broken at the terminal width with a
// space and a backspace (Onyx: "minimum-re \blative") — and it knows
// nothing of rows: output is already split into lines.
type lineTerminal struct {
	cells []rune
	col   int
}

// maxColumn bounds where cursor movements may take the cursor, so that
// "ESC[999C" repeated cannot make a line grow without end.
const maxColumn = 4096

// put writes r at the cursor, or moves the cursor for '\r' and '\b'.
func (t *lineTerminal) put(r rune) {
	switch r {
	case '\r':
		t.col = 0
	case '\b':
		if t.col > 0 {
			t.col--
		}
	case 0:
	case truncateMark:
		t.eraseRight()
	default:
		if t.col < len(t.cells) {
			t.cells[t.col] = r
		} else {
			for len(t.cells) < t.col {
				t.cells = append(t.cells, ' ')
			}
			t.cells = append(t.cells, r)
		}
		t.col++
	}
}

func (t *lineTerminal) eraseRight() {
	if t.col < len(t.cells) {
		t.cells = t.cells[:t.col]
	}
}

// blank erases the cells from..to (inclusive, clipped to the line).
func (t *lineTerminal) blank(from, to int) {
	for i := from; i <= to && i < len(t.cells); i++ {
		t.cells[i] = ' '
	}
}

func (t *lineTerminal) moveTo(col int) { t.col = max(0, min(col, maxColumn)) }

func (t *lineTerminal) String() string {
	return string(bytes.TrimRight([]byte(string(t.cells)), " "))
}

// Escape sequences that act on the line; the others are removed.
const (
	escDrop       = iota // colours, modes (keypad ESC[?1h ESC= …), charsets, rows
	escLeft              // ESC[nD
	escRight             // ESC[nC
	escColumn            // ESC[nG, ESC[n`
	escEraseRight        // ESC[K, ESC[0K, ESC[J, ESC[0J (the rest of the screen: here, of the line)
	escEraseLeft         // ESC[1K
	escEraseLine         // ESC[2K
)

// parseEscape reads the escape sequence at s[0] (an ESC): what it does,
// its count, and its length; ok is false when no sequence starts there
// (the ESC is then an ordinary byte, which sanitize drops later). The
// sequences recognised are CSI sequences (ESC [ params intermediates
// final), charset selection (ESC ( B) and the two-byte ones
// (ESC = and ESC > for the keypad modes, ESC 7, ESC 8, ESC D/E/H/M).
func parseEscape(s string) (kind, n, size int, ok bool) {
	if len(s) < 2 {
		return 0, 0, 0, false
	}
	switch c := s[1]; {
	case c == '[':
		j := 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
			j++
		}
		params := s[2:j]
		k := j
		for k < len(s) && s[k] >= ' ' && s[k] <= '/' {
			k++
		}
		if k == len(s) || s[k] < '@' || s[k] > '~' {
			return 0, 0, 0, false
		}
		size = k + 1
		if k > j { // intermediate bytes: nothing this terminal does
			return escDrop, 0, size, true
		}
		count, numeric := escCount(params)
		switch s[k] {
		case 'D':
			if numeric {
				return escLeft, count, size, true
			}
		case 'C':
			if numeric {
				return escRight, count, size, true
			}
		case 'G', '`':
			if numeric {
				return escColumn, count, size, true
			}
		case 'K':
			switch params {
			case "", "0":
				return escEraseRight, 0, size, true
			case "1":
				return escEraseLeft, 0, size, true
			case "2":
				return escEraseLine, 0, size, true
			}
		case 'J':
			if params == "" || params == "0" {
				return escEraseRight, 0, size, true
			}
		}
		return escDrop, 0, size, true
	case c == '(' || c == ')':
		if len(s) > 2 && (s[2] >= '0' && s[2] <= '9' || s[2] >= 'A' && s[2] <= 'Z' || s[2] >= 'a' && s[2] <= 'z') {
			return escDrop, 0, 3, true
		}
	case strings.IndexByte("=>78DEHM", c) >= 0:
		return escDrop, 0, 2, true
	}
	return 0, 0, 0, false
}

// escCount is the count of a cursor movement: 1 when absent or 0, at
// most maxColumn; numeric is false for parameters that are not one
// number ("1;2", "?5").
func escCount(params string) (n int, numeric bool) {
	if params == "" {
		return 1, true
	}
	for i := 0; i < len(params); i++ {
		if params[i] < '0' || params[i] > '9' {
			return 0, false
		}
		n = min(n*10+int(params[i]-'0'), maxColumn)
	}
	return max(n, 1), true
}

// terminalLine is one line of output (no "\n") as a terminal shows it:
// escape sequences applied (cursor movements and erases) or removed
// (colours, keypad and other modes), backspaces and carriage returns
// resolved. A line whose escapes only need removing is resolved as a line
// without them (its "\r" before the "\n" that ended it, when one did,
// dropped): if it holds no backspace or carriage return either, its bytes
// stay as they are.
func terminalLine(line string, ended bool) string {
	var plain strings.Builder
	plain.Grow(len(line))
	from := 0
	for i := 0; i < len(line); i++ {
		if line[i] != 0x1b {
			continue
		}
		kind, _, size, ok := parseEscape(line[i:])
		if !ok {
			continue
		}
		if kind != escDrop {
			return resolveTerminal(line)
		}
		plain.WriteString(line[from:i])
		i += size - 1
		from = i + 1
	}
	plain.WriteString(line[from:])
	if ended {
		return resolveLine(strings.TrimSuffix(plain.String(), "\r"))
	}
	return resolveLine(plain.String())
}

// resolveTerminal plays a line through a lineTerminal.
func resolveTerminal(line string) string {
	var t lineTerminal
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			if kind, n, size, ok := parseEscape(line[i:]); ok {
				switch kind {
				case escLeft:
					t.moveTo(t.col - n)
				case escRight:
					t.moveTo(t.col + n)
				case escColumn:
					t.moveTo(n - 1)
				case escEraseRight:
					t.eraseRight()
				case escEraseLeft:
					t.blank(0, t.col)
				case escEraseLine:
					t.blank(0, len(t.cells))
				}
				i += size
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		t.put(r)
		i += size
	}
	return t.String()
}
