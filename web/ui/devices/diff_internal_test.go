package devices

import "testing"

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
