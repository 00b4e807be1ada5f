package apiv1

import (
	"context"
	"net/http"
	"sort"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// Codes says which error codes an operation answers with, by status. The
// common ones (401, 403, 422, 500) are added to every operation.
type Codes map[int]string

// commonCodes describe the errors every operation can return.
var commonCodes = Codes{
	http.StatusUnauthorized:          "`UNAUTHORIZED`: the X-API-Key header is missing, or the key is invalid, expired, revoked or deleted.",
	http.StatusForbidden:             "`PERMISSION_DENIED`: the key (or its owner) lacks the permission this operation requires.",
	http.StatusUnprocessableEntity:   "`VALIDATION_ERROR`: a query parameter, path parameter or JSON body failed validation; `error.details.errors` lists each bad field as {location, field, message}.",
	http.StatusInternalServerError:   "`INTERNAL_ERROR`: an unexpected server error; nothing internal is revealed.",
	http.StatusRequestEntityTooLarge: "`PAYLOAD_TOO_LARGE`: the request body is larger than 1 MiB.",
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

// register adds an operation and documents its error codes per status.
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
	for status, resp := range doc.Responses {
		n, err := strconv.Atoi(status)
		if err != nil {
			continue
		}
		if d, ok := codes[n]; ok {
			resp.Description = d
		} else if d, ok := commonCodes[n]; ok {
			resp.Description = d
		}
	}
}

// StatusBody is the body of a successful DELETE.
type StatusBody struct {
	Status string `json:"status" enum:"success" doc:"Always \"success\"."`
}

type deleteOutput struct {
	Body StatusBody
}

func deleted() *deleteOutput { return &deleteOutput{Body: StatusBody{Status: "success"}} }
