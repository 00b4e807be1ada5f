// Package sso is the room of single sign-on through an OpenID Connect
// provider: GET /login/oidc sends the browser to the provider, and GET
// /login/oidc/callback signs it in when it comes back. The protocol is
// app/identity/oidc's; turning the person into a backupd user (roles
// from the mapped groups) is app/identity's. Sign-out at the provider is
// core.Leave's, since the account room's sign-out serves every
// session.
//
// A sign-in begun here is bound to the browser twice: the state goes
// into an HttpOnly cookie and, hashed, into oidc_logins with the nonce
// and PKCE verifier; the callback wants both, and takes the row, so that
// a state is good once. Every refusal shows the sign-in page with what
// went wrong and goes to the audit log; neither the code, the state nor
// a token ever reaches a log line.
package sso

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"regexp"
	"time"

	"backupd/app/identity"
	"backupd/app/identity/oidc"
	"backupd/app/metrics"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

const (
	// stateCookie holds the state of the sign-in under way in this
	// browser, for the callback only.
	stateCookie = "backupd_oidc_state"
	// loginMaxAge is how long a sign-in may take at the provider.
	loginMaxAge = 10 * time.Minute
	// maxLogins bounds the sign-ins under way (the start is public).
	maxLogins = 10000
	// finishTimeout bounds the code exchange, the keys and userinfo.
	finishTimeout = 45 * time.Second
)

type handlers struct {
	*core.UI
}

// Mount registers the single sign-on routes on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	h := &handlers{UI: c}
	mux.Handle("GET "+core.PathOIDCLogin, c.Public(h.begin))
	mux.Handle("GET "+oidc.CallbackPath, c.Public(h.callback))
}

// loginPage is the data of login.html as the sign-in page's own handler
// fills it (web/ui/account); a refusal here shows that page.
type loginPage struct {
	Username string
	Next     string
	Error    string
	Args     []any
	Notice   string
	SignIn   []core.SignInOption
	// Directory is the password form's hint (account's loginPage); the
	// single sign-on pages leave it out.
	Directory bool
}

// refusal is a sign-in refused: the page's status and message, and the
// audit log's reason.
type refusal struct {
	status int
	key    string
	args   []any
	reason string
	// next is the page the sign-in was for, kept for the next try.
	next string
	// user is the backupd user concerned, when there is one.
	user    *db.User
	details map[string]any
}

// begin sends the browser to the provider with a fresh state, nonce and
// PKCE verifier, kept for the callback.
func (h *handlers) begin(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	next := core.LocalPath(r.URL.Query().Get("next"), "")
	if core.SessionOf(r) != nil {
		http.Redirect(w, r, core.LocalPath(next, "/"), http.StatusSeeOther)
		return nil
	}
	s, err := h.Store.OIDCConfig(ctx)
	if err != nil {
		return err
	}
	if !s.Enabled {
		return h.render(w, r, http.StatusNotFound, keyDisabled, nil, next)
	}
	p, err := h.OIDCProvider(ctx, s)
	if err != nil {
		h.Log.Warn("single sign-on cannot start", "request_id", web.RequestID(ctx), "err", err)
		return h.refuse(w, r, s, refusal{status: http.StatusBadGateway, key: keyUnreachable,
			args: []any{core.OIDCName(s)}, reason: oidc.Reason(err), next: next})
	}
	req := p.Begin()
	now := h.Now()
	err = h.Store.CreateOIDCLogin(ctx, db.OIDCLogin{StateHash: oidc.StateHash(req.State), Nonce: req.Nonce,
		Verifier: req.Verifier, Next: next, CreatedAt: now}, now.Add(-loginMaxAge), maxLogins)
	if errors.Is(err, db.ErrTooManyOIDCLogins) {
		h.Log.Warn("single sign-on refused: too many sign-ins under way", "request_id", web.RequestID(ctx), "limit", maxLogins)
		return h.render(w, r, http.StatusTooManyRequests, keyBusy, nil, next)
	}
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: stateCookie, Value: req.State, Path: core.PathOIDCLogin, MaxAge: int(loginMaxAge / time.Second),
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, req.URL, http.StatusSeeOther)
	return nil
}

