package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"backupd/web"
)

func TestTrustProxiesBelievesOnlyTrustedPeers(t *testing.T) {
	proxies, err := web.ParseProxies([]string{"10.0.0.0/24", "192.0.2.7", " "})
	if err != nil {
		t.Fatal(err)
	}
	var seen string
	h := web.TrustProxies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr }), proxies)
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer: header ignored", "203.0.113.9:4000", []string{"198.51.100.1"}, "203.0.113.9:4000"},
		{"trusted peer, one hop", "10.0.0.5:4000", []string{"198.51.100.1"}, "198.51.100.1:0"},
		{"client-supplied left entries skipped", "10.0.0.5:4000", []string{"6.6.6.6, 198.51.100.1"}, "198.51.100.1:0"},
		{"chain of trusted proxies", "10.0.0.5:4000", []string{"198.51.100.1, 192.0.2.7", "10.0.0.9"}, "198.51.100.1:0"},
		{"malformed right entry: peer kept", "10.0.0.5:4000", []string{"198.51.100.1, not-an-ip"}, "10.0.0.5:4000"},
		{"no header", "10.0.0.5:4000", nil, "10.0.0.5:4000"},
		{"IPv6 client", "192.0.2.7:4000", []string{"2001:db8::1"}, "[2001:db8::1]:0"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if seen != c.want {
			t.Errorf("%s: RemoteAddr %q, want %q", c.name, seen, c.want)
		}
	}
	if _, err := web.ParseProxies([]string{"proxy.example"}); err == nil {
		t.Error("a host name was accepted as a trusted proxy")
	}
}
