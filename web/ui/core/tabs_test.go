package core

import "testing"

// A tab's count stops at the list's bound: past it the tab says "500+",
// not a number that looks exact; no count shows nothing.
func TestCappedCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		more bool
		want string
	}{
		{0, false, ""},
		{1, false, "1"},
		{499, false, "499"},
		{500, true, "500+"},
		{1500, false, "1,500"},
	} {
		if got := CappedCount(c.n, c.more); got != c.want {
			t.Errorf("CappedCount(%d, %v) = %q, want %q", c.n, c.more, got, c.want)
		}
	}
}
