package account

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

// Signing in with a second factor. A right password for a local account
// with a second factor opens a pending session (db.PendingTOTP) that
// reaches only /login/2fa and sign-out, for core.PendingTimeout; a right
// code (or an unused recovery code) replaces it with a complete session
// under a new id. A local account whose role requires a second factor it
// has not set up gets db.PendingEnroll and sets it up first (twofactor.go).
// Directory and provider accounts never get the local second factor:
// their source asks for its own.

// signInStep is the step a right password for user still owes: "" none.
func (u *handlers) signInStep(ctx context.Context, user db.User) (string, error) {
	if user.Source != db.UserLocal {
		return "", nil
	}
	if user.TOTPEnabled {
		return db.PendingTOTP, nil
	}
	required, err := u.Store.UserRequires2FA(ctx, user.ID)
	if err != nil || !required {
		return "", err
	}
	return db.PendingEnroll, nil
}

// stepTarget is the page of step, keeping the page asked for.
func stepTarget(step, next string) string {
	target := core.StepPath(step)
	if next != "" {
		target += "?" + url.Values{"next": {next}}.Encode()
	}
	return target
}

// afterSignIn is where a complete sign-in leads: the forced password
// change first, else the page asked for.
func afterSignIn(s *core.Session, next string) string {
	if s.MustChangePassword {
		return core.PathPassword
	}
	return core.LocalPath(next, "/")
}

// loginCodePage is the data of login_2fa.html.
type loginCodePage struct {
	Username string
	Next     string
	// Error is a message key (with Args).
	Error string
	Args  []any
}

func (u *handlers) loginCodeForm(w http.ResponseWriter, r *http.Request) error {
	p := loginCodePage{Username: core.SessionOf(r).Username, Next: core.LocalPath(r.URL.Query().Get("next"), "")}
	return u.Render(w, r, http.StatusOK, "login_2fa.html", keyTitleLogin2FA, p)
}

// loginCode checks the second factor of a pending sign-in. A locked
// second factor is refused before any code is checked; every refusal
// but an empty form goes to the audit log, never with the code.
func (u *handlers) loginCode(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	ctx := r.Context()
	p := loginCodePage{Username: s.Username, Next: core.LocalPath(r.PostFormValue("next"), "")}
	now := u.Now()
	c, err := u.checkSecondFactor(ctx, s.UserID, r.PostFormValue("code"), now)
	if err != nil {
		return err
	}
	if !c.ok {
		switch c.reason {
		case reasonMissingCode:
			p.Error = key2FAMissing
			return u.Render(w, r, http.StatusUnprocessableEntity, "login_2fa.html", keyTitleLogin2FA, p)
		case reasonNotEnabled:
			// The second factor was reset since the password was right:
			// sign in again, which sets it up if it must be.
			if err := u.EndSession(w, r); err != nil {
				return err
			}
			http.Redirect(w, r, core.PathLogin+"?ended=1", http.StatusSeeOther)
			return nil
		}
		uid := s.UserID
		u.AuditEntry(r, db.AuditEntry{
			UserID: &uid, Username: s.Username, SessionID: s.AuditRef(), Action: "session.login_failed",
			TargetType: "user", TargetID: core.IDString(s.UserID),
			Details: map[string]any{"method": s.Method, "reason": c.reason},
		})
		if !c.lockedUntil.IsZero() {
			if c.reason != reasonLocked {
				u.Log.Warn("second factor locked after failures", "request_id", web.RequestID(ctx),
					"user_id", s.UserID, "remote", core.ClientIP(r), "until", c.lockedUntil.UTC().Format(time.RFC3339))
			}
			p.Error, p.Args = u.codeLockMessage(w, now, c.lockedUntil)
			return u.Render(w, r, http.StatusTooManyRequests, "login_2fa.html", keyTitleLogin2FA, p)
		}
		p.Error = key2FAWrong
		if c.reason == reasonReplayed {
			p.Error = key2FAReplayed
		}
		return u.Render(w, r, http.StatusUnauthorized, "login_2fa.html", keyTitleLogin2FA, p)
	}
	ws, err := u.FinishPending(w, r)
	if err != nil {
		return err
	}
	ref := ws.ID[:16]
	uid := s.UserID
	u.AuditEntry(r, db.AuditEntry{
		UserID: &uid, Username: s.Username, SessionID: &ref, Action: "session.login",
		TargetType: "user", TargetID: core.IDString(s.UserID),
		Details: map[string]any{"method": s.Method, "second_factor": c.kind},
	})
	http.Redirect(w, r, afterSignIn(s, p.Next), http.StatusSeeOther)
	return nil
}

