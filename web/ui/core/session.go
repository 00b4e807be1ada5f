package core

import (
	"context"
	"errors"
	"net/http"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web"
)

// Cookie names. The session cookie holds a random token whose SHA-256 is
// the stored session id.
const (
	// SessionCookie is the session cookie's name.
	SessionCookie = "backupd_session"
	preCSRFCookie = "backupd_csrf"
	langCookie    = "lang"
)

// touchEvery bounds how often a session's last_seen_at is written: idle
// expiry is that precise, and a busy browser costs one write a minute.
const touchEvery = time.Minute

// MaxFormBytes caps the body of a form or internal API request.
const MaxFormBytes = 1 << 20

// PendingTimeout is the longest a session owing a step (a second-factor
// code, setting one up) lives: the password was right a moment ago, and
// a session that never finishes signing in must not linger.
const PendingTimeout = 5 * time.Minute

// Paths of the steps a pending session owes (see StepPath).
const (
	// PathLogin2FA asks for the second-factor code (db.PendingTOTP).
	PathLogin2FA = "/login/2fa"
	// PathAccount2FA is one's own second factor, where a session owing
	// db.PendingEnroll sets it up.
	PathAccount2FA = "/account/2fa"
)

// StepPath is the page of a pending step; "" for no step backupd knows.
func StepPath(step string) string {
	switch step {
	case db.PendingTOTP:
		return PathLogin2FA
	case db.PendingEnroll:
		return PathAccount2FA
	}
	return ""
}

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
	// Method is how the session was signed in (db.SessionPassword, …).
	Method string
	// Pending is the step still owed before the session may do anything
	// (db.PendingTOTP, db.PendingEnroll; "" none). A pending session
	// holds no permission, reaches only its step's pages and sign-out
	// (see Step, AccountOrStep, SignOut), and its pages are framed as
	// before sign-in.
	Pending string
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

// AuditRef is the session as the audit log names it: a prefix of its id
// (itself a hash), enough to tell sessions apart and useless as a cookie.
func (s *Session) AuditRef() *string {
	ref := s.id[:16]
	return &ref
}

// SessionOf returns the request's session; nil when nobody is signed in.
func SessionOf(r *http.Request) *Session { return stateOf(r).session }

