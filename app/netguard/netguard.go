// Package netguard decides which addresses backupd connects out to.
//
// Webhooks, chat tools, SMTP servers, the git remote and devices are
// addresses users type in. A link-local address (169.254.0.0/16,
// fe80::/10) or a cloud provider's metadata service (169.254.169.254,
// fd00:ec2::254 …) is refused unless the outbound allow list holds it:
// on a cloud machine such an address hands out the machine's own
// credentials to whoever can make it send a request there. The check runs
// twice: on the address as typed (a clear error when the form is saved)
// and on every address a connection is actually made to, after DNS
// (Policy.Control, a net.Dialer hook that runs before the connect system
// call), so that a name that resolves to such an address, or starts to
// later (DNS rebinding), is refused before a packet goes out.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// blocked are the ranges refused unless allowed, with what each is. The
// more specific ones come first: their name is the better reason.
var blocked = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata"},       // AWS, GCP, Azure, Oracle, DigitalOcean …
	{netip.MustParsePrefix("169.254.170.2/32"), "cloud metadata"},         // AWS ECS task credentials
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"},        // AWS IMDS over IPv6
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata"},       // Alibaba Cloud
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud platform service"}, // Azure WireServer
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
}

// nat64 is the well-known NAT64 prefix: an address in it reaches the
// IPv4 address in its last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// ErrRefused is what every refusal matches with errors.Is.
var ErrRefused = errors.New("outbound address refused")

// RefusedError says which address was refused and why.
type RefusedError struct {
	Addr netip.Addr
	// What the address is: "link-local", "cloud metadata" …
	What string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is a %s address, which backupd does not connect to unless the outbound allow list holds it (Settings, or serve --outbound-allow)",
		e.Addr, e.What)
}

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Policy is the outbound allow list: addresses in Allow are connected to
// even when they are link-local or a metadata service. The zero Policy
// refuses all of blocked.
type Policy struct {
	Allow []netip.Prefix
	// Resolver looks names up (nil: net.DefaultResolver); tests set one
	// that answers what they need.
	Resolver *net.Resolver
}

// CheckAddr refuses a, unless allowed, when it is (or, IPv4-mapped or
// behind NAT64, stands for) a blocked address.
func (p Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	candidates := []netip.Addr{a}
	if nat64.Contains(a) {
		b := a.As16()
		candidates = append(candidates, netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	for _, c := range candidates {
		for _, al := range p.Allow {
			if al.Contains(c) {
				return nil
			}
		}
		for _, b := range blocked {
			if b.prefix.Contains(c) {
				return &RefusedError{Addr: a, What: b.what}
			}
		}
	}
	return nil
}

// MetadataHost reports whether host, as typed, is the address of a cloud
// metadata or platform service (169.254.169.254, fd00:ec2::254 …): no
// device answers there, whatever the allow list says of link-local
// networks.
func MetadataHost(host string) bool {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(host), "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	var re *RefusedError
	return errors.As(Policy{}.CheckAddr(a), &re) && re.What != "link-local"
}

// CheckHost checks a host as typed (a URL's host, an SMTP server, a
// device's address): an IP address (brackets and zone allowed) is checked
// with CheckAddr; a number in another form (2852039166, 0xa9fea9fe,
// 169.254.43518), which C resolvers and so git or ssh take for an IPv4
// address, is refused outright; a name passes, to be checked where it is
// resolved.
func (p Policy) CheckHost(host string) error {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(host), "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return p.CheckAddr(a)
	}
	if numericHost(h) {
		return &numericError{host: host}
	}
	return nil
}

// numericError refuses a host that is a number in an unusual form: what
// it stands for depends on who reads it.
type numericError struct{ host string }

func (e *numericError) Error() string {
	return fmt.Sprintf("%q is a number but not an IP address written the usual way (192.0.2.1, 2001:db8::1): write the address that way", e.host)
}

// Is makes a numericError match ErrRefused.
func (e *numericError) Is(target error) bool { return target == ErrRefused }

// numericHost reports whether every dot-separated label of h is a number
// (decimal, octal or 0x hex), as inet_aton reads an IPv4 address.
func numericHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		l := strings.ToLower(label)
		digits := "0123456789"
		if strings.HasPrefix(l, "0x") {
			l, digits = l[2:], "0123456789abcdef"
		}
		if l == "" && !strings.HasPrefix(strings.ToLower(label), "0x") {
			return false
		}
		for _, c := range l {
			if !strings.ContainsRune(digits, c) {
				return false
			}
		}
	}
	return true
}