// Why a second-factor code was refused (the audit entry's "reason").
const (
	reasonMissingCode   = "missing_code"
	reasonNotEnabled    = "not_enabled"
	reasonLocked        = "locked"
	reasonWrongCode     = "wrong_code"
	reasonReplayed      = "replayed_code"
	reasonWrongRecovery = "wrong_recovery_code"
)

// What proved a second factor (the audit entry's "second_factor").
const (
	secondFactorTOTP     = "totp"
	secondFactorRecovery = "recovery_code"
)

// maxSecondFactorCodeLen bounds what is read as a code; anything longer
// is wrong unread.
const maxSecondFactorCodeLen = 64

// factorCheck is what checkSecondFactor made of a code.
type factorCheck struct {
	ok bool
	// kind is what proved it: secondFactorTOTP or secondFactorRecovery.
	kind string
	// reason says why a refused code was refused.
	reason string
	// lockedUntil is set when the second factor is locked: before this
	// code (reasonLocked, nothing checked) or by this failure.
	lockedUntil time.Time
}

// checkSecondFactor checks a code of the user's second factor: a TOTP
// code, good once (its step must be after the last accepted one), or an
// unused recovery code, spent by it. While the second factor is locked
// nothing is checked; a wrong code counts towards the lock
// (auth.TOTPMaxFailures, auth.TOTPLockout). The same rules hold on the
// sign-in page and for the account page's changes.
func (u *handlers) checkSecondFactor(ctx context.Context, userID int64, code string, now time.Time) (factorCheck, error) {
	st, err := u.Store.TOTPState(ctx, userID)
	if err != nil {
		return factorCheck{}, err
	}
	switch {
	case !st.Enabled():
		return factorCheck{reason: reasonNotEnabled}, nil
	case st.Locked(now):
		return factorCheck{reason: reasonLocked, lockedUntil: st.LockedUntil}, nil
	case auth.NormalizeTOTPCode(code) == "":
		return factorCheck{reason: reasonMissingCode}, nil
	}
	c := factorCheck{reason: reasonWrongCode}
	switch {
	case len(code) > maxSecondFactorCodeLen:
	case auth.LooksLikeTOTPCode(auth.NormalizeTOTPCode(code)):
		secret, err := u.openSecret(st.Secret)
		if err != nil {
			return c, err
		}
		step, res, err := auth.CheckTOTP(secret, code, now, st.LastStep)
		if err != nil {
			return c, err
		}
		switch res {
		case auth.TOTPOK:
			// Of two requests with one code, one wins the step.
			ok, err := u.Store.AcceptTOTPStep(ctx, userID, step)
			if err != nil {
				return c, err
			}
			if ok {
				return factorCheck{ok: true, kind: secondFactorTOTP}, nil
			}
			c.reason = reasonReplayed
		case auth.TOTPReplayed:
			c.reason = reasonReplayed
		}
	case auth.LooksLikeRecoveryCode(code):
		ok, err := u.Store.UseRecoveryCode(ctx, userID, auth.HashRecoveryCode(code), now.UTC())
		if err != nil {
			return c, err
		}
		if ok {
			return factorCheck{ok: true, kind: secondFactorRecovery}, nil
		}
		c.reason = reasonWrongRecovery
	}
	c.lockedUntil, err = u.Store.RecordTOTPFailure(ctx, userID, now.UTC(), auth.TOTPMaxFailures, auth.TOTPLockout)
	return c, err
}

// codeLockMessage is lockMessage (Retry-After, and when to try again)
// in the words of a locked second factor.
func (u *handlers) codeLockMessage(w http.ResponseWriter, now, until time.Time) (string, []any) {
	key, args := u.lockMessage(w, now, until)
	if key == keyLoginLockedSec {
		return key2FALockedSec, args
	}
	return key2FALockedMin, args
}

// openSecret unseals a stored second-factor secret.
func (u *handlers) openSecret(sealed []byte) (string, error) {
	if u.Sealer == nil {
		return "", errNoSealer
	}
	return u.Sealer.Open(sealed, auth.TOTPSecretPurpose)
}
