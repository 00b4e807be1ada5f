package apiv1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"backupd/web/apiv1"
)

// mapAt walks a decoded document along keys; nil when a step is missing.
func mapAt(v any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m
}

func TestOpenAPIInfoLicenceAndContact(t *testing.T) {
	doc := decode(t, englishDocument(t))
	license := mapAt(doc, "info", "license")
	if license["name"] != "Apache-2.0" || license["url"] != "https://www.apache.org/licenses/LICENSE-2.0" {
		t.Errorf("info.license = %v", license)
	}
	contact := mapAt(doc, "info", "contact")
	if contact["name"] != "backupd maintainers" || contact["email"] != "maintainers@backupd.dev" || contact["url"] != "https://backupd.dev" {
		t.Errorf("info.contact = %v", contact)
	}
}

// TestOpenAPIResponsesForIntegrators checks what every operation's
// responses say: the X-Request-ID header on each, an example on each
// response and request body, the error codes of each error status both in
// the prose and in x-error-codes, and 422 only where there is input.
func TestOpenAPIResponsesForIntegrators(t *testing.T) {
	doc := decode(t, englishDocument(t))
	header := mapAt(doc, "components", "headers", "X-Request-ID")
	if header["required"] != true || mapAt(header, "schema")["type"] != "string" {
		t.Errorf("components.headers.X-Request-ID = %v, want a required string header", header)
	}
	hasExample := func(mt map[string]any) bool {
		if mt["example"] != nil {
			return true
		}
		ex, _ := mt["examples"].(map[string]any)
		return len(ex) > 0
	}
	ops := operations(t, doc)
	if len(ops) < 20 {
		t.Fatalf("only %d operations", len(ops))
	}
	for name, op := range ops {
		if body := mapAt(op, "requestBody"); body != nil {
			if !hasExample(mapAt(body, "content", "application/json")) {
				t.Errorf("%s: request body has no example", name)
			}
		}
		responses := mapAt(op, "responses")
		params, _ := op["parameters"].([]any)
		_, has422 := responses["422"]
		if input := len(params) > 0 || op["requestBody"] != nil; input != has422 {
			t.Errorf("%s: takes input %v, documents 422 %v", name, input, has422)
		}
		for status, r := range responses {
			resp := r.(map[string]any)
			if ref := mapAt(resp, "headers", "X-Request-ID")["$ref"]; ref != "#/components/headers/X-Request-ID" {
				t.Errorf("%s %s: X-Request-ID header not declared (got %v)", name, status, ref)
			}
			mt := mapAt(resp, "content", "application/json")
			if !hasExample(mt) {
				t.Errorf("%s %s: response has no example", name, status)
			}
			n, _ := strconv.Atoi(status)
			if n < 400 {
				continue
			}
			codes, _ := resp["x-error-codes"].([]any)
			if len(codes) == 0 {
				t.Errorf("%s %s: no x-error-codes", name, status)
			}
			desc, _ := resp["description"].(string)
			for _, c := range codes {
				if !strings.Contains(desc, "`"+c.(string)+"`") {
					t.Errorf("%s %s: code %v is listed but not described in %q", name, status, c, desc)
				}
			}
			for _, span := range codeSpan.FindAllString(desc, -1) {
				code := strings.Trim(span, "`")
				if code == strings.ToUpper(code) && !slices.Contains(codes, any(code)) {
					t.Errorf("%s %s: description names %s, x-error-codes %v lack it", name, status, code, codes)
				}
			}
		}
	}
}

// TestOpenAPIGroupTreeTakesNoInput: the one operation without parameters
// or body cannot fail validation, so documents no 422.
func TestOpenAPIGroupTreeTakesNoInput(t *testing.T) {
	doc := decode(t, englishDocument(t))
	responses := mapAt(doc, "paths", "/api/v1/groups/tree", "get", "responses")
	if _, ok := responses["422"]; ok || len(responses) == 0 {
		t.Errorf("GET /groups/tree responses %v: want no 422", sortedKeys(responses))
	}
	if _, ok := mapAt(doc, "paths", "/api/v1/stats", "get", "responses")["422"]; !ok {
		t.Error("GET /stats takes X-Timezone, which can be invalid: it must keep its 422")
	}
}

