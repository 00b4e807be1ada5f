package frrplan

import (
	"fmt"
	"strings"
)

// node is one line of a configuration and, when the line opens a
// context ("router bgp 65001", " address-family ipv4 unicast",
// "route-map X permit 10"), the lines inside it. The root node has no
// text: its children are the top-level lines.
type node struct {
	text     string
	context  bool
	children []*node
	byText   map[string]*node
}

func (n *node) child(text string) *node {
	return n.byText[text]
}

// add returns the child with this text, made if new. FRR never prints
// the same context twice, but a configuration put together by hand may:
// the two are one context, as they are to vtysh.
func (n *node) add(text string) *node {
	if c := n.byText[text]; c != nil {
		return c
	}
	c := &node{text: text}
	if n.byText == nil {
		n.byText = make(map[string]*node)
	}
	n.byText[text] = c
	n.children = append(n.children, c)
	return c
}

// config is a configuration as vtysh shows it, turned into a tree.
type config struct {
	root *node
	// version and defaults are the values of "frr version" and "frr
	// defaults", "" when the text has none. Neither can change while
	// FRR runs, so they stay out of the tree.
	version, defaults string
	// lines counts the configuration lines read (not comments, separators
	// or structure), so that an empty text can be told from a small one.
	lines int
}

// parse turns a configuration into its tree. The tree is built from the
// indentation FRR writes (one space per level) rather than from a list
// of FRR's commands: what vtysh prints, vtysh can read back, and new
// commands need no change here. Structure lines ("exit",
// "exit-address-family", "end"), separators and comments ("!", "#"),
// blank lines and the header of show running-config are dropped; they
// carry no configuration. parse never fails: anything is a line.
func parse(text string) *config {
	cfg := &config{root: &node{context: true}}
	// stack holds the open lines, outermost first, each deeper than the
	// one before it.
	var stack []openLine
	parent := func(indent int) *node {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return cfg.root
		}
		return stack[len(stack)-1].n
	}
	for _, raw := range strings.Split(text, "\n") {
		raw = strings.TrimRight(raw, " \t\r")
		line := strings.TrimLeft(raw, " \t")
		indent := len(raw) - len(line)
		switch {
		case line == "", strings.HasPrefix(line, "!"), strings.HasPrefix(line, "#"):
			continue
		case indent == 0 && (line == "Building configuration..." || line == "Current configuration:"):
			continue
		case line == "end":
			stack = stack[:0]
			continue
		case isExit(line):
			closeContext(&stack, line, indent)
			continue
		}
		p := parent(indent)
		if p == cfg.root {
			if v, ok := strings.CutPrefix(line, "frr version "); ok {
				cfg.version = strings.TrimSpace(v)
				continue
			}
			if v, ok := strings.CutPrefix(line, "frr defaults "); ok {
				cfg.defaults = strings.TrimSpace(v)
				continue
			}
		}
		p.context = true
		n := p.add(line)
		if opensContext(p, n.text) {
			n.context = true
		}
		cfg.lines++
		stack = append(stack, openLine{indent, n})
	}
	return cfg
}

// openLine is a line whose context may still receive lines.
type openLine struct {
	indent int
	n      *node
}

// closeContext ends the context an exit line closes. FRR 8 ends a
// context with "exit" at the context's own indentation: this is how a
// context with nothing in it, "route-map X deny 20" then "exit", is
// known to be one. Its named exits ("exit-address-family", "exit-vnc",
// "exit-vrf", "exit-link-params") close the innermost context of their
// name, wherever they stand: FRR writes "exit-vnc" one level out from
// "vnc defaults".
func closeContext(stack *[]openLine, line string, indent int) {
	s := *stack
	at := -1
	if name, ok := strings.CutPrefix(line, "exit-"); ok {
		for i := len(s) - 1; i >= 0; i-- {
			if s[i].n.text == name || strings.HasPrefix(s[i].n.text, name+" ") {
				at = i
				break
			}
		}
	}
	if at < 0 {
		for i := len(s) - 1; i >= 0 && s[i].indent >= indent; i-- {
			if s[i].indent == indent {
				at = i
			}
		}
	}
	if at >= 0 {
		s[at].n.context = true
		*stack = s[:at]
	}
}

// isExit reports a line that leaves a context: "exit" and FRR's
// "exit-address-family", "exit-vrf", "exit-vnc", "exit-link-params"…
func isExit(line string) bool {
	return line == "exit" || strings.HasPrefix(line, "exit-")
}

// contextKeywords are the lines that open a context in FRR even when
// nothing is inside them, by where they stand (the list frr-reload.py
// keeps for the same purpose). A context with lines in it, or closed by
// "exit", is known without them; this list matters for a context shown
// empty in an FRR older than 8, which wrote no "exit".
var contextKeywords = map[string][]string{
	"": {"router", "route-map", "interface", "vrf", "key chain", "line vty", "mpls ldp", "l2vpn",
		"pseudowire", "segment-routing", "nexthop-group", "pbr-map", "rpki", "bfd"},
	"router bgp ": {"address-family", "vnc defaults", "vnc nve-group", "vnc l2-group", "vrf-policy",
		"bmp targets", "segment-routing srv6"},
	"address-family l2vpn evpn": {"vni"},
	"key chain ":                {"key"},
	"interface ":                {"link-params"},
	"bfd":                       {"peer", "profile"},
}

// opensContext reports whether line, inside parent, opens a context by
// its keyword alone: the keyword is the whole line or its first words.
func opensContext(parent *node, line string) bool {
	for prefix, keywords := range contextKeywords {
		if (prefix == "") != (parent.text == "") || !strings.HasPrefix(parent.text, prefix) {
			continue
		}
		for _, k := range keywords {
			if line == k || strings.HasPrefix(line, k+" ") {
				return true
			}
		}
	}
	return false
}

// checkTypable refuses a configuration holding a byte that typed at
// vtysh's prompt would not be text: a control character (Ctrl-C, Ctrl-Z,
// escape…), DEL or a stray carriage return. Only the line's number is
// reported: the line itself may hold a secret.
func checkTypable(which, text string) error {
	for i, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		for _, r := range raw {
			if (r < 0x20 && r != '\t') || r == 0x7f {
				return fmt.Errorf("%w: the %s configuration has a control character on line %d", ErrBadInput, which, i+1)
			}
		}
	}
	return nil
}
