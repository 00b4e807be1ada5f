package frrplan

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	// ErrBadInput is a configuration Plan will not work from: empty, or
	// holding a byte that cannot be typed.
	ErrBadInput = errors.New("frrplan: unusable configuration")
	// ErrUnsupported is a difference vtysh cannot make: "frr defaults"
	// is chosen when FRR starts and changes how much of the rest reads.
	ErrUnsupported = errors.New("frrplan: the difference cannot be made through vtysh")
)

// Command is one line to type in FRR's configuration mode.
type Command struct {
	// Context is the headers of the contexts the line is typed in,
	// outermost first: "router bgp 65001", "address-family ipv4
	// unicast". Empty for a top-level line.
	Context []string
	// Text is what to type: the target's line, or for a deletion the
	// line that undoes it ("no neighbor X description Y"; "bgp default
	// ipv4-unicast" undoes "no bgp default ipv4-unicast").
	Text string
	// Delete marks a line (or a whole context) that only the running
	// configuration has.
	Delete bool
	// Enters marks a line that opens a context ("route-map X permit
	// 10", "address-family ipv6 unicast"): vtysh is inside it afterwards,
	// and the commands that follow with Context extended by Text belong
	// there.
	Enters bool
}

// Commands is a plan: deletions deepest first, then additions.
type Commands []Command

// Lines are the commands as typed at vtysh's enable prompt: "configure
// terminal", each context entered by its header before its lines and
// left with "exit" ("exit-address-family" for an address family), and
// "end". An empty plan has no lines. The lines hold the configuration as
// it is, secrets included: a transcript must mask them.
// Typed at an interactive vtysh (a terminal, as over SSH), each goes
// through Keystrokes.
func (c Commands) Lines() []string {
	if len(c) == 0 {
		return nil
	}
	out := []string{"configure terminal"}
	var cur []string
	leave := func() {
		last := cur[len(cur)-1]
		if strings.HasPrefix(last, "address-family ") {
			out = append(out, "exit-address-family")
		} else {
			out = append(out, "exit")
		}
		cur = cur[:len(cur)-1]
	}
	for _, cmd := range c {
		same := 0
		for same < len(cur) && same < len(cmd.Context) && cur[same] == cmd.Context[same] {
			same++
		}
		for len(cur) > same {
			leave()
		}
		for _, h := range cmd.Context[same:] {
			out = append(out, h)
			cur = append(cur, h)
		}
		out = append(out, cmd.Text)
		if cmd.Enters {
			cur = append(cur, cmd.Text)
		}
	}
	for len(cur) > 0 {
		leave()
	}
	return append(out, "end")
}

// Keystrokes is line as typed at an interactive vtysh. Its readline
// takes "?" as a request for help: it lists the possible words and
// drops the "?" from the line, so that "permit ^65010(_65020)?$" would
// become "permit ^65010(_65020)$", silently. Ctrl-V (readline's quoted
// insert) before each "?" types it as itself. vtysh -c and -f read no
// keystrokes and need none of this.
func Keystrokes(line string) string {
	return strings.ReplaceAll(line, "?", "\x16?")
}