// TestOpenAPIPutAbsentVersusNull: the PUT bodies say in both languages
// what an absent field and a null field do, and the credential update has
// an example clearing enable_password with null.
func TestOpenAPIPutAbsentVersusNull(t *testing.T) {
	mux := http.NewServeMux()
	apiv1.Mount(mux, apiv1.Deps{}).MountDocs(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, en := fetchDocument(t, srv, "/openapi.json")
	_, zh := fetchDocument(t, srv, "/openapi.json?lang=zh")

	for _, schema := range []string{"GroupUpdate", "CredentialUpdate", "TemplateUpdate", "DeviceUpdate"} {
		enDesc, _ := mapAt(en, "components", "schemas", schema)["description"].(string)
		if !strings.Contains(enDesc, "absent") || !strings.Contains(enDesc, "null") {
			t.Errorf("%s description %q does not say what absent and null mean", schema, enDesc)
		}
		zhDesc, _ := mapAt(zh, "components", "schemas", schema)["description"].(string)
		if !hasHan(zhDesc) || !strings.Contains(zhDesc, "未提供") || !strings.Contains(zhDesc, "null") {
			t.Errorf("zh %s description %q does not say what absent and null mean", schema, zhDesc)
		}
	}
	for lang, doc := range map[string]map[string]any{"en": en, "zh": zh} {
		examples := mapAt(doc, "paths", "/api/v1/credentials/{credential_id}", "put", "requestBody", "content", "application/json", "examples")
		found := false
		for name, ex := range examples {
			value := mapAt(ex, "value")
			v, present := value["enable_password"]
			if present && v == nil && len(value) == 1 {
				found = true
				if s, _ := ex.(map[string]any)["summary"].(string); lang == "zh" && !hasHan(s) {
					t.Errorf("zh example %s summary %q is not translated", name, s)
				}
			}
		}
		if !found {
			t.Errorf("%s: update-credential has no example {\"enable_password\": null}; examples %v", lang, examples)
		}
	}
}

// mediaTypes calls fn for every request body and response media type of
// a loaded document.
func mediaTypes(doc *openapi3.T, fn func(where string, mt *openapi3.MediaType, codes []any)) {
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					fn(name+" request "+ct, mt, nil)
				}
			}
			for status, resp := range op.Responses.Map() {
				codes, _ := resp.Value.Extensions["x-error-codes"].([]any)
				for ct, mt := range resp.Value.Content {
					fn(name+" "+status+" "+ct, mt, codes)
				}
			}
		}
	}
}

