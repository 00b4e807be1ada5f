package frrplan

import (
	"fmt"
	"strings"
	"testing"
)

// bigConfig is a BGP configuration of about lines lines as FRR prints
// it: neighbours with their settings and address-family lines,
// prefix-lists and route-maps. changed alters one neighbour in twenty,
// one prefix-list entry in twenty and one route-map in ten.
func bigConfig(lines int, changed bool) string {
	var b strings.Builder
	b.WriteString("frr version 8.4.4\nfrr defaults traditional\nhostname big\nservice integrated-vtysh-config\n!\n")
	b.WriteString("router bgp 65001\n bgp router-id 192.0.2.1\n no bgp default ipv4-unicast\n")
	peers := lines / 12 // 3 lines at the top, 2 in the family, 2 in lists, 5 in a route-map
	for i := range peers {
		as := 64512 + i
		if changed && i%20 == 0 {
			as++
		}
		fmt.Fprintf(&b, " neighbor 10.%d.%d.1 remote-as %d\n neighbor 10.%d.%d.1 description peer-%d\n", i/250, i%250, as, i/250, i%250, i)
		if !(changed && i%20 == 1) {
			fmt.Fprintf(&b, " neighbor 10.%d.%d.1 password secret-%d\n", i/250, i%250, i)
		}
	}
	b.WriteString(" !\n address-family ipv4 unicast\n")
	for i := range peers {
		fmt.Fprintf(&b, "  neighbor 10.%d.%d.1 activate\n  neighbor 10.%d.%d.1 route-map RM-%d in\n", i/250, i%250, i/250, i%250, i)
	}
	b.WriteString(" exit-address-family\nexit\n!\n")
	for i := range peers {
		action := "permit"
		if changed && i%20 == 2 {
			action = "deny"
		}
		fmt.Fprintf(&b, "ip prefix-list PL-%d seq 5 %s 172.%d.%d.0/24\nip prefix-list PL-%d seq 10 deny any\n", i, action, 16+i/250, i%250, i)
	}
	for i := range peers {
		pref := 100
		if changed && i%10 == 3 {
			pref = 200
		}
		fmt.Fprintf(&b, "route-map RM-%d permit 10\n match ip address prefix-list PL-%d\n set local-preference %d\nexit\n!\n", i, i, pref)
	}
	b.WriteString("end\n")
	return b.String()
}

// BenchmarkPlan5000: planning between two 5,000-line configurations
// that differ in about 140 lines.
func BenchmarkPlan5000(b *testing.B) {
	running, target := bigConfig(5000, false), bigConfig(5000, true)
	b.SetBytes(int64(len(running) + len(target)))
	for b.Loop() {
		cmds, err := Plan(running, target)
		if err != nil || len(cmds) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkEqual5000: the comparison Converge makes after each pass.
func BenchmarkEqual5000(b *testing.B) {
	running, target := bigConfig(5000, false), bigConfig(5000, false)
	for b.Loop() {
		if !Equal(running, target) {
			b.Fatal("not equal")
		}
	}
}

// TestBigConfig: the benchmark's configurations plan as intended, and
// the plan for 5,000 lines is the changes alone.
func TestBigConfig(t *testing.T) {
	running, target := bigConfig(5000, false), bigConfig(5000, true)
	if n := strings.Count(running, "\n"); n < 4500 || n > 5500 {
		t.Fatalf("%d lines", n)
	}
	cmds, err := Plan(running, target)
	if err != nil {
		t.Fatal(err)
	}
	// A remote-as typed over the old one, a password removed, a
	// prefix-list entry and a local-preference replaced (two commands
	// each), for each peer the change picks.
	want := 0
	for i := range 5000 / 12 {
		for _, m := range []struct{ every, at, n int }{{20, 0, 1}, {20, 1, 1}, {20, 2, 2}, {10, 3, 2}} {
			if i%m.every == m.at {
				want += m.n
			}
		}
	}
	if len(cmds) != want {
		t.Errorf("%d commands, want %d", len(cmds), want)
	}
	if Equal(running, target) || !Equal(target, bigConfig(5000, true)) {
		t.Error("Equal is wrong about the big configurations")
	}
}