// Control is a net.Dialer Control hook: it runs for every address the
// dialer tries, after DNS and before the connect system call, and refuses
// a blocked one, so that no packet goes to it.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		host, _, splitErr := net.SplitHostPort(address)
		if splitErr != nil {
			return fmt.Errorf("netguard: %s: not an address", address)
		}
		a, perr := netip.ParseAddr(host)
		if perr != nil {
			return fmt.Errorf("netguard: %s: not an address", address)
		}
		return p.CheckAddr(a)
	}
	return p.CheckAddr(ap.Addr())
}

// Dialer is a net.Dialer that refuses what the policy refuses.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: p.Control, Resolver: p.Resolver}
}

// Resolve looks host up and checks every address it has; it returns them
// when none is refused. For a program that connects on its own (git,
// ssh), which is then told to use these addresses (pinning them), so that
// a second lookup cannot answer otherwise.
func (p Policy) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if err := p.CheckHost(host); err != nil {
		return nil, err
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	res := p.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if err := p.CheckAddr(a); err != nil {
			return nil, fmt.Errorf("%s resolves to %w", host, err)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// MaxAllow bounds the allow list.
const MaxAllow = 100

// ParseAllow reads an allow list: IP addresses or CIDR prefixes
// ("169.254.10.0/24", "fe80::1"), blanks skipped.
func ParseAllow(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if len(out) >= MaxAllow {
			return nil, fmt.Errorf("at most %d entries", MaxAllow)
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			if p.Addr().Zone() != "" {
				return nil, fmt.Errorf("%q: no zone in a prefix", s)
			}
			out = append(out, netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p)).Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix (169.254.10.0/24, fe80::/64)", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// unmapBits is what an IPv4-mapped prefix (::ffff:169.254.0.0/112) loses
// in length when written as IPv4.
func unmapBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return 96
	}
	return 0
}

// SettingAllow is the setting that holds the allow list ([]string).
const SettingAllow = "outbound_allow"

// Settings is where the allow list is kept: the store (*db.Store).
type Settings interface {
	GetSetting(ctx context.Context, key string, v any) (bool, error)
	PutSetting(ctx context.Context, key string, v any) error
}

// Load reads the stored allow list. An entry that no longer parses (the
// store edited by hand) is an error: refusing everything it meant to
// allow would fail silently.
func Load(ctx context.Context, store Settings) (Policy, error) {
	var list []string
	if _, err := store.GetSetting(ctx, SettingAllow, &list); err != nil {
		return Policy{}, err
	}
	allow, err := ParseAllow(list)
	if err != nil {
		return Policy{}, fmt.Errorf("outbound allow list: %w", err)
	}
	return Policy{Allow: allow}, nil
}

// Save stores the allow list; every process reads it where it connects.
func Save(ctx context.Context, store Settings, allow []netip.Prefix) error {
	return store.PutSetting(ctx, SettingAllow, Strings(allow))
}

// Strings writes an allow list back as the setting stores it.
func Strings(allow []netip.Prefix) []string {
	out := make([]string, 0, len(allow))
	for _, p := range allow {
		if p.IsSingleIP() {
			out = append(out, p.Addr().String())
		} else {
			out = append(out, p.String())
		}
	}
	return out
}
