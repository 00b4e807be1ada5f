package frrplan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// base is a small configuration as FRR 8.4 prints it, header and all.
const base = `Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults traditional
hostname r1
service integrated-vtysh-config
!
router bgp 65001
 bgp router-id 192.0.2.1
 no bgp default ipv4-unicast
 neighbor 192.0.2.10 remote-as 65010
 neighbor 192.0.2.10 description customer-a
 neighbor 192.0.2.20 remote-as 64500
 neighbor 192.0.2.20 password s3cret
 !
 address-family ipv4 unicast
  network 203.0.113.0/24
  neighbor 192.0.2.10 activate
  neighbor 192.0.2.10 route-map RM-IN in
  neighbor 192.0.2.20 activate
 exit-address-family
exit
!
ip prefix-list PL-IN seq 5 permit 198.51.100.0/24 le 28
ip prefix-list PL-IN seq 100 deny any
!
route-map RM-IN permit 10
 match ip address prefix-list PL-IN
 set local-preference 200
exit
!
route-map RM-IN deny 20
exit
!
end
`

// edit returns base with each old line replaced by new ("" deletes
// it); a missing old line fails the test.
func edit(t *testing.T, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		old, repl := pairs[i]+"\n", pairs[i+1]
		if !strings.Contains(text, old) {
			t.Fatalf("edit: %q not in the configuration", pairs[i])
		}
		if repl != "" {
			repl += "\n"
		}
		text = strings.Replace(text, old, repl, 1)
	}
	return text
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestPlan(t *testing.T) {
	cases := []struct {
		name            string
		running, target string
		want            string // Lines, one a line; "" for no commands
	}{
		{"equal", base, base, ""},
		{"equal without the header, version, separators and end, in another order, with trailing spaces",
			base, `frr defaults traditional
hostname r1
service integrated-vtysh-config
ip prefix-list PL-IN seq 100 deny any
ip prefix-list PL-IN seq 5 permit 198.51.100.0/24 le 28
route-map RM-IN deny 20
exit
route-map RM-IN permit 10
 set local-preference 200   
 match ip address prefix-list PL-IN
exit
router bgp 65001
 neighbor 192.0.2.20 remote-as 64500
 neighbor 192.0.2.20 password s3cret
 neighbor 192.0.2.10 remote-as 65010
 neighbor 192.0.2.10 description customer-a
 bgp router-id 192.0.2.1
 no bgp default ipv4-unicast
 address-family ipv4 unicast
  neighbor 192.0.2.20 activate
  neighbor 192.0.2.10 route-map RM-IN in
  neighbor 192.0.2.10 activate
  network 203.0.113.0/24
 exit-address-family
exit
`, ""},
		{"a line added in router bgp", base,
			edit(t, base, " neighbor 192.0.2.10 description customer-a", " neighbor 192.0.2.10 description customer-a\n neighbor 192.0.2.10 shutdown"),
			"configure terminal\nrouter bgp 65001\nneighbor 192.0.2.10 shutdown\nexit\nend"},
		{"a line removed from an address family", base,
			edit(t, base, "  neighbor 192.0.2.10 route-map RM-IN in", ""),
			"configure terminal\nrouter bgp 65001\naddress-family ipv4 unicast\nno neighbor 192.0.2.10 route-map RM-IN in\nexit-address-family\nexit\nend"},
		{"a no line removed is typed without its no", base,
			edit(t, base, " no bgp default ipv4-unicast", ""),
			"configure terminal\nrouter bgp 65001\nbgp default ipv4-unicast\nexit\nend"},
		{"a no line added", edit(t, base, " no bgp default ipv4-unicast", ""), base,
			"configure terminal\nrouter bgp 65001\nno bgp default ipv4-unicast\nexit\nend"},
		{"a changed password: the old one removed, the new one typed", base,
			edit(t, base, " neighbor 192.0.2.20 password s3cret", " neighbor 192.0.2.20 password n3w"),
			"configure terminal\nrouter bgp 65001\nno neighbor 192.0.2.20 password s3cret\nneighbor 192.0.2.20 password n3w\nexit\nend"},
		{"a changed remote-as is typed over the old one", base,
			edit(t, base, " neighbor 192.0.2.10 remote-as 65010", " neighbor 192.0.2.10 remote-as 65099"),
			"configure terminal\nrouter bgp 65001\nneighbor 192.0.2.10 remote-as 65099\nexit\nend"},
		{"a neighbour the target lacks goes with its remote-as alone", base,
			edit(t, base, " neighbor 192.0.2.10 remote-as 65010", "", " neighbor 192.0.2.10 description customer-a", "",
				"  neighbor 192.0.2.10 activate", "", "  neighbor 192.0.2.10 route-map RM-IN in", ""),
			"configure terminal\nrouter bgp 65001\nno neighbor 192.0.2.10 remote-as 65010\nexit\nend"},
		{"a neighbour's settings go before its remote-as", base,
			edit(t, base, " neighbor 192.0.2.10 remote-as 65010", " neighbor 192.0.2.10 peer-group PG",
				" no bgp default ipv4-unicast", " no bgp default ipv4-unicast\n neighbor PG peer-group\n neighbor PG remote-as 65010",
				" neighbor 192.0.2.10 description customer-a", ""),
			"configure terminal\nrouter bgp 65001\nno neighbor 192.0.2.10 description customer-a\nno neighbor 192.0.2.10 remote-as 65010\n" +
				"neighbor PG peer-group\nneighbor PG remote-as 65010\nneighbor 192.0.2.10 peer-group PG\nexit\nend"},
		{"a prefix-list entry removed", base,
			edit(t, base, "ip prefix-list PL-IN seq 100 deny any", ""),
			"configure terminal\nno ip prefix-list PL-IN seq 100 deny any\nend"},
		{"a route-map entry removed whole, an empty one added", base,
			edit(t, base, "route-map RM-IN permit 10", "route-map RM-IN permit 15"),
			"configure terminal\nno route-map RM-IN permit 10\nroute-map RM-IN permit 15\nmatch ip address prefix-list PL-IN\nset local-preference 200\nexit\nend"},
		{"an empty context added is entered and left", edit(t, base, "route-map RM-IN deny 20", "", "exit\n!\nend", "end"), base,
			"configure terminal\nroute-map RM-IN deny 20\nexit\nend"},
		{"lists and route-maps before the routers that name them; deletions first, deepest first",
			edit(t, base, "  network 203.0.113.0/24", "", "ip prefix-list PL-IN seq 5 permit 198.51.100.0/24 le 28", ""),
			edit(t, base, "  neighbor 192.0.2.10 route-map RM-IN in", "  neighbor 192.0.2.10 route-map RM-NEW in",
				" bgp router-id 192.0.2.1", " bgp router-id 192.0.2.9",
				"end", "route-map RM-NEW permit 5\n set weight 10\nexit\nend"),
			"configure terminal\nrouter bgp 65001\naddress-family ipv4 unicast\nno neighbor 192.0.2.10 route-map RM-IN in\nexit-address-family\n" +
				"no bgp router-id 192.0.2.1\nexit\n" +
				"ip prefix-list PL-IN seq 5 permit 198.51.100.0/24 le 28\nroute-map RM-NEW permit 5\nset weight 10\nexit\n" +
				"router bgp 65001\nbgp router-id 192.0.2.9\naddress-family ipv4 unicast\nnetwork 203.0.113.0/24\n" +
				"neighbor 192.0.2.10 route-map RM-NEW in\nexit-address-family\nexit\nend"},
		{"an address family the target lacks is emptied line by line", base,
			edit(t, base, " address-family ipv4 unicast", "", "  network 203.0.113.0/24", "", "  neighbor 192.0.2.10 activate", "",
				"  neighbor 192.0.2.10 route-map RM-IN in", "", "  neighbor 192.0.2.20 activate", "", " exit-address-family", ""),
			"configure terminal\nrouter bgp 65001\naddress-family ipv4 unicast\nno network 203.0.113.0/24\nno neighbor 192.0.2.10 activate\n" +
				"no neighbor 192.0.2.10 route-map RM-IN in\nno neighbor 192.0.2.20 activate\nexit-address-family\nexit\nend"},
		{"an address family only the target has", base,
			edit(t, base, " exit-address-family\nexit", " exit-address-family\n address-family ipv6 unicast\n  network 2001:db8::/32\n exit-address-family\nexit"),
			"configure terminal\nrouter bgp 65001\naddress-family ipv6 unicast\nnetwork 2001:db8::/32\nexit-address-family\nexit\nend"},
		{"a router bgp the target lacks goes whole, the default instance after its VRFs",
			edit(t, base, "end", "router bgp 65002 vrf BLUE\n neighbor 192.0.2.99 remote-as 65099\nexit\nend"),
			edit(t, base, "router bgp 65001", "router bgp 65003", "end", "interface eth0\n description up\nexit\nend"),
			"configure terminal\nno router bgp 65002 vrf BLUE\nno router bgp 65001\ninterface eth0\ndescription up\nexit\n" +
				"router bgp 65003\nbgp router-id 192.0.2.1\nno bgp default ipv4-unicast\nneighbor 192.0.2.10 remote-as 65010\n" +
				"neighbor 192.0.2.10 description customer-a\nneighbor 192.0.2.20 remote-as 64500\nneighbor 192.0.2.20 password s3cret\n" +
				"address-family ipv4 unicast\nnetwork 203.0.113.0/24\nneighbor 192.0.2.10 activate\nneighbor 192.0.2.10 route-map RM-IN in\n" +
				"neighbor 192.0.2.20 activate\nexit-address-family\nexit\nend"},
		{"an interface, a vrf and line vty are emptied, never removed",
			edit(t, base, "end", "interface eth0\n description up\nexit\nvrf BLUE\n vni 100\nexit-vrf\nline vty\n exec-timeout 5 0\nexit\nend"), base,
			"configure terminal\ninterface eth0\nno description\nexit\nvrf BLUE\nno vni 100\nexit\nline vty\nno exec-timeout\nexit\nend"},
		{"a key chain's keys are contexts inside a context",
			edit(t, base, "end", "key chain KC\n key 1\n  key-string one\n exit\n key 2\n  key-string two\n exit\nexit\nend"),
			edit(t, base, "end", "key chain KC\n key 2\n  key-string two-b\n exit\n key 3\n exit\nexit\nend"),
			"configure terminal\nkey chain KC\nkey 2\nno key-string two\nexit\nno key 1\nkey 2\nkey-string two-b\nexit\nkey 3\nexit\nexit\nend"},
		{"vty passwords are removed without their value", edit(t, base, "end", "password one\nenable password two\nend"), base,
			"configure terminal\nno password\nno enable password\nend"},
		{"hostname, domainname and the vtysh service are left alone",
			base, edit(t, base, "hostname r1", "hostname r9\ndomainname example.net", "service integrated-vtysh-config", "no service integrated-vtysh-config"), ""},
		{"frr version is left alone", base, edit(t, base, "frr version 8.4.4", "frr version 9.1"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmds, err := Plan(c.running, c.target)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Join(cmds.Lines(), "\n"), c.want; got != want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, want)
			}
			if equal := Equal(c.running, c.target); equal != (c.want == "") {
				t.Errorf("Equal = %v with a plan of %d commands", equal, len(cmds))
			}
		})
	}
}

