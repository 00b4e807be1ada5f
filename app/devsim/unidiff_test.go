package devsim

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	a := strings.Split("a b c d e f g h i j k l", " ")
	b := strings.Split("a b c D e f g h i j k l m", " ")
	want := "@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n@@ -10,3 +10,4 @@\n j\n k\n l\n+m\n"
	if got := unifiedDiff(a, b); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff(a, a); got != "" {
		t.Errorf("diff of equal texts: %q", got)
	}
}
