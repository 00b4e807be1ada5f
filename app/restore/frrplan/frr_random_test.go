package frrplan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"backupd/internal/testfrr"
)

// edits are changes an operator makes to testfrr.DefaultConfig, for
// the random tests: lines added (a path of contexts and the line, "|"
// between them; missing contexts are made) and lines replaced in place
// (the first in path "at", by one or more lines). Each is whole on its
// own: a setting of a neighbour comes with the neighbour's remote-as.
var edits = []struct {
	add     []string
	at, old string
	new     []string
}{
	{add: []string{"router bgp 65001|neighbor 192.0.2.30 remote-as 65030", "router bgp 65001|neighbor 192.0.2.30 description customer-b",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.30 activate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.30 prefix-list PL-CUSTOMER-IN in"}},
	{add: []string{"router bgp 65001|neighbor PG-IX peer-group", "router bgp 65001|neighbor PG-IX remote-as external",
		"router bgp 65001|neighbor 192.0.2.40 peer-group PG-IX", "router bgp 65001|address-family ipv4 unicast|neighbor PG-IX activate"}},
	{add: []string{"router bgp 65001|timers bgp 10 30"}},
	{add: []string{"router bgp 65001|bgp log-neighbor-changes"}},
	{add: []string{"router bgp 65001|bgp bestpath as-path multipath-relax"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.20 remote-as 64500", "router bgp 65001|neighbor 192.0.2.20 ebgp-multihop 2"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.10 remote-as 65010", "router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 activate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 soft-reconfiguration inbound"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.10 remote-as 65010", "router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 activate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 maximum-prefix 1000"}},
	{add: []string{"router bgp 65001|address-family ipv4 unicast|aggregate-address 203.0.112.0/23 summary-only"}},
	{add: []string{"router bgp 65001|address-family ipv6 unicast|network 2001:db8:200::/48"}},
	{add: []string{"ip prefix-list PL-CUSTOMER-IN seq 10 permit 198.51.101.0/24"}},
	{add: []string{"ip prefix-list PL-NEW seq 5 deny 10.0.0.0/8 le 32"}},
	{add: []string{"bgp community-list standard CL-NEW seq 5 permit 65001:200"}},
	{add: []string{"bgp as-path access-list AS-NEW seq 5 deny _64666_"}},
	{add: []string{"route-map RM-CUSTOMER-IN permit 10|set metric 50"}},
	{add: []string{"route-map RM-NEW permit 10|match community CL-CUSTOMER", "route-map RM-NEW permit 10|set weight 100", "route-map RM-NEW deny 20"}},
	{add: []string{"route-map RM-TRANSIT-OUT permit 10|set as-path prepend 65001 65001"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.10 remote-as 65010", "router bgp 65001|neighbor 192.0.2.10 shutdown"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.20 remote-as 64500", "router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.20 activate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.20 next-hop-self"}},
	{add: []string{"line vty|exec-timeout 10 0"}},
	{add: []string{"log syslog warnings"}},
	{add: []string{"access-list ACL-MGMT seq 5 permit 192.0.2.0/24"}},
	{add: []string{"password vty-s3cret"}},
	{add: []string{"router bgp 65002 vrf BLUE|neighbor 192.0.2.99 remote-as 65099",
		"router bgp 65002 vrf BLUE|address-family ipv4 unicast|network 10.0.0.0/8"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.20 remote-as 64500", "router bgp 65001|neighbor 192.0.2.20 update-source 192.0.2.1",
		"router bgp 65001|neighbor 192.0.2.20 timers 10 30", "router bgp 65001|neighbor 192.0.2.20 local-as 65111"}},
	{add: []string{"router bgp 65001|bgp cluster-id 192.0.2.1", "router bgp 65001|bgp always-compare-med", "router bgp 65001|bgp bestpath med confed"}},
	{add: []string{"router bgp 65001|address-family ipv4 unicast|maximum-paths 4",
		"router bgp 65001|address-family ipv4 unicast|redistribute connected route-map RM-TRANSIT-OUT",
		"router bgp 65001|address-family ipv4 unicast|distance bgp 20 200 200"}},
	{add: []string{"router bgp 65001|neighbor 192.0.2.10 remote-as 65010", "router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 activate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 allowas-in 2",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 weight 100",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 default-originate",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 remove-private-AS",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 filter-list AS-CUSTOMER in",
		"router bgp 65001|address-family ipv4 unicast|neighbor 192.0.2.10 prefix-list PL-OWN out"}},
	{add: []string{"route-map RM-POLICY permit 10|description policy with words",
		"route-map RM-POLICY permit 10|match community CL-CUSTOMER exact-match",
		"route-map RM-POLICY permit 10|match origin igp",
		"route-map RM-POLICY permit 10|set origin incomplete",
		"route-map RM-POLICY permit 10|set comm-list CL-CUSTOMER delete",
		"route-map RM-POLICY permit 10|set ip next-hop 192.0.2.1",
		"route-map RM-POLICY permit 10|set as-path exclude 64512 64513",
		"route-map RM-POLICY permit 10|continue 20",
		"route-map RM-POLICY permit 10|call RM-TRANSIT-OUT",
		"route-map RM-POLICY permit 20|set large-community 65001:1:1 additive",
		"route-map RM-POLICY permit 20|set extcommunity rt 65001:1 65001:2",
		"route-map RM-POLICY permit 20|on-match next"}},
	{add: []string{"bgp large-community-list standard LL seq 5 permit 65001:1:1", "bgp extcommunity-list standard EL seq 5 permit rt 65001:1",
		"bgp community-list expanded CE seq 5 permit ^65001:.*$", "ip prefix-list PL-GE seq 5 permit 10.0.0.0/8 ge 16 le 24",
		"ipv6 prefix-list PL6-NEW seq 10 permit 2001:db8::/32 le 48"}},
	{add: []string{"debug bgp neighbor-events", "enable password en-s3cret"}},
	{at: "router bgp 65001", old: "neighbor 192.0.2.20 remote-as 64500", new: []string{"neighbor 192.0.2.20 remote-as 64501"}},
	{at: "router bgp 65001", old: "bgp router-id 192.0.2.1", new: []string{"bgp router-id 192.0.2.99"}},
	{at: "router bgp 65001", old: "neighbor 192.0.2.20 password s3cret-bgp", new: []string{"neighbor 192.0.2.20 password other-s3cret"}},
	{at: "router bgp 65001", old: "neighbor 192.0.2.10 remote-as 65010",
		new: []string{"neighbor PG-CUST peer-group", "neighbor PG-CUST remote-as 65010", "neighbor 192.0.2.10 peer-group PG-CUST"}},
	{at: "route-map RM-CUSTOMER-IN permit 10", old: "set local-preference 200", new: []string{"set local-preference 150"}},
}

// applyEdit makes edit i on cfg.
func applyEdit(cfg *config, i int) {
	e := edits[i]
	for _, a := range e.add {
		n := cfg.root
		for _, part := range strings.Split(a, "|") {
			parent := n
			if n = n.child(part); n != nil {
				continue
			}
			n = parent.add(part)
			parent.context = true
			if opensContext(parent, part) {
				n.context = true
				continue
			}
			// A neighbour's line goes before the address families that
			// name it, as FRR writes it.
			if first := slices.IndexFunc(parent.children, func(c *node) bool { return c.context }); first >= 0 && parent != cfg.root {
				parent.children = slices.Insert(parent.children[:len(parent.children)-1], first, n)
			}
		}
	}
	if e.old == "" {
		return
	}
	ctx := cfg.root
	for _, part := range strings.Split(e.at, "|") {
		if ctx = ctx.child(part); ctx == nil {
			return
		}
	}
	at := slices.IndexFunc(ctx.children, func(c *node) bool { return c.text == e.old })
	if at < 0 {
		return
	}
	delete(ctx.byText, e.old)
	var repl []*node
	for _, text := range e.new {
		if ctx.byText[text] == nil {
			n := &node{text: text}
			ctx.byText[text] = n
			repl = append(repl, n)
		}
	}
	ctx.children = slices.Replace(ctx.children, at, at+1, repl...)
}

// removable lists what the random tests may remove: any line or
// context but the ones every router has, and a neighbour whole (its
// remote-as line stands for it).
func removable(cfg *config) [][]string {
	var out [][]string
	var rec func(n *node, path []string)
	rec = func(n *node, path []string) {
		for _, c := range n.children {
			if len(path) == 0 && (unmanaged(c.text) || c.text == "bgp no-rib" || c.text == "router bgp 65001") {
				rec(c, extend(path, c.text))
				continue
			}
			out = append(out, extend(path, c.text))
			rec(c, extend(path, c.text))
		}
	}
	rec(cfg.root, nil)
	return out
}

// removeAt removes the line at path; a neighbour's remote-as or
// peer-group line takes every line of that neighbour in its router.
func removeAt(cfg *config, path []string) {
	if nb, ok := parseNeighbour(path[len(path)-1]); ok && nb.anchor && len(path) == 2 {
		router := cfg.root.child(path[0])
		if router == nil {
			return
		}
		var drop func(n *node)
		drop = func(n *node) {
			n.children = slices.DeleteFunc(n.children, func(c *node) bool {
				if other, ok := parseNeighbour(c.text); ok && other.name == nb.name {
					delete(n.byText, c.text)
					return true
				}
				drop(c)
				return false
			})
		}
		drop(router)
		return
	}
	parent := cfg.root
	for _, part := range path[:len(path)-1] {
		if parent = parent.child(part); parent == nil {
			return
		}
	}
	parent.children = slices.DeleteFunc(parent.children, func(c *node) bool { return c.text == path[len(path)-1] })
	delete(parent.byText, path[len(path)-1])
}

// render writes cfg as FRR 8 would: indented, contexts closed by exit.
func render(cfg *config) string {
	var b strings.Builder
	if cfg.defaults != "" {
		b.WriteString("frr defaults " + cfg.defaults + "\n")
	}
	var rec func(n *node, depth int)
	rec = func(n *node, depth int) {
		indent := strings.Repeat(" ", depth)
		for _, c := range n.children {
			b.WriteString(indent + c.text + "\n")
			if !c.context {
				continue
			}
			rec(c, depth+1)
			if strings.HasPrefix(c.text, "address-family ") {
				b.WriteString(indent + "exit-address-family\n")
			} else {
				b.WriteString(indent + "exit\n")
			}
			b.WriteString(indent + "!\n")
		}
	}
	rec(cfg.root, 0)
	return b.String()
}

// TestConvergeRandomRealFRR: one router goes through 20 random
// configurations made from DefaultConfig (lines and neighbours removed,
// operators' edits added), each converged within MaxPasses from the
// one before. Each target is what FRR makes of the random text: a
// router started with it, then show running-config.
func TestConvergeRandomRealFRR(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{Hostname: "dut"})
	rng := rand.New(rand.NewPCG(29, 2026))
	histogram := map[int]int{}
	for i := range 20 {
		cfg := parse(testfrr.DefaultConfig("dut"))
		var did []string
		for range rng.IntN(4) {
			places := removable(cfg)
			path := places[rng.IntN(len(places))]
			removeAt(cfg, path)
			did = append(did, "-"+strings.Join(path, "|"))
		}
		for range 1 + rng.IntN(4) {
			e := rng.IntN(len(edits))
			applyEdit(cfg, e)
			did = append(did, fmt.Sprintf("+edit%d", e))
		}
		text := render(cfg)
		canon := testfrr.Start(t, testfrr.Options{Hostname: "dut", Config: text})
		target := canon.RunningConfig(t)
		canon.Stop(t)

		passes := converge(t, r, target)
		histogram[passes]++
		t.Logf("case %d (%s): %d pass(es)", i, strings.Join(did, " "), passes)
	}
	t.Logf("passes: %v", histogram)
}

// TestEveryLineRemovedRealFRR: a router holding DefaultConfig and every
// edit has each of its lines (and contexts) removed in turn by one
// plan, which vtysh must take and which must remove it, then is brought
// back within MaxPasses. This is where a "no" form FRR refuses shows.
func TestEveryLineRemovedRealFRR(t *testing.T) {
	cfg := parse(testfrr.DefaultConfig("r1"))
	for i := range edits {
		applyEdit(cfg, i)
	}
	r := testfrr.Start(t, testfrr.Options{Config: render(cfg)})
	full := r.RunningConfig(t)
	histogram := map[int]int{}
	for _, path := range removable(parse(full)) {
		without := parse(full)
		parent := without.root
		for _, part := range path[:len(path)-1] {
			parent = parent.child(part)
		}
		parent.children = slices.DeleteFunc(parent.children, func(c *node) bool { return c.text == path[len(path)-1] })
		delete(parent.byText, path[len(path)-1])

		cmds, err := Plan(full, render(without))
		if err != nil || len(cmds) == 0 {
			t.Fatalf("remove %q: Plan = %v, %v", path, cmds, err)
		}
		d := &device{t: t, r: r}
		if err := d.apply(context.Background(), cmds); err != nil {
			t.Fatalf("remove %q: %v", path, err)
		}
		removed := r.RunningConfig(t)
		after := parse(removed).root
		for _, part := range path {
			if after = after.child(part); after == nil {
				break
			}
		}
		if after != nil {
			t.Errorf("remove %q: still there after\n%s", path, cmds)
		}
		// Back to full, the first read being the one just made.
		first := true
		read := func(ctx context.Context) (string, error) {
			if first {
				first = false
				return removed, nil
			}
			return d.read(ctx)
		}
		passes, err := Converge(context.Background(), d.apply, read, full, MaxPasses)
		if err != nil {
			t.Fatalf("restore %q: %v", path, err)
		}
		histogram[passes]++
	}
	sameLines(t, r.RunningConfig(t), full)
	t.Logf("%d lines removed; passes back: %v", len(removable(parse(full))), histogram)
}
