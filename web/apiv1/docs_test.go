package apiv1_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"backupd/embed"
	"backupd/web/apiv1"
)

// docsRef matches the src and href attributes of the /docs page: the
// files it loads. Links it leads to (<a href>: the way back to the app)
// are not.
var docsRef = regexp.MustCompile(`<(?:script|link|img)\b[^>]*\b(?:src|href)="([^"]+)"`)

// TestDocsAssets checks that the /docs page gets every file it references,
// with the right type, that the binary carries no Swagger UI file the page
// does not reference, and that nothing else of Swagger UI is served.
func TestDocsAssets(t *testing.T) {
	mux := http.NewServeMux()
	api := apiv1.Mount(mux, apiv1.Deps{})
	api.MountDocs(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	wantType := map[string]string{
		".js":  "text/javascript",
		".css": "text/css",
		".png": "image/png",
	}
	referenced := map[string]bool{}
	for _, page := range []string{"/docs", "/docs?lang=zh"} {
		status, _, body := fetch(t, srv, page)
		if status != http.StatusOK {
			t.Fatalf("GET %s: status %d, want 200", page, status)
		}
		refs := docsRef.FindAllStringSubmatch(string(body), -1)
		if len(refs) < 4 {
			t.Fatalf("GET %s: %d src/href attributes, want the style sheet, icon and two scripts:\n%s", page, len(refs), body)
		}
		for _, m := range refs {
			ref := m[1]
			if !strings.HasPrefix(ref, "/docs/") {
				t.Errorf("GET %s: references %q, outside /docs/ (the page must load only its own files)", page, ref)
				continue
			}
			referenced[ref] = true
		}
	}

	for ref := range referenced {
		status, ctype, body := fetch(t, srv, ref)
		if status != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s: status %d, %d bytes; want 200 with a body", ref, status, len(body))
			continue
		}
		want, ok := wantType[path.Ext(ref)]
		if !ok {
			t.Errorf("GET %s: no expected type for %q files in this test", ref, path.Ext(ref))
		} else if !strings.HasPrefix(ctype, want) {
			t.Errorf("GET %s: Content-Type %q, want %s", ref, ctype, want)
		}
	}

	// Each file is the vendored original, checked against the sha256 that
	// NOTICE lists: compressed for a client that accepts gzip, decompressed
	// on the way out for one that does not.
	sums := noticeChecksums(t)
	for ref := range referenced {
		if strings.HasPrefix(ref, "/docs/assets/") {
			checkDocsAsset(t, srv, ref, wantType[path.Ext(ref)], sums[path.Base(ref)])
		}
	}

	// Every Swagger UI file in the binary is one the page loads.
	var embedded []string
	err := fs.WalkDir(embed.DocsAssets, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk embedded docs assets: %v", err)
	}
	if len(embedded) == 0 {
		t.Fatal("no Swagger UI files embedded")
	}
	for _, p := range embedded {
		// The bundle and style sheet are stored as name.gz, served as name.
		if url := "/docs/assets/" + strings.TrimSuffix(path.Base(p), ".gz"); !referenced[url] {
			t.Errorf("%s is embedded but /docs never loads %s", p, url)
		}
	}

	// What Swagger UI ships but the page does not use is not served, nor
	// are the vendored licence files, nor a directory listing.
	for _, p := range []string{
		"/docs/assets/",
		"/docs/assets/swagger-ui-bundle.js.map",
		"/docs/assets/swagger-ui.css.map",
		"/docs/assets/swagger-ui.js",
		"/docs/assets/swagger-ui-standalone-preset.js",
		"/docs/assets/swagger-ui-es-bundle.js",
		"/docs/assets/index.html",
		"/docs/assets/index.css",
		"/docs/assets/swagger-initializer.js",
		"/docs/assets/oauth2-redirect.html",
		"/docs/assets/favicon-16x16.png",
		"/docs/assets/NOTICE",
		"/docs/assets/LICENSE",
		"/docs/assets/update.sh",
		"/docs/assets/swagger-ui-bundle.js.gz",
		"/docs/assets/swagger-ui.css.gz",
		"/docs/assets/..%2Findex.html",
		"/docs/assets/.",
	} {
		status, _, body := fetch(t, srv, p)
		if status != http.StatusNotFound {
			t.Errorf("GET %s: status %d (%d bytes), want 404", p, status, len(body))
		}
	}
}

