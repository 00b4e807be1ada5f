package account

import (
	"errors"
	"html/template"
	"net/http"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// One's own second factor (/account/2fa): setting it up (a QR code and
// the secret as text, confirmed with a code, then ten recovery codes
// shown once), new recovery codes and turning it off (each with a code
// of it; off is refused while a role requires it). A session owing
// db.PendingEnroll reaches the setting up, and finishing it completes
// the sign-in.

var errNoSealer = errors.New("no secret key to seal the second factor with")

// twoFactorPage is the data of account_2fa.html.
type twoFactorPage struct {
	Username string
	// Local is false for a directory or provider account, whose source
	// asks for its own second factor: the page says so and offers
	// nothing.
	Local bool
	// Forced: the session owes the setting up (a role requires it).
	Forced bool
	// Required: a role of the user requires a second factor.
	Required  bool
	Enabled   bool
	EnabledAt time.Time
	CodesLeft int
	// FewCodes: CodesLeft is low enough to say so.
	FewCodes bool
	// QR (a PNG data: URL) and Secret (grouped by four) are the key
	// being set up.
	QR     template.URL
	Secret string
	// Codes are new recovery codes, shown once; Continue is where the
	// page leads after them.
	Codes    []string
	Continue string
	Next     string
	// Error (with Args) and Notice are message keys; Field is the form
	// the error is about ("confirm", "regenerate", "disable").
	Error  string
	Args   []any
	Notice string
	Field  string
}

// fewCodesLeft: the page warns when this many recovery codes or fewer
// are left.
const fewCodesLeft = 3

var twoFactorNotices = map[string]string{"disabled": key2FANoticeDisabled}

// twoFactorState reads what the page shows of the signed-in user.
func (u *handlers) twoFactorState(r *http.Request) (twoFactorPage, db.User, db.TOTPState, error) {
	s := core.SessionOf(r)
	ctx := r.Context()
	p := twoFactorPage{Username: s.Username, Forced: s.Pending == db.PendingEnroll}
	user, err := u.Store.UserByID(ctx, s.UserID)
	if err != nil {
		return p, user, db.TOTPState{}, err
	}
	p.Local = user.Source == db.UserLocal
	st, err := u.Store.TOTPState(ctx, s.UserID)
	if err != nil {
		return p, user, st, err
	}
	if p.Required, err = u.Store.UserRequires2FA(ctx, s.UserID); err != nil {
		return p, user, st, err
	}
	if p.Enabled = st.Enabled(); p.Enabled {
		p.EnabledAt, p.CodesLeft = *st.EnabledAt, st.RecoveryCodesLeft
	}
	return p, user, st, nil
}

func (u *handlers) twoFactorForm(w http.ResponseWriter, r *http.Request) error {
	p, user, st, err := u.twoFactorState(r)
	if err != nil {
		return err
	}
	p.Next = core.LocalPath(r.URL.Query().Get("next"), "")
	p.Notice = core.DoneNotice(r, twoFactorNotices)
	return u.renderTwoFactor(w, r, http.StatusOK, p, user, st)
}

// renderTwoFactor shows the page; while no second factor is set up it
// shows the key being set up, made (and stored unconfirmed) on the
// first visit and shown again until it is confirmed, so that a reload
// does not change the code under a phone that has scanned it.
func (u *handlers) renderTwoFactor(w http.ResponseWriter, r *http.Request, status int, p twoFactorPage, user db.User, st db.TOTPState) error {
	if p.Local && !p.Enabled && p.Codes == nil {
		key, err := u.enrolmentKey(r, user, st)
		if err != nil {
			return err
		}
		qr, err := auth.QRCodeDataURL(key.URL)
		if err != nil {
			return err
		}
		// The data: URL is the PNG this code just drew.
		p.QR, p.Secret = template.URL(qr), auth.FormatTOTPSecret(key.Secret)
	}
	p.FewCodes = p.Enabled && p.CodesLeft <= fewCodesLeft
	return u.Render(w, r, status, "account_2fa.html", keyTitleAccount2FA, p)
}

// enrolmentKey is the key of the enrolment under way, or a new one,
// stored sealed and unconfirmed.
func (u *handlers) enrolmentKey(r *http.Request, user db.User, st db.TOTPState) (auth.TOTPKey, error) {
	if st.Secret != nil {
		if secret, err := u.openSecret(st.Secret); err == nil {
			return auth.TOTPKeyFor(user.Username, secret)
		}
		// A secret sealed with another key: start again.
	}
	if u.Sealer == nil {
		return auth.TOTPKey{}, errNoSealer
	}
	key, err := auth.NewTOTPKey(user.Username)
	if err != nil {
		return key, err
	}
	err = u.Store.BeginTOTPEnrolment(r.Context(), user.ID, u.Sealer.Seal(key.Secret, auth.TOTPSecretPurpose))
	return key, err
}

// confirmTwoFactor turns the key being set up on with a code of it, and
// shows the recovery codes once. For a session owing the setting up,
// this completes the sign-in: a new session replaces it.
func (u *handlers) confirmTwoFactor(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	ctx := r.Context()
	p, user, st, err := u.twoFactorState(r)
	if err != nil {
		return err
	}
	p.Next = core.LocalPath(r.PostFormValue("next"), "")
	switch {
	case !p.Local:
		return &core.PageError{Status: http.StatusConflict, Message: key2FANotLocal}
	case p.Enabled:
		http.Redirect(w, r, core.PathAccount2FA, http.StatusSeeOther)
		return nil
	case st.Secret == nil:
		// No key shown yet (or reset meanwhile): show one.
		return u.renderTwoFactor(w, r, http.StatusConflict, p, user, st)
	}
	fail := func(key string) error {
		p.Error, p.Field = key, "confirm"
		return u.renderTwoFactor(w, r, http.StatusUnprocessableEntity, p, user, st)
	}
	code := r.PostFormValue("code")
	if auth.NormalizeTOTPCode(code) == "" {
		return fail(key2FAMissing)
	}
	secret, err := u.openSecret(st.Secret)
	if err != nil {
		return err
	}
	now := u.Now()
	step, res, err := auth.CheckTOTP(secret, code, now, 0)
	if err != nil {
		return err
	}
	if res != auth.TOTPOK {
		return fail(key2FAConfirmWrong)
	}
	codes, hashes := auth.NewRecoveryCodes()
	switch err := u.Store.ConfirmTOTP(ctx, s.UserID, step, hashes, now.UTC()); {
	case errors.Is(err, db.ErrTOTPEnabled):
		http.Redirect(w, r, core.PathAccount2FA, http.StatusSeeOther)
		return nil
	case errors.Is(err, db.ErrNoTOTP):
		return u.renderTwoFactor(w, r, http.StatusConflict, p, user, db.TOTPState{})
	case err != nil:
		return err
	}
	p.Enabled, p.EnabledAt, p.CodesLeft, p.Codes = true, now, len(codes), codes
	p.Continue = core.PathAccount2FA
	if p.Forced {
		ws, err := u.FinishPending(w, r)
		if err != nil {
			return err
		}
		u.Audit(r, "user.2fa_enabled", "user", s.UserID, map[string]any{"username": s.Username, "required": true})
		ref := ws.ID[:16]
		uid := s.UserID
		u.AuditEntry(r, db.AuditEntry{
			UserID: &uid, Username: s.Username, SessionID: &ref, Action: "session.login",
			TargetType: "user", TargetID: core.IDString(s.UserID),
			Details: map[string]any{"method": s.Method, "second_factor": secondFactorTOTP},
		})
		p.Continue = afterSignIn(s, p.Next)
	} else {
		u.Audit(r, "user.2fa_enabled", "user", s.UserID, map[string]any{"username": s.Username, "required": p.Required})
	}
	return u.renderTwoFactor(w, r, http.StatusOK, p, user, st)
}

// changeWithCode runs a change of the second factor that a code of it
// must allow (new recovery codes, turning it off): the code is checked
// as at sign-in, locks included, so that a session left open is no way
// to guess it. field names the form on the page.
func (u *handlers) changeWithCode(w http.ResponseWriter, r *http.Request, field string, change func(p *twoFactorPage, user db.User, st db.TOTPState) error) error {
	s := core.SessionOf(r)
	p, user, st, err := u.twoFactorState(r)
	if err != nil {
		return err
	}
	switch {
	case !p.Local:
		return &core.PageError{Status: http.StatusConflict, Message: key2FANotLocal}
	case !p.Enabled:
		http.Redirect(w, r, core.PathAccount2FA, http.StatusSeeOther)
		return nil
	case field == "disable" && p.Required:
		p.Error, p.Field = key2FARequiredStays, field
		return u.renderTwoFactor(w, r, http.StatusConflict, p, user, st)
	}
	now := u.Now()
	c, err := u.checkSecondFactor(r.Context(), s.UserID, r.PostFormValue("code"), now)
	if err != nil {
		return err
	}
	if !c.ok {
		status := http.StatusUnprocessableEntity
		p.Error, p.Field = key2FAWrong, field
		switch {
		case c.reason == reasonMissingCode:
			p.Error = key2FAMissing
		case !c.lockedUntil.IsZero():
			status = http.StatusTooManyRequests
			p.Error, p.Args = u.codeLockMessage(w, now, c.lockedUntil)
		case c.reason == reasonReplayed:
			p.Error = key2FAReplayed
		}
		if c.reason != reasonMissingCode {
			u.Audit(r, "user.2fa_failed", "user", s.UserID, map[string]any{"reason": c.reason, "change": field})
		}
		if st, err = u.Store.TOTPState(r.Context(), s.UserID); err != nil {
			return err
		}
		p.CodesLeft = st.RecoveryCodesLeft
		return u.renderTwoFactor(w, r, status, p, user, st)
	}
	return change(&p, user, st)
}

// regenerateCodes replaces the recovery codes, the old ones void, and
// shows the new ones once.
func (u *handlers) regenerateCodes(w http.ResponseWriter, r *http.Request) error {
	return u.changeWithCode(w, r, "regenerate", func(p *twoFactorPage, user db.User, st db.TOTPState) error {
		s := core.SessionOf(r)
		codes, hashes := auth.NewRecoveryCodes()
		if err := u.Store.ReplaceRecoveryCodes(r.Context(), s.UserID, hashes); err != nil {
			return err
		}
		u.Audit(r, "user.2fa_recovery_regenerated", "user", s.UserID, map[string]any{"username": s.Username})
		p.Codes, p.CodesLeft, p.Continue = codes, len(codes), core.PathAccount2FA
		return u.renderTwoFactor(w, r, http.StatusOK, *p, user, st)
	})
}

// disableTwoFactor turns the second factor off; the user may set up a
// new one at once.
func (u *handlers) disableTwoFactor(w http.ResponseWriter, r *http.Request) error {
	return u.changeWithCode(w, r, "disable", func(*twoFactorPage, db.User, db.TOTPState) error {
		s := core.SessionOf(r)
		if err := u.Store.DisableTOTP(r.Context(), s.UserID); err != nil {
			return err
		}
		u.Audit(r, "user.2fa_disabled", "user", s.UserID, map[string]any{"username": s.Username})
		core.RedirectDone(w, r, core.PathAccount2FA, "disabled")
		return nil
	})
}
