package apiv1_test

import (
	"backupd/internal/testkit"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/web"
	"backupd/web/apiv1"
)

// env is a real server over a real SQLite file, with the served OpenAPI
// document loaded to check every exchange against.
type env struct {
	t        testing.TB
	srv      *httptest.Server
	store    *db.Store
	sealer   *secret.Sealer
	logs     *testkit.LockedBuffer
	adminKey string
	doc      *openapi3.T
	router   routers.Router
	// bodies holds every response body seen, to search for leaks.
	bodies *testkit.LockedBuffer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	store, sealer, _ := testkit.OpenData(t)
	logs := &testkit.LockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	keys := auth.NewKeyAuthenticator(store, log)
	mux := http.NewServeMux()
	api := apiv1.Mount(mux, apiv1.Deps{Store: store, Sealer: sealer, Keys: keys, Log: log, Location: time.UTC})
	api.MountDocs(mux)
	srv := httptest.NewServer(web.Wrap(mux, log))
	t.Cleanup(srv.Close)

	e := &env{t: t, srv: srv, store: store, sealer: sealer, logs: logs, bodies: &testkit.LockedBuffer{}}
	e.adminKey = e.keyFor("admin")

	res, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("served /openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("served /openapi.json is not a valid OpenAPI document: %v", err)
	}
	// Route by path only: the document names no servers.
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	e.doc = doc
	if e.router, err = legacy.NewRouter(doc); err != nil {
		t.Fatal(err)
	}
	return e
}

// keyFor mints a key for username, narrowed to perms when any are given.
func (e *env) keyFor(username string, perms ...string) string {
	e.t.Helper()
	ctx := context.Background()
	u, err := e.store.UserByName(ctx, username)
	if err != nil {
		e.t.Fatal(err)
	}
	key, prefix, hash := auth.NewAPIKey()
	if _, err := e.store.CreateAPIKey(ctx, db.APIKey{
		UserID: u.ID, Name: "test", Prefix: prefix, Hash: hash, Narrowed: len(perms) > 0, Permissions: perms,
	}); err != nil {
		e.t.Fatal(err)
	}
	return key
}

// user creates a user holding one role and returns a key of it. The user
// sees no device group.
func (e *env) user(username, role string) string {
	return e.scopedUser(username, role, false)
}

// scopedUser creates a user with one role that sees all device groups or
// the listed ones (and their subgroups), and returns a key of it.
func (e *env) scopedUser(username, role string, all bool, groups ...int64) string {
	e.t.Helper()
	ctx := context.Background()
	r, err := e.store.RoleByName(ctx, role)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.store.CreateUser(ctx, db.NewUser{Username: username, PasswordHash: "x", RoleIDs: []int64{r.ID}, AllGroups: all, GroupIDs: groups}); err != nil {
		e.t.Fatal(err)
	}
	return e.keyFor(username)
}

// response is one exchange's outcome.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
	List   []any
}

// do sends a request. body is sent raw when it is a string or []byte and
// as JSON otherwise. Every response is checked against the served
// document: a documented status with a matching body for known routes,
// the error envelope for all errors; requests that succeed must themselves
// conform to the document.
func (e *env) do(method, path, key string, body any, headers ...string) *response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	r := &response{Status: res.StatusCode, Header: res.Header}
	r.Raw, _ = io.ReadAll(res.Body)
	e.bodies.Write(r.Raw)
	if len(r.Raw) > 0 && r.Raw[0] == '[' {
		if err := json.Unmarshal(r.Raw, &r.List); err != nil {
			e.t.Fatalf("%s %s: response is not JSON: %v\n%s", method, path, err, r.Raw)
		}
	} else if err := json.Unmarshal(r.Raw, &r.JSON); err != nil {
		e.t.Fatalf("%s %s: response is not JSON: %v\n%s", method, path, err, r.Raw)
	}
	if r.Header.Get("X-Request-ID") == "" {
		e.t.Errorf("%s %s: no X-Request-ID header", method, path)
	}
	if r.Status >= 400 {
		e.checkEnvelope(method, path, r)
	}
	if r.Status >= 500 {
		e.t.Errorf("%s %s: server error %d: %s", method, path, r.Status, r.Raw)
	}
	for _, p := range e.documentProblems(req, raw, r) {
		e.t.Errorf("%s %s → %d: %s\n%s", method, path, r.Status, p, r.Raw)
	}
	return r
}

