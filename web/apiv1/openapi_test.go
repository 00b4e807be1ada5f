package apiv1_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"backupd/web/apiv1"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi*.en.golden.json from the current API")

var (
	goldenPath   = filepath.Join("testdata", "openapi.en.golden.json")
	golden30Path = filepath.Join("testdata", "openapi-3.0.en.golden.json")
)

// englishDocument is the English description as the golden file holds it.
func englishDocument(t *testing.T) []byte {
	t.Helper()
	api := apiv1.Mount(http.NewServeMux(), apiv1.Deps{})
	doc, err := json.MarshalIndent(api.OpenAPI(), "", "  ")
	if err != nil {
		t.Fatalf("marshal openapi: %v", err)
	}
	return append(doc, '\n')
}

// decode parses a JSON document into generic values, as ProseStrings wants.
func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("document is not valid JSON: %v", err)
	}
	return doc
}

// proseSet is every distinct non-empty prose string of a document.
func proseSet(doc any) map[string]bool {
	set := map[string]bool{}
	apiv1.ProseStrings(doc, func(s string) string {
		if s != "" {
			set[s] = true
		}
		return s
	})
	return set
}

// english30Document is the English OpenAPI 3.0 downgrade as its golden
// file holds it.
func english30Document(t *testing.T) []byte {
	t.Helper()
	api := apiv1.Mount(http.NewServeMux(), apiv1.Deps{})
	raw, err := api.Document(apiv1.Version30, "en")
	if err != nil {
		t.Fatalf("downgrade openapi: %v", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatalf("indent openapi 3.0: %v", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func TestOpenAPIGolden(t *testing.T) {
	for path, got := range map[string][]byte{goldenPath: englishDocument(t), golden30Path: english30Document(t)} {
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatalf("write golden file: %v", err)
			}
			t.Logf("rewrote %s", path)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read golden file (create it with -update): %v", err)
		}
		if bytes.Equal(got, want) {
			continue
		}
		t.Errorf("the OpenAPI document no longer matches %s (%s).\n"+
			"Review the change to the public contract, then rerun with:\n"+
			"  go test ./web/apiv1 -run TestOpenAPIGolden -update\n"+
			"and add Chinese text for new or changed prose to embed/i18n/openapi.zh.json.",
			path, firstDifference(string(got), string(want)))
	}
}

// firstDifference names the first line where got and want part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("first difference at line %d: got %q, golden %q", i+1, gl, wl)
		}
	}
	return "documents differ"
}

func TestOpenAPITranslationsComplete(t *testing.T) {
	english := proseSet(decode(t, englishDocument(t)))
	if len(english) == 0 {
		t.Fatal("the English document has no prose strings; ProseStrings found nothing")
	}
	table, err := apiv1.Translations()
	if err != nil {
		t.Fatalf("load translations: %v", err)
	}

	var missing, stale []string
	for s := range english {
		if strings.TrimSpace(table[s]) == "" {
			missing = append(missing, s)
		}
	}
	for s := range table {
		if !english[s] {
			stale = append(stale, s)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	if len(missing) > 0 {
		t.Errorf("%d English strings of /openapi.json have no Chinese text in embed/i18n/openapi.zh.json:\n%s",
			len(missing), quoteLines(missing))
	}
	if len(stale) > 0 {
		t.Errorf("%d entries of embed/i18n/openapi.zh.json no longer occur in /openapi.json; remove or update them:\n%s",
			len(stale), quoteLines(stale))
	}
}

var codeSpan = regexp.MustCompile("`[^`]*`")

// TestOpenAPITranslationsKeepCode checks that a translation keeps the
// English text's code spans and paragraph breaks: identifiers, error codes
// and permission names are the same in every language.
func TestOpenAPITranslationsKeepCode(t *testing.T) {
	table, err := apiv1.Translations()
	if err != nil {
		t.Fatalf("load translations: %v", err)
	}
	for en, zh := range table {
		for _, span := range codeSpan.FindAllString(en, -1) {
			if strings.Count(zh, span) != strings.Count(en, span) {
				t.Errorf("translation of %q must keep %s as often as the English (%d times): %q",
					en, span, strings.Count(en, span), zh)
			}
		}
		if strings.Count(zh, "`") != strings.Count(en, "`") {
			t.Errorf("translation of %q has %d backticks, the English %d: %q",
				en, strings.Count(zh, "`"), strings.Count(en, "`"), zh)
		}
		if strings.Count(zh, "\n\n") != strings.Count(en, "\n\n") {
			t.Errorf("translation of %q must keep its %d paragraph breaks: %q", en, strings.Count(en, "\n\n"), zh)
		}
	}
}

// fetch GETs path from srv and returns the status, content type and body.
func fetch(t *testing.T, srv *httptest.Server, path string) (int, string, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// fetchDocument GETs an OpenAPI document and checks what every language
// shares: 200, JSON, OpenAPI 3.1.0.
func fetchDocument(t *testing.T, srv *httptest.Server, path string) ([]byte, map[string]any) {
	t.Helper()
	status, ctype, body := fetch(t, srv, path)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200; body: %s", path, status, body)
	}
	if !strings.HasPrefix(ctype, "application/json") {
		t.Errorf("GET %s: Content-Type %q, want application/json", path, ctype)
	}
	if !json.Valid(body) {
		t.Fatalf("GET %s: body is not valid JSON", path)
	}
	doc := decode(t, body)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("GET %s: openapi is %v, want 3.1.0", path, doc["openapi"])
	}
	return body, doc
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// operations returns "METHOD path" → operation object of a decoded document.
func operations(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok || len(paths) == 0 {
		t.Fatal("document has no paths")
	}
	ops := map[string]map[string]any{}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok {
				ops[strings.ToUpper(method)+" "+path] = o
			}
		}
	}
	return ops
}

func sortedKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestOpenAPIZhServed(t *testing.T) {
	mux := http.NewServeMux()
	api := apiv1.Mount(mux, apiv1.Deps{})
	api.MountDocs(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	enRaw, en := fetchDocument(t, srv, "/openapi.json?lang=en")
	zhRaw, zh := fetchDocument(t, srv, "/openapi.json?lang=zh")
	xxRaw, _ := fetchDocument(t, srv, "/openapi.json?lang=xx")
	defRaw, _ := fetchDocument(t, srv, "/openapi.json")

	t.Run("English is the generated document", func(t *testing.T) {
		if want := decode(t, englishDocument(t)); !reflect.DeepEqual(en, want) {
			t.Error("/openapi.json?lang=en differs from api.OpenAPI()")
		}
		if !bytes.Equal(xxRaw, enRaw) {
			t.Error("/openapi.json?lang=xx must serve the English document")
		}
		if !bytes.Equal(defRaw, enRaw) {
			t.Error("/openapi.json without lang must serve the English document")
		}
		if bytes.Equal(zhRaw, enRaw) {
			t.Error("/openapi.json?lang=zh serves the English document")
		}
	})

	t.Run("Chinese prose", func(t *testing.T) {
		ops := operations(t, zh)
		for name, op := range ops {
			for _, key := range []string{"summary", "description"} {
				if s, _ := op[key].(string); !hasHan(s) {
					t.Errorf("zh %s: %s %q has no Chinese characters", name, key, s)
				}
			}
		}
		info, _ := zh["info"].(map[string]any)
		if s, _ := info["description"].(string); !hasHan(s) {
			t.Errorf("zh info.description %q has no Chinese characters", s)
		}
		tags, _ := zh["tags"].([]any)
		if len(tags) == 0 {
			t.Error("zh document has no tags")
		}
		for _, tag := range tags {
			if s, _ := tag.(map[string]any)["description"].(string); !hasHan(s) {
				t.Errorf("zh tag description %q has no Chinese characters", s)
			}
		}
	})

	t.Run("Chinese differs only in prose", func(t *testing.T) {
		if got, want := sortedKeys(zh["paths"]), sortedKeys(en["paths"]); !slices.Equal(got, want) {
			t.Errorf("zh paths %v, en paths %v", got, want)
		}
		zhOps, enOps := operations(t, zh), operations(t, en)
		if got, want := slices.Sorted(maps.Keys(zhOps)), slices.Sorted(maps.Keys(enOps)); !slices.Equal(got, want) {
			t.Errorf("zh operations %v, en operations %v", got, want)
		}
		zhSchemas, _ := zh["components"].(map[string]any)
		enSchemas, _ := en["components"].(map[string]any)
		if got, want := sortedKeys(zhSchemas["schemas"]), sortedKeys(enSchemas["schemas"]); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("zh schemas %v, en schemas %v", got, want)
		}

		// Translating the English prose with the table must give exactly
		// the served Chinese document: nothing else may change.
		table, err := apiv1.Translations()
		if err != nil {
			t.Fatalf("load translations: %v", err)
		}
		want := apiv1.ProseStrings(decode(t, enRaw), func(s string) string {
			if zh, ok := table[s]; ok {
				return zh
			}
			return s
		})
		if !reflect.DeepEqual(zh, want) {
			t.Error("/openapi.json?lang=zh is not the English document with its prose translated")
		}
	})

	t.Run("docs page", func(t *testing.T) {
		for lang, path := range map[string]string{"zh": "/docs?lang=zh", "en": "/docs"} {
			status, ctype, body := fetch(t, srv, path)
			if status != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", path, status)
			}
			if !strings.HasPrefix(ctype, "text/html") {
				t.Errorf("GET %s: Content-Type %q, want text/html", path, ctype)
			}
			page := string(body)
			for _, want := range []string{
				`<html lang="` + lang + `">`,
				`data-spec-url="/openapi.json?lang=` + lang + `"`,
				`src="/docs/assets/swagger-ui-bundle.js"`,
				`src="/docs/init.js"`,
			} {
				if !strings.Contains(page, want) {
					t.Errorf("GET %s: page lacks %s:\n%s", path, want, page)
				}
			}
		}
		for _, asset := range []string{"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/docs/init.js"} {
			status, _, body := fetch(t, srv, asset)
			if status != http.StatusOK || len(body) == 0 {
				t.Errorf("GET %s: status %d, %d bytes; want 200 with a body", asset, status, len(body))
			}
		}
	})
}

// quoteLines formats strings one per line, quoted so spaces and line
// breaks show.
func quoteLines(ss []string) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "  %q\n", s)
	}
	return b.String()
}