// noticeChecksums returns the sha256 of each vendored Swagger UI file as
// embed/docs/swagger-ui/NOTICE lists it, by file name.
func noticeChecksums(t *testing.T) map[string]string {
	t.Helper()
	notice, err := os.ReadFile("../../embed/docs/swagger-ui/NOTICE")
	if err != nil {
		t.Fatalf("read NOTICE: %v", err)
	}
	sums := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^ +([0-9a-f]{64})  (\S+)$`).FindAllStringSubmatch(string(notice), -1) {
		sums[m[2]] = m[1]
	}
	if len(sums) < 3 {
		t.Fatalf("NOTICE lists %d checksums, want those of the bundle, the style sheet and the icon", len(sums))
	}
	return sums
}

// docsReply is one response to a request for a docs asset.
type docsReply struct {
	status int
	header http.Header
	length int64 // Content-Length, -1 if none
	chunk  bool  // chunked transfer encoding
	body   []byte
}

// docsRequest sends method path with the given headers, without Go's own
// gzip handling: the test sees the bytes and headers as the server sent them.
func docsRequest(t *testing.T, srv *httptest.Server, method, target string, header ...string) docsReply {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s %q: %v", method, target, header, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s %q: read body: %v", method, target, header, err)
	}
	return docsReply{
		status: resp.StatusCode, header: resp.Header, length: resp.ContentLength,
		chunk: len(resp.TransferEncoding) > 0 && resp.TransferEncoding[0] == "chunked", body: body,
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// checkDocsAsset checks both representations of one asset against the
// original's sha256, their headers, HEAD and conditional requests.
func checkDocsAsset(t *testing.T, srv *httptest.Server, ref, ctype, wantSum string) {
	t.Helper()
	if wantSum == "" {
		t.Errorf("%s: NOTICE lists no checksum for %s", ref, path.Base(ref))
		return
	}
	compressed := path.Ext(ref) != ".png" // PNG is compressed already

	gz := docsRequest(t, srv, "GET", ref, "Accept-Encoding", "gzip, deflate, br")
	plain := docsRequest(t, srv, "GET", ref)
	for _, c := range []struct {
		what string
		r    docsReply
	}{{"with Accept-Encoding: gzip", gz}, {"without Accept-Encoding", plain}} {
		if c.r.status != http.StatusOK {
			t.Errorf("GET %s %s: status %d, want 200", ref, c.what, c.r.status)
			return
		}
		if got := c.r.header.Get("Content-Type"); !strings.HasPrefix(got, ctype) {
			t.Errorf("GET %s %s: Content-Type %q, want %s", ref, c.what, got, ctype)
		}
		if etag := c.r.header.Get("ETag"); !strings.HasPrefix(etag, `"`) {
			t.Errorf("GET %s %s: ETag %q, want a strong one", ref, c.what, etag)
		}
		if c.r.header.Get("Cache-Control") == "" {
			t.Errorf("GET %s %s: no Cache-Control", ref, c.what)
		}
		if compressed && !slices.Contains(c.r.header.Values("Vary"), "Accept-Encoding") {
			t.Errorf("GET %s %s: Vary %q, want Accept-Encoding", ref, c.what, c.r.header.Values("Vary"))
		}
		if c.r.length != int64(len(c.r.body)) && !(c.r.length == -1 && c.r.chunk) {
			t.Errorf("GET %s %s: Content-Length %d for %d bytes, not chunked", ref, c.what, c.r.length, len(c.r.body))
		}
	}

	// Without gzip: the original bytes, as they are.
	if enc := plain.header.Get("Content-Encoding"); enc != "" {
		t.Errorf("GET %s without Accept-Encoding: Content-Encoding %q, want none", ref, enc)
	}
	if got := sha256Hex(plain.body); got != wantSum {
		t.Errorf("GET %s without Accept-Encoding: %d bytes with sha256 %s, NOTICE lists %s", ref, len(plain.body), got, wantSum)
	}

	// With gzip: gzip data that decompresses to the original.
	original := gz.body
	if !compressed {
		if enc := gz.header.Get("Content-Encoding"); enc != "" {
			t.Errorf("GET %s with Accept-Encoding: gzip: Content-Encoding %q, want none", ref, enc)
		}
	} else {
		if enc := gz.header.Get("Content-Encoding"); enc != "gzip" {
			t.Errorf("GET %s with Accept-Encoding: gzip: Content-Encoding %q, want gzip", ref, enc)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.body))
		if err != nil {
			t.Errorf("GET %s with Accept-Encoding: gzip: body is not gzip: %v", ref, err)
			return
		}
		if original, err = io.ReadAll(zr); err != nil {
			t.Errorf("GET %s with Accept-Encoding: gzip: decompress: %v", ref, err)
			return
		}
		if len(gz.body) >= len(original) {
			t.Errorf("GET %s with Accept-Encoding: gzip: %d bytes for %d uncompressed", ref, len(gz.body), len(original))
		}
		if gz.header.Get("ETag") == plain.header.Get("ETag") {
			t.Errorf("GET %s: the same ETag %s for the gzip and the plain reply", ref, gz.header.Get("ETag"))
		}
	}
	if got := sha256Hex(original); got != wantSum {
		t.Errorf("GET %s with Accept-Encoding: gzip: decompresses to %d bytes with sha256 %s, NOTICE lists %s", ref, len(original), got, wantSum)
	}

	// HEAD: the GET's headers, no body.
	for _, c := range []struct {
		what   string
		header []string
		get    docsReply
	}{
		{"with Accept-Encoding: gzip", []string{"Accept-Encoding", "gzip"}, gz},
		{"without Accept-Encoding", nil, plain},
	} {
		head := docsRequest(t, srv, "HEAD", ref, c.header...)
		if head.status != http.StatusOK || len(head.body) != 0 {
			t.Errorf("HEAD %s %s: status %d, %d bytes; want 200, none", ref, c.what, head.status, len(head.body))
		}
		for _, k := range []string{"Content-Type", "Content-Encoding", "ETag", "Vary"} {
			if head.header.Get(k) != c.get.header.Get(k) {
				t.Errorf("HEAD %s %s: %s %q, GET has %q", ref, c.what, k, head.header.Get(k), c.get.header.Get(k))
			}
		}
		if head.length != int64(len(c.get.body)) {
			t.Errorf("HEAD %s %s: Content-Length %d, GET sends %d bytes", ref, c.what, head.length, len(c.get.body))
		}
	}

	// Conditional requests: each representation revalidates with its own
	// ETag, and only with it.
	gzETag, plainETag := gz.header.Get("ETag"), plain.header.Get("ETag")
	for _, c := range []struct {
		what       string
		header     []string
		wantStatus int
	}{
		{"gzip, its ETag", []string{"Accept-Encoding", "gzip", "If-None-Match", gzETag}, http.StatusNotModified},
		{"plain, its ETag", []string{"If-None-Match", plainETag}, http.StatusNotModified},
		{"plain, among others", []string{"If-None-Match", `"x", ` + plainETag}, http.StatusNotModified},
		{"gzip, another ETag", []string{"Accept-Encoding", "gzip", "If-None-Match", `"x"`}, http.StatusOK},
		{"gzip, If-Match another ETag", []string{"Accept-Encoding", "gzip", "If-Match", `"x"`}, http.StatusPreconditionFailed},
		{"plain, If-Match another ETag", []string{"If-Match", `"x"`}, http.StatusPreconditionFailed},
	} {
		r := docsRequest(t, srv, "GET", ref, c.header...)
		if r.status != c.wantStatus {
			t.Errorf("GET %s (%s): status %d, want %d", ref, c.what, r.status, c.wantStatus)
		}
		if r.status == http.StatusNotModified && (len(r.body) != 0 || r.header.Get("ETag") == "") {
			t.Errorf("GET %s (%s): 304 with %d bytes, ETag %q", ref, c.what, len(r.body), r.header.Get("ETag"))
		}
		if r.status == http.StatusPreconditionFailed && r.header.Get("Content-Encoding") != "" {
			t.Errorf("GET %s (%s): 412 with Content-Encoding %q", ref, c.what, r.header.Get("Content-Encoding"))
		}
	}
	if !compressed {
		return
	}
	if r := docsRequest(t, srv, "GET", ref, "If-None-Match", gzETag); r.status != http.StatusOK || sha256Hex(r.body) != wantSum {
		t.Errorf("GET %s without gzip, If-None-Match the gzip ETag: status %d, want 200 with the original", ref, r.status)
	}

	// Which Accept-Encoding values get gzip (RFC 9110 section 12.5.3).
	for ae, wantGzip := range map[string]bool{
		"gzip":                true,
		"GZIP":                true,
		"x-gzip":              true,
		"deflate, gzip;q=0.5": true,
		"br;q=1.0, *;q=0.1":   true,
		"*;q=0, gzip":         true,
		"identity":            false,
		"deflate, br":         false,
		"gzip;q=0":            false,
		"gzip;q=0.000":        false,
		"gzip;q=0, *":         false,
		"*;q=0":               false,
		"gzip;q=bogus":        false,
		"gzip;q=2":            false,
		"":                    false,
		",;,;q=,gzipx":        false,
		" , gzip ; ,":         true,
	} {
		r := docsRequest(t, srv, "GET", ref, "Accept-Encoding", ae)
		if got := r.header.Get("Content-Encoding") == "gzip"; got != wantGzip || r.status != http.StatusOK {
			t.Errorf("GET %s with Accept-Encoding %q: status %d, Content-Encoding %q; want 200, gzip %v",
				ref, ae, r.status, r.header.Get("Content-Encoding"), wantGzip)
		}
	}

	// Ranges are not offered for a compressed file: the whole file comes.
	r := docsRequest(t, srv, "GET", ref, "Range", "bytes=0-9")
	if r.status != http.StatusOK || sha256Hex(r.body) != wantSum || r.header.Get("Accept-Ranges") != "" {
		t.Errorf("GET %s with Range: status %d, %d bytes, Accept-Ranges %q; want 200 with the whole file, no Accept-Ranges",
			ref, r.status, len(r.body), r.header.Get("Accept-Ranges"))
	}
}
