package apiv1_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"backupd/embed"
	"backupd/web/apiv1"
)

// docsRef matches the src and href attributes of the /docs page.
var docsRef = regexp.MustCompile(`\b(?:src|href)="([^"]+)"`)

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
		if url := "/docs/assets/" + path.Base(p); !referenced[url] {
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
		"/docs/assets/..%2Findex.html",
		"/docs/assets/.",
	} {
		status, _, body := fetch(t, srv, p)
		if status != http.StatusNotFound {
			t.Errorf("GET %s: status %d (%d bytes), want 404", p, status, len(body))
		}
	}
}
