// Package apiv1 is the public, versioned REST API under /api/v1. Operations
// are registered with Huma, so the same Go types validate requests and
// describe them in /openapi.json.
package apiv1

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/danielgtaylor/huma/v2/validation"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
	"backupd/web"
)

// Prefix is where the public API lives.
const Prefix = "/api/v1"

// Deps are what the API's handlers use.
type Deps struct {
	Store   *db.Store
	Sealer  *secret.Sealer
	Keys    *auth.KeyAuthenticator
	Log     *slog.Logger
	Version string
	// Location is the time zone of backup times when a request names none.
	Location *time.Location
}

// API is the mounted public API.
type API struct {
	huma huma.API
	deps Deps
	mux  *http.ServeMux
}

func init() {
	// Strict input: "Name" is not "name", arrays are never null.
	huma.ValidateStrictCasing = true
	huma.DefaultArrayNullable = false
	huma.NewErrorWithContext = newHumaError
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return newHumaError(nil, status, msg, errs...)
	}
}

// Mount registers every /api/v1 operation on mux, plus the catch-all that
// answers unknown paths and wrong methods in the error envelope.
func Mount(mux *http.ServeMux, deps Deps) *API {
	config := huma.DefaultConfig("backupd API", "1.0.0")
	config.CreateHooks = nil // no $schema links: responses hold only documented fields
	config.OpenAPIPath = ""
	config.DocsPath = ""
	config.SchemasPath = ""
	config.Info.Description = "Public API of backupd: device groups, credentials, backup command templates, devices, backup history and content, and statistics. Every request carries an API key in the `X-API-Key` header; responses never contain device passwords."
	config.Info.License = &huma.License{Name: "Apache-2.0", URL: "https://www.apache.org/licenses/LICENSE-2.0"}
	config.Info.Contact = &huma.Contact{Name: "backupd maintainers", Email: "maintainers@backupd.dev", URL: "https://backupd.dev"}
	config.Components.Headers = map[string]*huma.Header{
		requestIDHeader: {
			Description: "Identifies the request: the client's own X-Request-ID when it sent a valid one (1 to 128 printable ASCII characters), else a new UUID. Every response carries it, and error bodies repeat it in `error.request_id`.",
			Required:    true,
			Schema:      &huma.Schema{Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(128)},
			Example:     exampleRequestID,
		},
	}
	config.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "apiKey", In: "header", Name: "X-API-Key", Description: "An API key from `backupd key create` or the API Keys page."},
	}
	config.Security = []map[string][]string{{"apiKey": {}}}
	// Served wherever the appliance is installed: relative to the document.
	config.Servers = []*huma.Server{{URL: "/", Description: "This backupd instance."}}
	config.Transformers = append(config.Transformers, fillRequestID)

	a := &API{huma: humago.New(jsonBodies{mux}, config), deps: deps, mux: mux}
	a.huma.UseMiddleware(a.authenticate)
	a.huma.OpenAPI().Tags = []*huma.Tag{
		{Name: "Groups", Description: "Device groups form a tree; a user's visibility of devices follows it."},
		{Name: "Credentials", Description: "Logins used to reach devices. Passwords are write-only and stored encrypted."},
		{Name: "Templates", Description: "Backup command templates: the commands run on a device to capture its configuration."},
		{Name: "Devices", Description: "Network devices. Lists and single-device operations see only the caller's device groups."},
		{Name: "Backups", Description: "Backup history and configuration text; read-only. Backups are produced by the web interface, schedules and the command line."},
		{Name: "Statistics", Description: "System-wide counts for dashboards."},
	}
	a.registerGroups()
	a.registerCredentials()
	a.registerTemplates()
	a.registerDevices()
	a.registerBackups()
	a.registerStats()
	mux.HandleFunc(Prefix+"/", a.fallback)
	// Other API paths (an unknown version, say) still answer in JSON.
	// "/api" and "/api/v1" are registered too: the mux would redirect them
	// to their subtree with an HTML body.
	noSuchAPI := func(w http.ResponseWriter, r *http.Request) {
		web.WriteError(w, r, web.NewError(http.StatusNotFound, web.CodeNotFound, "no such API: "+r.URL.Path+"; the public API is under "+Prefix+"/"))
	}
	mux.HandleFunc("/api/", noSuchAPI)
	mux.HandleFunc("/api", noSuchAPI)
	mux.HandleFunc(Prefix, a.fallback)
	return a
}