// TestCommands: what a plan says about each command, and its text.
func TestCommands(t *testing.T) {
	cmds, err := Plan(base, edit(t, base,
		"  neighbor 192.0.2.20 activate", "",
		"route-map RM-IN deny 20", "route-map RM-IN deny 30"))
	if err != nil {
		t.Fatal(err)
	}
	want := Commands{
		{Context: []string{"router bgp 65001", "address-family ipv4 unicast"}, Text: "no neighbor 192.0.2.20 activate", Delete: true},
		{Text: "no route-map RM-IN deny 20", Delete: true},
		{Text: "route-map RM-IN deny 30", Enters: true},
	}
	if !slices.EqualFunc(cmds, want, func(a, b Command) bool {
		return a.Text == b.Text && a.Delete == b.Delete && a.Enters == b.Enters && slices.Equal(a.Context, b.Context)
	}) {
		t.Errorf("commands:\n%#v\nwant:\n%#v", cmds, want)
	}
	if cmds.Deletions() != 2 {
		t.Errorf("Deletions = %d, want 2", cmds.Deletions())
	}
	if got, want := cmds.String(), strings.Join(cmds.Lines(), "\n")+"\n"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	var none Commands
	if none.Lines() != nil || none.String() != "" {
		t.Errorf("an empty plan has lines: %q", none.String())
	}
}

