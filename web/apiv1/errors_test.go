package apiv1_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Contract "Errors" section and PRODUCT.md §3's decisions on hostile input.

func TestErrorsRequestIDOnEveryResponse(t *testing.T) {
	e := newEnv(t)
	ok := e.do(http.MethodGet, "/api/v1/groups", e.adminKey, nil, "X-Request-ID", "trace-123")
	if got := ok.Header.Get("X-Request-ID"); got != "trace-123" {
		t.Errorf("client request id not honoured: %q", got)
	}
	long := strings.Repeat("a", 129)
	r := e.do(http.MethodGet, "/api/v1/groups", "", nil, "X-Request-ID", long)
	if got := r.Header.Get("X-Request-ID"); got == long || got == "" {
		t.Errorf("over-long request id should be replaced, got %q", got)
	}
	r = e.do(http.MethodGet, "/api/v1/groups", "", nil, "X-Request-ID", "bad id\twith spaces")
	if got := r.Header.Get("X-Request-ID"); strings.ContainsAny(got, " \t") {
		t.Errorf("non-printable request id kept: %q", got)
	}
}

func TestErrorsUnknownRouteIs404AfterKeyCheck(t *testing.T) {
	e := newEnv(t)
	e.expect(e.do(http.MethodGet, "/api/v1/nothing", "", nil), 401, "UNAUTHORIZED")
	e.expect(e.do(http.MethodGet, "/api/v1/nothing", e.adminKey, nil), 404, "RESOURCE_NOT_FOUND")
	e.expect(e.do(http.MethodGet, "/api/v1/groups/1/extra", e.adminKey, nil), 404, "RESOURCE_NOT_FOUND")
	e.expect(e.do(http.MethodGet, "/api/v2/groups", e.adminKey, nil), 404, "")
}

func TestErrorsWrongMethodIs405(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPatch, "/api/v1/groups", e.adminKey, `{}`)
	e.expect(r, 405, "METHOD_NOT_ALLOWED")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow header = %q", allow)
	}
	e.expect(e.do(http.MethodDelete, "/api/v1/groups", e.adminKey, nil), 405, "METHOD_NOT_ALLOWED")
	e.expect(e.do(http.MethodPost, "/api/v1/templates/1", e.adminKey, `{}`), 405, "METHOD_NOT_ALLOWED")
}

func TestErrorsBodyOver1MiBIs413(t *testing.T) {
	e := newEnv(t)
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, path := range []string{"/api/v1/groups", "/api/v1/credentials", "/api/v1/templates"} {
		e.expect(e.do(http.MethodPost, path, e.adminKey, big), 413, "PAYLOAD_TOO_LARGE")
	}
	e.expect(e.do(http.MethodPut, "/api/v1/groups/1", e.adminKey, big), 413, "PAYLOAD_TOO_LARGE")
}

func TestErrorsHostileBodiesAre422(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, path, body, field string
	}{
		{"malformed JSON", "/api/v1/groups", `{"name":`, "body:"},
		{"not an object", "/api/v1/groups", `[1,2]`, "body:"},
		{"null body", "/api/v1/groups", `null`, "body:"},
		{"empty body", "/api/v1/groups", ``, "body:"},
		{"wrong type", "/api/v1/groups", `{"name":5}`, "body:name"},
		{"wrong parent type", "/api/v1/groups", `{"name":"a","parent_id":"1"}`, "body:parent_id"},
		{"missing required", "/api/v1/groups", `{}`, "body:name"},
		{"unknown field", "/api/v1/groups", `{"name":"a","parentid":1}`, "body:parentid"},
		{"wrong case field", "/api/v1/groups", `{"Name":"a"}`, "body:Name"},
		{"blank name", "/api/v1/groups", `{"name":"   "}`, "body:name"},
		{"empty name", "/api/v1/groups", `{"name":""}`, "body:name"},
		{"10,000-character name", "/api/v1/groups", `{"name":"` + strings.Repeat("n", 10000) + `"}`, "body:name"},
		{"credential without username", "/api/v1/credentials", `{"name":"c"}`, "body:username"},
		{"long remarks", "/api/v1/credentials", `{"name":"c","username":"u","remarks":"` + strings.Repeat("r", 2001) + `"}`, "body:remarks"},
		{"unknown platform", "/api/v1/templates", `{"name":"t","platform":"cisco_foo"}`, "body:platform"},
		{"commands over 64 KiB", "/api/v1/templates", `{"name":"t","platform":"cisco_ios","commands":"` + strings.Repeat("c", 65537) + `"}`, "body:commands"},
		{"trailing garbage", "/api/v1/groups", `{"name":"a"} {"name":"b"}`, "body:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(http.MethodPost, c.path, e.adminKey, c.body)
			e.expect(r, 422, "VALIDATION_ERROR")
			if !hasField(r.fieldErrors(), c.field) {
				t.Errorf("want field error %q, got %v", c.field, r.fieldErrors())
			}
		})
	}
	// Nothing of the above was stored.
	r := e.do(http.MethodGet, "/api/v1/groups", e.adminKey, nil)
	if total := r.JSON["pagination"].(map[string]any)["total"]; total != 0.0 {
		t.Errorf("rejected bodies left %v groups behind", total)
	}
}

