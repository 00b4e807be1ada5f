package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"
)

// templateKeys returns every message key the page templates name in
// {{$.T "key" …}} or {{.T "key" …}}, with where it was seen. A key may
// also come from the page's data (a field set from a messages.go
// constant); its second result lists calls that compute a key in the
// template instead, which no test could check.
func templateKeys(t *testing.T) (map[string]string, []string) {
	t.Helper()
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	var dynamic []string
	var walk func(name string, n parse.Node)
	walkPipe := func(name string, p *parse.PipeNode) {
		if p == nil {
			return
		}
		for _, cmd := range p.Cmds {
			walk(name, cmd)
		}
	}
	walk = func(name string, n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(name, c)
			}
		case *parse.ActionNode:
			walkPipe(name, n.Pipe)
		case *parse.IfNode:
			walkPipe(name, n.Pipe)
			walk(name, n.List)
			walk(name, n.ElseList)
		case *parse.RangeNode:
			walkPipe(name, n.Pipe)
			walk(name, n.List)
			walk(name, n.ElseList)
		case *parse.WithNode:
			walkPipe(name, n.Pipe)
			walk(name, n.List)
			walk(name, n.ElseList)
		case *parse.TemplateNode:
			walkPipe(name, n.Pipe)
		case *parse.PipeNode:
			walkPipe(name, n)
		case *parse.CommandNode:
			if len(n.Args) > 0 && isTranslate(n.Args[0]) {
				if len(n.Args) > 1 {
					switch a := n.Args[1].(type) {
					case *parse.StringNode:
						keys[a.Text] = name
					case *parse.FieldNode, *parse.VariableNode:
					default:
						dynamic = append(dynamic, name+": "+n.String())
					}
				}
			}
			for _, a := range n.Args {
				if p, ok := a.(*parse.PipeNode); ok {
					walkPipe(name, p)
				}
			}
		}
	}
	for file, page := range pages {
		for _, tmpl := range page.Templates() {
			if tmpl.Tree != nil {
				walk(file+" "+tmpl.Name(), tmpl.Tree.Root)
			}
		}
	}
	return keys, dynamic
}

// isTranslate reports whether a template command calls T or TArgs on the
// view ($.T, .T).
func isTranslate(n parse.Node) bool {
	var ident []string
	switch n := n.(type) {
	case *parse.FieldNode:
		ident = n.Ident
	case *parse.VariableNode:
		ident = n.Ident
	default:
		return false
	}
	last := ident[len(ident)-1]
	return last == "T" || last == "TArgs"
}

// uiRoot is web/ui, seen from this package's directory: the core and
// every room below it.
const uiRoot = ".."

// goFiles lists the Go files of web/ui and its rooms (tests left out),
// messages*.go apart from the others.
func goFiles(t *testing.T) (messages, others []string) {
	t.Helper()
	err := filepath.WalkDir(uiRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if strings.HasPrefix(d.Name(), "messages") {
			messages = append(messages, path)
		} else {
			others = append(others, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return messages, others
}

// goKeys returns the string literals of the messages*.go files of web/ui
// and every room below it: by their rule, each is a message key used from
// Go.
func goKeys(t *testing.T) map[string]string {
	t.Helper()
	files, _ := goFiles(t)
	if len(files) == 0 {
		t.Fatal("no messages*.go under web/ui")
	}
	keys := map[string]string{}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				keys[s] = name
			}
			return true
		})
	}
	return keys
}

// TestTranslationsComplete fails when a key a template or the Go code uses
// lacks its English or Chinese text, when a catalog holds a key nothing
// uses, and when a key is written outside messages*.go and the templates.
func TestTranslationsComplete(t *testing.T) {
	c, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	used, dynamic := templateKeys(t)
	for _, d := range dynamic {
		t.Errorf("a template computes a message key, which this test cannot check; pass it from Go: %s", d)
	}
	if len(used) < 50 {
		t.Fatalf("found only %d keys in the templates; is the template walk broken?", len(used))
	}
	for k, where := range goKeys(t) {
		used[k] = where
	}
	var missing []string
	for k, where := range used {
		for _, lang := range Languages {
			if strings.TrimSpace(c[lang][k]) == "" {
				missing = append(missing, lang+": "+k+" (used in "+where+")")
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d texts missing from embed/i18n/ui/*.json:\n%s", len(missing), strings.Join(missing, "\n"))
	}
	var unused []string
	for _, lang := range Languages {
		for k := range c[lang] {
			if _, ok := used[k]; !ok {
				unused = append(unused, lang+": "+k)
			}
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("%d catalog keys are used by no template and not in messages*.go; remove them:\n%s", len(unused), strings.Join(unused, "\n"))
	}

	// A Chinese text must be Chinese (not a copy of the English one), and
	// both must take the same fmt arguments.
	for k, en := range c["en"] {
		zh := c["zh"][k]
		if zh == en {
			t.Errorf("key %s: the Chinese text is the English one", k)
		}
		if verbs(en) != verbs(zh) {
			t.Errorf("key %s: English takes %q, Chinese %q", k, verbs(en), verbs(zh))
		}
	}

	// Keys are written only in messages*.go and the templates, so that
	// this test sees them all.
	_, files := goFiles(t)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); c["en"][s] != "" {
					t.Errorf("%s names message key %q; declare it in a messages*.go file", f, s)
				}
			}
			return true
		})
	}
}

// verbs lists a text's fmt verbs, sorted (%[2]s counts as %s).
func verbs(s string) string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 >= len(s) {
			continue
		}
		j := i + 1
		if s[j] == '%' {
			i = j
			continue
		}
		if s[j] == '[' {
			for j < len(s) && s[j] != ']' {
				j++
			}
			j++
		}
		if j < len(s) {
			out = append(out, "%"+string(s[j]))
		}
		i = j
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestCatalogRefusesAMissingTranslation(t *testing.T) {
	en := map[string]string{"a": "A", "b": "B"}
	zh := map[string]string{"a": "甲"}
	if got := missingKeys(en, zh); len(got) != 1 || got[0] != "b" {
		t.Errorf("missingKeys = %v, want [b]", got)
	}
	c := catalog{"en": en, "zh": zh}
	if got := c.text("zh", "b"); got != "B" {
		t.Errorf("a missing Chinese text falls back to %q, want the English", got)
	}
	if got := c.text("zh", "nope"); got != "nope" {
		t.Errorf("an unknown key shows as %q, want the key", got)
	}
}
