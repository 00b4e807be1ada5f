package account

import (
	"errors"
	"net/http"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
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
	// Field is the field the error is about ("current", "new" or
	// "confirm"): marked and focused. No password typed is sent back
	// into the page: it would sit in the HTML, in caches and in the
	// browser's history of the form.
	Field string
}

// externalPassword refuses the password page to a session signed in by
// the directory or a provider: its password is theirs, backupd has none.
func externalPassword(s *core.Session) error {
	if s.Method == db.SessionLDAP || s.Method == db.SessionOIDC {
		return &core.PageError{Status: http.StatusConflict, Message: keyPasswordExternal}
	}
	return nil
}

func (u *handlers) passwordForm(w http.ResponseWriter, r *http.Request) error {
	if err := externalPassword(core.SessionOf(r)); err != nil {
		return err
	}
	p := passwordPage{Forced: core.SessionOf(r).MustChangePassword, MinLength: auth.MinPasswordLength}
	if r.URL.Query().Get("changed") != "" && !p.Forced {
		p.Notice = keyPasswordChanged
	}
	return u.Render(w, r, http.StatusOK, "password.html", keyTitlePassword, p)
}

// changePassword sets the user's own password: the current one must be
// right and the new one follow the rules (auth.CheckNewPassword, as the
// CLI applies them) and differ from it. The user's other sessions end and
// this one gets a new id.
func (u *handlers) changePassword(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	if err := externalPassword(s); err != nil {
		return err
	}
	current := r.PostFormValue("current")
	next := r.PostFormValue("new")
	confirm := r.PostFormValue("confirm")
	p := passwordPage{Forced: s.MustChangePassword, MinLength: auth.MinPasswordLength}
	field := "current"
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args, p.Field = key, args, field
		return u.Render(w, r, status, "password.html", keyTitlePassword, p)
	}
	if len(current) > core.MaxPasswordBytes {
		return fail(http.StatusUnprocessableEntity, keyPasswordWrongCurrent)
	}
	// The current password is checked first, and throttled like a sign-in:
	// a session left open must not become a way to guess it.
	now := u.Now()
	keys := signInKeys(s.Username, core.ClientIP(r))
	if until := u.throttle.locked(now, keys); !until.IsZero() {
		key, args := u.lockMessage(w, now, until)
		return fail(http.StatusTooManyRequests, key, args...)
	}
	user, err := u.Store.UserByName(r.Context(), s.Username)
	if err != nil {
		return err
	}
	ok, err := u.verify(r.Context(), user.PasswordHash, current)
	if err != nil {
		return err
	}
	if !ok {
		u.throttle.failed(now, keys)
		u.Audit(r, "user.password_failed", "user", s.UserID, map[string]any{"reason": "wrong_password"})
		return fail(http.StatusUnprocessableEntity, keyPasswordWrongCurrent)
	}
	field = "new"
	switch err := auth.CheckNewPassword(next); {
	case errors.Is(err, auth.ErrPasswordTooShort):
		return fail(http.StatusUnprocessableEntity, core.KeyPasswordTooShort, auth.MinPasswordLength)
	case err != nil:
		return err
	case len(next) > core.MaxPasswordBytes:
		return fail(http.StatusUnprocessableEntity, core.KeyPasswordTooLong, core.MaxPasswordBytes)
	case next != confirm:
		field = "confirm"
		return fail(http.StatusUnprocessableEntity, core.KeyPasswordMismatch)
	case next == current:
		return fail(http.StatusUnprocessableEntity, keyPasswordSame)
	}
	hash, err := auth.HashPassword(next)
	if err != nil {
		return err
	}
	// One transaction: the password, every session of the user ended,
	// this browser signed in again under a new id.
	ws, token := u.NewSession(r, user)
	if err := u.Store.ResetPassword(r.Context(), user.ID, hash, false, &ws); err != nil {
		return err
	}
	core.SetSessionCookie(w, r, token)
	u.throttle.succeeded(keys)
	ref := ws.ID[:16]
	u.AuditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: &ref, Action: "user.password",
		TargetType: "user", TargetID: core.IDString(s.UserID),
	})
	if p.Forced {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, core.PathPassword+"?changed=1", http.StatusSeeOther)
	return nil
}
