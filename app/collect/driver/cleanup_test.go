package driver

import (
	"reflect"
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
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CleanLines([]byte(c.raw)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}
