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
	if !su.Active || !now.Before(su.ExpiresAt) || now.Sub(su.LastSeenAt) > IdleTimeout {
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
	grants, err := u.Store.UserGrants(ctx, su.UserID)
	if err != nil {
		return nil, false, err
	}
	return &Session{
		id: su.ID, csrf: su.CSRFSecret, UserID: su.UserID, Username: su.Username,
		MustChangePassword: su.MustChangePassword,
		principal:          auth.UserPrincipal(su.UserID, su.Username, su.AllGroups, su.GroupIDs, grants),
	}, false, nil
}

// StartSession signs user in on this browser: a new session (a new id,
// whatever the browser had before, which is deleted) and its cookie.
func (u *UI) StartSession(ctx context.Context, w http.ResponseWriter, r *http.Request, user db.User) (db.WebSession, error) {
	ws, token := u.NewSession(r, user)
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
	token, id := auth.NewSessionToken()
	now := u.Now().UTC()
	return db.WebSession{
		ID: id, UserID: user.ID, CSRFSecret: auth.NewCSRFSecret(),
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(AbsoluteTimeout),
		RemoteAddr: ClientIP(r), UserAgent: Truncate(r.UserAgent(), 256),
	}, token
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
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.AuditRef(), Action: "session.logout",
		TargetType: "user", TargetID: IDString(s.UserID),
	})
	return nil
}
