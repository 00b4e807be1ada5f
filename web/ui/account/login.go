package account

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"backupd/app/auth"
	"backupd/app/metrics"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

// loginPage is the data of login.html.
type loginPage struct {
	Username string
	Next     string
	// Error and Notice are message keys (with Args for Error).
	Error  string
	Args   []any
	Notice string
	// SignIn are the buttons of single sign-on, beside the form.
	SignIn []core.SignInOption
	// Directory: directory accounts sign in with this form too.
	Directory bool
}

// signInDetails are the audit details of a sign-in by method: the
// method, for the directory its server (the provider), and more as
// key/value pairs.
func (u *handlers) signInDetails(ctx context.Context, method string, kv ...string) map[string]any {
	d := map[string]any{"method": method}
	if method == db.SessionLDAP {
		if s, err := u.Store.LDAPConfig(ctx); err == nil {
			if pu, err := url.Parse(s.URL); err == nil {
				d["provider"] = pu.Host
			}
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i]] = kv[i+1]
	}
	return d
}

// directoryOn reports whether LDAP sign-in is on, for the form's hint
// (false when the settings cannot be read: the hint is no matter).
func (u *handlers) directoryOn(ctx context.Context) bool {
	s, err := u.Store.LDAPConfig(ctx)
	return err == nil && s.Enabled
}

func (u *handlers) loginForm(w http.ResponseWriter, r *http.Request) error {
	next := core.LocalPath(r.URL.Query().Get("next"), "")
	if core.SessionOf(r) != nil {
		http.Redirect(w, r, core.LocalPath(next, "/"), http.StatusSeeOther)
		return nil
	}
	p := loginPage{Next: next, SignIn: u.SignInOptions(r.Context(), next), Directory: u.directoryOn(r.Context())}
	switch {
	case r.URL.Query().Get("ended") != "":
		p.Notice = keyLoginEnded
	case r.URL.Query().Get("out") != "":
		p.Notice = keyLoginOut
	}
	return u.Render(w, r, http.StatusOK, "login.html", keyTitleLogin, p)
}