// TestOpenAPIExamplesValid validates every example of both served
// versions against its own schema, and checks that each error example
// carries a code its status lists.
func TestOpenAPIExamplesValid(t *testing.T) {
	mux := http.NewServeMux()
	apiv1.Mount(mux, apiv1.Deps{}).MountDocs(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{"/openapi.json", "/openapi-3.0.json"} {
		status, _, raw := fetch(t, srv, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, status)
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(raw)
		if err != nil {
			t.Fatalf("%s does not load: %v", path, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("%s is not a valid OpenAPI document: %v", path, err)
		}
		checked := 0
		mediaTypes(doc, func(where string, mt *openapi3.MediaType, codes []any) {
			values := map[string]any{}
			if mt.Example != nil {
				values["example"] = mt.Example
			}
			for name, ex := range mt.Examples {
				values[name] = ex.Value.Value
			}
			if len(values) == 0 {
				t.Errorf("%s %s: no example", path, where)
			}
			for name, v := range values {
				// Round-trip through JSON: the validator wants decoded values.
				b, _ := json.Marshal(v)
				var value any
				_ = json.Unmarshal(b, &value)
				if err := mt.Schema.Value.VisitJSON(value); err != nil {
					t.Errorf("%s %s: example %s does not match its schema: %v", path, where, name, err)
				}
				checked++
				if codes != nil {
					if code := mapAt(value, "error")["code"]; !slices.Contains(codes, code) {
						t.Errorf("%s %s: example %s has code %v, not one of %v", path, where, name, code, codes)
					}
				}
			}
		})
		if checked < 150 {
			t.Errorf("%s: only %d examples checked", path, checked)
		}
	}
}

// TestOpenAPI30Served: /openapi-3.0.json serves the 3.0 downgrade in each
// language, like /openapi.json and with the same (no) key requirement,
// and the English one is the golden file.
func TestOpenAPI30Served(t *testing.T) {
	mux := http.NewServeMux()
	apiv1.Mount(mux, apiv1.Deps{}).MountDocs(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string) ([]byte, map[string]any) {
		status, ctype, body := fetch(t, srv, path)
		if status != http.StatusOK || !strings.HasPrefix(ctype, "application/json") {
			t.Fatalf("GET %s: %d %s", path, status, ctype)
		}
		doc := decode(t, body)
		if doc["openapi"] != "3.0.3" {
			t.Fatalf("GET %s: openapi %v, want 3.0.3", path, doc["openapi"])
		}
		return body, doc
	}
	enRaw, en := get("/openapi-3.0.json")
	if want := decode(t, english30Document(t)); !reflect.DeepEqual(en, want) {
		t.Error("/openapi-3.0.json differs from the 3.0 golden document")
	}
	if xx, _ := get("/openapi-3.0.json?lang=xx"); !bytes.Equal(xx, enRaw) {
		t.Error("/openapi-3.0.json?lang=xx must serve the English document")
	}
	_, zh := get("/openapi-3.0.json?lang=zh")
	table, err := apiv1.Translations()
	if err != nil {
		t.Fatal(err)
	}
	want := apiv1.ProseStrings(decode(t, enRaw), func(s string) string {
		if zh, ok := table[s]; ok {
			return zh
		}
		return s
	})
	if !reflect.DeepEqual(zh, want) {
		t.Error("/openapi-3.0.json?lang=zh is not the English 3.0 document with its prose translated")
	}
	if s, _ := mapAt(zh, "info")["description"].(string); !hasHan(s) {
		t.Errorf("zh 3.0 info.description %q has no Chinese", s)
	}

	// Nothing 3.1-only is left: no type arrays, no null type.
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["type"].([]any); ok {
				t.Errorf("3.0 document has a type array at %s", at)
			}
			if x["type"] == "null" {
				t.Errorf("3.0 document has type null at %s", at)
			}
			for k, val := range x {
				if k != "example" && k != "examples" {
					walk(val, at+"/"+k)
				}
			}
		case []any:
			for i, val := range x {
				walk(val, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(en, "#")

	// The 3.0 document says the same as the 3.1 one: same operations,
	// same responses, same error codes.
	_, en31 := fetchDocument(t, srv, "/openapi.json")
	ops30, ops31 := operations(t, en), operations(t, en31)
	if got, want := sortedKeys(anyMap(ops30)), sortedKeys(anyMap(ops31)); !slices.Equal(got, want) {
		t.Errorf("3.0 operations %v, 3.1 operations %v", got, want)
	}
	for name, op := range ops31 {
		for status, r := range mapAt(op, "responses") {
			got := mapAt(ops30[name], "responses", status)["x-error-codes"]
			if want := r.(map[string]any)["x-error-codes"]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: 3.0 x-error-codes %v, 3.1 %v", name, status, got, want)
			}
		}
	}
}

func anyMap[V any](m map[string]V) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestRequestIDHeaderOnEveryResponse: the server behind the middleware
// every listener uses sets X-Request-ID on successes and errors alike, and
// an error body's request_id repeats it.
func TestRequestIDHeaderOnEveryResponse(t *testing.T) {
	e := newEnv(t)
	g := e.do("POST", "/api/v1/groups", e.adminKey, map[string]any{"name": "Core"})
	e.expect(g, http.StatusCreated, "")
	cases := []struct {
		name, method, path, key string
		body                    any
		status                  int
	}{
		{"success", "GET", "/api/v1/groups/" + strconv.FormatInt(g.id(), 10), e.adminKey, nil, http.StatusOK},
		{"created", "POST", "/api/v1/groups", e.adminKey, map[string]any{"name": "Edge"}, http.StatusCreated},
		{"no key", "GET", "/api/v1/groups", "", nil, http.StatusUnauthorized},
		{"bad key", "GET", "/api/v1/groups", "bk_nope", nil, http.StatusUnauthorized},
		{"not found", "GET", "/api/v1/groups/999999", e.adminKey, nil, http.StatusNotFound},
		{"unknown path", "GET", "/api/v1/nothing-here", e.adminKey, nil, http.StatusNotFound},
		{"validation", "GET", "/api/v1/groups?limit=0", e.adminKey, nil, http.StatusUnprocessableEntity},
		{"bad body", "POST", "/api/v1/groups", e.adminKey, "{", http.StatusUnprocessableEntity},
		{"conflict", "POST", "/api/v1/groups", e.adminKey, map[string]any{"name": "Core"}, http.StatusConflict},
		{"wrong method", "PATCH", "/api/v1/groups", e.adminKey, nil, http.StatusMethodNotAllowed},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, c.key, c.body)
		if r.Status != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.Status, c.status, r.Raw)
			continue
		}
		id := r.Header.Get("X-Request-ID")
		if id == "" {
			t.Errorf("%s: %d response without X-Request-ID", c.name, r.Status)
		}
		if c.status >= 400 {
			if got := mapAt(r.JSON, "error")["request_id"]; got != id {
				t.Errorf("%s: error.request_id %v, header %q", c.name, got, id)
			}
		}
	}
	// A valid id the client sends is the one answered with, on errors too.
	r := e.do("GET", "/api/v1/groups/999999", e.adminKey, nil, "X-Request-ID", "trace-42")
	if got := r.Header.Get("X-Request-ID"); got != "trace-42" || mapAt(r.JSON, "error")["request_id"] != "trace-42" {
		t.Errorf("sent X-Request-ID trace-42, got header %q, body %s", got, r.Raw)
	}
	// The documents, too.
	for _, path := range []string{"/openapi.json", "/openapi-3.0.json?lang=zh"} {
		res, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("X-Request-ID") == "" {
			t.Errorf("GET %s: %d, X-Request-ID %q", path, res.StatusCode, res.Header.Get("X-Request-ID"))
		}
	}
}
