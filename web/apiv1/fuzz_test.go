package apiv1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/internal/dbtest"
)

// Issue 11, defect 4: hostile input against /api/v1 must never end in a
// 5xx, a panic, a hang or a reply that is not JSON. FuzzAPI sends fuzzed
// requests (method, path, query, X-Timezone, body) through the real server
// over a real SQLite store, and checks every reply:
//
//   - status below 500;
//   - Content-Type application/json and a body that is valid JSON;
//   - an X-Request-ID header, and on errors the documented envelope
//     (error.code, .message, .request_id equal to the header, .details);
//   - a documented status and body shape for documented routes;
//   - a 405 names, in Allow, other methods than the one sent;
//   - the fixture credential's password never appears;
//   - the reply comes back within fuzzHang (a hang detector, not a
//     performance assertion).
//
// Objects a request creates are deleted again, so the database stays
// small however long the fuzzer runs. `go test` replays the seeds below
// and testdata/fuzz/FuzzAPI; CI fuzzes for a bounded time (.ci/fuzz).

// fuzzHang is how long one request may take before it counts as hung.
const fuzzHang = 10 * time.Second

var fuzzMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions}

// fuzzResources are the path prefixes; the fuzzer picks one by number and
// mutates what follows it.
var fuzzResources = []string{"/api/v1/groups", "/api/v1/credentials", "/api/v1/templates", "/api/v1/devices",
	"/api/v1/backups", "/api/v1/stats", "/api/v1", "/api/v1/nothing", "/api", "/api/v2"}

// fuzzSecret is the fixture credential's password: no reply may hold it.
const fuzzSecret = "fuzz-Secret-6f1d0c2e9b"

type fuzzFixture struct {
	group, credential, template, device int64
	backup                              string
}

