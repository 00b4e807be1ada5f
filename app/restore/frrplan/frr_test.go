package frrplan

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/internal/testfrr"
)

// These tests run real FRR 8.4.4 (internal/testfrr): skipped without
// it, failed under CI=true. Plans are typed through vtysh on the
// router's own machine; a command vtysh refuses fails the test.

// device is a real router as Converge sees it: apply types a plan, read
// is show running-config. Each applied plan is logged.
type device struct {
	t      *testing.T
	r      *testfrr.Router
	passes []Commands
}

func (d *device) apply(_ context.Context, cmds Commands) error {
	d.passes = append(d.passes, cmds)
	d.t.Logf("%s pass %d, %d commands:\n%s", d.r.Hostname, len(d.passes), len(cmds), cmds)
	out := d.r.Vtysh(d.t, cmds.Lines()...)
	// vtysh -c stops at the first refused command with an exit status
	// (Vtysh fails the test); a daemon's warning comes without one.
	for _, line := range lines(out) {
		if strings.HasPrefix(line, "%") {
			return errors.New(line)
		}
	}
	return nil
}

func (d *device) read(context.Context) (string, error) {
	return d.r.RunningConfig(d.t), nil
}

// converge brings r to target within MaxPasses and checks the result
// line for line, returning the number of passes.
func converge(t *testing.T, r *testfrr.Router, target string) int {
	t.Helper()
	d := &device{t: t, r: r}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	passes, err := Converge(ctx, d.apply, d.read, target, MaxPasses)
	if err != nil {
		var nc *NotConvergedError
		if errors.As(err, &nc) {
			t.Fatalf("%s: %v; remaining:\n%s", r.Hostname, err, strings.Join(nc.Remaining, "\n"))
		}
		t.Fatalf("%s: %v", r.Hostname, err)
	}
	got := r.RunningConfig(t)
	if !Equal(got, target) {
		t.Fatalf("%s: Converge returned but the configuration differs:\n%s", r.Hostname, strings.Join(Diff(got, target), "\n"))
	}
	sameLines(t, got, target)
	return passes
}

// sameLines compares two show running-config outputs literally, line
// for line (indentation, "!", "exit" and all), order aside: FRR prints
// neighbours in the order they were made.
func sameLines(t *testing.T, got, want string) {
	t.Helper()
	g, w := literal(got), literal(want)
	if strings.Join(g, "\n") == strings.Join(w, "\n") {
		return
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("the running configuration's lines differ from the target's:\n got: %q\nwant: %q", g, w)
		return
	}
	t.Logf("same lines as the target, in another order")
}

// literal is show running-config without its header and its "frr
// version": the configuration lines as backupd stores them.
func literal(s string) []string {
	var out []string
	for _, l := range lines(strings.TrimPrefix(s, "Building configuration...\n\nCurrent configuration:\n")) {
		if !strings.HasPrefix(l, "frr version ") {
			out = append(out, l)
		}
	}
	return out
}

// TestRestoreRealFRR: a router changed by hand in the ways operators
// change one is restored to the configuration it had, then back to the
// changed one.
func TestRestoreRealFRR(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{})
	original := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal",
		"router bgp 65001",
		"bgp router-id 192.0.2.99",
		"no neighbor 192.0.2.10",
		"neighbor 192.0.2.30 remote-as 65030",
		"neighbor 192.0.2.30 description customer-b",
		"neighbor 192.0.2.20 remote-as 64501",
		"neighbor 192.0.2.20 password n3w-s3cret",
		"neighbor 192.0.2.20 shutdown",
		"no neighbor 2001:db8::20 shutdown",
		"address-family ipv4 unicast",
		"neighbor 192.0.2.30 activate",
		"neighbor 192.0.2.30 route-map RM-NEW in",
		"exit-address-family",
		"address-family ipv6 unicast",
		"network 2001:db8:200::/48",
		"exit-address-family",
		"exit",
		"route-map RM-CUSTOMER-IN permit 10",
		"set local-preference 250",
		"set metric 5",
		"exit",
		"route-map RM-NEW permit 10",
		"match community CL-CUSTOMER",
		"set weight 100",
		"exit",
		"no ip prefix-list PL-CUSTOMER-IN seq 100 deny any",
		"no bgp community-list standard CL-CUSTOMER seq 5 permit 65001:100",
		"end")
	changed := r.RunningConfig(t)
	if Equal(changed, original) {
		t.Fatal("the changes made no difference")
	}

	passes := converge(t, r, original)
	t.Logf("restored in %d pass(es)", passes)
	if passes < 1 || passes > MaxPasses {
		t.Errorf("passes = %d", passes)
	}
	passes = converge(t, r, changed)
	t.Logf("changed again in %d pass(es)", passes)
	if passes < 1 || passes > MaxPasses {
		t.Errorf("passes = %d", passes)
	}
	// Nothing left to do: no pass at all.
	if passes := converge(t, r, changed); passes != 0 {
		t.Errorf("a router already at its target took %d passes", passes)
	}
}

