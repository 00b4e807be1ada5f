package ui

import (
	"testing"
	"text/template/parse"

	"backupd/internal/tmplnames"
)

// Release builds look up only the names in internal/tmplnames/names.txt
// as methods (see package tmplnames): every name a page looks up must be
// listed, or a page calling a method of that name would fail there.
func TestTemplateNamesListed(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var trees []*parse.Tree
	for _, page := range pages {
		for _, tmpl := range page.Templates() {
			trees = append(trees, tmpl.Tree)
		}
	}
	if len(tmplnames.Used(trees...)) < 100 {
		t.Fatalf("the pages look up %d names; the walk missed them", len(tmplnames.Used(trees...)))
	}
	if missing := tmplnames.Missing(trees...); len(missing) > 0 {
		t.Fatalf("names the pages use, missing from internal/tmplnames/names.txt (add them, sorted): %q", missing)
	}
}