func FuzzAPI(f *testing.F) {
	e := newEnv(f)
	fx := fuzzFixture{}
	fx.group = e.group("Fuzz core", nil)
	r := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "fuzz login", "username": "ops", "password": fuzzSecret, "enable_password": fuzzSecret})
	e.expect(r, 201, "")
	fx.credential = r.id()
	r = e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "fuzz tpl", "platform": "cisco_ios", "commands": "show running-config"})
	e.expect(r, 201, "")
	fx.template = r.id()
	fx.device = e.newDevice(map[string]any{"name": "fuzz-r1", "host": "192.0.2.1", "platform": "cisco_ios",
		"group_id": fx.group, "credential_id": fx.credential, "template_id": fx.template}).id()
	fx.backup = e.backup(fx.device, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), true, "hostname fuzz-r1\n", "")

	id := func(n int64) string { return "/" + strconv.FormatInt(n, 10) }
	seeds := []struct {
		method   byte
		resource byte
		suffix   string
		query    string
		tz       string
		body     string
	}{
		// Every documented operation, well formed.
		{0, 0, "", "page=1&limit=50", "", ""},
		{0, 0, "/tree", "", "", ""},
		{0, 0, id(fx.group), "", "", ""},
		{1, 0, "", "", "", `{"name":"edge","parent_id":` + strconv.FormatInt(fx.group, 10) + `}`},
		{2, 0, id(fx.group), "", "", `{"name":"Fuzz core"}`},
		{3, 0, "/999999", "", "", ""},
		{0, 1, "", "page=2&limit=1", "", ""},
		{0, 1, id(fx.credential), "", "", ""},
		{1, 1, "", "", "", `{"name":"c2","username":"u","password":"p","enable_password":null,"remarks":"r"}`},
		{2, 1, id(fx.credential), "", "", `{"remarks":"rotated"}`},
		{0, 2, "", "", "", ""},
		{0, 2, id(fx.template), "", "", ""},
		{1, 2, "", "", "", `{"name":"t2","platform":"huawei_vrp"}`},
		{2, 2, id(fx.template), "", "", `{"commands":""}`},
		{0, 3, "", "q=fuzz&group_id=1&platform=cisco_ios&status=unknown&enabled=true", "", ""},
		{0, 3, "/unreachable", "", "", ""},
		{0, 3, id(fx.device), "", "", ""},
		{1, 3, "", "", "", `{"name":"r2","host":"2001:db8::2","port":2222,"platform":"fortinet","login_method":"telnet","encoding":"gbk","enabled":false,"remarks":null}`},
		{2, 3, id(fx.device), "", "", `{"group_id":null,"template_id":null}`},
		{0, 3, id(fx.device) + "/backups", "page=1&limit=200", "Asia/Shanghai", ""},
		{0, 4, "/" + fx.backup + "/content", "", "", ""},
		{0, 5, "", "", "Europe/Berlin", ""},
		// Hostile query values.
		{0, 0, "", "page=0&limit=101", "", ""},
		{0, 0, "", "page=-1&limit=abc", "", ""},
		{0, 0, "", "page=99999999999999999999999", "", ""},
		{0, 0, "", "page=%zz&limit=%00", "", ""},
		{0, 3, "", "q=" + strings.Repeat("%27", 200), "", ""},
		{0, 3, "", "enabled=maybe&status=&group_id=-5", "", ""},
		{0, 3, id(fx.device) + "/backups", "limit=201", "", ""},
		// Odd ids.
		{0, 0, "/0", "", "", ""},
		{0, 0, "/-1", "", "", ""},
		{0, 0, "/9223372036854775808", "", "", ""},
		{0, 0, "/1e3", "", "", ""},
		{0, 0, "/%00", "", "", ""},
		{0, 0, "/../../etc/passwd", "", "", ""},
		{0, 4, "/not-a-uuid/content", "", "", ""},
		{0, 4, "/00000000-0000-0000-0000-000000000000/content", "", "", ""},
		{3, 3, "/9223372036854775807", "", "", ""},
		// Bad X-Timezone values.
		{0, 3, id(fx.device) + "/backups", "", "Mars/Olympus", ""},
		{0, 3, id(fx.device) + "/backups", "", "../../../../etc/passwd", ""},
		{0, 3, id(fx.device) + "/backups", "", "Local", ""},
		{0, 3, id(fx.device) + "/backups", "", strings.Repeat("A/", 40), ""},
		{0, 5, "", "", "UTC\x7f", ""},
		// Random and hostile bodies.
		{1, 0, "", "", "", `{"name":`},
		{1, 0, "", "", "", `[1,2]`},
		{1, 0, "", "", "", `null`},
		{1, 0, "", "", "", `{"name":"a","parent_id":"1"}`},
		{1, 0, "", "", "", `{"Name":"a"}`},
		{1, 0, "", "", "", `{"name":"a"} {"name":"b"}`},
		{1, 0, "", "", "", `{"name":"a","parent_id":-1}`},
		{1, 0, "", "", "", `{"name":"a","parent_id":1e400}`},
		{1, 0, "", "", "", `{"name":"\ud800"}`},
		{1, 0, "", "", "", "{\"name\":\"\xff\xfe\"}"},
		{1, 0, "", "", "", `{"name":"a","name":"b"}`},
		{1, 0, "", "", "", strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
		{1, 0, "", "", "", `{"name":` + strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000) + "}"},
		{2, 0, id(fx.group), "", "", `{"parent_id":` + strconv.FormatInt(fx.group, 10) + `}`},
		{1, 1, "", "", "", `{"name":"c","username":"u","password":12}`},
		{1, 2, "", "", "", `{"name":"t","platform":"cisco_foo"}`},
		{1, 3, "", "", "", `{"name":"r","host":"h","platform":"cisco_ios","port":0}`},
		{1, 3, "", "", "", `{"name":"r","host":"h","platform":"cisco_ios","group_id":999999}`},
		{2, 3, id(fx.device), "", "", `{"template_id":` + strconv.FormatInt(fx.template, 10) + `,"platform":"juniper_junos"}`},
		{1, 3, "", "", "", "\x00\x01\x02"},
		// Wrong methods.
		{4, 0, "", "", "", `{}`},
		{3, 0, "", "", "", ""},
		{1, 2, id(fx.template), "", "", `{}`},
		{5, 0, "", "", "", ""},
		{6, 3, "", "", "", ""},
		{1, 4, "/" + fx.backup + "/content", "", "", ""},
		{3, 4, "/" + fx.backup + "/content", "", "", ""},
		// Unknown places.
		{0, 6, "", "", "", ""},
		{0, 6, "/", "", "", ""},
		{0, 7, "", "", "", ""},
		{0, 8, "", "", "", ""},
		{1, 9, "/groups", "", "", "{}"},
		{0, 3, "/./1", "", "", ""},
		{0, 0, "/1/extra", "", "", ""},
		{0, 0, "//", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.resource, s.suffix, s.query, s.tz, []byte(s.body))
	}

	execs := 0
	f.Fuzz(func(t *testing.T, method, resource byte, suffix, query, tz string, body []byte) {
		e.t = t
		// Every write leaves an audit entry: clear them now and then.
		if execs++; execs%1000 == 0 {
			if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `DELETE FROM audit_log`); err != nil {
				t.Fatal(err)
			}
		}
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		target := e.srv.URL + fuzzResources[int(resource)%len(fuzzResources)] + suffix
		if query != "" {
			target += "?" + query
		}
		req, err := http.NewRequest(m, target, bytes.NewReader(body))
		if err != nil {
			return // not a request a client can send (bad URL)
		}
		if p := req.URL.Path; p != "/api" && !strings.HasPrefix(p, "/api/") {
			return // "/api" + "0": not the API's path, the web interface's
		}
		if strings.ContainsFunc(req.URL.RequestURI(), func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return // breaks the request line: net/http's own 400, before any handler
		}
		req.Header.Set("X-API-Key", e.adminKey)
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		if tz != "" {
			if !validHeaderValue(tz) {
				return // net/http refuses to send it
			}
			req.Header.Set("X-Timezone", tz)
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzHang)
		defer cancel()
		res, err := fuzzClient.Do(req.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("%s %s: no reply within %s (hung)", m, target, fuzzHang)
			}
			return // the client refused the request (a URL it cannot send)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: reading the reply: %v", m, target, err)
		}
		e.checkFuzzReply(req, m, target, body, res, raw)
		if m == http.MethodPost && res.StatusCode == http.StatusCreated {
			e.dropCreated(t, req.URL.Path, raw)
		}
	})
}

