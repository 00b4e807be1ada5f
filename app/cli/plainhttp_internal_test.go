package cli

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestPlainHTTPWarning(t *testing.T) {
	proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32")}
	cases := []struct {
		addr    string
		proxies []netip.Prefix
		warn    bool
	}{
		{"127.0.0.1:8080", nil, false},
		{"[::1]:8080", nil, false},
		{"0.0.0.0:8080", nil, true},
		{"[::]:8080", nil, true},
		{"192.0.2.10:8080", nil, true},
		{"0.0.0.0:8080", proxy, false},
	}
	for _, c := range cases {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		msg := plainHTTPWarning(a, c.proxies)
		if (msg != "") != c.warn {
			t.Errorf("%s with %d proxies: warning %q, want one: %v", c.addr, len(c.proxies), msg, c.warn)
		}
		if c.warn {
			for _, want := range []string{"--tls-cert", "--tls-key", "--trusted-proxy"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the warning does not say %s: %q", want, msg)
				}
			}
		}
	}
}