func TestErrorsSQLLookingInputIsJustText(t *testing.T) {
	e := newEnv(t)
	name := `x'); DROP TABLE device_groups; --`
	r := e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": name})
	e.expect(r, 201, "")
	if r.JSON["name"] != name {
		t.Fatalf("name stored as %q", r.JSON["name"])
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups/1", e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, "/api/v1/groups/1%20OR%201=1", e.adminKey, nil), 422, "VALIDATION_ERROR")
}

func TestErrorsValidationNamesEveryBadField(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodGet, "/api/v1/groups?page=0&limit=101", e.adminKey, nil)
	e.expect(r, 422, "VALIDATION_ERROR")
	for _, f := range []string{"query:page", "query:limit"} {
		if !hasField(r.fieldErrors(), f) {
			t.Errorf("missing %s in %v", f, r.fieldErrors())
		}
	}
}

func TestErrorsMessagesLeakNoInternals(t *testing.T) {
	e := newEnv(t)
	for _, r := range []*response{
		e.do(http.MethodPost, "/api/v1/groups", e.adminKey, `{"name":`),
		e.do(http.MethodGet, "/api/v1/groups/99999999999999999999", e.adminKey, nil),
		e.do(http.MethodPost, "/api/v1/groups", e.adminKey, `{"name":"a","parent_id":1e400}`),
	} {
		body := strings.ToLower(string(r.Raw))
		for _, bad := range []string{"sqlite", "goroutine", ".go:", "panic", "select ", "huma"} {
			if strings.Contains(body, bad) {
				t.Errorf("response leaks %q: %s", bad, r.Raw)
			}
		}
		if r.Status >= 500 {
			t.Errorf("status %d for hostile input", r.Status)
		}
	}
}

// Found by FuzzAPI: the mux redirected non-canonical paths with an HTML
// body. Every /api reply is JSON: such paths are a 404 in the envelope.
func TestErrorsNonCanonicalPathIsJSON404(t *testing.T) {
	e := newEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api/v1//groups", "/api/v1/groups//", "/api/v1/./groups", "/api/v1/groups/../credentials", "/api", "/api/v1", "/api//v1/groups"} {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+p, nil)
		req.Header.Set("X-API-Key", e.adminKey)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Location") != "" {
			t.Errorf("%s: %d %s Location %q: %s", p, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Location"), raw)
			continue
		}
		e.checkEnvelope(http.MethodGet, p, &response{Status: res.StatusCode, Header: res.Header, Raw: raw, JSON: toAny(raw).(map[string]any)})
	}
}

// Found by FuzzAPI: Huma reads null in an optional field as "not sent",
// but the document allows null only where it says nullable. A null
// elsewhere is a 422 naming the field, and nothing is stored.
func TestErrorsNullOnlyWhereNullable(t *testing.T) {
	e := newEnv(t)
	g := e.group("g", nil)
	dev := e.newDevice(map[string]any{"name": "r0", "host": "192.0.2.1", "platform": "cisco_ios"}).id()
	for _, c := range []struct{ method, path, body, field string }{
		{http.MethodPost, "/api/v1/devices", `{"name":"r1","host":"192.0.2.1","platform":"fortinet","login_method":null}`, "body:login_method"},
		{http.MethodPost, "/api/v1/devices", `{"name":"r1","host":"192.0.2.1","platform":"fortinet","port":null,"enabled":null}`, "body:enabled"},
		{http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", dev), `{"name":null}`, "body:name"},
		{http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", g), `{"name":null}`, "body:name"},
		{http.MethodPost, "/api/v1/templates", `{"name":"t","platform":"cisco_ios","commands":null}`, "body:commands"},
		{http.MethodPut, "/api/v1/credentials/1", `{"username":null}`, "body:username"},
	} {
		r := e.do(c.method, c.path, e.adminKey, c.body)
		e.expect(r, 422, "VALIDATION_ERROR")
		if !hasField(r.fieldErrors(), c.field) {
			t.Errorf("%s %s %s: want field error %q, got %v", c.method, c.path, c.body, c.field, r.fieldErrors())
		}
	}
	if r := e.do(http.MethodGet, "/api/v1/devices", e.adminKey, nil); r.JSON["pagination"].(map[string]any)["total"] != 1.0 {
		t.Errorf("refused bodies stored a device: %s", r.Raw)
	}
	// Where the document says nullable, null is taken.
	e.expect(e.do(http.MethodPost, "/api/v1/groups", e.adminKey, `{"name":"h","parent_id":null}`), 201, "")
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", dev), e.adminKey, `{"group_id":null,"remarks":null,"template_id":null}`), 200, "")
	e.expect(e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, `{"name":"c","username":"u","enable_password":null}`), 201, "")
}
