package web

import (
	"context"
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
			return nil, fmt.Errorf("--trusted-proxy: %q is neither an IP address nor a CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// TrustProxies believes what a trusted reverse proxy says about the
// request it forwards. When the direct peer is in proxies:
//
//   - the client address (r.RemoteAddr) becomes the right-most address
//     of X-Forwarded-For that is not itself a trusted proxy, or without
//     that header the same of Forwarded's for= (RFC 7239);
//   - the request counts as HTTPS (IsHTTPS) when X-Forwarded-Proto, or
//     without it Forwarded's proto=, says https: the proxy terminated
//     TLS, so cookies are Secure and HSTS is sent.
//
// From any other peer these headers are ignored, so a client can choose
// neither the address that sign-in throttling, the audit log and the
// access log record nor the scheme. X-Forwarded-* wins over Forwarded,
// which a proxy that sets only the former passes on as the client sent
// it. With no proxies, h is returned as it is.
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
		var fwd []forwardedElement
		if vs := r.Header.Values("Forwarded"); len(vs) > 0 {
			fwd = parseForwarded(vs)
		}
		var hops []string
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			hops = splitList(xff)
		} else {
			for _, e := range fwd {
				hops = append(hops, e.forAddr)
			}
		}
		proto := ""
		if xfp := splitList(r.Header.Values("X-Forwarded-Proto")); len(xfp) > 0 {
			proto = xfp[len(xfp)-1]
		} else if len(fwd) > 0 {
			proto = fwd[len(fwd)-1].proto
		}
		client, hasClient := forwardedClient(hops, trusted)
		https := strings.EqualFold(proto, "https")
		if !hasClient && !https {
			h.ServeHTTP(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		if hasClient {
			r2.RemoteAddr = net.JoinHostPort(client.String(), "0")
		}
		if https {
			r2 = r2.WithContext(context.WithValue(r2.Context(), httpsKey{}, true))
		}
		h.ServeHTTP(w, r2)
	})
}

type httpsKey struct{}

// IsHTTPS reports whether the client reached this server over HTTPS:
// directly (TLS here) or through a trusted proxy that terminated TLS
// (see TrustProxies).
func IsHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	v, _ := r.Context().Value(httpsKey{}).(bool)
	return v
}

// splitList splits comma-separated header values into trimmed entries.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

// forwardedClient walks the hops (X-Forwarded-For's entries) from the
// right, past trusted proxies, to the first address a trusted proxy
// received a request from. A malformed entry ends the walk: nothing left
// of it can be believed.
func forwardedClient(hops []string, trusted func(netip.Addr) bool) (netip.Addr, bool) {
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

// forwardedElement is one proxy's entry of a Forwarded header: the
// address it received the request from (without port; "" when it gave
// none or an obfuscated one) and the scheme.
type forwardedElement struct {
	forAddr string
	proto   string
}

// parseForwarded reads Forwarded headers (RFC 7239): elements separated
// by commas, pairs by semicolons, values plain or quoted. At most 64
// elements are read.
func parseForwarded(values []string) []forwardedElement {
	var out []forwardedElement
	for _, v := range values {
		for _, elem := range splitQuoted(v, ',') {
			if len(out) >= 64 {
				return out
			}
			var e forwardedElement
			for _, pair := range splitQuoted(elem, ';') {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if !ok {
					continue
				}
				val = strings.Trim(strings.TrimSpace(val), `"`)
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "for":
					e.forAddr = forwardedNode(val)
				case "proto":
					e.proto = val
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// forwardedNode is the address of a Forwarded node: 192.0.2.1,
// 192.0.2.1:80, [2001:db8::1] or [2001:db8::1]:80; "" for anything
// else (unknown, _obfuscated), which is not an address and so ends the
// walk of forwardedClient.
func forwardedNode(v string) string {
	if ap, err := netip.ParseAddrPort(v); err == nil {
		return ap.Addr().String()
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	if a, err := netip.ParseAddr(v); err == nil {
		return a.String()
	}
	return ""
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == '\\' && quoted:
			i++
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
