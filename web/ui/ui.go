// Package ui is the web interface: server-rendered pages (html/template,
// embedded with their CSS and JavaScript) and the internal, unversioned
// /api/ that those pages call.
package ui

import (
	"net/http"
	"sync"

	"backupd/app/auth"
	"backupd/web/ui/core"
)

// Session lifetimes: a session ends after IdleTimeout without a request,
// and AbsoluteTimeout after sign-in whatever happens.
const (
	IdleTimeout     = core.IdleTimeout
	AbsoluteTimeout = core.AbsoluteTimeout
)

// Deps are what the web interface uses.
type Deps = core.Deps

// UI is the mounted web interface.
type UI struct {
	*core.UI
	throttle *throttle
	// verifySlots bounds concurrent argon2id checks (19 MiB each): a burst
	// of sign-ins must not exhaust a small machine's memory.
	verifySlots chan struct{}
	// dummyHash is verified against when a username is unknown, so that
	// the answer takes as long as for a known one.
	dummyHash func() string
}

// Mount registers the web interface on mux: the pages from "/", static
// files under /static/, and the internal API under /api/ (beside the
// public /api/v1, which apiv1 mounts).
func Mount(mux *http.ServeMux, deps Deps) *UI {
	u := &UI{
		UI:          core.New(deps),
		throttle:    newThrottle(maxThrottleEntries),
		verifySlots: make(chan struct{}, 4),
		dummyHash: sync.OnceValue(func() string {
			h, _ := auth.HashPassword(auth.RandomPassword())
			return h
		}),
	}

	mux.Handle("GET /static/", u.Static())
	mux.Handle("GET /{$}", u.Page("", u.home))
	mux.Handle("GET /login", u.Public(u.loginForm))
	mux.Handle("POST /login", u.Public(u.login))
	mux.Handle("POST /logout", u.Account(u.logout))
	mux.Handle("GET /account/password", u.Account(u.passwordForm))
	mux.Handle("POST /account/password", u.Account(u.changePassword))
	mux.Handle("POST /lang", u.Public(u.SetLanguage))
	u.MountPage(mux, "GET "+core.PathDashboard, "dashboard.view", u.dashboard)
	u.mountDevices(mux)
	u.mountDeviceDetail(mux)
	u.mountInventory(mux)
	u.mountBackupSettings(mux)
	u.mountNotifications(mux)
	u.mountPlatforms(mux)
	u.mountJobs(mux)
	u.mountSearch(mux)
	u.mountAdmin(mux)
	u.mountCollectors(mux)

	mux.Handle("GET /api/session", u.APIAccount(u.apiSession))
	mux.Handle("DELETE /api/session", u.APIAccount(u.apiLogout))

	// Everything else is an unknown page.
	mux.Handle("/", u.Public(u.NotFound))
	return u
}

// home sends a signed-in user to the first page it may open.
func (u *UI) home(w http.ResponseWriter, r *http.Request) error {
	if path := u.HomePath(core.SessionOf(r)); path != "" {
		http.Redirect(w, r, path, http.StatusSeeOther)
		return nil
	}
	return u.Render(w, r, http.StatusOK, "home.html", keyTitleHome, nil)
}
