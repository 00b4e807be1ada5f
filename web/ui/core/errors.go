package core

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"backupd/db"
	"backupd/web"
)

// PageError is an error page a handler returns: Status and the message
// key Message (with Args).
type PageError struct {
	Status  int
	Message string
	Args    []any
}

func (e *PageError) Error() string { return "page error " + strconv.Itoa(e.Status) + ": " + e.Message }

// Forbidden is the error page for a user who lacks the permission a page
// or an action needs. Handlers return it for actions beyond the page's own
// permission (a form that deletes, say) and for a device outside the
// user's scope.
func Forbidden() error {
	return &PageError{Status: http.StatusForbidden, Message: keyErrForbidden}
}

// IsForbidden reports whether err is an error page (Forbidden, or
// another PageError) rather than a failure: the internal API answers it
// as its own 403.
func IsForbidden(err error) bool {
	var pe *PageError
	return errors.As(err, &pe)
}

// errorPage is the data of error.html.
type errorPage struct {
	Status  int
	Message string
	Args    []any
}

// pageFailed answers a page handler's error, if any: its error page, a
// 403 for a CSRF failure, a 404 for db.ErrNotFound, or a logged 500 that
// shows the request id and never the error itself.
func (u *UI) pageFailed(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		return
	}
	var pe *PageError
	var ce *csrfError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ce):
		u.Log.Warn("refused a cross-site or tokenless request", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "reason", ce.reason)
		pe = &PageError{Status: http.StatusForbidden, Message: keyErrCSRF}
	case errors.As(err, &mbe):
		pe = &PageError{Status: http.StatusRequestEntityTooLarge, Message: keyErrTooLarge}
	case errors.Is(err, db.ErrNotFound):
		pe = &PageError{Status: http.StatusNotFound, Message: keyErrNotFound}
	default:
		u.Log.Error("page failed", "request_id", web.RequestID(r.Context()), "method", r.Method,
			"path", r.URL.Path, "err", err)
		pe = &PageError{Status: http.StatusInternalServerError, Message: keyErrInternal}
	}
	title := keyTitleError
	switch pe.Status {
	case http.StatusNotFound:
		title = keyTitleNotFound
	case http.StatusForbidden:
		title = keyTitleForbidden
	}
	if rerr := u.Render(w, r, pe.Status, "error.html", title, errorPage{Status: pe.Status, Message: pe.Message, Args: pe.Args}); rerr != nil {
		u.Log.Error("render error page", "request_id", web.RequestID(r.Context()), "err", rerr)
		http.Error(w, http.StatusText(pe.Status), pe.Status)
	}
}

// RenderError answers err as a page handler's error would be answered,
// for a middleware that refuses a request before the page's checks ran
// (an upload over its limit, say).
func (u *UI) RenderError(w http.ResponseWriter, r *http.Request, err error) {
	r, perr := u.prepare(w, r)
	if perr != nil {
		err = perr
	}
	u.pageFailed(w, r, err)
}

// apiFailed answers an internal API handler's error, if any, in the
// envelope.
func (u *UI) apiFailed(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		return
	}
	var we *web.Error
	var ce *csrfError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &we):
	case errors.As(err, &ce):
		u.Log.Warn("refused a cross-site or tokenless request", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "reason", ce.reason)
		we = web.NewError(http.StatusForbidden, codeCSRF,
			"request refused: "+ce.reason+"; send the page's CSRF token in the "+csrfHeader+" header from this site, or reload the page")
	case errors.As(err, &mbe):
		we = web.NewError(http.StatusRequestEntityTooLarge, web.CodePayloadTooLarge, "request body is larger than 1 MiB")
	case errors.Is(err, db.ErrNotFound):
		we = web.NewError(http.StatusNotFound, web.CodeNotFound, "no such resource: "+r.URL.Path)
	case IsForbidden(err):
		we = web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the resource is outside your device groups")
	default:
		u.Log.Error("internal api failed", "request_id", web.RequestID(r.Context()), "method", r.Method,
			"path", r.URL.Path, "err", err)
		we = web.NewError(http.StatusInternalServerError, web.CodeInternal, "internal server error")
	}
	web.WriteError(w, r, we)
}

// WriteJSON answers an internal API request.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
