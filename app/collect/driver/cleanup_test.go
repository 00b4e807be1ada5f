package driver

import (
	"reflect"
	"strings"
	"testing"
)

func TestCleanLines(t *testing.T) {
	for _, c := range []struct {
		name string
		raw  string
		want []string
	}{
		{"crlf and doubled cr", "show run\r\r\nhostname r1\r\n!\r\n", []string{"show run", "hostname r1", "!", ""}},
		{"ansi colours and cursor", "\x1b[1;32mok\x1b[0m\r\n\x1b[K\x1b[2J\x1b[Hdone", []string{"ok", "done"}},
		{"pager erase with spaces", "\r         \rBIOS version: 05000006\r", []string{"BIOS version: 05000006"}},
		{"pager erase with backspaces", " --More-- \b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\binterface Gi0/1", []string{"interface Gi0/1"}},
		{"trailing spaces", "Version      : PL.10.10.1090                    \r\n", []string{"Version      : PL.10.10.1090", ""}},
		{"huawei pager", "  ---- More ----\x1b[42D                                          \x1b[42D sysname HUAWEI", []string{" sysname HUAWEI"}},
		// Onyx breaks a line at the terminal's width with a space and a
		// backspace: the character after them overwrites the space.
		{"line broken at the width", "   interface ethernet 1/1-1/32 traffic-class 3 congestion-control ecn minimum-re \blative 75 maximum-relative 95\r\n",
			[]string{"   interface ethernet 1/1-1/32 traffic-class 3 congestion-control ecn minimum-relative 75 maximum-relative 95", ""}},
		{"keypad modes", "show version\r\n\x1b[?1h\x1b=\rProduct name:      Onyx\r\n\r\x1b[K\x1b[?1l\x1b>\r [standalone: master] > ",
			[]string{"show version", "Product name:      Onyx", " [standalone: master] >"}},
		{"bold text", "description \x1b[1mcore [A]\x1b[0m uplink", []string{"description core [A] uplink"}},
		{"cursor left, default count", "abc\x1b[DX", []string{"abX"}},
		{"cursor right", "ab\x1b[3Ccd", []string{"ab   cd"}},
		{"cursor right over text", "abcdef\x1b[6D\x1b[2CX", []string{"abXdef"}},
		{"cursor to column", "abcdef\x1b[3GX\x1b[1G>", []string{">bXdef"}},
		{"erase to the end", "abcdef\x1b[3D\x1b[K", []string{"abc"}},
		{"erase below", "abcdef\x1b[3D\x1b[J", []string{"abc"}},
		{"erase to the start", "abcdef\x1b[3D\x1b[1Kx", []string{"   xef"}},
		{"erase the line", "--More--\x1b[2K\x1b[1Ghostname r1", []string{"hostname r1"}},
		{"erase the line, cursor stays", "abcdef\x1b[2Kxy", []string{"      xy"}},
		{"escape with intermediates", "a\x1b[5 Db", []string{"ab"}},
		{"lone escape kept for sanitize", "a\x1b[\x1b", []string{"a\x1b[\x1b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CleanLines([]byte(c.raw)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestCleanLinesBoundsCursor: cursor movements cannot take a line past
// maxColumn, however large their count.
func TestCleanLinesBoundsCursor(t *testing.T) {
	raw := strings.Repeat("\x1b[99999Cx", 100) + "\x1b[99999999999999999999G!"
	lines := CleanLines([]byte(raw))
	if len(lines) != 1 || len(lines[0]) > maxColumn+1 || !strings.Contains(lines[0], "!") {
		t.Fatalf("got %d lines, the first %d bytes long", len(lines), len(lines[0]))
	}
}
