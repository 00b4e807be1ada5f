package core

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"backupd/app/auth"
	"backupd/web"
)

// csrfField is the hidden form field, csrfHeader the header JavaScript
// sends, carrying the CSRF token.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// csrfError is a refused state-changing request. Reason says which check
// failed (for the log and the internal API's message); people see one
// message saying what to do.
type csrfError struct{ reason string }

func (e *csrfError) Error() string { return "CSRF check failed: " + e.reason }

// checkCSRF refuses a state-changing request that comes from another
// origin or lacks the token. A signed-in request must carry its session's
// token. Public forms (sign-in, language; allowPre) may instead carry the
// token of the pre-session cookie, which they were rendered with.
func (u *UI) checkCSRF(r *http.Request, allowPre bool) error {
	if reason := CrossOrigin(r); reason != "" {
		return &csrfError{reason: reason}
	}
	got := r.Header.Get(csrfHeader)
	if got == "" && isForm(r) {
		// A body over the limit cannot be read for its token; say it is
		// too large (413) rather than that the token is missing.
		var tooLarge *http.MaxBytesError
		parse := r.ParseForm
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			parse = func() error { return r.ParseMultipartForm(MaxFormBytes) }
		}
		if err := parse(); errors.As(err, &tooLarge) {
			return err
		}
		got = r.PostFormValue(csrfField)
	}
	if got == "" {
		return &csrfError{reason: "missing token"}
	}
	if s := stateOf(r).session; s != nil && tokenEqual(got, s.csrf) {
		return nil
	}
	if allowPre {
		if c, err := r.Cookie(preCSRFCookie); err == nil && tokenEqual(got, c.Value) {
			return nil
		}
	}
	return &csrfError{reason: "wrong token"}
}

func tokenEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data")
}

// CrossOrigin returns why the request does not come from this origin, or
// "" when it does. Browsers say where a request comes from in
// Sec-Fetch-Site, Origin and Referer; a request that names another site in
// any of them is refused. A client that sends none of them is no browser
// acting for someone else, and still needs the token.
func CrossOrigin(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site is " + r.Header.Get("Sec-Fetch-Site")
	}
	if o := r.Header.Get("Origin"); o != "" {
		if !sameOrigin(r, o) {
			return "Origin " + o + " is not this site"
		}
		return ""
	}
	if ref := r.Header.Get("Referer"); ref != "" && !sameOrigin(r, ref) {
		return "Referer is not this site"
	}
	return ""
}

// sameOrigin reports whether the URL raw (an Origin or Referer) is this
// server as the request reached it. Behind a TLS-terminating proxy the
// request itself is plain HTTP, so the scheme is only held to https when
// the request came over HTTPS (here, or through a trusted proxy that
// says so).
func sameOrigin(r *http.Request, raw string) bool {
	o, err := url.Parse(raw)
	if err != nil || o.Host == "" {
		return false
	}
	switch o.Scheme {
	case "https":
	case "http":
		if web.IsHTTPS(r) {
			return false
		}
	default:
		return false
	}
	return strings.EqualFold(o.Host, r.Host)
}

// csrfToken is the token to put in the forms of this response: the
// session's, or before sign-in the pre-session cookie's, created (and
// set on w) when the browser has none yet.
func (u *UI) csrfToken(w http.ResponseWriter, r *http.Request) string {
	st := stateOf(r)
	if st.session != nil {
		return st.session.csrf
	}
	if st.preCSRF != "" {
		return st.preCSRF
	}
	if c, err := r.Cookie(preCSRFCookie); err == nil && len(c.Value) >= 32 && len(c.Value) <= 64 {
		st.preCSRF = c.Value
		return st.preCSRF
	}
	st.preCSRF = auth.NewCSRFSecret()
	http.SetCookie(w, &http.Cookie{
		Name: preCSRFCookie, Value: st.preCSRF, Path: "/",
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteStrictMode,
	})
	return st.preCSRF
}

// contentSecurityPolicy allows only this origin's scripts and styles: no
// inline script, no style attribute, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// setSecurityHeaders sets what every UI response carries. Pages and API
// answers are personal and never cached; static files override
// Cache-Control.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
}
