package apiv1

import (
	"context"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"backupd/web"
)

// ErrCase is one error an operation can answer with at a status: the code
// in the envelope, when it happens (prose for the description) and an
// example error.message.
type ErrCase struct {
	Code    string
	When    string
	Message string
}

// Codes says which errors an operation answers with, by status. The common
// ones (401, 403, 413, 422, 500) are added to every operation that can
// meet them; an entry here replaces the common one of its status.
type Codes map[int][]ErrCase

// commonCodes describe the errors every operation can return.
var commonCodes = Codes{
	http.StatusUnauthorized: {{web.CodeUnauthorized, "the X-API-Key header is missing, or the key is invalid, expired, revoked or deleted.",
		"a valid API key is required in the X-API-Key header"}},
	http.StatusForbidden: {{web.CodePermissionDenied, "the key (or its owner) lacks the permission this operation requires.",
		"permission {permission} is required"}},
	http.StatusUnprocessableEntity: {{web.CodeValidation, "a query parameter, path parameter or JSON body failed validation; `error.details.errors` lists each bad field as {location, field, message}.",
		"request validation failed"}},
	http.StatusInternalServerError: {{web.CodeInternal, "an unexpected server error; nothing internal is revealed.",
		"internal server error"}},
	http.StatusRequestEntityTooLarge: {{web.CodePayloadTooLarge, "the request body is larger than 1 MiB.",
		"request body is larger than 1 MiB"}},
}

// permissionDenied is the 403 case of an operation whose 403 can also
// mean something more.
func permissionDenied(when string) ErrCase {
	return ErrCase{web.CodePermissionDenied, when, "permission {permission} is required"}
}

// describe is the response description of the cases: each code with when
// it happens.
func describe(cases []ErrCase) string {
	parts := make([]string, len(cases))
	for i, c := range cases {
		parts[i] = "`" + c.Code + "`: " + c.When
	}
	return strings.Join(parts, " ")
}

// operation describes one public operation; the permission in Metadata is
// what authenticate checks.
func operation(method, path, id, tag, permission, summary, description string, codes Codes) huma.Operation {
	status := http.StatusOK
	if method == http.MethodPost {
		status = http.StatusCreated
	}
	errs := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity}
	if method == http.MethodPost || method == http.MethodPut {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	for s := range codes {
		errs = append(errs, s)
	}
	sort.Ints(errs)
	return huma.Operation{
		OperationID:   id,
		Method:        method,
		Path:          Prefix + path,
		Summary:       summary,
		Description:   description + "\n\nRequires permission `" + permission + "`.",
		Tags:          []string{tag},
		DefaultStatus: status,
		Errors:        errs,
		Metadata:      map[string]any{"permission": permission, "codes": codes},
		MaxBodyBytes:  maxBodyBytes,
	}
}

// register adds an operation and completes its description for
// integrators: the error codes of each status (as prose and as the
// x-error-codes list), the X-Request-ID header and an example on every
// response, and an example request body.
func register[I, O any](a *API, op huma.Operation, handler func(context.Context, *I) (*O, error)) {
	huma.Register(a.huma, op, handler)
	item := a.huma.OpenAPI().Paths[op.Path]
	var doc *huma.Operation
	switch op.Method {
	case http.MethodGet:
		doc = item.Get
	case http.MethodPost:
		doc = item.Post
	case http.MethodPut:
		doc = item.Put
	case http.MethodDelete:
		doc = item.Delete
	}
	codes, _ := op.Metadata["codes"].(Codes)
	permission, _ := op.Metadata["permission"].(string)

	// Nothing to validate, so no 422.
	if len(doc.Parameters) == 0 && doc.RequestBody == nil {
		delete(doc.Responses, strconv.Itoa(http.StatusUnprocessableEntity))
	}
	if doc.RequestBody != nil {
		setExample(doc.RequestBody.Content["application/json"], bodyExample(reflect.TypeFor[I]()))
	}
	for status, resp := range doc.Responses {
		if resp.Headers == nil {
			resp.Headers = map[string]*huma.Param{}
		}
		resp.Headers[requestIDHeader] = &huma.Param{Ref: "#/components/headers/" + requestIDHeader}
		n, err := strconv.Atoi(status)
		if err != nil {
			continue
		}
		if n < 400 {
			setExample(resp.Content["application/json"], bodyExample(reflect.TypeFor[O]()))
			continue
		}
		cases, ok := codes[n]
		if !ok {
			cases = commonCodes[n]
		}
		if len(cases) == 0 {
			continue
		}
		resp.Description = describe(cases)
		list := make([]string, len(cases))
		for i, c := range cases {
			list[i] = c.Code
		}
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["x-error-codes"] = list
		mt := resp.Content["application/json"]
		if mt == nil {
			continue
		}
		if len(cases) == 1 {
			mt.Example = errorExample(n, cases[0], permission, doc)
			continue
		}
		mt.Examples = map[string]*huma.Example{}
		for _, c := range cases {
			mt.Examples[c.Code] = &huma.Example{Value: errorExample(n, c, permission, doc)}
		}
	}
}