// loadSession resolves the session cookie. ended reports a cookie whose
// session is gone (expired, signed out, user disabled); the cookie is then
// cleared.
func (u *UI) loadSession(ctx context.Context, w http.ResponseWriter, r *http.Request) (s *Session, ended bool, err error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil, false, nil
	}
	if len(c.Value) > 128 {
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	su, err := u.Store.WebSessionByID(ctx, auth.SessionID(c.Value))
	if errors.Is(err, db.ErrNotFound) {
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	now := u.Now().UTC()
	if !su.Active || !now.Before(su.ExpiresAt) || now.Sub(su.LastSeenAt) > IdleTimeout ||
		(su.Pending != "" && StepPath(su.Pending) == "") {
		if err := u.Store.DeleteWebSession(ctx, su.ID); err != nil {
			return nil, false, err
		}
		u.clearSessionCookie(w, r)
		return nil, true, nil
	}
	if now.Sub(su.LastSeenAt) >= touchEvery {
		if err := u.Store.TouchWebSession(ctx, su.ID, now); err != nil {
			// The request can go on; the next one tries again.
			u.Log.Warn("recording session activity failed", "err", err)
		}
	}
	s, err = u.sessionOf(ctx, su)
	return s, false, err
}

// sessionOf is the request's view of a stored session: a pending one
// holds no permission and sees no device group.
func (u *UI) sessionOf(ctx context.Context, su db.SessionUser) (*Session, error) {
	s := &Session{
		id: su.ID, csrf: su.CSRFSecret, UserID: su.UserID, Username: su.Username,
		MustChangePassword: su.MustChangePassword, Method: su.Method, Pending: su.Pending,
	}
	if su.Pending != "" {
		s.principal = auth.UserPrincipal(su.UserID, su.Username, false, nil, db.Grants{})
		return s, nil
	}
	grants, err := u.Store.UserGrants(ctx, su.UserID)
	if err != nil {
		return nil, err
	}
	s.principal = auth.UserPrincipal(su.UserID, su.Username, su.AllGroups, su.GroupIDs, grants)
	return s, nil
}

// SessionOptions say how a session starts: how it was signed in
// (db.SessionPassword when empty) and the step it still owes ("" none).
type SessionOptions struct {
	Method  string
	Pending string
	// IDPToken is the provider's ID token, sealed, kept to end the
	// provider's session at sign-out (single sign-on sessions).
	IDPToken []byte
}

// StartSession signs user in on this browser: a new session (a new id,
// whatever the browser had before, which is deleted) and its cookie.
func (u *UI) StartSession(ctx context.Context, w http.ResponseWriter, r *http.Request, user db.User) (db.WebSession, error) {
	return u.StartSessionAs(ctx, w, r, user, SessionOptions{})
}

// StartSessionAs is StartSession with the session's method and pending
// step. A pending session ends PendingTimeout after it starts unless
// FinishPending replaces it first.
func (u *UI) StartSessionAs(ctx context.Context, w http.ResponseWriter, r *http.Request, user db.User, opt SessionOptions) (db.WebSession, error) {
	ws, token := u.NewSessionAs(r, user, opt)
	var err error
	if old, cerr := r.Cookie(SessionCookie); cerr == nil && old.Value != "" && len(old.Value) <= 128 {
		err = u.Store.ReplaceWebSession(ctx, auth.SessionID(old.Value), ws)
	} else {
		err = u.Store.CreateWebSession(ctx, ws)
	}
	if err != nil {
		return ws, err
	}
	SetSessionCookie(w, r, token)
	return ws, nil
}

// NewSession makes (but does not store) a session for user on this
// browser, and the token its cookie carries.
func (u *UI) NewSession(r *http.Request, user db.User) (db.WebSession, string) {
	return u.NewSessionAs(r, user, SessionOptions{})
}

// NewSessionAs is NewSession with the session's method and pending step.
func (u *UI) NewSessionAs(r *http.Request, user db.User, opt SessionOptions) (db.WebSession, string) {
	token, id := auth.NewSessionToken()
	now := u.Now().UTC()
	life := AbsoluteTimeout
	if opt.Pending != "" {
		life = PendingTimeout
	}
	if opt.Method == "" {
		opt.Method = db.SessionPassword
	}
	return db.WebSession{
		ID: id, UserID: user.ID, CSRFSecret: auth.NewCSRFSecret(),
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(life),
		RemoteAddr: ClientIP(r), UserAgent: Truncate(r.UserAgent(), 256),
		Method: opt.Method, Pending: opt.Pending, IDPToken: opt.IDPToken,
	}, token
}

// FinishPending completes the request's pending session once its step
// is done: a new session (new id, token and CSRF secret, the full
// lifetime, nothing pending) replaces it in one transaction, so that
// nothing known before the step (a planted or observed cookie) is worth
// anything after it. The request goes on as the new session: the page it
// renders carries the new CSRF token.
func (u *UI) FinishPending(w http.ResponseWriter, r *http.Request) (db.WebSession, error) {
	s := SessionOf(r)
	if s == nil || s.Pending == "" {
		return db.WebSession{}, errors.New("no pending session to finish")
	}
	ctx := r.Context()
	next, token := u.NewSessionAs(r, db.User{ID: s.UserID}, SessionOptions{Method: s.Method})
	if err := u.Store.ReplaceWebSession(ctx, s.id, next); err != nil {
		return next, err
	}
	SetSessionCookie(w, r, token)
	su, err := u.Store.WebSessionByID(ctx, next.ID)
	if err != nil {
		return next, err
	}
	done, err := u.sessionOf(ctx, su)
	if err != nil {
		return next, err
	}
	stateOf(r).session = done
	return next, nil
}

// SetSessionCookie hands the browser its session token: never to script,
// over TLS only when the request came over TLS, not on cross-site
// subrequests.
func SetSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: token, Path: "/",
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
}

func (u *UI) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
}

// EndSession signs the request's session out, on the server first, and
// records it in the audit log.
func (u *UI) EndSession(w http.ResponseWriter, r *http.Request) error {
	s := SessionOf(r)
	if s == nil {
		return nil
	}
	if err := u.Store.DeleteWebSession(r.Context(), s.id); err != nil {
		return err
	}
	u.clearSessionCookie(w, r)
	if s.Pending != "" {
		// Signing in was abandoned: nobody was signed in to sign out.
		return nil
	}
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "session.logout",
		TargetType: "user", TargetID: IDString(s.UserID),
	})
	return nil
}
