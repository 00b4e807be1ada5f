package ui

import (
	"errors"
	"net/http"

	"backupd/app/auth"
)

// passwordPage is the data of password.html.
type passwordPage struct {
	// Forced is set while the user must replace an initial or reset
	// password before anything else.
	Forced    bool
	MinLength int
	Error     string
	Args      []any
	Notice    string
}

func (u *UI) passwordForm(w http.ResponseWriter, r *http.Request) error {
	p := passwordPage{Forced: sessionOf(r).MustChangePassword, MinLength: auth.MinPasswordLength}
	if r.URL.Query().Get("changed") != "" && !p.Forced {
		p.Notice = keyPasswordChanged
	}
	return u.render(w, r, http.StatusOK, "password.html", keyTitlePassword, p)
}

// changePassword sets the user's own password: the current one must be
// right and the new one follow the rules (auth.CheckNewPassword, as the
// CLI applies them) and differ from it. The user's other sessions end and
// this one gets a new id.
func (u *UI) changePassword(w http.ResponseWriter, r *http.Request) error {
	s := sessionOf(r)
	current := r.PostFormValue("current")
	next := r.PostFormValue("new")
	confirm := r.PostFormValue("confirm")
	p := passwordPage{Forced: s.MustChangePassword, MinLength: auth.MinPasswordLength}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.render(w, r, status, "password.html", keyTitlePassword, p)
	}
	if len(current) > maxPasswordBytes {
		return fail(http.StatusUnprocessableEntity, keyPasswordWrongCurrent)
	}
	// The current password is checked first, and throttled like a sign-in:
	// a session left open must not become a way to guess it.
	now := u.now()
	keys := signInKeys(s.Username, clientIP(r))
	if until := u.throttle.locked(now, keys); !until.IsZero() {
		key, args := u.lockMessage(w, now, until)
		return fail(http.StatusTooManyRequests, key, args...)
	}
	user, err := u.deps.Store.UserByName(r.Context(), s.Username)
	if err != nil {
		return err
	}
	ok, err := u.verify(r.Context(), user.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		u.throttle.failed(now, keys)
		u.audit(r, "user.password_failed", s.UserID, s.Username, s.auditRef(), map[string]any{"reason": "wrong_password"})
		return fail(http.StatusUnprocessableEntity, keyPasswordWrongCurrent)
	}
	switch err := auth.CheckNewPassword(next); {
	case errors.Is(err, auth.ErrPasswordTooShort):
		return fail(http.StatusUnprocessableEntity, keyPasswordTooShort, auth.MinPasswordLength)
	case err != nil:
		return err
	case len(next) > maxPasswordBytes:
		return fail(http.StatusUnprocessableEntity, keyPasswordTooLong, maxPasswordBytes)
	case next != confirm:
		return fail(http.StatusUnprocessableEntity, keyPasswordMismatch)
	case next == current:
		return fail(http.StatusUnprocessableEntity, keyPasswordSame)
	}
	hash, err := auth.HashPassword(next)
	if err != nil {
		return err
	}
	// One transaction: the password, every session of the user ended,
	// this browser signed in again under a new id.
	ws, token := u.newSession(r, user)
	if err := u.deps.Store.ResetPassword(r.Context(), user.ID, hash, false, &ws); err != nil {
		return err
	}
	setSessionCookie(w, r, token)
	u.throttle.succeeded(keys)
	ref := ws.ID[:16]
	u.audit(r, "user.password", s.UserID, s.Username, &ref, nil)
	if p.Forced {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, pathPassword+"?changed=1", http.StatusSeeOther)
	return nil
}
