package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"backupd/app/netguard"
	"backupd/internal/testkit"
)

func TestCheckHost(t *testing.T) {
	allowed, err := netguard.ParseAllow([]string{"169.254.10.0/24", " ", "fe80::1"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host    string
		refused bool // by the default policy
		allowed bool // still refused with the allow list
		what    string
	}{
		{"127.0.0.1", false, false, ""},
		{"192.0.2.10", false, false, ""},
		{"2001:db8::1", false, false, ""},
		{"webhook.example", false, false, ""},
		{"169.254.169.254", true, true, "cloud metadata"},
		{"[fd00:ec2::254]", true, true, "cloud metadata"},
		{"100.100.100.200", true, true, "cloud metadata"},
		{"169.254.170.2", true, true, "cloud metadata"},
		{"::ffff:169.254.169.254", true, true, "cloud metadata"},
		{"64:ff9b::a9fe:a9fe", true, true, "cloud metadata"}, // NAT64 of 169.254.169.254
		{"169.254.10.7", true, false, "link-local"},
		{"169.254.11.7", true, true, "link-local"},
		{"fe80::1", true, false, "link-local"},
		{"fe80::1%eth0", true, false, "link-local"},
		{"[fe80::2]", true, true, "link-local"},
	}
	for _, c := range cases {
		err := netguard.Policy{}.CheckHost(c.host)
		if (err != nil) != c.refused || (err != nil && !errors.Is(err, netguard.ErrRefused)) {
			t.Errorf("%s: %v, want refused %v", c.host, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s: %q does not say %q", c.host, err, c.what)
		}
		if err := (netguard.Policy{Allow: allowed}).CheckHost(c.host); (err != nil) != c.allowed {
			t.Errorf("%s with the allow list: %v, want refused %v", c.host, err, c.allowed)
		}
	}
	// Numbers in the forms C resolvers read as IPv4 (git and ssh use
	// them) are refused outright: 2852039166 is 169.254.169.254.
	for _, h := range []string{"2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518", "1.2.3"} {
		if err := (netguard.Policy{}).CheckHost(h); err == nil || !strings.Contains(err.Error(), "number") {
			t.Errorf("%s: %v, want refused as an unusual number", h, err)
		}
	}
	for _, h := range []string{"cafe", "deadbeef.example", "1password.example", "a1.b2"} {
		if err := (netguard.Policy{}).CheckHost(h); err != nil {
			t.Errorf("name %s refused: %v", h, err)
		}
	}
}

func TestParseAllow(t *testing.T) {
	got, err := netguard.ParseAllow([]string{"169.254.10.9/24", "::ffff:169.254.0.0/112", "fe80::1"})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(netguard.Strings(got), " "); s != "169.254.10.0/24 169.254.0.0/16 fe80::1" {
		t.Errorf("parsed %s", s)
	}
	for _, bad := range []string{"metadata.internal", "169.254.0.0/33", "fe80::1%eth0"} {
		if _, err := netguard.ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// guarded is a dialer whose Control first runs the policy's and then
// counts the dials that would go on to connect: a refused address never
// reaches the connect system call, so no packet is sent to it.
func guarded(p netguard.Policy, connects *int) *net.Dialer {
	d := p.Dialer(2 * time.Second)
	d.Control = func(network, address string, c syscall.RawConn) error {
		if err := p.Control(network, address, c); err != nil {
			return err
		}
		*connects++
		return nil
	}
	return d
}

// Dialing 169.254.169.254 is refused before anything is sent; a real
// listener on 127.0.0.1 is reached through the same dialer.
func TestDialerRefusesBeforeConnecting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var connects int
	d := guarded(netguard.Policy{}, &connects)
	ctx := context.Background()
	for _, target := range []string{"169.254.169.254:80", "[fd00:ec2::254]:80", "[fe80::1%lo]:80"} {
		start := time.Now()
		c, err := d.DialContext(ctx, "tcp", target)
		if err == nil {
			c.Close()
			t.Fatalf("dialed %s", target)
		}
		if !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("%s: %v, want the policy's refusal", target, err)
		}
		if connects != 0 {
			t.Fatalf("%s: the dial went on to connect", target)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: the refusal took %s (a connect attempt?)", target, took)
		}
	}
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial the listener on 127.0.0.1: %v", err)
	}
	c.Close()
	if connects != 1 {
		t.Errorf("%d connects to 127.0.0.1, want 1", connects)
	}
	// With the address in the allow list, the policy lets it through.
	if err := (netguard.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}).Control("tcp4", "169.254.169.254:80", nil); err != nil {
		t.Errorf("an allowed address refused: %v", err)
	}
}

// A name that resolves to a metadata address (as after DNS rebinding) is
// refused at the dial, after the lookup; Resolve refuses it outright.
func TestNameResolvingToMetadataIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	res := testkit.Resolver(t, map[string][]netip.Addr{
		"rebound.test": {netip.MustParseAddr("169.254.169.254")},
		"good.test":    {netip.MustParseAddr("127.0.0.1")},
		"mixed.test":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("fd00:ec2::254")},
	})
	p := netguard.Policy{Resolver: res}
	var connects int
	d := guarded(p, &connects)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("rebound.test", port)); err == nil {
		c.Close()
		t.Fatal("dialed a name that resolves to 169.254.169.254")
	} else if !errors.Is(err, netguard.ErrRefused) || connects != 0 {
		t.Fatalf("rebound.test: %v (%d connects), want the policy's refusal before any connect", err, connects)
	}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("good.test", port))
	if err != nil {
		t.Fatalf("good.test: %v", err)
	}
	c.Close()

	if _, err := p.Resolve(ctx, "rebound.test"); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("Resolve(rebound.test): %v", err)
	}
	if _, err := p.Resolve(ctx, "mixed.test"); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("Resolve(mixed.test) with one metadata address: %v", err)
	}
	addrs, err := p.Resolve(ctx, "good.test")
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("Resolve(good.test) = %v, %v", addrs, err)
	}
}