// jsonBodies registers operations on the mux behind a filter that reads
// every request body as JSON, whatever Content-Type the client claims: the
// contract only speaks JSON, and a wrong header (curl -d sends a form type)
// must end in a clear 422 about the body, not a 415.
type jsonBodies struct{ mux *http.ServeMux }

func (j jsonBodies) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	j.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "" && !strings.Contains(ct, "json") {
			r.Header.Set("Content-Type", "application/json")
		}
		h(w, keepRawBody(r))
	})
}

const maxBodyBytes = 1 << 20

type rawBodyKey struct{}

// keepRawBody keeps a copy of a write request's body (when within the size
// limit) in its context, so that handlers can tell a field sent as null
// from a field not sent at all. The body itself is left readable.
func keepRawBody(r *http.Request) *http.Request {
	if r.Body == nil || (r.Method != http.MethodPost && r.Method != http.MethodPut) {
		return r
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > maxBodyBytes {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), rawBodyKey{}, head))
}

// sentKeys returns the top-level keys of the request's JSON body.
func sentKeys(ctx context.Context) map[string]bool {
	raw, _ := ctx.Value(rawBodyKey{}).([]byte)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys
}

func (j jsonBodies) ServeHTTP(w http.ResponseWriter, r *http.Request) { j.mux.ServeHTTP(w, r) }

// OpenAPI is the generated (English) description.
func (a *API) OpenAPI() *huma.OpenAPI { return a.huma.OpenAPI() }

type ctxKey int

const principalKey ctxKey = iota

// authenticate runs before any parsing or validation: key (401), then
// permission (403).
func (a *API) authenticate(ctx huma.Context, next func(huma.Context)) {
	p, status := a.check(ctx.Context(), ctx.Header("X-API-Key"))
	if status != 0 {
		writeErr(a.huma, ctx, authError(status))
		return
	}
	perm, _ := ctx.Operation().Metadata["permission"].(string)
	if perm == "" || !p.Can(perm) {
		writeErr(a.huma, ctx, web.NewError(http.StatusForbidden, web.CodePermissionDenied, "permission "+perm+" is required"))
		return
	}
	if errs := a.nullFields(ctx.Operation(), ctx.Context()); len(errs) > 0 {
		writeErr(a.huma, ctx, web.Validation("request validation failed", errs...))
		return
	}
	next(huma.WithValue(ctx, principalKey, caller{Principal: p, remote: ctx.RemoteAddr()}))
}

// nullFields lists the top-level body fields sent as null that the
// document does not mark nullable. Huma's validator lets null through for
// any optional field, as if the field were absent; the document (and the
// contract: "port (integer, optional)") allows only the type itself, so
// such a request is refused rather than quietly read as "not sent".
func (a *API) nullFields(op *huma.Operation, ctx context.Context) []web.FieldError {
	raw, _ := ctx.Value(rawBodyKey{}).([]byte)
	if op.RequestBody == nil || len(raw) == 0 {
		return nil
	}
	media := op.RequestBody.Content["application/json"]
	if media == nil || media.Schema == nil {
		return nil
	}
	schema := media.Schema
	if schema.Ref != "" {
		schema = a.huma.OpenAPI().Components.Schemas.SchemaFromRef(schema.Ref)
	}
	var fields map[string]json.RawMessage
	if schema == nil || json.Unmarshal(raw, &fields) != nil {
		return nil // not an object: Huma says so
	}
	var errs []web.FieldError
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		prop := schema.Properties[k]
		if prop == nil || prop.Nullable || string(bytes.TrimSpace(fields[k])) != "null" {
			continue // unknown fields are Huma's to refuse
		}
		errs = append(errs, web.FieldError{Location: "body", Field: k,
			Message: "must not be null; leave the field out to keep its default or stored value"})
	}
	return errs
}

// check resolves the key; status is 0 when it is good.
func (a *API) check(ctx context.Context, key string) (*auth.Principal, int) {
	if key == "" {
		return nil, http.StatusUnauthorized
	}
	p, err := a.deps.Keys.Authenticate(ctx, key)
	if err != nil {
		if err != auth.ErrUnauthorized {
			a.deps.Log.Error("api key check failed", "request_id", web.RequestID(ctx), "err", err)
			return nil, http.StatusInternalServerError
		}
		return nil, http.StatusUnauthorized
	}
	return p, 0
}

