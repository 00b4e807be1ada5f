// Package account is the room of the signed-in person's own business:
// signing in (throttled per username, address and both, see throttle.go),
// with a second factor for local accounts that have one or whose role
// requires one (twofactor_login.go), signing out, changing one's own
// password (also the forced change after an initial or reset password),
// one's own second factor (twofactor.go), GET/DELETE /api/session for
// the pages' script, and / itself, which sends a user to the first page
// it may open.
package account

import (
	"net/http"
	"sync"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// handlers are the account pages, with the sign-in throttle they share.
type handlers struct {
	*core.UI
	throttle *throttle
	// verifySlots bounds concurrent argon2id checks (19 MiB each): a burst
	// of sign-ins must not exhaust a small machine's memory.
	verifySlots chan struct{}
	// dummyHash is verified against when a username is unknown, so that
	// the answer takes as long as for a known one.
	dummyHash func() string
}

// Mount registers the account pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{
		UI:          c,
		throttle:    newThrottle(maxThrottleEntries),
		verifySlots: make(chan struct{}, 4),
		dummyHash: sync.OnceValue(func() string {
			h, _ := auth.HashPassword(auth.RandomPassword())
			return h
		}),
	}
	mux.Handle("GET /{$}", u.Page("", u.home))
	mux.Handle("GET "+core.PathLogin, u.Public(u.loginForm))
	mux.Handle("POST "+core.PathLogin, u.Public(u.login))
	mux.Handle("POST /logout", u.SignOut(u.logout))
	mux.Handle("GET "+core.PathPassword, u.Account(u.passwordForm))
	mux.Handle("POST "+core.PathPassword, u.Account(u.changePassword))
	mux.Handle("GET "+core.PathLogin2FA, u.Step(db.PendingTOTP, u.loginCodeForm))
	mux.Handle("POST "+core.PathLogin2FA, u.Step(db.PendingTOTP, u.loginCode))
	mux.Handle("GET "+core.PathAccount2FA, u.AccountOrStep(db.PendingEnroll, u.twoFactorForm))
	mux.Handle("POST "+core.PathAccount2FA+"/confirm", u.AccountOrStep(db.PendingEnroll, u.confirmTwoFactor))
	mux.Handle("POST "+core.PathAccount2FA+"/recovery-codes", u.Page("", u.regenerateCodes))
	mux.Handle("POST "+core.PathAccount2FA+"/disable", u.Page("", u.disableTwoFactor))
	mux.Handle("GET /api/session", u.APIAccount(u.apiSession))
	mux.Handle("DELETE /api/session", u.APIAccount(u.apiLogout))
}

// home sends a signed-in user to the first page it may open.
func (u *handlers) home(w http.ResponseWriter, r *http.Request) error {
	if path := u.HomePath(core.SessionOf(r)); path != "" {
		http.Redirect(w, r, path, http.StatusSeeOther)
		return nil
	}
	return u.Render(w, r, http.StatusOK, "home.html", keyTitleHome, nil)
}
