package apiv1

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// operation describes one public operation; the permission in Metadata is
// what authenticate checks.
func operation(method, path, id, tag, permission, summary, description string, errs ...int) huma.Operation {
	status := http.StatusOK
	if method == http.MethodPost {
		status = http.StatusCreated
	}
	return huma.Operation{
		OperationID:   id,
		Method:        method,
		Path:          Prefix + path,
		Summary:       summary,
		Description:   description + "\n\nRequires permission `" + permission + "`.",
		Tags:          []string{tag},
		DefaultStatus: status,
		Errors:        append([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity}, errs...),
		Metadata:      map[string]any{"permission": permission},
		MaxBodyBytes:  1 << 20,
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