func authError(status int) *web.Error {
	if status == http.StatusUnauthorized {
		return web.NewError(status, web.CodeUnauthorized, "a valid API key is required in the X-API-Key header")
	}
	return web.NewError(http.StatusInternalServerError, web.CodeInternal, "internal server error")
}

func writeErr(api huma.API, ctx huma.Context, e *web.Error) {
	e.Body.RequestID = web.RequestID(ctx.Context())
	ctx.SetHeader("Content-Type", "application/json")
	ctx.SetStatus(e.Status)
	_ = api.Marshal(ctx.BodyWriter(), "application/json", e)
}

// fallback answers every /api/v1 request no operation matched: 401 without
// a good key, else 405 when the path exists under another method, else 404.
func (a *API) fallback(w http.ResponseWriter, r *http.Request) {
	if _, status := a.check(r.Context(), r.Header.Get("X-API-Key")); status != 0 {
		web.WriteError(w, r, authError(status))
		return
	}
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); pattern != "" && pattern != Prefix+"/" && pattern != Prefix {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		web.WriteError(w, r, web.NewError(http.StatusMethodNotAllowed, web.CodeMethodNotAllowed,
			"method "+r.Method+" is not allowed here; allowed: "+strings.Join(allowed, ", ")))
		return
	}
	web.WriteError(w, r, web.NewError(http.StatusNotFound, web.CodeNotFound, "no such resource: "+r.URL.Path))
}

// fillRequestID completes error envelopes returned by handlers.
func fillRequestID(ctx huma.Context, _ string, v any) (any, error) {
	if e, ok := v.(*web.Error); ok {
		e.Body.RequestID = web.RequestID(ctx.Context())
	}
	return v, nil
}

var requiredProperty = regexp.MustCompile(`^expected required property (\S+) to be present$`)

// newHumaError turns Huma's own errors (parsing, validation, limits) into
// the envelope. Any 400 from Huma is a body it could not read as JSON,
// which the contract counts as a validation failure.
func newHumaError(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	var e *web.Error
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		e = web.Validation("request validation failed")
		for _, err := range errs {
			if err == nil {
				continue
			}
			e.Body.Details.Errors = append(e.Body.Details.Errors, fieldError(err, status))
		}
		if len(e.Body.Details.Errors) == 0 {
			e.Body.Details.Errors = []web.FieldError{{Location: "body", Message: msg}}
		}
	case http.StatusRequestEntityTooLarge:
		e = web.NewError(status, web.CodePayloadTooLarge, "request body is larger than 1 MiB")
	case http.StatusUnsupportedMediaType:
		e = web.NewError(status, web.CodeUnsupportedMedia, "request body must be application/json")
	case http.StatusRequestTimeout:
		e = web.NewError(status, web.CodeTimeout, "request body was not received in time")
	case http.StatusNotFound:
		e = web.NewError(status, web.CodeNotFound, msg)
	case http.StatusUnauthorized:
		e = authError(status)
	case http.StatusForbidden:
		e = web.NewError(status, web.CodePermissionDenied, msg)
	default:
		if status >= 500 {
			if ctx != nil {
				slog.Default().Error("internal error", "request_id", web.RequestID(ctx.Context()), "message", msg, "errs", errs)
			}
			e = web.NewError(http.StatusInternalServerError, web.CodeInternal, "internal server error")
		} else {
			e = web.NewError(status, web.CodeBadRequest, msg)
		}
	}
	if ctx != nil {
		e.Body.RequestID = web.RequestID(ctx.Context())
	}
	return e
}

func fieldError(err error, status int) web.FieldError {
	d, ok := err.(*huma.ErrorDetail)
	if !ok {
		return web.FieldError{Location: "body", Message: err.Error()}
	}
	loc, field, _ := strings.Cut(d.Location, ".")
	msg := d.Message
	if m := requiredProperty.FindStringSubmatch(msg); m != nil && field == "" {
		field = m[1]
	}
	if status == http.StatusBadRequest {
		msg = "body is not valid JSON: " + jsonSyntaxHint(msg)
	}
	if field == "platform" && msg == validation.MsgExpectedMatchAtLeastOneSchema {
		// The platform schema is the built-in enum or the custom pattern;
		// say which values exist instead of "matched no schema".
		msg = unknownPlatform()
	}
	switch loc {
	case "query", "path", "header", "body":
	default:
		loc, field = "body", d.Location
	}
	return web.FieldError{Location: loc, Field: field, Message: msg}
}

// jsonSyntaxHint keeps the parser's message short and free of the body.
func jsonSyntaxHint(msg string) string {
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
