package core

import (
	"net/http"
	"net/url"
	"slices"

	"backupd/db"
	"backupd/web"
)

// Error codes of the internal API beyond the shared ones.
const (
	codeCSRF                   = "CSRF_REJECTED"
	codePasswordChangeRequired = "PASSWORD_CHANGE_REQUIRED"
	// codeSignInIncomplete: the session still owes a step of signing in
	// (a second-factor code, setting one up).
	codeSignInIncomplete = "SIGN_IN_INCOMPLETE"
)

// Handler is a page or internal API handler. It returns an error rather
// than writing one: see Page and API.
type Handler func(w http.ResponseWriter, r *http.Request) error

// prepare runs first on every UI request: security headers, body limit,
// language, and the session when there is one.
func (u *UI) prepare(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	setSecurityHeaders(w.Header())
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	}
	st := &state{lang: u.negotiateLang(r)}
	r = withState(r, st)
	s, ended, err := u.loadSession(r.Context(), w, r)
	if err != nil {
		return r, err
	}
	st.session, st.ended = s, ended
	return r, nil
}

// Public serves pages anyone may open (sign-in, language, not found). A
// session is loaded when there is one; CSRF is checked on unsafe methods.
func (u *UI) Public(h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := u.prepare(w, r)
		if err == nil && unsafeMethod(r.Method) {
			err = u.checkCSRF(r, true)
		}
		if err == nil {
			err = h(w, r)
		}
		u.pageFailed(w, r, err)
	})
}

// Page serves a page for signed-in users holding perm ("" for any). It
// sends everyone else to sign in, and users who must change their
// password to the change-password page. On POST, PUT, PATCH and DELETE
// it checks the CSRF token first. A returned error becomes its error page
// (PageError as it says, db.ErrNotFound a 404, anything else a logged
// 500).
//
// A session still owing a step of signing in (Session.Pending) is sent
// to that step's page.
func (u *UI) Page(perm string, h Handler) http.Handler {
	return u.signedIn(gate{perm: perm}, h)
}

// Account serves the pages a user must reach even before changing an
// initial password: the change itself and sign-out.
func (u *UI) Account(h Handler) http.Handler {
	return u.signedIn(gate{duringPasswordChange: true}, h)
}

// SignOut serves sign-out, which every session reaches: one that must
// change its password, and one still owing a step of signing in.
func (u *UI) SignOut(h Handler) http.Handler {
	return u.signedIn(gate{duringPasswordChange: true, steps: []string{db.PendingTOTP, db.PendingEnroll}}, h)
}

// Step serves the page of one step of signing in (db.PendingTOTP): only
// a session owing it reaches it; a session that owes nothing is sent to
// /, one owing another step to that step's page.
func (u *UI) Step(step string, h Handler) http.Handler {
	return u.signedIn(gate{duringPasswordChange: true, steps: []string{step}, stepOnly: true}, h)
}

// AccountOrStep serves one's own pages (as Page with no permission) that
// a session owing step also reaches: setting up the second factor, which
// db.PendingEnroll owes and everyone may do.
func (u *UI) AccountOrStep(step string, h Handler) http.Handler {
	return u.signedIn(gate{steps: []string{step}}, h)
}

// gate is who a signed-in page lets in.
type gate struct {
	// perm is the permission it needs ("" any).
	perm string
	// duringPasswordChange: reached while the password must change.
	duringPasswordChange bool
	// steps are the pending steps whose sessions reach it.
	steps []string
	// stepOnly: only sessions owing one of steps reach it.
	stepOnly bool
}

func (u *UI) signedIn(g gate, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := u.prepare(w, r)
		if err != nil {
			u.pageFailed(w, r, err)
			return
		}
		s := SessionOf(r)
		if s == nil {
			u.redirectToLogin(w, r)
			return
		}
		if unsafeMethod(r.Method) {
			if err := u.checkCSRF(r, false); err != nil {
				u.pageFailed(w, r, err)
				return
			}
		}
		// The step owed comes before anything else, a forced password
		// change too: that is for a user who has signed in.
		switch {
		case s.Pending != "" && !slices.Contains(g.steps, s.Pending):
			http.Redirect(w, r, StepPath(s.Pending), http.StatusSeeOther)
			return
		case s.Pending == "" && g.stepOnly:
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		case s.Pending == "" && s.MustChangePassword && !g.duringPasswordChange:
			http.Redirect(w, r, PathPassword, http.StatusSeeOther)
			return
		}
		if !s.Can(g.perm) {
			u.pageFailed(w, r, Forbidden())
			return
		}
		u.pageFailed(w, r, h(w, r))
	})
}

// redirectToLogin sends a visitor to the sign-in page, remembering the
// page asked for (GET only: a form's data is not replayed).
func (u *UI) redirectToLogin(w http.ResponseWriter, r *http.Request) {
	q := url.Values{}
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		q.Set("next", r.URL.RequestURI())
	}
	if stateOf(r).ended {
		q.Set("ended", "1")
	}
	target := PathLogin
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func unsafeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// API serves an internal /api/ endpoint for the pages' JavaScript: a
// signed-in session (401 without; an API key is never accepted here), the
// CSRF token in X-CSRF-Token on unsafe methods (403), no business before
// a forced password change (403), then perm (403). Errors come back in the
// envelope of the public API.
func (u *UI) API(perm string, h Handler) http.Handler { return u.apiHandler(perm, false, h) }

// APIAccount serves the endpoints a user reaches before changing an
// initial password (who am I, sign out).
func (u *UI) APIAccount(h Handler) http.Handler { return u.apiHandler("", true, h) }

func (u *UI) apiHandler(perm string, duringPasswordChange bool, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := u.prepare(w, r)
		if err != nil {
			u.apiFailed(w, r, err)
			return
		}
		s := SessionOf(r)
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
		if s.Pending != "" {
			u.apiFailed(w, r, web.NewError(http.StatusForbidden, codeSignInIncomplete,
				"signing in is not finished: complete it at "+StepPath(s.Pending)+" first"))
			return
		}
		if s.MustChangePassword && !duringPasswordChange {
			u.apiFailed(w, r, web.NewError(http.StatusForbidden, codePasswordChangeRequired,
				"change the initial password at "+PathPassword+" first"))
			return
		}
		if !s.Can(perm) {
			u.apiFailed(w, r, web.NewError(http.StatusForbidden, web.CodePermissionDenied, "permission "+perm+" is required"))
			return
		}
		u.apiFailed(w, r, h(w, r))
	})
}