// providerError is an OAuth error code as the callback may show it.
var providerError = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// callback finishes a sign-in the provider sent back: the state checked
// against the cookie and taken, the code exchanged and the ID token
// verified, the person provisioned from its groups, and a session
// opened.
func (h *handlers) callback(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := r.URL.Query()
	http.SetCookie(w, &http.Cookie{
		Name: stateCookie, Value: "", Path: core.PathOIDCLogin, MaxAge: -1,
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	s, err := h.Store.OIDCConfig(ctx)
	if err != nil {
		return err
	}
	if !s.Enabled {
		return h.refuse(w, r, s, refusal{status: http.StatusNotFound, key: keyDisabled, reason: "disabled"})
	}
	name := core.OIDCName(s)

	state := q.Get("state")
	c, cerr := r.Cookie(stateCookie)
	if state == "" || len(state) > 256 || cerr != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		reason := "state_mismatch"
		if cerr != nil {
			// Most often the sign-in began at another address than the
			// external URL the provider sends browsers back to.
			reason = "no_state_cookie"
		}
		return h.refuse(w, r, s, refusal{status: http.StatusBadRequest, key: keyStale, reason: reason})
	}
	login, err := h.Store.TakeOIDCLogin(ctx, oidc.StateHash(state), h.Now().Add(-loginMaxAge))
	switch {
	case errors.Is(err, db.ErrNotFound):
		return h.refuse(w, r, s, refusal{status: http.StatusBadRequest, key: keyStale, reason: "state_used"})
	case errors.Is(err, db.ErrOIDCLoginExpired):
		return h.refuse(w, r, s, refusal{status: http.StatusBadRequest, key: keyStale, reason: "state_expired"})
	case err != nil:
		return err
	}
	next := core.LocalPath(login.Next, "")

	if e := q.Get("error"); e != "" {
		if !providerError.MatchString(e) {
			e = "error"
		}
		return h.refuse(w, r, s, refusal{status: http.StatusUnauthorized, key: keyDenied, args: []any{name, e},
			reason: "provider_error", next: next, details: map[string]any{"error": e}})
	}
	code := q.Get("code")
	if code == "" || len(code) > 4096 {
		return h.refuse(w, r, s, refusal{status: http.StatusBadRequest, key: keyStale, reason: "no_code", next: next})
	}
	p, err := h.OIDCProvider(ctx, s)
	if err != nil {
		h.Log.Warn("single sign-on cannot finish", "request_id", web.RequestID(ctx), "err", err)
		return h.refuse(w, r, s, refusal{status: http.StatusBadGateway, key: keyUnreachable, args: []any{name},
			reason: oidc.Reason(err), next: next})
	}
	fctx, cancel := context.WithTimeout(ctx, finishTimeout)
	id, err := p.Finish(fctx, code, login.Verifier, login.Nonce)
	cancel()
	if err != nil {
		// The error names what failed and no token, code or secret.
		h.Log.Warn("single sign-on refused", "request_id", web.RequestID(ctx), "err", err)
		key := keyVerify
		if errors.Is(err, oidc.ErrClaims) {
			key = keyClaims
		}
		return h.refuse(w, r, s, refusal{status: http.StatusUnauthorized, key: key, args: []any{name},
			reason: oidc.Reason(err), next: next})
	}

	person := identity.Identity{Source: db.UserOIDC, ExternalID: id.ExternalID(), Username: id.Username, Groups: id.Groups}
	user, access, change, err := identity.Provision(ctx, h.Store, person, s.Mappings)
	switch {
	case errors.Is(err, identity.ErrNotMapped):
		f := refusal{status: http.StatusForbidden, key: keyNotMapped, args: []any{name}, reason: "not_mapped", next: next,
			details: map[string]any{"username": id.Username, "groups": boundedGroups(id.Groups)}}
		old, revoked, found, rerr := identity.Revoke(ctx, h.Store, person)
		if rerr != nil {
			return rerr
		}
		if found {
			f.user = &old
			f.details["disabled"] = true
			f.details["sessions_ended"] = revoked.Sessions
			f.details["keys_revoked"] = revoked.Keys
		}
		return h.refuse(w, r, s, f)
	case errors.Is(err, db.ErrLocalAccount):
		f := refusal{status: http.StatusForbidden, key: keyLocalAccount, args: []any{id.Username, name},
			reason: "local_account", next: next, details: map[string]any{"username": id.Username}}
		if other, uerr := h.Store.UserByName(ctx, id.Username); uerr == nil {
			f.user = &other
		}
		return h.refuse(w, r, s, f)
	case errors.Is(err, db.ErrUserDisabled), errors.Is(err, db.ErrOtherPerson):
		f := refusal{status: http.StatusForbidden, key: keyUserDisabled, args: []any{id.Username},
			reason: "inactive", next: next, details: map[string]any{"username": id.Username}}
		if errors.Is(err, db.ErrOtherPerson) {
			f.key, f.args, f.reason = keyOtherPerson, []any{id.Username, name}, "other_subject"
		}
		if other, uerr := h.Store.UserByName(ctx, id.Username); uerr == nil {
			f.user = &other
		}
		return h.refuse(w, r, s, f)
	case err != nil:
		return err
	}

	var sealed []byte
	if h.Sealer != nil {
		sealed = h.Sealer.Seal(id.IDToken, oidc.IDTokenPurpose)
	}
	ws, err := h.StartSessionAs(ctx, w, r, user, core.SessionOptions{Method: db.SessionOIDC, IDPToken: sealed})
	if err != nil {
		return err
	}
	now := h.Now()
	if _, err := h.Store.PruneWebSessions(ctx, now, now.Add(-core.IdleTimeout)); err != nil {
		h.Log.Warn("pruning ended sessions failed", "err", err)
	}
	ref := ws.ID[:16]
	details := map[string]any{"method": db.SessionOIDC, "provider": name, "groups": access.Matched}
	if change.Created {
		details["created"] = true
	}
	if change.Reactivated {
		details["reactivated"] = true
	}
	h.AuditEntry(r, db.AuditEntry{
		UserID: &user.ID, Username: user.Username, SessionID: &ref, Action: "session.login",
		TargetType: "user", TargetID: core.IDString(user.ID), Details: details,
	})
	metrics.SignIn(db.SessionOIDC, true)
	http.Redirect(w, r, core.LocalPath(next, "/"), http.StatusSeeOther)
	return nil
}

// refuse records a refused sign-in and shows the sign-in page saying
// why.
func (h *handlers) refuse(w http.ResponseWriter, r *http.Request, s db.OIDCSettings, f refusal) error {
	details := map[string]any{"method": db.SessionOIDC, "provider": core.OIDCName(s), "reason": f.reason}
	for k, v := range f.details {
		details[k] = v
	}
	e := db.AuditEntry{Action: "session.login_failed", TargetType: "user", Details: details}
	if f.user != nil && f.user.ID != 0 {
		e.UserID, e.Username, e.TargetID = &f.user.ID, f.user.Username, core.IDString(f.user.ID)
	}
	h.AuditEntry(r, e)
	metrics.SignIn(db.SessionOIDC, false)
	return h.render(w, r, f.status, f.key, f.args, f.next)
}

// render shows the sign-in page with a message.
func (h *handlers) render(w http.ResponseWriter, r *http.Request, status int, key string, args []any, next string) error {
	p := loginPage{Next: next, Error: key, Args: args, SignIn: h.SignInOptions(r.Context(), next)}
	return h.Render(w, r, status, "login.html", keyTitleLogin, p)
}

// boundedGroups is the groups claim as the audit log keeps it: the first
// few.
func boundedGroups(groups []string) []string {
	const keep = 20
	if len(groups) > keep {
		return append(groups[:keep:keep], "…")
	}
	return groups
}
