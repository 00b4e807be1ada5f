package devsim

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A Junos configuration as a tree of statements, for the simulated
// candidate: parsed from the curly-brace text `show configuration`
// prints and `load` reads, written back four spaces per level, compared
// the way `show | compare` shows it. Statements keep their text as
// written ("host-name srx;", `encrypted-password "…"; ## SECRET-DATA`),
// so a configuration read back prints exactly as it was loaded.

// jnode is one statement: a container ("system" for "system {") or a
// leaf (its whole text, with the semicolon).
type jnode struct {
	key  string
	leaf bool
	kids []*jnode
}

func (n *jnode) clone() *jnode {
	c := &jnode{key: n.key, leaf: n.leaf, kids: make([]*jnode, len(n.kids))}
	for i, k := range n.kids {
		c.kids[i] = k.clone()
	}
	return c
}

// render writes the configuration as Junos shows it.
func (n *jnode) render() string {
	var b strings.Builder
	var walk func(n *jnode, depth int)
	walk = func(n *jnode, depth int) {
		for _, k := range n.kids {
			pad := strings.Repeat("    ", depth)
			if k.leaf {
				b.WriteString(pad + k.key + "\n")
				continue
			}
			b.WriteString(pad + k.key + " {\n")
			walk(k, depth+1)
			b.WriteString(pad + "}\n")
		}
	}
	walk(n, 0)
	return b.String()
}

func (n *jnode) find(key string, leaf bool) int {
	for i, k := range n.kids {
		if k.key == key && k.leaf == leaf {
			return i
		}
	}
	return -1
}

// junosLoadError is one error of a load, worded as Junos words it:
//
//	terminal:4:(18) syntax error: metric
//	  [edit protocols ospf topology default]
//	    'metric 65450;'
//	      syntax error
type junosLoadError struct {
	source    string
	line, col int
	word      string
	path      []string
	text      string
	recovery  bool // "error recovery ignores input until this point"
	setFormat bool // load set: only the first line
	// warning is a block left empty: no error, but it is ignored.
	warning bool
}

func (e junosLoadError) String() string {
	if e.warning {
		return fmt.Sprintf("%s\n  '%s'\n    warning: statement has no contents; ignored", editPath(e.path), e.text)
	}
	what := "syntax error"
	if e.recovery {
		what = "error recovery ignores input until this point"
	}
	head := fmt.Sprintf("%s:%d:(%d) %s: %s", e.source, e.line, e.col, what, e.word)
	if e.setFormat {
		return head
	}
	return fmt.Sprintf("%s\n  %s\n    '%s'\n      %s", head, editPath(e.path), e.text, what)
}

func editPath(path []string) string {
	if len(path) == 0 {
		return "[edit]"
	}
	return "[edit " + strings.Join(path, " ") + "]"
}

// badWord finds the word of line that reject matches in the statement
// (the line without its indentation), or the first word for a line that
// does not parse: its text, its start and its end in line.
func badWord(line string, reject *regexp.Regexp) (word string, start, end int) {
	indent := len(line) - len(strings.TrimLeft(line, " \t"))
	at := indent
	if reject != nil {
		if loc := reject.FindStringIndex(strings.TrimSpace(line)); loc != nil {
			at = indent + loc[0]
		}
	}
	start = at
	for start > 0 && line[start-1] != ' ' && line[start-1] != '\t' {
		start--
	}
	for start < len(line) && (line[start] == ' ' || line[start] == '\t') {
		start++
	}
	end = start
	for end < len(line) && line[end] != ' ' && line[end] != '\t' {
		end++
	}
	return strings.Trim(line[start:end], ";{"), start, end
}

