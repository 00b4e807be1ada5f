package insync

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// OxidizedSource turns a pasted Oxidized `source: http` into an http
// source's settings and its token: the one header that carries a secret
// (Oxidized's user and pass become an Authorization header; a NetBox
// behind Oxidized has its "Authorization: Token …" header) leaves the
// settings and becomes the token, sent in that header (TokenHeader).
// The command line's --oxidized and the settings page both read a paste
// so; two secret headers are refused, a source keeping one token.
func OxidizedSource(yamlText string) (HTTPConfig, string, error) {
	h, err := ParseOxidizedHTTP(yamlText)
	if err != nil {
		return HTTPConfig{}, "", err
	}
	hc := HTTPConfig{URL: h.URL, HostsLocation: h.HostsLocation, Map: h.Map, VarsMap: h.VarsMap, CAFile: h.CAFile}
	hc.Pagination.Kind, hc.Pagination.NextPath = h.Pagination.Kind, h.Pagination.NextPath
	hc.Pagination.PageParam, hc.Pagination.Start = h.Pagination.PageParam, h.Pagination.Start
	var token string
	for _, k := range slices.Sorted(maps.Keys(h.Headers)) {
		if !SecretHeader(k) {
			if hc.Headers == nil {
				hc.Headers = map[string]string{}
			}
			hc.Headers[k] = h.Headers[k]
			continue
		}
		if hc.TokenHeader != "" {
			return HTTPConfig{}, "", errors.New("headers " + hc.TokenHeader + " and " + k +
				" both carry a secret, and a source keeps one token: keep one of them")
		}
		hc.TokenHeader, token = k, h.Headers[k]
	}
	return hc, token, nil
}

// SecretHeader reports whether a header's name says it carries a secret:
// such a header is the source's token (TokenHeader), sealed, never a
// stored setting.
func SecretHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, w := range []string{"token", "key", "secret", "auth", "pass"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