// String is Lines, one a line.
func (c Commands) String() string {
	lines := c.Lines()
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// Deletions counts the commands that remove something.
func (c Commands) Deletions() int {
	n := 0
	for _, cmd := range c {
		if cmd.Delete {
			n++
		}
	}
	return n
}

// Plan returns the commands that turn the running configuration into
// the target one, both as show running-config prints them (with or
// without its header, "frr version", "frr defaults", "!" and "end").
// It is empty when the two are Equal (or, rarely, when what differs
// cannot be typed away, such as an empty interface block).
//
// It works as FRR's frr-reload.py does, on vtysh alone: a line only the
// running configuration has is removed by its "no" form in its context,
// deepest contexts first, before any addition; a line only the target
// has is typed in its context. A context the target lacks is removed
// whole ("no route-map X permit 10", "no router bgp 65002"), except
// those FRR cannot remove (an interface, a VRF, "line vty", an address
// family), which are emptied line by line; a context both have is never
// removed, so "router bgp" stays up while its lines change.
//
// Some commands take more with them than their line: "no neighbor X
// remote-as N" deletes the neighbour and all its settings, unbinding a
// neighbour from its peer-group too. Plan orders those last in their
// context and sends only them when the target has nothing of the
// neighbour; when it has, the lost lines come back on the next pass
// (Converge). A neighbour whose remote-as changes gets the new one
// typed over the old, which FRR takes in place, rather than being
// deleted and rebuilt without its policies in between. When "bgp
// default ipv4-unicast" (or another family's) changes, that family's
// activate lines wait for the next pass, when FRR shows them against
// the new default. A plan may so leave work for the next one: apply it
// with Converge.
//
// hostname, domainname and "service integrated-vtysh-config" belong to
// vtysh itself, which never passes them on to the daemons nor writes
// vtysh.conf: Plan leaves them alone (Skipped lists them), as it does
// "frr version". A different "frr defaults" is ErrUnsupported.
func Plan(running, target string) (Commands, error) {
	if err := checkTypable("running", running); err != nil {
		return nil, err
	}
	if err := checkTypable("target", target); err != nil {
		return nil, err
	}
	r, t := parse(running), parse(target)
	if r.lines == 0 {
		return nil, fmt.Errorf("%w: the running configuration is empty", ErrBadInput)
	}
	if t.lines == 0 {
		return nil, fmt.Errorf("%w: the target configuration is empty", ErrBadInput)
	}
	if r.defaults != "" && t.defaults != "" && r.defaults != t.defaults {
		return nil, fmt.Errorf("%w: \"frr defaults\" differs (%s on the device, %s in the target); it is fixed when FRR starts",
			ErrUnsupported, profileName(r.defaults), profileName(t.defaults))
	}
	p := &planner{running: r, target: t, contexts: map[string]int{}}
	p.diff(r.root, t.root, nil)
	return p.commands(), nil
}

// profileName is the defaults profile for an error message: FRR's own
// names only, since anything else is text from the configuration.
func profileName(s string) string {
	switch s {
	case "traditional", "datacenter":
		return s
	}
	return "another"
}

// unmanaged reports the top-level lines vtysh keeps to itself (see Plan).
func unmanaged(line string) bool {
	return strings.HasPrefix(line, "hostname ") || strings.HasPrefix(line, "domainname ") ||
		line == "service integrated-vtysh-config" || line == "no service integrated-vtysh-config"
}

type deletion struct {
	Command
	line  string // the line removed, as the running configuration has it
	order int    // where its context first came, so contexts stay together
	rank  int    // later within its context: see rankOf
	seq   int
}

type addition struct {
	Command
	late bool // goes in a "router …" context: after what it may refer to
}

type planner struct {
	running, target *config
	dels            []deletion
	adds            []addition
	contexts        map[string]int
}

func extend(path []string, s string) []string {
	return append(slices.Clip(path), s)
}

func (p *planner) diff(rn, tn *node, path []string) {
	for _, c := range rn.children {
		if len(path) == 0 && unmanaged(c.text) {
			continue
		}
		if tn.child(c.text) == nil {
			p.remove(c, path)
		}
	}
	for _, c := range tn.children {
		if len(path) == 0 && unmanaged(c.text) {
			continue
		}
		switch rc := rn.child(c.text); {
		case rc == nil:
			p.addAll(c, path)
		case len(rc.children) > 0 || len(c.children) > 0:
			p.diff(rc, c, extend(path, c.text))
		}
	}
}

// remove deletes n, a line or a context only the running configuration
// has.
func (p *planner) remove(n *node, path []string) {
	if !n.context || removableWhole(path, n.text) {
		p.del(path, n.text)
		return
	}
	inner := extend(path, n.text)
	for _, c := range n.children {
		p.remove(c, inner)
	}
}

// removableWhole reports a context that "no <header>" removes. FRR
// cannot remove an interface or a VRF the kernel has, "line vty", or an
// address family ("no address-family" does not exist).
func removableWhole(path []string, header string) bool {
	if len(path) == 0 {
		for _, k := range []string{"interface", "vrf", "line vty"} {
			if header == k || strings.HasPrefix(header, k+" ") {
				return false
			}
		}
		return true
	}
	return !strings.HasPrefix(header, "address-family ")
}

func (p *planner) del(path []string, line string) {
	key := strings.Join(path, "\n")
	order, ok := p.contexts[key]
	if !ok {
		order = len(p.contexts)
		p.contexts[key] = order
	}
	p.dels = append(p.dels, deletion{
		Command: Command{Context: slices.Clone(path), Text: noForm(line), Delete: true},
		line:    line, order: order, seq: len(p.dels),
	})
}

// addAll types n and, for a context, everything inside it.
func (p *planner) addAll(n *node, path []string) {
	top := n.text
	if len(path) > 0 {
		top = path[0]
	}
	late := strings.HasPrefix(top, "router ")
	p.adds = append(p.adds, addition{Command: Command{Context: slices.Clone(path), Text: n.text, Enters: n.context}, late: late})
	if !n.context {
		return
	}
	inner := extend(path, n.text)
	for _, c := range n.children {
		p.addAll(c, inner)
	}
}

// noForms are the lines whose "no" form FRR 8.4 refuses with their
// arguments ("% Unknown command: no password secret") and takes
// without them.
var noForms = []struct {
	line *regexp.Regexp
	no   string
}{
	{regexp.MustCompile(`^password `), "no password"},
	{regexp.MustCompile(`^enable password `), "no enable password"},
	{regexp.MustCompile(`^exec-timeout `), "no exec-timeout"},
	// "continue N" shows as "on-match goto N"; "no on-match goto" has no
	// number.
	{regexp.MustCompile(`^on-match goto \d+$`), "no on-match goto"},
	// A route-map's (or an interface's) "no description", with no text.
	{regexp.MustCompile(`^description `), "no description"},
	// "no set as-path prepend [(1-4294967295)]": one AS at most.
	{regexp.MustCompile(`^set as-path prepend \d+( \d+)+$`), "no set as-path prepend"},
}

// noForm is the command that removes line: "no <line>", or the line
// without its "no" for a setting FRR shows in its negative form.
func noForm(line string) string {
	if rest, ok := strings.CutPrefix(line, "no "); ok {
		return rest
	}
	for _, f := range noForms {
		if f.line.MatchString(line) {
			return f.no
		}
	}
	return "no " + line
}

// commands puts the plan in order: deletions deepest first, those that
// take other lines with them last in their context, then additions in
// the target's order, the routers' after the lists and route-maps they
// may name.
func (p *planner) commands() Commands {
	p.neighbours()
	p.defaultFamilies()
	slices.SortStableFunc(p.dels, func(a, b deletion) int {
		if d := len(b.Context) - len(a.Context); d != 0 {
			return d
		}
		if d := a.order - b.order; d != 0 {
			return d
		}
		if d := a.rank - b.rank; d != 0 {
			return d
		}
		return a.seq - b.seq
	})
	slices.SortStableFunc(p.adds, func(a, b addition) int {
		switch {
		case a.late == b.late:
			return 0
		case a.late:
			return 1
		}
		return -1
	})
	var out Commands
	for _, d := range p.dels {
		out = append(out, d.Command)
	}
	for _, a := range p.adds {
		out = append(out, a.Command)
	}
	return out
}

// neighbour is what a "neighbor X …" line says about X.
type neighbour struct {
	name string
	// anchor: the line makes X exist ("remote-as", "peer-group PG",
	// "interface …"), so its "no" form deletes X and all it has.
	anchor bool
	// definition: "neighbor PG peer-group", which makes PG a peer-group.
	definition bool
	// remoteAS: "neighbor X remote-as N".
	remoteAS bool
}

// parseNeighbour reads a BGP "neighbor" line (or its "no" form, such as
// "no neighbor X activate"); ok is false for any other line.
func parseNeighbour(line string) (nb neighbour, ok bool) {
	f := strings.Fields(strings.TrimPrefix(line, "no "))
	if len(f) < 2 || f[0] != "neighbor" {
		return nb, false
	}
	nb.name = f[1]
	rest := f[2:]
	if strings.HasPrefix(line, "no ") {
		return nb, true
	}
	switch {
	case len(rest) == 1 && rest[0] == "peer-group":
		nb.anchor, nb.definition = true, true
		return nb, true
	case len(rest) > 0 && rest[0] == "interface":
		nb.anchor = true
		return nb, true
	case len(rest) == 2 && rest[0] == "remote-as":
		nb.anchor, nb.remoteAS = true, true
	case len(rest) == 2 && rest[0] == "peer-group":
		nb.anchor = true
	}
	return nb, true
}

// neighbours adjusts the deletions inside "router bgp" for what FRR does
// to neighbours (see Plan), and ranks what is left so that nothing is
// deleted after the neighbour or peer-group it belongs to.
func (p *planner) neighbours() {
	// Which neighbours each router of the target names at all, and the
	// remote-as lines it types over existing ones.
	named := map[string]map[string]bool{}
	retyped := map[string]bool{}
	for _, a := range p.adds {
		if nb, ok := parseNeighbour(a.Text); ok && len(a.Context) > 0 && nb.remoteAS {
			retyped[strings.Join(a.Context, "\n")+"\n"+nb.name] = true
		}
	}
	for _, router := range p.target.root.children {
		if strings.HasPrefix(router.text, "router bgp ") {
			names := map[string]bool{}
			walk(router, func(n *node) {
				if nb, ok := parseNeighbour(n.text); ok {
					names[nb.name] = true
				}
			})
			named[router.text] = names
		}
	}
	// The peer-groups of each running router: their deletions go after
	// their members'.
	groups := map[string]map[string]bool{}
	for _, router := range p.running.root.children {
		if strings.HasPrefix(router.text, "router bgp ") {
			g := map[string]bool{}
			for _, c := range router.children {
				if nb, ok := parseNeighbour(c.text); ok && nb.definition {
					g[nb.name] = true
				}
			}
			groups[router.text] = g
		}
	}

	// gone: a neighbour the target does not name, whose anchor is
	// deleted: one anchor deletion stands for all its lines, the one
	// that takes the most with it.
	gone := map[string]int{} // router + name → index of the kept deletion
	for i, d := range p.dels {
		nb, ok := parseNeighbour(d.line)
		if !ok || len(d.Context) != 1 || !strings.HasPrefix(d.Context[0], "router bgp ") ||
			!nb.anchor || named[d.Context[0]][nb.name] {
			continue
		}
		key := d.Context[0] + "\n" + nb.name
		if j, seen := gone[key]; !seen || reach(nb) > reach(parseNeighbourMust(p.dels[j].line)) {
			gone[key] = i
		}
	}
	kept := p.dels[:0]
	for i, d := range p.dels {
		nb, ok := parseNeighbour(d.line)
		if ok && len(d.Context) > 0 && strings.HasPrefix(d.Context[0], "router bgp ") {
			router := d.Context[0]
			if j, isGone := gone[router+"\n"+nb.name]; isGone && j != i {
				continue
			}
			if nb.remoteAS && retyped[strings.Join(d.Context, "\n")+"\n"+nb.name] {
				continue
			}
			d.rank = rankOf(nb, groups[router][nb.name])
		}
		kept = append(kept, d)
	}
	p.dels = kept
	// A whole default BGP instance goes after the VRF instances: FRR
	// refuses to delete it while one leaks routes through it.
	for i, d := range p.dels {
		if len(d.Context) == 0 && strings.HasPrefix(d.line, "router bgp ") && !strings.Contains(d.line, " vrf ") {
			p.dels[i].rank = 1
		}
	}
}

// reach is how much deleting an anchor line takes: a peer-group's
// definition takes the group and its members; remote-as, a peer-group
// binding or an interface line take the neighbour (FRR 8.4 deletes a
// neighbour unbound from its group even when it has a remote-as of its
// own).
func reach(nb neighbour) int {
	if nb.definition {
		return 1
	}
	return 0
}

var bgpDefaultRE = regexp.MustCompile(`^(?:no )?bgp default (ipv4|ipv6|l2vpn)-(unicast|multicast|vpn|labeled-unicast|flowspec|evpn)$`)

// defaultFamilies holds back, for one pass, the "activate" lines of an
// address family whose "bgp default <family>" this plan changes. FRR
// shows "neighbor X activate" (or "no neighbor X activate") only where
// it differs from that default, so until the default has changed, the
// running configuration's activate lines say the opposite of what they
// will mean: deleting them would deactivate neighbours the target has
// active, for a pass, and drop their sessions. The next pass sees them
// as FRR shows them under the new default.
func (p *planner) defaultFamilies() {
	held := map[string]bool{} // router + "\n" + address family
	note := func(c Command, line string) {
		if len(c.Context) != 1 || p.running.root.child(c.Context[0]) == nil || p.target.root.child(c.Context[0]) == nil {
			return
		}
		if m := bgpDefaultRE.FindStringSubmatch(line); m != nil {
			held[c.Context[0]+"\naddress-family "+m[1]+" "+m[2]] = true
		}
	}
	for _, d := range p.dels {
		note(d.Command, d.line)
	}
	for _, a := range p.adds {
		note(a.Command, a.Text)
	}
	if len(held) == 0 {
		return
	}
	activate := func(c Command, line string) bool {
		nb, ok := parseNeighbour(line)
		return ok && len(c.Context) == 2 && held[c.Context[0]+"\n"+c.Context[1]] &&
			strings.TrimPrefix(line, "no ") == "neighbor "+nb.name+" activate"
	}
	p.dels = slices.DeleteFunc(p.dels, func(d deletion) bool { return activate(d.Command, d.line) })
	p.adds = slices.DeleteFunc(p.adds, func(a addition) bool { return activate(a.Command, a.Text) })
}

func parseNeighbourMust(line string) neighbour {
	nb, _ := parseNeighbour(line)
	return nb
}

// rankOf orders the deletions of one context: a neighbour's settings,
// then what deletes a neighbour, then a peer-group's remote-as (which
// deletes its members), then the peer-group itself.
func rankOf(nb neighbour, isGroup bool) int {
	switch {
	case nb.definition:
		return 3
	case nb.anchor && isGroup:
		return 2
	case nb.anchor:
		return 1
	}
	return 0
}

func walk(n *node, f func(*node)) {
	for _, c := range n.children {
		f(c)
		walk(c, f)
	}
}