// parseJunos reads curly-brace configuration text. A statement that does
// not parse, or that reject matches, is left out with an error, as a
// Junos load leaves it out and goes on; a refused block is skipped to its
// closing brace.
func parseJunos(source, text string, reject *regexp.Regexp) (*jnode, []junosLoadError) {
	root := &jnode{}
	stack := []*jnode{root}
	var path []string
	var errs []junosLoadError
	skip := 0 // depth inside a refused block
	// emptied are blocks that lost a block of theirs for being empty.
	emptied := map[*jnode]bool{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t")
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "/*") && strings.HasSuffix(t, "*/") {
			continue
		}
		fail := func(recovery bool) {
			word, _, end := badWord(line, reject)
			if recovery {
				word, end = t, len(line)
			}
			errs = append(errs, junosLoadError{source: source, line: i + 1, col: end, word: word, path: slices.Clone(path), text: t, recovery: recovery})
		}
		if skip > 0 {
			switch {
			case strings.HasSuffix(t, "{"):
				skip++
			case t == "}":
				skip--
				if skip == 0 {
					fail(true)
				}
			}
			continue
		}
		refused := reject != nil && reject.MatchString(t)
		switch {
		case t == "}":
			if len(stack) == 1 {
				fail(false)
				continue
			}
			closed := stack[len(stack)-1]
			stack, path = stack[:len(stack)-1], path[:len(path)-1]
			if len(closed.kids) == 0 {
				// Junos ignores a block left without statements and says
				// so, but not again for the blocks around it.
				parent := stack[len(stack)-1]
				parent.kids = slices.DeleteFunc(parent.kids, func(k *jnode) bool { return k == closed })
				if !emptied[closed] {
					errs = append(errs, junosLoadError{path: slices.Clone(path), text: closed.key, warning: true})
				}
				emptied[parent] = true
			}
		case strings.HasSuffix(t, "{"):
			key := strings.TrimSpace(strings.TrimSuffix(t, "{"))
			if refused || key == "" {
				fail(false)
				skip = 1
				continue
			}
			parent := stack[len(stack)-1]
			n := &jnode{key: key}
			if j := parent.find(key, false); j >= 0 {
				n = parent.kids[j]
			} else {
				parent.kids = append(parent.kids, n)
			}
			stack, path = append(stack, n), append(path, key)
		case strings.HasSuffix(t, ";") || strings.Contains(t, "; ##"):
			if refused {
				fail(false)
				continue
			}
			parent := stack[len(stack)-1]
			if parent.find(t, true) < 0 {
				parent.kids = append(parent.kids, &jnode{key: t, leaf: true})
			}
		default:
			fail(false)
		}
	}
	return root, errs
}

// multiValued are Junos statements that may appear many times at one
// level; a merge adds to them instead of replacing.
var multiValued = map[string]bool{
	"address": true, "route": true, "server": true, "members": true, "member": true,
	"community": true, "host": true, "neighbor": true, "interface": true, "unit": true,
	"term": true, "user": true, "file": true, "destination-port": true, "source-address": true,
	"destination-address": true, "prefix-list": true, "policy-statement": true,
}

func keyword(stmt string) string {
	w, _, _ := strings.Cut(strings.TrimSuffix(stmt, ";"), " ")
	return strings.TrimSuffix(w, ";")
}

// putLeaf adds a statement to n. A statement whose keyword n holds once
// already replaces it (host-name, description); statements that repeat
// (multiValued) are added. That is how the simulator approximates the
// schema it does not have.
func (n *jnode) putLeaf(stmt string) {
	if n.find(stmt, true) >= 0 {
		return
	}
	kw := keyword(stmt)
	if !multiValued[kw] {
		at, count := -1, 0
		for i, k := range n.kids {
			if k.leaf && keyword(k.key) == kw {
				at, count = i, count+1
			}
		}
		if count == 1 {
			n.kids[at] = &jnode{key: stmt, leaf: true}
			return
		}
	}
	n.kids = append(n.kids, &jnode{key: stmt, leaf: true})
}

// merge adds src to n, as load merge does.
func (n *jnode) merge(src *jnode) {
	for _, k := range src.kids {
		if k.leaf {
			n.putLeaf(k.key)
			continue
		}
		if j := n.find(k.key, false); j >= 0 {
			n.kids[j].merge(k)
		} else {
			n.kids = append(n.kids, k.clone())
		}
	}
}

// splitWords splits a set command into words, keeping quoted strings
// whole.
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
			in = true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// descend walks words down the containers n already has, matching one to