func (e *env) checkEnvelope(method, path string, r *response) {
	e.t.Helper()
	errObj, ok := r.JSON["error"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		e.t.Fatalf("%s %s: status %d without the error envelope: %s", method, path, r.Status, r.Raw)
	}
	for _, k := range []string{"code", "message", "request_id"} {
		if s, _ := errObj[k].(string); s == "" {
			e.t.Errorf("%s %s: error.%s is empty: %s", method, path, k, r.Raw)
		}
	}
	if _, ok := errObj["details"].(map[string]any); !ok {
		e.t.Errorf("%s %s: error.details is not an object: %s", method, path, r.Raw)
	}
	if errObj["request_id"] != r.Header.Get("X-Request-ID") {
		e.t.Errorf("%s %s: error.request_id %v differs from X-Request-ID %q", method, path, errObj["request_id"], r.Header.Get("X-Request-ID"))
	}
	if err := e.doc.Components.Schemas["Error"].Value.VisitJSON(toAny(r.Raw)); err != nil {
		e.t.Errorf("%s %s: error body does not match the documented Error schema: %v", method, path, err)
	}
}

func toAny(raw []byte) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// documentProblems lists how an exchange departs from the served
// document; empty when it conforms.
func (e *env) documentProblems(req *http.Request, body []byte, r *response) []string {
	route, params, err := e.router.FindRoute(req)
	if err != nil || r.Status == http.StatusMethodNotAllowed {
		// Not a documented route: only the envelope applies.
		if r.Status < 400 {
			return []string{"succeeded on an undocumented route"}
		}
		return nil
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	var problems []string
	// Rebuild the request with its body for the validator.
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route, Options: opts}
	if r.Status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			problems = append(problems, "request succeeded but does not match the document: "+err.Error())
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: r.Status, Header: r.Header,
		Body: io.NopCloser(bytes.NewReader(r.Raw)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		problems = append(problems, "response does not match the document: "+err.Error())
	}
	if r.Status >= 400 {
		// The error code must be one the document lists for this status.
		if resp := route.Operation.Responses.Status(r.Status); resp != nil && resp.Value != nil {
			listed, _ := resp.Value.Extensions["x-error-codes"].([]any)
			if !slices.Contains(listed, any(r.code())) {
				problems = append(problems, fmt.Sprintf("error code %s is not in the x-error-codes %v of status %d", r.code(), listed, r.Status))
			}
		}
	}
	return problems
}

// code is the error code of an error response.
func (r *response) code() string {
	errObj, _ := r.JSON["error"].(map[string]any)
	s, _ := errObj["code"].(string)
	return s
}

// fieldErrors lists "location:field" of a validation error.
func (r *response) fieldErrors() []string {
	errObj, _ := r.JSON["error"].(map[string]any)
	details, _ := errObj["details"].(map[string]any)
	list, _ := details["errors"].([]any)
	var out []string
	for _, item := range list {
		m, _ := item.(map[string]any)
		out = append(out, m["location"].(string)+":"+m["field"].(string))
	}
	return out
}

// expect fails unless the response has status and, for errors, code.
func (e *env) expect(r *response, status int, code string) {
	e.t.Helper()
	if r.Status != status || (code != "" && r.code() != code) {
		e.t.Fatalf("want %d %s, got %d %s: %s", status, code, r.Status, r.code(), r.Raw)
	}
}

// id returns the numeric id field of a created object.
func (r *response) id() int64 {
	f, _ := r.JSON["id"].(float64)
	return int64(f)
}

func hasField(list []string, want string) bool {
	for _, f := range list {
		if f == want {
			return true
		}
	}
	return false
}
