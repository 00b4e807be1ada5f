// Package ui is the web interface: server-rendered pages (html/template,
// embedded with their CSS and JavaScript) and the internal, unversioned
// /api/ that those pages call. Both authenticate with a server-side
// session cookie — never an API key — and every state-changing request
// carries the session's CSRF token and comes from this origin.
//
// The interface is built as rooms on a shared core. This package only
// mounts them (Mount); each room is a package that registers its own
// pages:
//
//	core           the request wrappers, Render and the View, the session,
//	               CSRF, the language and the i18n catalog, the navigation
//	               and the paths rooms link each other by, forms, pager,
//	               audit; the error page and the language switch
//	account        sign-in (throttled), sign-out, one's own password,
//	               /api/session, and / (the first page one may open)
//	overview       dashboard, jobs (with /api/jobs), configuration search
//	devices        the devices list and forms, back up now, CSV and
//	               router.db imports, CSV export, one device's history,
//	               versions, diffs, host key and address
//	inventory      device groups, credentials, command templates
//	schedules      schedules (with their live preview) and the
//	               change-detection rules
//	notifications  channels (with "Send test") and notification rules
//	platforms      built-in and custom platforms (with "Test against a
//	               device"), collectors and zones
//	restores       restores: the request from a version, the list, one
//	               restore's preview, approval and outcome
//	changesets     change sets (a push to many devices): the form, the
//	               list, one set's dry run, approval and each device's
//	               outcome
//	admin          users, roles, API keys, the audit log, and the settings
//	               page (retention, syslog, git mirror, outbound, restores,
//	               nodes)
//	sso            single sign-on through an OpenID Connect provider:
//	               /login/oidc and its callback
//
// Rooms import core, app/… and db, never each other: a link from one
// room to another's page is a path of core (core.PathJobs,
// core.DevicePath). A rule of the product — which credential a user may
// send where, when a schedule fires next, what a platform test runs —
// lives in app/ and is called from the room; a room reads the form, asks
// the app or the store, and renders.
//
// A page is a handler that returns an error, registered by its room with
// the permission it needs; a page with a sidebar entry (core's
// navigation) is registered with MountPage, which makes its entry appear:
//
//	u.MountPage(mux, "GET "+core.PathDevices, "devices.view", u.devicesList)
//	mux.Handle("POST /devices/{id}/delete", u.Page("devices.delete", u.devicesDelete))
//	mux.Handle("GET /api/jobs", u.API("backups.view", u.apiJobs))
//
// Page signs the user in (or redirects to /login), applies the forced
// password change, checks CSRF on POST/PUT/PATCH/DELETE, then the
// permission, and turns a returned error into an error page
// (db.ErrNotFound → 404, core.Forbidden() → 403, a *core.PageError as it
// says, anything else a logged 500); API does the same with JSON answers
// in the public API's error envelope. Inside, core.SessionOf(r) is the
// caller: Can(perm) for finer checks and Scope() for every device query.
// A handler answers with
//
//	u.Render(w, r, http.StatusOK, "devices.html", keyTitleDevices, data)
//
// where devices.html (embed/ui/templates) defines "content", and the page
// gets a *core.View: {{$.T "key"}} translates, $.CSRF goes into every
// form's hidden "csrf" field (the JavaScript helper backupd.api sends it
// as X-CSRF-Token), $.Can hides what the user may not do. Message keys
// live in embed/i18n/ui/<area>.en.json and <area>.zh.json; keys chosen in
// Go are declared in each room's messages*.go files (core's own and the
// shared ones in core/messages.go). TestTranslationsComplete (in core)
// holds the catalogs to exactly the keys in use, walking web/ui and every
// room below it.
//
// The tests here are black-box: a real server over a real SQLite file,
// driven over HTTP and, in *_browser_test.go, by a headless Chromium.
package ui

import (
	"net/http"

	"backupd/web/ui/account"
	"backupd/web/ui/admin"
	"backupd/web/ui/changesets"
	"backupd/web/ui/core"
	"backupd/web/ui/devices"
	"backupd/web/ui/inventory"
	"backupd/web/ui/notifications"
	"backupd/web/ui/overview"
	"backupd/web/ui/platforms"
	"backupd/web/ui/restores"
	"backupd/web/ui/schedules"
	"backupd/web/ui/sso"
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
	core *core.UI
}

// Mount registers the web interface on mux: the pages from "/", static
// files under /static/, and the internal API under /api/ (beside the
// public /api/v1, which apiv1 mounts).
func Mount(mux *http.ServeMux, deps Deps) *UI {
	c := core.New(deps)
	mux.Handle("GET /static/", c.Static())
	mux.Handle("POST /lang", c.Public(c.SetLanguage))

	account.Mount(mux, c)
	overview.Mount(mux, c)
	devices.Mount(mux, c)
	inventory.Mount(mux, c)
	schedules.Mount(mux, c)
	notifications.Mount(mux, c)
	platforms.Mount(mux, c)
	restores.Mount(mux, c)
	changesets.Mount(mux, c)
	admin.Mount(mux, c)
	sso.Mount(mux, c)

	// Everything else is an unknown page.
	mux.Handle("/", c.Public(c.NotFound))
	return &UI{core: c}
}