// three words per level ("ge-0/0/1", "unit 0", "family inet"); it
// returns the deepest container, its parent and the words left over.
func (n *jnode) descend(words []string) (node, parent *jnode, rest []string) {
	node = n
	for len(words) > 0 {
		found := false
		for k := min(3, len(words)); k >= 1; k-- {
			if j := node.find(strings.Join(words[:k], " "), false); j >= 0 {
				parent, node, words = node, node.kids[j], words[k:]
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	return node, parent, words
}

// applySet applies one "set" command. Without the Junos schema the
// simulator cannot tell where a new hierarchy level begins: words that
// name no existing container become one statement at the deepest level
// that exists ("set system host-name r2" gives "host-name r2;" under
// system; "set protocols ospf area 0" on a device without protocols gives
// "protocols ospf area 0;" at the top).
func (n *jnode) applySet(words []string) {
	node, _, rest := n.descend(words)
	if len(rest) == 0 {
		return
	}
	node.putLeaf(strings.Join(rest, " ") + ";")
}

// applyDelete applies one "delete" command; false when nothing matched
// (Junos: "warning: statement not found").
func (n *jnode) applyDelete(words []string) bool {
	node, parent, rest := n.descend(words)
	if len(rest) == 0 {
		if parent == nil {
			if node == n && len(words) == 0 {
				n.kids = nil
				return true
			}
			return false
		}
		parent.kids = slices.DeleteFunc(parent.kids, func(k *jnode) bool { return k == node })
		return true
	}
	want := strings.Join(rest, " ")
	before := len(node.kids)
	node.kids = slices.DeleteFunc(node.kids, func(k *jnode) bool {
		if !k.leaf {
			return false
		}
		stmt := strings.TrimSuffix(strings.SplitN(k.key, "; ##", 2)[0], ";")
		return stmt == want || len(rest) == 1 && keyword(stmt) == want
	})
	return len(node.kids) < before
}

// dropLines removes the statements drop matches (a container with all
// it holds), as a device that quietly leaves them out does.
func (n *jnode) dropLines(drop *regexp.Regexp) {
	if drop == nil {
		return
	}
	n.kids = slices.DeleteFunc(n.kids, func(k *jnode) bool {
		if k.leaf {
			return drop.MatchString(k.key)
		}
		return drop.MatchString(k.key + " {")
	})
	for _, k := range n.kids {
		if !k.leaf {
			k.dropLines(drop)
		}
	}
}

// compareJunos writes the difference from the active configuration a to
// the candidate b the way `show | compare` does: an "[edit …]" line per
// level that changed, then its removed ("-") and added ("+") statements.
// The statements start two spaces per level of the [edit] path after the
// sign, at most six, and four more per level below (as a vJunos 25.4
// prints it: "[edit protocols ospf]" then "+    topology default;").
func compareJunos(a, b *jnode) string {
	var out strings.Builder
	var walk func(path []string, a, b *jnode)
	walk = func(path []string, a, b *jnode) {
		var removed, added []*jnode
		for _, k := range a.kids {
			if b.find(k.key, k.leaf) < 0 {
				removed = append(removed, k)
			}
		}
		for _, k := range b.kids {
			if a.find(k.key, k.leaf) < 0 {
				added = append(added, k)
			}
		}
		if len(removed)+len(added) > 0 {
			out.WriteString(editPath(path) + "\n")
			indent := max(2, min(2*len(path), 6))
			for _, k := range removed {
				writeSigned(&out, "-", k, indent)
			}
			for _, k := range added {
				writeSigned(&out, "+", k, indent)
			}
		}
		for _, k := range b.kids {
			if k.leaf {
				continue
			}
			if j := a.find(k.key, false); j >= 0 {
				walk(append(slices.Clone(path), k.key), a.kids[j], k)
			}
		}
	}
	walk(nil, a, b)
	return out.String()
}

func writeSigned(out *strings.Builder, sign string, n *jnode, indent int) {
	pad := sign + strings.Repeat(" ", indent)
	if n.leaf {
		out.WriteString(pad + n.key + "\n")
		return
	}
	out.WriteString(pad + n.key + " {\n")
	for _, k := range n.kids {
		writeSigned(out, sign, k, indent+4)
	}
	out.WriteString(pad + "}\n")
}
