package devices

import (
	"fmt"
	"strings"
	"testing"

	"backupd/app/backup"
)

// Within a changed line, the characters between the common beginning
// and end are marked, by characters (not bytes); a line that only gained
// characters marks nothing on the old side; lines with nothing in
// common, and noise, are left whole.
func TestDetailMarkPair(t *testing.T) {
	for _, c := range []struct {
		old, new       string
		noise          bool
		oldMark, nMark [3]string // before, mark, after; all "" when whole
	}{
		{" description to-old-core", " description to-new-core", false,
			[3]string{" description to-", "old", "-core"}, [3]string{" description to-", "new", "-core"}},
		{" shutdown", " no shutdown", false, [3]string{}, [3]string{" ", "no ", "shutdown"}},
		{" description 核心交换机", " description 核心路由器", false,
			[3]string{" description 核心", "交换机", ""}, [3]string{" description 核心", "路由器", ""}},
		{"abc", "xyz", false, [3]string{}, [3]string{}},
		{"ntp clock-period 17179869", "ntp clock-period 17179870", true, [3]string{}, [3]string{}},
	} {
		o, n := detailDiffCell{Text: c.old}, detailDiffCell{Text: c.new}
		detailMarkPair(&o, &n, c.noise)
		if got := [3]string{o.Before, o.Mark, o.After}; got != c.oldMark {
			t.Errorf("%q → %q: old side %q, want %q", c.old, c.new, got, c.oldMark)
		}
		if got := [3]string{n.Before, n.Mark, n.After}; got != c.nMark {
			t.Errorf("%q → %q: new side %q, want %q", c.old, c.new, got, c.nMark)
		}
	}
}

// The gaps and the hunks of a diff cover the new text exactly once, in
// order, on both sides: whatever the changes (at the start, in the
// middle, at the end, a text that grew or shrank).
func TestDetailGapsCoverTheText(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				if s != "" {
					b.WriteString(s + "\n")
				}
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name     string
		old, new string
		gaps     int // gaps with lines
	}{
		{"middle and end", lines(300, nil), lines(300, map[int]string{20: "changed 20", 250: "changed 250"}), 3},
		{"first and last line", lines(50, nil), lines(50, map[int]string{1: "first", 50: "last"}), 1},
		{"lines removed", lines(120, nil), lines(120, map[int]string{60: "", 61: ""}), 2},
		{"lines added, no newline at the end", lines(80, nil), lines(80, nil) + "added\nand more", 1},
	} {
		res := backup.DiffTexts(c.old, c.new, nil)
		gaps := detailGaps(res.Hunks, res.NewTotal)
		nextOld, nextNew, with := 1, 1, 0
		for i, g := range gaps {
			if g.OldFrom != nextOld || g.NewFrom != nextNew {
				t.Fatalf("%s: gap %d starts at %d/%d, want %d/%d", c.name, i, g.OldFrom, g.NewFrom, nextOld, nextNew)
			}
			if g.Count > 0 {
				with++
			}
			nextOld, nextNew = g.OldFrom+g.Count, g.NewFrom+g.Count
			if i < len(res.Hunks) {
				h := res.Hunks[i]
				if h.OldStart != nextOld || h.NewStart != nextNew {
					t.Fatalf("%s: hunk %d starts at %d/%d, after a gap ending before %d/%d", c.name, i, h.OldStart, h.NewStart, nextOld, nextNew)
				}
				nextOld, nextNew = h.OldStart+h.OldLines, h.NewStart+h.NewLines
			}
		}
		if nextOld != backup.LineCount(c.old)+1 || nextNew != res.NewTotal+1 {
			t.Errorf("%s: the gaps and hunks end at %d/%d, the texts have %d/%d lines", c.name, nextOld-1, nextNew-1, backup.LineCount(c.old), res.NewTotal)
		}
		if with != c.gaps {
			t.Errorf("%s: %d gaps with lines, want %d", c.name, with, c.gaps)
		}
	}
}
