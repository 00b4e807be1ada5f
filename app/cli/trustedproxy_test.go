package cli_test

import (
	"net/http"
	"strings"
	"testing"
)

// serve --trusted-proxy (repeatable) believes X-Forwarded-Proto from the
// proxies named, and then sends HSTS; a host name is refused.
func TestServeTrustedProxy(t *testing.T) {
	data := storeDir(t)
	srv := startServe(t, data, "--trusted-proxy", "192.0.2.1", "--trusted-proxy", "127.0.0.1/32")
	get := func(proto string) http.Header {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.url+"/login", nil)
		if err != nil {
			t.Fatal(err)
		}
		if proto != "" {
			req.Header.Set("X-Forwarded-Proto", proto)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header
	}
	if got := get("https").Get("Strict-Transport-Security"); got == "" {
		t.Error("no Strict-Transport-Security through a trusted proxy that says https")
	}
	if got := get("").Get("Strict-Transport-Security"); got != "" {
		t.Errorf("Strict-Transport-Security %q over plain HTTP", got)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	r := run(t, call{}, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--trusted-proxy", "proxy.example")
	if r.code == 0 || !strings.Contains(r.stderr, "--trusted-proxy") || !strings.Contains(r.stderr, "proxy.example") {
		t.Errorf("serve --trusted-proxy proxy.example:\n%s", r)
	}
}
