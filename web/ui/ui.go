// Package ui is the web interface: server-rendered pages (html/template,
// embedded with their CSS and JavaScript) and the internal, unversioned
// /api/ that those pages call.
package ui

import (
	"net/http"

	"backupd/web/ui/account"
	"backupd/web/ui/core"
	"backupd/web/ui/devices"
	"backupd/web/ui/inventory"
	"backupd/web/ui/notifications"
	"backupd/web/ui/overview"
	"backupd/web/ui/platforms"
	"backupd/web/ui/schedules"
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
}

// Mount registers the web interface on mux: the pages from "/", static
// files under /static/, and the internal API under /api/ (beside the
// public /api/v1, which apiv1 mounts).
func Mount(mux *http.ServeMux, deps Deps) *UI {
	u := &UI{UI: core.New(deps)}

	mux.Handle("GET /static/", u.Static())
	mux.Handle("POST /lang", u.Public(u.SetLanguage))
	account.Mount(mux, u.UI)
	overview.Mount(mux, u.UI)
	devices.Mount(mux, u.UI)
	inventory.Mount(mux, u.UI)
	schedules.Mount(mux, u.UI)
	notifications.Mount(mux, u.UI)
	platforms.Mount(mux, u.UI)
	u.mountSettings(mux)
	u.mountAdmin(mux)

	// Everything else is an unknown page.
	mux.Handle("/", u.Public(u.NotFound))
	return u
}
