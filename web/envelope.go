// Package web holds what every HTTP surface shares: request ids, the error
// envelope, panic recovery and access logging.
package web

import (
	"context"
	"encoding/json"
	"net/http"
)

// Error is the error envelope of every API response that is not a success:
// {"error": {"code", "message", "request_id", "details"}}.
type Error struct {
	Status int       `json:"-"`
	Body   ErrorBody `json:"error"`
}

// ErrorBody is the inside of the envelope.
type ErrorBody struct {
	Code      string       `json:"code" doc:"Error code, stable for programs to branch on."`
	Message   string       `json:"message" doc:"What went wrong, for people."`
	RequestID string       `json:"request_id" doc:"Equals the X-Request-ID header of this response."`
	Details   ErrorDetails `json:"details" doc:"Extra data; for validation failures, the field errors."`
}

// ErrorDetails carries field errors of a validation failure.
type ErrorDetails struct {
	Errors []FieldError `json:"errors,omitempty" doc:"One entry per field that failed validation."`
}

// FieldError names one bad input field. It never echoes the value, which
// may be a password.
type FieldError struct {
	Location string `json:"location" enum:"query,body,path,header" doc:"Where the field is."`
	Field    string `json:"field" doc:"The field's name; empty when the whole body is at fault."`
	Message  string `json:"message" doc:"What is wrong with it."`
}

func (e *Error) Error() string { return e.Body.Code + ": " + e.Body.Message }

// GetStatus is the HTTP status of the error.
func (e *Error) GetStatus() int { return e.Status }

// Codes used across the API.
const (
	CodeUnauthorized     = "UNAUTHORIZED"
	CodePermissionDenied = "PERMISSION_DENIED"
	CodeNotFound         = "RESOURCE_NOT_FOUND"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeConflict         = "CONFLICT"
	CodePayloadTooLarge  = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMedia = "UNSUPPORTED_MEDIA_TYPE"
	CodeValidation       = "VALIDATION_ERROR"
	CodeInternal         = "INTERNAL_ERROR"
	CodeBadRequest       = "BAD_REQUEST"
	CodeTimeout          = "REQUEST_TIMEOUT"
)

// NewError builds an error with an empty details object.
func NewError(status int, code, message string) *Error {
	return &Error{Status: status, Body: ErrorBody{Code: code, Message: message}}
}

// Validation builds a 422 naming the bad fields.
func Validation(message string, errs ...FieldError) *Error {
	e := NewError(http.StatusUnprocessableEntity, CodeValidation, message)
	e.Body.Details.Errors = errs
	return e
}

// FieldInvalid is a 422 for one field.
func FieldInvalid(location, field, message string) *Error {
	return Validation("request validation failed", FieldError{Location: location, Field: field, Message: message})
}

// WriteError writes e as JSON with the request's id filled in.
func WriteError(w http.ResponseWriter, r *http.Request, e *Error) {
	e.Body.RequestID = RequestID(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

type ctxKey int

const requestIDKey ctxKey = iota

// RequestID returns the request's id (set by the RequestID middleware).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// WithRequestID stores id in ctx.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}
