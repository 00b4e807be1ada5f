package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParseProxies reads the addresses of trusted reverse proxies: IP
// addresses or CIDR prefixes ("10.0.0.5", "10.0.0.0/24", "::1").
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is neither an IP address nor a CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// TrustProxies makes the client address of a request that came through a
// trusted reverse proxy the one the proxy saw: when the direct peer is in
// proxies, r.RemoteAddr becomes the right-most address of X-Forwarded-For
// that is not itself a trusted proxy. From any other peer the header is
// ignored, so a client cannot choose the address that sign-in throttling,
// the audit log and the access log record. With no proxies, h is returned
// as it is.
func TrustProxies(h http.Handler, proxies []netip.Prefix) http.Handler {
	if len(proxies) == 0 {
		return h
	}
	trusted := func(a netip.Addr) bool {
		a = a.Unmap()
		for _, p := range proxies {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !trusted(peer.Addr()) {
			h.ServeHTTP(w, r)
			return
		}
		if client, ok := forwardedClient(r.Header.Values("X-Forwarded-For"), trusted); ok {
			r2 := r.Clone(r.Context())
			r2.RemoteAddr = net.JoinHostPort(client.String(), "0")
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// forwardedClient walks X-Forwarded-For from the right, past trusted
// proxies, to the first address a trusted proxy received a request from.
// A malformed entry ends the walk: nothing left of it can be believed.
func forwardedClient(values []string, trusted func(netip.Addr) bool) (netip.Addr, bool) {
	var hops []string
	for _, v := range values {
		hops = append(hops, strings.Split(v, ",")...)
	}
	var last netip.Addr
	found := false
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-32; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		last, found = a.Unmap(), true
		if !trusted(a) {
			return last, true
		}
	}
	return last, found
}
