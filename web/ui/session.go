package ui

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web"
)

// Cookie names. The session cookie holds a random token whose SHA-256 is
// the stored session id.
const (
	sessionCookie = "backupd_session"
	preCSRFCookie = "backupd_csrf"
	langCookie    = "lang"
)

// touchEvery bounds how often a session's last_seen_at is written: idle
// expiry is that precise, and a busy browser costs one write a minute.
const touchEvery = time.Minute

// maxFormBytes caps the body of a form or internal API request.
const maxFormBytes = 1 << 20

// Session is the signed-in user of a request.
type Session struct {
	id        string
	csrf      string
	principal *auth.Principal
	// UserID and Username name the user.
	UserID   int64
	Username string
	// MustChangePassword holds until the user has set its own password.
	MustChangePassword bool
}

// Can reports whether the user holds permission perm; "" is any signed-in
// user. A nil session can do nothing.
func (s *Session) Can(perm string) bool {
	if s == nil {
		return false
	}
	return perm == "" || s.principal.Can(perm)
}

// Scope is the device groups the user sees, for the store's queries.
func (s *Session) Scope() db.Scope {
	if s == nil {
		return db.Scope{}
	}
	return db.Scope{All: s.principal.AllGroups, GroupIDs: s.principal.GroupIDs}
}

// Principal is the user as app/auth knows it (KeyID 0).
func (s *Session) Principal() *auth.Principal { return s.principal }

// CSRFToken is what this session's state-changing requests must carry.
func (s *Session) CSRFToken() string { return s.csrf }

// auditRef is the session as the audit log names it: a prefix of its id
// (itself a hash), enough to tell sessions apart and useless as a cookie.
func (s *Session) auditRef() *string {
	ref := s.id[:16]
	return &ref
}

// sessionOf returns the request's session; nil when nobody is signed in.
func sessionOf(r *http.Request) *Session { return stateOf(r).session }

// handler is a page or internal API handler. It returns an error rather
// than writing one: see page and api.
type handler func(w http.ResponseWriter, r *http.Request) error

// prepare runs first on every UI request: security headers, body limit,
// language, and the session when there is one.
func (u *UI) prepare(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	setSecurityHeaders(w.Header())
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
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

// public serves pages anyone may open (sign-in, language, not found). A
// session is loaded when there is one; CSRF is checked on unsafe methods.
func (u *UI) public(h handler) http.Handler {
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

// page serves a page for signed-in users holding perm ("" for any). It
// sends everyone else to sign in, and users who must change their
// password to the change-password page.
func (u *UI) page(perm string, h handler) http.Handler {
	return u.signedIn(perm, false, h)
}

// account serves the pages a user must reach even before changing an
// initial password: the change itself and sign-out.
func (u *UI) account(h handler) http.Handler {
	return u.signedIn("", true, h)
}

func (u *UI) signedIn(perm string, duringPasswordChange bool, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, err := u.prepare(w, r)
		if err != nil {
			u.pageFailed(w, r, err)
			return
		}
		s := sessionOf(r)
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
		if s.MustChangePassword && !duringPasswordChange {
			http.Redirect(w, r, pathPassword, http.StatusSeeOther)
			return
		}
		if !s.Can(perm) {
			u.pageFailed(w, r, forbidden())
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
	target := pathLogin
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

// loadSession resolves the session cookie. ended reports a cookie whose
// session is gone (expired, signed out, user disabled); the cookie is then
// cleared.
func (u *UI) loadSession(ctx context.Context, w http.ResponseWriter, r *http.Request) (s *Session, ended bool, err error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, false, nil
	}
	if len(c.Value) > 128 {
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	su, err := u.deps.Store.WebSessionByID(ctx, auth.SessionID(c.Value))
	if errors.Is(err, db.ErrNotFound) {
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	now := u.now().UTC()
	if !su.Active || !now.Before(su.ExpiresAt) || now.Sub(su.LastSeenAt) > IdleTimeout {
		if err := u.deps.Store.DeleteWebSession(ctx, su.ID); err != nil {
			return nil, false, err
		}
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	if now.Sub(su.LastSeenAt) >= touchEvery {
		if err := u.deps.Store.TouchWebSession(ctx, su.ID, now); err != nil {
			// The request can go on; the next one tries again.
			u.log.Warn("recording session activity failed", "err", err)
		}
	}
	grants, err := u.deps.Store.UserGrants(ctx, su.UserID)
	if err != nil {
		return nil, false, err
	}
	return &Session{
		id: su.ID, csrf: su.CSRFSecret, UserID: su.UserID, Username: su.Username,
		MustChangePassword: su.MustChangePassword,
		principal:          auth.UserPrincipal(su.UserID, su.Username, su.AllGroups, su.GroupIDs, grants),
	}, false, nil
}

// startSession signs user in on this browser: a new session (a new id,
// whatever the browser had before, which is deleted) and its cookie.
func (u *UI) startSession(ctx context.Context, w http.ResponseWriter, r *http.Request, user db.User) (db.WebSession, error) {
	ws, token := u.newSession(r, user)
	var err error
	if old, cerr := r.Cookie(sessionCookie); cerr == nil && old.Value != "" && len(old.Value) <= 128 {
		err = u.deps.Store.ReplaceWebSession(ctx, auth.SessionID(old.Value), ws)
	} else {
		err = u.deps.Store.CreateWebSession(ctx, ws)
	}
	if err != nil {
		return ws, err
	}
	setSessionCookie(w, r, token)
	return ws, nil
}

// newSession makes (but does not store) a session for user on this
// browser, and the token its cookie carries.
func (u *UI) newSession(r *http.Request, user db.User) (db.WebSession, string) {
	token, id := auth.NewSessionToken()
	now := u.now().UTC()
	return db.WebSession{
		ID: id, UserID: user.ID, CSRFSecret: auth.NewCSRFSecret(),
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(AbsoluteTimeout),
		RemoteAddr: clientIP(r), UserAgent: truncate(r.UserAgent(), 256),
	}, token
}

// setSessionCookie hands the browser its session token: never to script,
// over TLS only when the request came over TLS, not on cross-site
// subrequests.
func setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/",
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
}

func (u *UI) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
}

// endSession signs the request's session out, on the server first.
func (u *UI) endSession(w http.ResponseWriter, r *http.Request) error {
	s := sessionOf(r)
	if s == nil {
		return nil
	}
	if err := u.deps.Store.DeleteWebSession(r.Context(), s.id); err != nil {
		return err
	}
	u.clearSessionCookie(w, r)
	u.audit(r, "session.logout", s.UserID, s.Username, s.auditRef(), nil)
	return nil
}

// clientIP is the address of the peer (no forwarding header is trusted).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// truncate cuts s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