// setExample puts an example (or named examples) on a media type.
func setExample(mt *huma.MediaType, example any) {
	if mt == nil || example == nil {
		return
	}
	if named, ok := example.(namedExamples); ok {
		mt.Examples = named
		return
	}
	mt.Example = example
}

// bodyExample is the example of the Body field of an input or output
// struct, nil when it has none.
func bodyExample(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	f, ok := t.FieldByName("Body")
	if !ok {
		return nil
	}
	return bodyExamples[f.Type]
}

// requestIDHeader is the response header every response carries.
const requestIDHeader = "X-Request-ID"

// exampleRequestID is the request id of every example.
const exampleRequestID = "4f2d9a1c-7b3e-4e5a-9c61-0d8b2f6a1e37"

// errorExample is an example envelope of one error case.
func errorExample(status int, c ErrCase, permission string, doc *huma.Operation) *web.Error {
	e := web.NewError(status, c.Code, strings.ReplaceAll(c.Message, "{permission}", permission))
	e.Body.RequestID = exampleRequestID
	if c.Code == web.CodeValidation {
		e.Body.Details.Errors = []web.FieldError{exampleFieldError(doc)}
	}
	return e
}

// exampleFieldError is a plausible field error of the operation's input:
// its body first, else a query, path or header parameter.
func exampleFieldError(doc *huma.Operation) web.FieldError {
	if doc.RequestBody != nil {
		return web.FieldError{Location: "body", Field: "name", Message: "expected length >= 1"}
	}
	for _, in := range []string{"query", "path", "header"} {
		for _, p := range doc.Parameters {
			if p.In != in || p.Schema == nil {
				continue
			}
			switch {
			case p.Schema.Maximum != nil:
				return web.FieldError{Location: in, Field: p.Name, Message: "expected number <= " + strconv.FormatFloat(*p.Schema.Maximum, 'f', -1, 64)}
			case p.Schema.Minimum != nil:
				return web.FieldError{Location: in, Field: p.Name, Message: "expected number >= " + strconv.FormatFloat(*p.Schema.Minimum, 'f', -1, 64)}
			case p.Schema.Format == "uuid":
				return web.FieldError{Location: in, Field: p.Name, Message: "expected string to be RFC 4122 uuid"}
			case p.Name == "X-Timezone":
				return web.FieldError{Location: in, Field: p.Name, Message: "unknown time zone; use an IANA name such as Europe/Berlin or UTC"}
			}
		}
	}
	return web.FieldError{Location: "body", Message: "request validation failed"}
}

// StatusBody is the body of a successful DELETE.
type StatusBody struct {
	Status string `json:"status" enum:"success" doc:"Always \"success\"."`
}

type deleteOutput struct {
	Body StatusBody
}

func deleted() *deleteOutput { return &deleteOutput{Body: StatusBody{Status: "success"}} }
