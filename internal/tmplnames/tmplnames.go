// Package tmplnames keeps the release binary's dead-code elimination
// working although the web interface and the e-mails use html/template.
//
// text/template looks up every {{.Name}} of a template as a method first,
// with reflect.Value.MethodByName and a name known only at run time. When
// the linker sees such a call it can no longer tell which methods are
// called, and keeps every exported method of every type in the binary:
// about 1.6 MB of backupd's release binary that nothing calls.
//
// Release builds (`make build`, `make dist`) therefore compile text/template
// with a build overlay (go build -overlay, written by ./overlay from the
// installed Go's own text/template/exec.go): that one lookup becomes a
// switch over the names in names.txt, each looked up with a constant name,
// which the linker understands (it keeps the methods of those names only).
// A template name in names.txt behaves exactly as before; a name missing
// from it would not be found as a method in a release build. Every
// package that executes templates therefore has a test that all names its
// templates use are listed (Missing); add new ones to names.txt, sorted.
//
// Two names are never listed: Method and Methods. reflect.Value's methods
// of those names look methods up by number, and keeping them would turn
// the elimination off again. Our templates use them as struct fields only,
// and TestNoFieldOnlyMethods checks that no type of ours declares them.
//
// Only tests and the overlay generator import this package.
package tmplnames

import (
	_ "embed"
	"fmt"
	"go/token"
	"slices"
	"strings"
	"text/template/parse"
)

//go:embed names.txt
var namesTxt string

// Names returns the names release builds look up as methods, in order.
func Names() []string {
	var names []string
	for line := range strings.Lines(namesTxt) {
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	return names
}

// Check reports what is wrong with a names list: a name that is not a Go
// identifier, out of order or listed twice.
func Check(names []string) error {
	for i, n := range names {
		if !token.IsIdentifier(n) {
			return fmt.Errorf("%q is not a Go identifier", n)
		}
		if i > 0 && names[i-1] >= n {
			return fmt.Errorf("%q after %q: names must be sorted and listed once", n, names[i-1])
		}
	}
	return nil
}

// Used returns the names the templates look up on their data: every
// .Name of a field chain, a variable ($x.Name) or a parenthesised
// pipeline ((...).Name), sorted, each once.
func Used(trees ...*parse.Tree) []string {
	seen := map[string]bool{}
	for _, t := range trees {
		if t != nil {
			walk(t.Root, seen, 0)
		}
	}
	var used []string
	for n := range seen {
		used = append(used, n)
	}
	slices.Sort(used)
	return used
}

// FieldOnly are the names templates may use that are never looked up as
// methods (see the package comment).
var FieldOnly = []string{"Method", "Methods"}

// Missing returns the names the templates use that names.txt lacks.
func Missing(trees ...*parse.Tree) []string {
	names := Names()
	var missing []string
	for _, n := range Used(trees...) {
		if _, ok := slices.BinarySearch(names, n); !ok && !slices.Contains(FieldOnly, n) {
			missing = append(missing, n)
		}
	}
	return missing
}

// walk collects the looked-up names under n; depth bounds the recursion
// (the template parser bounds nesting far below it).
func walk(n parse.Node, seen map[string]bool, depth int) {
	if depth > 10000 {
		panic("tmplnames: template nested too deep")
	}
	depth++
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				walk(c, seen, depth)
			}
		}
	case *parse.ActionNode:
		walk(n.Pipe, seen, depth)
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				walk(c, seen, depth)
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, seen, depth)
		}
	case *parse.FieldNode:
		for _, s := range n.Ident {
			seen[s] = true
		}
	case *parse.ChainNode:
		walk(n.Node, seen, depth)
		for _, s := range n.Field {
			seen[s] = true
		}
	case *parse.VariableNode:
		for _, s := range n.Ident[1:] {
			seen[s] = true
		}
	case *parse.IfNode:
		walkBranch(&n.BranchNode, seen, depth)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, seen, depth)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, seen, depth)
	case *parse.TemplateNode:
		walk(n.Pipe, seen, depth)
	}
}

func walkBranch(b *parse.BranchNode, seen map[string]bool, depth int) {
	walk(b.Pipe, seen, depth)
	walk(b.List, seen, depth)
	walk(b.ElseList, seen, depth)
}

// lookup is the call in text/template's evalField that the overlay
// replaces; lookupBy is what replaces it.
const (
	lookup   = "ptr.MethodByName(fieldName)"
	lookupBy = "methodByListedName(ptr, fieldName)"
)

// Overlay returns text/template's exec.go (src, the installed Go's) with
// the method lookup by run-time name replaced by a switch over names, each
// looked up by a constant name. It fails if src does not contain the
// lookup exactly once (a Go release changed it: look again before
// building).
func Overlay(src []byte, names []string) ([]byte, error) {
	if err := Check(names); err != nil {
		return nil, err
	}
	for _, n := range FieldOnly {
		if slices.Contains(names, n) {
			return nil, fmt.Errorf("%s is a field-only name: listing it would keep reflect.Value.%s", n, n)
		}
	}
	if n := strings.Count(string(src), lookup); n != 1 {
		return nil, fmt.Errorf("text/template/exec.go has %d copies of %q, not 1: this Go release changed it", n, lookup)
	}
	var b strings.Builder
	b.WriteString(strings.Replace(string(src), lookup, lookupBy, 1))
	b.WriteString(`
// methodByListedName is ptr.MethodByName(name) for the names backupd's
// templates use (backupd/internal/tmplnames): with constant names the
// linker keeps only methods of these names, not every exported method.
func methodByListedName(ptr reflect.Value, name string) reflect.Value {
	switch name {
`)
	for _, n := range names {
		fmt.Fprintf(&b, "\tcase %q:\n\t\treturn ptr.MethodByName(%q)\n", n, n)
	}
	b.WriteString("\t}\n\treturn reflect.Value{}\n}\n")
	return []byte(b.String()), nil
}
