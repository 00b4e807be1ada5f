package ui

import (
	"encoding/json"
	"errors"
	"net/http"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web"
)

// Error codes of the internal API beyond the shared ones.
const (
	codeCSRF                   = "CSRF_REJECTED"
	codePasswordChangeRequired = "PASSWORD_CHANGE_REQUIRED"
)

// api serves an internal /api/ endpoint for the pages' JavaScript: a
// signed-in session (401 without; an API key is never accepted here), the
// CSRF token in X-CSRF-Token on unsafe methods (403), no business before
// a forced password change (403), then perm (403). Errors come back in the
// envelope of the public API.
func (u *UI) api(perm string, h handler) http.Handler { return u.apiHandler(perm, false, h) }

// apiAccount serves the endpoints a user reaches before changing an
// initial password (who am I, sign out).
func (u *UI) apiAccount(h handler) http.Handler { return u.apiHandler("", true, h) }

func (u *UI) apiHandler(perm string, duringPasswordChange bool, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := u.prepare(w, r)
		if err != nil {
			u.apiFailed(w, r, err)
			return
		}
		s := sessionOf(r)
		switch {
		case s == nil && r.Header.Get("X-API-Key") != "":
			u.apiFailed(w, r, web.NewError(http.StatusUnauthorized, web.CodeUnauthorized,
				"API keys are not accepted on the internal /api/; use the public API under /api/v1"))
			return
		case s == nil:
			u.apiFailed(w, r, web.NewError(http.StatusUnauthorized, web.CodeUnauthorized,
				"sign in to the web interface first; scripts use the public API under /api/v1 with an API key"))
			return
		}
		if unsafeMethod(r.Method) {
			if err := u.checkCSRF(r, false); err != nil {
				u.apiFailed(w, r, err)
				return
			}
		}
		if s.MustChangePassword && !duringPasswordChange {
			u.apiFailed(w, r, web.NewError(http.StatusForbidden, codePasswordChangeRequired,
				"change the initial password at "+pathPassword+" first"))
			return
		}
		if !s.Can(perm) {
			u.apiFailed(w, r, web.NewError(http.StatusForbidden, web.CodePermissionDenied, "permission "+perm+" is required"))
			return
		}
		u.apiFailed(w, r, h(w, r))
	})
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
		u.log.Warn("refused a cross-site or tokenless request", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "reason", ce.reason)
		we = web.NewError(http.StatusForbidden, codeCSRF,
			"request refused: "+ce.reason+"; send the page's CSRF token in the "+csrfHeader+" header from this site, or reload the page")
	case errors.As(err, &mbe):
		we = web.NewError(http.StatusRequestEntityTooLarge, web.CodePayloadTooLarge, "request body is larger than 1 MiB")
	case errors.Is(err, db.ErrNotFound):
		we = web.NewError(http.StatusNotFound, web.CodeNotFound, "no such resource: "+r.URL.Path)
	default:
		u.log.Error("internal api failed", "request_id", web.RequestID(r.Context()), "method", r.Method,
			"path", r.URL.Path, "err", err)
		we = web.NewError(http.StatusInternalServerError, web.CodeInternal, "internal server error")
	}
	web.WriteError(w, r, we)
}

// writeJSON answers an internal API request.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// sessionInfo is GET /api/session: who is signed in and what they may do.
type sessionInfo struct {
	Username           string   `json:"username"`
	Permissions        []string `json:"permissions"`
	AllGroups          bool     `json:"all_groups"`
	GroupIDs           []int64  `json:"group_ids"`
	Language           string   `json:"language"`
	MustChangePassword bool     `json:"must_change_password"`
}

func (u *UI) apiSession(w http.ResponseWriter, r *http.Request) error {
	s := sessionOf(r)
	info := sessionInfo{
		Username: s.Username, Permissions: []string{}, AllGroups: s.principal.AllGroups,
		GroupIDs: append([]int64{}, s.principal.GroupIDs...), Language: stateOf(r).lang,
		MustChangePassword: s.MustChangePassword,
	}
	for _, p := range auth.Permissions {
		if s.Can(p) {
			info.Permissions = append(info.Permissions, p)
		}
	}
	return writeJSON(w, http.StatusOK, info)
}

// apiLogout is DELETE /api/session: sign out from script.
func (u *UI) apiLogout(w http.ResponseWriter, r *http.Request) error {
	if err := u.endSession(w, r); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