// checkFuzzReply checks the invariants every reply keeps.
func (e *env) checkFuzzReply(req *http.Request, m, target string, body []byte, res *http.Response, raw []byte) {
	t := e.t
	t.Helper()
	if res.StatusCode >= 500 {
		t.Fatalf("%s %s: server error %d: %s", m, target, res.StatusCode, raw)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: Content-Type %q, want application/json; body %q", m, target, ct, raw)
	}
	if res.Header.Get("X-Request-ID") == "" {
		t.Fatalf("%s %s: no X-Request-ID", m, target)
	}
	if bytes.Contains(raw, []byte(fuzzSecret)) {
		t.Fatalf("%s %s: the reply holds a stored password: %s", m, target, raw)
	}
	if res.StatusCode == http.StatusMethodNotAllowed {
		allow := strings.Split(res.Header.Get("Allow"), ", ")
		if slices.Contains(allow, m) || allow[0] == "" {
			t.Fatalf("%s %s: 405 with Allow %q", m, target, res.Header.Get("Allow"))
		}
	}
	if m == http.MethodHead {
		return // no body to check
	}
	if !json.Valid(raw) {
		t.Fatalf("%s %s: %d reply is not JSON: %q", m, target, res.StatusCode, raw)
	}
	r := &response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if raw[0] != '[' {
		_ = json.Unmarshal(raw, &r.JSON)
	}
	if r.Status >= 400 {
		e.checkEnvelope(m, target, r)
	}
	if !canonicalPath(req.URL.Path) || strings.HasSuffix(req.URL.Path, "/") {
		// The server knows no such path (404); the document's router would
		// clean it, or drop the trailing slash, and find an operation.
		return
	}
	// The server reads an empty query value ("status=") as not given, as
	// HTML forms send it; the document's validator would take it as "".
	vreq := req.Clone(context.Background())
	// A fragment ("#…") never leaves the client; the document's router
	// would read it as part of the path.
	vreq.URL.Fragment, vreq.URL.RawFragment = "", ""
	q := vreq.URL.Query()
	for k, v := range q {
		if len(v) == 1 && v[0] == "" {
			q.Del(k)
		}
	}
	vreq.URL.RawQuery = q.Encode()
	for _, p := range e.documentProblems(vreq, body, r) {
		t.Errorf("%s %s → %d: %s\n%s", m, target, r.Status, p, raw)
	}
}

// dropCreated deletes what a successful POST made, through the API (a
// device first when it was one), so that the store stays at its fixture
// size. The fixture's objects are never deleted this way.
func (e *env) dropCreated(t *testing.T, path string, raw []byte) {
	var obj struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.ID == 0 {
		t.Fatalf("POST %s: 201 without an id: %s", path, raw)
	}
	path = strings.TrimSuffix(path, "/")
	req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s%s/%d", e.srv.URL, path, obj.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", e.adminKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE %s/%d after a create: %d %s", path, obj.ID, res.StatusCode, body)
	}
}

// fuzzClient does not follow redirects: the redirect itself is a reply
// to check.
var fuzzClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// canonicalPath reports whether p is as the server routes it: the server
// answers any other path with 404.
func canonicalPath(p string) bool {
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np == p
}

// validHeaderValue is net/http's rule for a header value it will send.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
