package web_test

import (
	"log/slog"
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

// What an untrusted peer says of the scheme is ignored; a trusted proxy's
// X-Forwarded-Proto (or Forwarded proto=) makes the request HTTPS, and
// then HSTS is sent.
func TestTrustProxiesScheme(t *testing.T) {
	proxies, err := web.ParseProxies([]string{"10.0.0.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	var https bool
	var remote string
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		https, remote = web.IsHTTPS(r), r.RemoteAddr
	})
	h := web.TrustProxies(web.Wrap(inner, slog.New(slog.DiscardHandler)), proxies)
	cases := []struct {
		name, peer string
		header     http.Header
		https      bool
		remote     string
	}{
		{"untrusted peer says https", "203.0.113.9:4000",
			http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"198.51.100.1"}}, false, "203.0.113.9:4000"},
		{"untrusted peer, Forwarded", "203.0.113.9:4000",
			http.Header{"Forwarded": {"for=198.51.100.1;proto=https"}}, false, "203.0.113.9:4000"},
		{"trusted proxy says https", "10.0.0.5:4000",
			http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"198.51.100.1"}}, true, "198.51.100.1:0"},
		{"trusted proxy says http", "10.0.0.5:4000",
			http.Header{"X-Forwarded-Proto": {"http"}}, false, "10.0.0.5:4000"},
		{"trusted proxy, the nearest proto counts", "10.0.0.5:4000",
			http.Header{"X-Forwarded-Proto": {"https, http"}}, false, "10.0.0.5:4000"},
		{"trusted proxy, Forwarded", "10.0.0.5:4000",
			http.Header{"Forwarded": {`for=6.6.6.6, for="[2001:db8::1]:4711";proto=HTTPS;by=10.0.0.5`}}, true, "[2001:db8::1]:0"},
		{"trusted proxy, X-Forwarded-* beat Forwarded", "10.0.0.5:4000",
			http.Header{"Forwarded": {"for=6.6.6.6;proto=https"}, "X-Forwarded-For": {"198.51.100.1"}, "X-Forwarded-Proto": {"http"}}, false, "198.51.100.1:0"},
		{"trusted proxy, obfuscated Forwarded node", "10.0.0.5:4000",
			http.Header{"Forwarded": {"for=_hidden;proto=https"}}, true, "10.0.0.5:4000"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.peer
		r.Header = c.header
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if https != c.https || remote != c.remote {
			t.Errorf("%s: IsHTTPS %v from %q, want %v from %q", c.name, https, remote, c.https, c.remote)
		}
		if got := rec.Header().Get("Strict-Transport-Security"); (got != "") != c.https {
			t.Errorf("%s: Strict-Transport-Security %q over https=%v", c.name, got, c.https)
		}
	}
}

// HSTS goes with every answer over TLS and with none over plain HTTP.
func TestHSTSOnlyOverHTTPS(t *testing.T) {
	h := web.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}), slog.New(slog.DiscardHandler))
	plain := httptest.NewServer(h)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(h)
	defer tlsSrv.Close()
	for _, c := range []struct {
		srv  *httptest.Server
		want string
	}{{plain, ""}, {tlsSrv, web.HSTS}} {
		resp, err := c.srv.Client().Get(c.srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Strict-Transport-Security"); got != c.want {
			t.Errorf("%s: Strict-Transport-Security %q, want %q", c.srv.URL, got, c.want)
		}
	}
}