// login checks a username and password. Wrong ones count against the
// username from this client address, the address and the username (see
// throttle); a locked one is refused before any password is checked. Every outcome but a
// lock goes to the audit log, never with the password.
func (u *handlers) login(w http.ResponseWriter, r *http.Request) error {
	username := strings.TrimSpace(r.PostFormValue("username"))
	password := r.PostFormValue("password")
	p := loginPage{Username: username, Next: core.LocalPath(r.PostFormValue("next"), "")}
	p.SignIn, p.Directory = u.SignInOptions(r.Context(), p.Next), u.directoryOn(r.Context())
	if len(username) > core.MaxUsernameBytes {
		p.Username = core.Truncate(username, core.MaxUsernameBytes)
	}
	if username == "" || password == "" {
		p.Error = keyLoginMissing
		return u.Render(w, r, http.StatusUnprocessableEntity, "login.html", keyTitleLogin, p)
	}

	now := u.Now()
	ip := core.ClientIP(r)
	// The throttle's keys stay short whatever was typed.
	keys := signInKeys(core.Truncate(username, core.MaxUsernameBytes), ip)
	if until := u.throttle.locked(now, keys); !until.IsZero() {
		return u.renderLocked(w, r, p, now, until)
	}

	user, method, ok, reason, err := u.checkPassword(r.Context(), r, username, password)
	if errors.Is(err, errDirectoryDown) {
		// Neither right nor wrong: no failure is counted.
		metrics.SignIn(method, false)
		u.AuditEntry(r, db.AuditEntry{
			Username: user.Username, Action: "session.login_failed", TargetType: "user", TargetID: core.IDString(user.ID),
			Details: u.signInDetails(r.Context(), method, "reason", reason),
		})
		p.Error = keyLoginDirectoryDown
		return u.Render(w, r, http.StatusServiceUnavailable, "login.html", keyTitleLogin, p)
	}
	if err != nil {
		return err
	}
	metrics.SignIn(method, ok)
	if !ok {
		until := u.throttle.failed(now, keys)
		var uid *int64
		name := ""
		if user.ID != 0 {
			uid, name = &user.ID, user.Username
		}
		u.AuditEntry(r, db.AuditEntry{
			UserID: uid, Username: name, Action: "session.login_failed", TargetType: "user",
			TargetID: core.IDString(user.ID), Details: u.signInDetails(r.Context(), method, "reason", reason),
		})
		if !until.IsZero() {
			u.Log.Warn("sign-in locked after failures", "request_id", web.RequestID(r.Context()),
				"remote", ip, "until", until.UTC().Format(time.RFC3339))
			return u.renderLocked(w, r, p, now, until)
		}
		p.Error = keyLoginFailed
		return u.Render(w, r, http.StatusUnauthorized, "login.html", keyTitleLogin, p)
	}

	u.throttle.succeeded(keys)
	// A local account with a second factor, or whose role requires one,
	// is not signed in yet: its session owes that step (twofactor_login.go).
	// A directory user's second factor is the directory's business.
	step := ""
	if method == db.SessionPassword {
		if step, err = u.signInStep(r.Context(), user); err != nil {
			return err
		}
	}
	ws, err := u.StartSessionAs(r.Context(), w, r, user, core.SessionOptions{Method: method, Pending: step})
	if err != nil {
		return err
	}
	if _, err := u.Store.PruneWebSessions(r.Context(), now, now.Add(-core.IdleTimeout)); err != nil {
		u.Log.Warn("pruning ended sessions failed", "err", err)
	}
	if step != "" {
		http.Redirect(w, r, stepTarget(step, p.Next), http.StatusSeeOther)
		return nil
	}
	ref := ws.ID[:16]
	u.AuditEntry(r, db.AuditEntry{
		UserID: &user.ID, Username: user.Username, SessionID: &ref, Action: "session.login",
		TargetType: "user", TargetID: core.IDString(user.ID), Details: u.signInDetails(r.Context(), method),
	})
	target := core.LocalPath(p.Next, "/")
	if user.MustChangePassword {
		target = core.PathPassword
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}

// checkPassword verifies a sign-in, by the local password or, for a name
// no local account holds, by the LDAP directory (method says which).
// user is filled whenever the username exists; reason says why a refused
// one was refused (for the audit log); errDirectoryDown is a directory
// that did not answer. An unknown username costs the same time as a
// wrong password.
func (u *handlers) checkPassword(ctx context.Context, r *http.Request, username, password string) (user db.User, method string, ok bool, reason string, err error) {
	method = db.SessionPassword
	if len(username) > core.MaxUsernameBytes || len(password) > core.MaxPasswordBytes {
		return user, method, false, "too_long", nil
	}
	user, err = u.Store.UserByName(ctx, username)
	known := err == nil
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return user, method, false, "", err
	}
	if !known || user.Source == db.UserLDAP {
		set, err := u.Store.LDAPConfig(ctx)
		if err != nil {
			return user, method, false, "", err
		}
		switch {
		case set.Enabled:
			user, ok, reason, err = u.ldapSignIn(ctx, r, set, username, password)
			return user, db.SessionLDAP, ok, reason, err
		case known:
			return user, db.SessionLDAP, false, "ldap_turned_off", nil
		}
	}
	hash := u.dummyHash()
	if known && user.Source == db.UserLocal {
		hash = user.PasswordHash
	}
	match, err := u.verify(ctx, hash, password)
	if errors.Is(err, auth.ErrBadHash) && known {
		// A hash this release cannot read: nobody can sign in as this
		// user until an administrator sets a password, and the answer
		// must not differ from a wrong password's.
		u.Log.Warn("stored password hash is unreadable", "user", user.Username)
		return user, method, false, "unreadable_hash", nil
	}
	if err != nil {
		return user, method, false, "", err
	}
	switch {
	case !known:
		return db.User{}, method, false, "unknown_user", nil
	case user.Source == db.UserOIDC:
		// A single sign-on user has no password here.
		return user, method, false, "single_sign_on_user", nil
	case !match:
		return user, method, false, "wrong_password", nil
	case !user.Active:
		return user, method, false, "inactive", nil
	}
	return user, method, true, "", nil
}

// verify checks a password against a hash, a few at a time.
func (u *handlers) verify(ctx context.Context, hash, password string) (bool, error) {
	select {
	case u.verifySlots <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-u.verifySlots }()
	ok, err := auth.VerifyPassword(hash, password)
	if err != nil {
		return false, fmt.Errorf("verify password: %w", err)
	}
	return ok, nil
}

// renderLocked answers a sign-in refused by the throttle: 429 and when to
// try again; nothing was checked.
func (u *handlers) renderLocked(w http.ResponseWriter, r *http.Request, p loginPage, now, until time.Time) error {
	p.Error, p.Args = u.lockMessage(w, now, until)
	return u.Render(w, r, http.StatusTooManyRequests, "login.html", keyTitleLogin, p)
}

// lockMessage says when a locked sign-in may be tried again, in the
// Retry-After header and as a message key with its arguments.
func (u *handlers) lockMessage(w http.ResponseWriter, now, until time.Time) (string, []any) {
	secs := int((until.Sub(now) + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	if secs < 120 {
		return keyLoginLockedSec, []any{secs}
	}
	return keyLoginLockedMin, []any{(secs + 59) / 60, until.In(u.Location).Format("15:04")}
}

// logout ends the session; a single sign-on session is ended at the
// provider too (core.UI.Leave).
func (u *handlers) logout(w http.ResponseWriter, r *http.Request) error {
	return u.Leave(w, r)
}