// TestPlanPeerGroups: deleting what takes other lines with it comes
// last in its context, and a group's members go before the group.
func TestPlanPeerGroups(t *testing.T) {
	running := `router bgp 65001
 neighbor PG peer-group
 neighbor PG remote-as 65100
 neighbor PG description group
 neighbor 192.0.2.30 peer-group PG
 neighbor 192.0.2.30 description thirty
 neighbor 192.0.2.31 peer-group PG
 !
 address-family ipv4 unicast
  neighbor PG activate
  neighbor 192.0.2.30 route-map RM out
 exit-address-family
exit
`
	cases := []struct {
		name, target, want string
	}{
		{"the group and its members go: one line each, members first",
			"router bgp 65001\nexit\n",
			"configure terminal\nrouter bgp 65001\nno neighbor 192.0.2.30 peer-group PG\nno neighbor 192.0.2.31 peer-group PG\nno neighbor PG peer-group\nexit\nend"},
		{"a member moves to another group: unbound last, bound again",
			strings.Replace(strings.Replace(running, "192.0.2.30 peer-group PG", "192.0.2.30 peer-group PG2", 1),
				" neighbor PG peer-group\n", " neighbor PG peer-group\n neighbor PG2 peer-group\n neighbor PG2 remote-as 65200\n", 1),
			"configure terminal\nrouter bgp 65001\nno neighbor 192.0.2.30 peer-group PG\n" +
				"neighbor PG2 peer-group\nneighbor PG2 remote-as 65200\nneighbor 192.0.2.30 peer-group PG2\nexit\nend"},
		{"the group keeps its members but loses its remote-as and description: the remote-as last",
			strings.Replace(strings.Replace(running, " neighbor PG remote-as 65100\n", "", 1), " neighbor PG description group\n", "", 1),
			"configure terminal\nrouter bgp 65001\nno neighbor PG description group\nno neighbor PG remote-as 65100\nexit\nend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmds, err := Plan(running, c.target)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(cmds.Lines(), "\n"); got != c.want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestParse: the tree read from the text.
func TestParse(t *testing.T) {
	cfg := parse("Building configuration...\r\n\r\nCurrent configuration:\r\n!\r\nfrr version 8.4.4\r\nfrr defaults datacenter\r\n" +
		"! a comment\n# another\nroute-map A deny 20\nexit\n" +
		// FRR 7 wrote no "exit": an empty route-map entry is known by
		// its keyword.
		"route-map B permit 10\n!\n" +
		"router bgp 1\n vnc defaults\nexit-vnc\n bgp router-id 1.1.1.1 \t\n address-family ipv4 unicast\n  network 10.0.0.0/8\n exit-address-family\nexit\n" +
		// The same context twice is one.
		"router bgp 1\n bgp log-neighbor-changes\nexit\n" +
		// A context this package has no keyword for is known by its
		// exit.
		"unknown-node N1\nexit\n" +
		"ip prefix-list P seq 5 permit any\nend\n")
	if cfg.version != "8.4.4" || cfg.defaults != "datacenter" {
		t.Errorf("version %q defaults %q", cfg.version, cfg.defaults)
	}
	var got []string
	var dump func(n *node, depth int)
	dump = func(n *node, depth int) {
		for _, c := range n.children {
			mark := ""
			if c.context {
				mark = " {}"
			}
			got = append(got, strings.Repeat(".", depth)+c.text+mark)
			dump(c, depth+1)
		}
	}
	dump(cfg.root, 0)
	want := []string{
		"route-map A deny 20 {}",
		"route-map B permit 10 {}",
		"router bgp 1 {}",
		".vnc defaults {}",
		".bgp router-id 1.1.1.1",
		".address-family ipv4 unicast {}",
		"..network 10.0.0.0/8",
		".bgp log-neighbor-changes",
		"unknown-node N1 {}",
		"ip prefix-list P seq 5 permit any",
	}
	if !slices.Equal(got, want) {
		t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cfg.lines != 11 {
		t.Errorf("lines = %d, want 11", cfg.lines)
	}
}

func TestPlanRefuses(t *testing.T) {
	cases := []struct {
		name, running, target string
		err                   error
		not                   string // must not be in the message
	}{
		{"another frr defaults", base, strings.Replace(base, "defaults traditional", "defaults datacenter", 1), ErrUnsupported, ""},
		{"an empty target", base, "!\nend\n", ErrBadInput, ""},
		{"a target of only the header", base, "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n", ErrBadInput, ""},
		{"an empty running configuration", "", base, ErrBadInput, ""},
		{"a control character", base, strings.Replace(base, "password s3cret", "password s3c\x1aret", 1), ErrBadInput, "s3c"},
		{"an escape in the running configuration", strings.Replace(base, "customer-a", "cust\x1b[0mer", 1), base, ErrBadInput, "cust"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmds, err := Plan(c.running, c.target)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if cmds != nil {
				t.Errorf("commands with an error: %v", cmds)
			}
			if c.not != "" && strings.Contains(err.Error(), c.not) {
				t.Errorf("the error shows the configuration: %v", err)
			}
		})
	}
	// The defaults' names are FRR's; anything else is not repeated.
	_, err := Plan(base, strings.Replace(base, "defaults traditional", "defaults s3cret", 1))
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "traditional") {
		t.Errorf("err = %v", err)
	}
}

func TestDiffAndSkipped(t *testing.T) {
	target := edit(t, base, "hostname r1", "hostname r9",
		" neighbor 192.0.2.10 description customer-a", " neighbor 192.0.2.10 description customer-b",
		"route-map RM-IN deny 20", "route-map RM-IN deny 25")
	got := Diff(base, target)
	want := []string{
		"  router bgp 65001",
		"-  neighbor 192.0.2.10 description customer-a",
		"+  neighbor 192.0.2.10 description customer-b",
		"- route-map RM-IN deny 20",
		"+ route-map RM-IN deny 25",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := Skipped(base, target), []string{"- hostname r1", "+ hostname r9"}; !slices.Equal(got, want) {
		t.Errorf("Skipped = %q, want %q", got, want)
	}
	if got := Diff(base, strings.Replace(base, "defaults traditional", "defaults datacenter", 1)); !slices.Equal(got,
		[]string{"- frr defaults traditional", "+ frr defaults datacenter"}) {
		t.Errorf("Diff of the defaults = %q", got)
	}
	if Equal(base, strings.Replace(base, "defaults traditional", "defaults datacenter", 1)) {
		t.Error("Equal with other defaults")
	}
	if !Equal(base, strings.Replace(base, "frr defaults traditional\n", "", 1)) {
		t.Error("not Equal when one side does not say its defaults")
	}
}

func TestKeystrokes(t *testing.T) {
	if got, want := Keystrokes("permit ^1(_2)?$ and ?"), "permit ^1(_2)\x16?$ and \x16?"; got != want {
		t.Errorf("Keystrokes = %q, want %q", got, want)
	}
	if got := Keystrokes("neighbor 192.0.2.1 remote-as 1"); got != "neighbor 192.0.2.1 remote-as 1" {
		t.Errorf("Keystrokes changed a plain line: %q", got)
	}
}
