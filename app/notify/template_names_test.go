package notify

import (
	"testing"
	"text/template/parse"

	"backupd/internal/tmplnames"
)

// Release builds look up only the names in internal/tmplnames/names.txt
// as methods (see package tmplnames): every name the mail template looks
// up must be listed.
func TestTemplateNamesListed(t *testing.T) {
	var trees []*parse.Tree
	for _, tmpl := range htmlTemplate.Templates() {
		trees = append(trees, tmpl.Tree)
	}
	if len(tmplnames.Used(trees...)) < 10 {
		t.Fatalf("the mail template looks up %d names; the walk missed them", len(tmplnames.Used(trees...)))
	}
	if missing := tmplnames.Missing(trees...); len(missing) > 0 {
		t.Fatalf("names the mail template uses, missing from internal/tmplnames/names.txt (add them, sorted): %q", missing)
	}
}