const peerGroupConfig = `frr defaults traditional
hostname r1
bgp no-rib
service integrated-vtysh-config
!
router bgp 65001
 no bgp default ipv4-unicast
 neighbor PG-A peer-group
 neighbor PG-A remote-as 65100
 neighbor PG-B peer-group
 neighbor PG-B remote-as 65200
 neighbor 192.0.2.30 peer-group PG-A
 neighbor 192.0.2.30 description customer-c
 !
 address-family ipv4 unicast
  neighbor PG-A activate
  neighbor PG-B activate
  neighbor 192.0.2.30 route-map RM-OUT out
 exit-address-family
exit
!
route-map RM-OUT permit 10
exit
!
`

// TestPeerGroupMoveTakesTwoPasses: moving a neighbour to another
// peer-group means unbinding it, which deletes it with its description
// and its route-map; the first pass binds it again, the second puts the
// rest back.
func TestPeerGroupMoveTakesTwoPasses(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{Config: peerGroupConfig})
	inA := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal", "router bgp 65001",
		"no neighbor 192.0.2.30 peer-group PG-A",
		"neighbor 192.0.2.30 peer-group PG-B",
		"neighbor 192.0.2.30 description customer-c",
		"address-family ipv4 unicast", "neighbor 192.0.2.30 route-map RM-OUT out", "end")
	inB := r.RunningConfig(t)

	d := &device{t: t, r: r}
	passes, err := Converge(context.Background(), d.apply, d.read, inA, MaxPasses)
	if err != nil {
		t.Fatal(err)
	}
	if passes != 2 {
		t.Errorf("back to PG-A in %d pass(es), want 2", passes)
	}
	// The first pass binds the neighbour to PG-A and nothing else: its
	// description and route-map went with the unbinding, and the second
	// pass types them.
	if len(d.passes) == 2 {
		if got, want := d.passes[0].Lines(), []string{"configure terminal", "router bgp 65001",
			"no neighbor 192.0.2.30 peer-group PG-B", "neighbor 192.0.2.30 peer-group PG-A", "exit", "end"}; !slices.Equal(got, want) {
			t.Errorf("pass 1: %q, want %q", got, want)
		}
		if got, want := d.passes[1].Lines(), []string{"configure terminal", "router bgp 65001",
			"neighbor 192.0.2.30 description customer-c", "address-family ipv4 unicast",
			"neighbor 192.0.2.30 route-map RM-OUT out", "exit-address-family", "exit", "end"}; !slices.Equal(got, want) {
			t.Errorf("pass 2: %q, want %q", got, want)
		}
	}
	sameLines(t, r.RunningConfig(t), inA)

	if passes := converge(t, r, inB); passes != 2 {
		t.Errorf("back to PG-B in %d pass(es), want 2", passes)
	}
	// With one pass allowed, Converge says what is left.
	_, err = Converge(context.Background(), (&device{t: t, r: r}).apply, d.read, inA, 1)
	var nc *NotConvergedError
	if !errors.As(err, &nc) || nc.Passes != 1 || len(nc.Remaining) == 0 || nc.Stuck {
		t.Fatalf("one pass: err = %v", err)
	}
	if strings.Contains(err.Error(), "customer-c") {
		t.Errorf("the error shows the configuration: %v", err)
	}
}

