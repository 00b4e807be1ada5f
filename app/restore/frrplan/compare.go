package frrplan

import "strings"

// Equal reports whether two configurations are the same for a restore:
// the same lines in the same contexts, whatever their order (FRR prints
// neighbours in the order they were made, so a neighbour deleted and
// made again moves), and the same "frr defaults" where both say. It
// ignores what Plan ignores: the header, "frr version", "!", comments,
// "exit" lines, "end", blank lines, spaces at line ends and the lines
// vtysh keeps to itself (Skipped).
func Equal(a, b string) bool {
	return len(Diff(a, b)) == 0
}

// Diff lists what Equal finds different between a and b, as indented
// configuration lines: "- " for a line only a has, "+ " for one only b
// has, "  " for the header of a context both have with differences
// inside. The lines are the configuration's own, secrets included: a
// report must mask them.
func Diff(a, b string) []string {
	ca, cb := parse(a), parse(b)
	var out []string
	if ca.defaults != "" && cb.defaults != "" && ca.defaults != cb.defaults {
		out = append(out, "- frr defaults "+ca.defaults, "+ frr defaults "+cb.defaults)
	}
	return append(out, diffNodes(ca.root, cb.root, 0)...)
}

// Skipped lists, as Diff does, the differences Plan leaves alone and
// Equal ignores because vtysh cannot make them: hostname, domainname
// and "service integrated-vtysh-config" (see Plan). A preview shows
// them so that nobody expects the restore to change them.
func Skipped(running, target string) []string {
	r, t := parse(running), parse(target)
	var out []string
	for _, c := range r.root.children {
		if unmanaged(c.text) && t.root.child(c.text) == nil {
			out = append(out, "- "+c.text)
		}
	}
	for _, c := range t.root.children {
		if unmanaged(c.text) && r.root.child(c.text) == nil {
			out = append(out, "+ "+c.text)
		}
	}
	return out
}

func diffNodes(a, b *node, depth int) []string {
	indent := strings.Repeat(" ", depth)
	var out []string
	for _, c := range a.children {
		if depth == 0 && unmanaged(c.text) {
			continue
		}
		bc := b.child(c.text)
		if bc == nil {
			out = appendTree(out, "- ", c, depth)
			continue
		}
		if inner := diffNodes(c, bc, depth+1); len(inner) > 0 {
			out = append(out, "  "+indent+c.text)
			out = append(out, inner...)
		}
	}
	for _, c := range b.children {
		if depth == 0 && unmanaged(c.text) {
			continue
		}
		if a.child(c.text) == nil {
			out = appendTree(out, "+ ", c, depth)
		}
	}
	return out
}

func appendTree(out []string, mark string, n *node, depth int) []string {
	out = append(out, mark+strings.Repeat(" ", depth)+n.text)
	for _, c := range n.children {
		out = appendTree(out, mark, c, depth+1)
	}
	return out
}