// TestRemoteASChangeInPlace: a new remote-as is typed over the old one,
// which FRR takes without deleting the neighbour: one pass, and the
// neighbour keeps its password and route-map all along.
func TestRemoteASChangeInPlace(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{})
	original := r.RunningConfig(t)
	target := strings.Replace(original, " neighbor 192.0.2.20 remote-as 64500\n", " neighbor 192.0.2.20 remote-as 64501\n", 1)
	d := &device{t: t, r: r}
	passes, err := Converge(context.Background(), d.apply, d.read, target, MaxPasses)
	if err != nil {
		t.Fatal(err)
	}
	if passes != 1 {
		t.Errorf("passes = %d, want 1", passes)
	}
	if got := d.passes[0].Lines(); !slices.Equal(got, []string{"configure terminal", "router bgp 65001",
		"neighbor 192.0.2.20 remote-as 64501", "exit", "end"}) {
		t.Errorf("plan %q", got)
	}
	sameLines(t, r.RunningConfig(t), target)
}

// TestHostnameStaysWithVtysh: hostname typed in vtysh changes nothing a
// later session sees (the daemons keep theirs and vtysh.conf is not
// written), so Plan leaves it alone and Skipped says so.
func TestHostnameStaysWithVtysh(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{})
	running := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal", "hostname r9", "end")
	if after := r.RunningConfig(t); after != running {
		t.Fatalf("hostname typed in vtysh changed the configuration a new session reads:\n%s", strings.Join(Diff(running, after), "\n"))
	}

	target := strings.Replace(running, "hostname r1\n", "hostname r9\n", 1)
	cmds, err := Plan(running, target)
	if err != nil || len(cmds) != 0 {
		t.Errorf("Plan = %q, %v; want nothing", cmds.String(), err)
	}
	if got := Skipped(running, target); !slices.Equal(got, []string{"- hostname r1", "+ hostname r9"}) {
		t.Errorf("Skipped = %q", got)
	}
	d := &device{t: t, r: r}
	if passes, err := Converge(context.Background(), d.apply, d.read, target, MaxPasses); passes != 0 || err != nil {
		t.Errorf("Converge = %d, %v; want no pass", passes, err)
	}
}

// TestDefaultIPv4UnicastToggle: FRR shows "neighbor X activate" only
// where it differs from "bgp default ipv4-unicast", so changing that
// default changes which activate lines show. The plan changes the
// default alone and leaves the activate lines be: one pass each way,
// no neighbour deactivated on the way (deleting the "activate" lines
// the old default showed would have).
func TestDefaultIPv4UnicastToggle(t *testing.T) {
	r := testfrr.Start(t, testfrr.Options{})
	off := r.RunningConfig(t)
	r.Vtysh(t, "configure terminal", "router bgp 65001", "bgp default ipv4-unicast", "end")
	on := r.RunningConfig(t)
	if !strings.Contains(on, "  no neighbor 2001:db8::20 activate\n") || strings.Contains(on, "  neighbor 192.0.2.10 activate\n") {
		t.Fatalf("FRR shows activate lines otherwise than this test expects:\n%s", strings.Join(Diff(off, on), "\n"))
	}
	for _, target := range []string{off, on} {
		d := &device{t: t, r: r}
		passes, err := Converge(context.Background(), d.apply, d.read, target, MaxPasses)
		if err != nil {
			t.Fatal(err)
		}
		if passes != 1 {
			t.Errorf("passes = %d, want 1", passes)
		}
		for _, p := range d.passes {
			if strings.Contains(p.String(), "activate\n") {
				t.Errorf("a pass typed activate lines:\n%s", p)
			}
		}
		sameLines(t, r.RunningConfig(t), target)
	}
}
