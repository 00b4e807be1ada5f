// Package ui is the web interface: server-rendered pages (html/template,
// embedded with their CSS and JavaScript) and the internal, unversioned
// /api/ that those pages call. Both authenticate with a server-side
// session cookie — never an API key — and every state-changing request
// carries the session's CSRF token and comes from this origin.
//
// A page is a handler that returns an error, registered in Mount with the
// permission it needs; a page with a sidebar entry (see navigation) is
// registered with mountPage, which makes its entry appear:
//
//	u.mountPage(mux, "GET /devices", "devices.view", u.devices)
//	mux.Handle("POST /devices/{id}/delete", u.page("devices.delete", u.deleteDevice))
//	mux.Handle("GET /api/jobs", u.api("backups.view", u.apiJobs))
//
// page signs the user in (or redirects to /login), applies the forced
// password change, checks CSRF on POST/PUT/PATCH/DELETE, then the
// permission, and turns a returned error into an error page
// (db.ErrNotFound → 404, forbidden() → 403, anything else a logged 500);
// api does the same with JSON answers in the public API's error envelope.
// Inside, sessionOf(r) is the caller: Can(perm) for finer checks and
// Scope() for every device query. A handler answers with
//
//	u.render(w, r, http.StatusOK, "devices.html", keyTitleDevices, data)
//
// where devices.html (embed/ui/templates) defines "content", and the page
// gets a *View: {{$.T "key"}} translates, $.CSRF goes into every form's
// hidden "csrf" field (the JavaScript helper backupd.api sends it as
// X-CSRF-Token), $.Can hides what the user may not do. Message keys live
// in embed/i18n/ui/<area>.en.json and <area>.zh.json; keys chosen in Go
// are declared in the messages*.go files. TestTranslationsComplete holds
// the catalogs to exactly the keys in use.
package ui

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/app/secret"
	"backupd/db"
)

// Session lifetimes: a session ends after IdleTimeout without a request,
// and AbsoluteTimeout after sign-in whatever happens.
const (
	IdleTimeout     = 12 * time.Hour
	AbsoluteTimeout = 7 * 24 * time.Hour
)

// Deps are what the web interface uses.
type Deps struct {
	Store *db.Store
	// Sealer encrypts the credential secrets the credentials page stores.
	Sealer *secret.Sealer
	// Engine runs the backups "Back up now" asks for and cancels jobs; nil
	// when the process backs nothing up, and the buttons then answer that
	// backups are not running here.
	Engine *backup.Engine
	// Syslog is the running syslog listener (serve --syslog-listen), whose
	// state the settings page shows and to which saved patterns apply at
	// once; nil when none runs.
	Syslog *backup.SyslogTrigger
	Log    *slog.Logger
	// Location is the time zone times are shown in and days are cut in.
	Location *time.Location
	Version  string
	// Now is the clock; nil means time.Now. Tests move it to expire
	// sessions and login locks.
	Now func() time.Time
}

// UI is the mounted web interface.
type UI struct {
	deps     Deps
	log      *slog.Logger
	loc      *time.Location
	now      func() time.Time
	catalog  catalog
	pages    map[string]*template.Template
	assets   assets
	throttle *throttle
	// verifySlots bounds concurrent argon2id checks (19 MiB each): a burst
	// of sign-ins must not exhaust a small machine's memory.
	verifySlots chan struct{}
	// dummyHash is verified against when a username is unknown, so that
	// the answer takes as long as for a known one.
	dummyHash func() string
	// mounted holds the paths of the pages this build serves, so the
	// navigation shows only those.
	mounted map[string]bool
}

// Mount registers the web interface on mux: the pages from "/", static
// files under /static/, and the internal API under /api/ (beside the
// public /api/v1, which apiv1 mounts).
func Mount(mux *http.ServeMux, deps Deps) *UI {
	u := &UI{
		deps:        deps,
		log:         deps.Log,
		loc:         deps.Location,
		now:         deps.Now,
		catalog:     mustLoadCatalog(),
		assets:      mustLoadAssets(),
		throttle:    newThrottle(maxThrottleEntries),
		verifySlots: make(chan struct{}, 4),
		mounted:     map[string]bool{},
		dummyHash: sync.OnceValue(func() string {
			h, _ := auth.HashPassword(auth.RandomPassword())
			return h
		}),
	}
	if u.log == nil {
		u.log = slog.Default()
	}
	if u.loc == nil {
		u.loc = time.Local
	}
	if u.now == nil {
		u.now = time.Now
	}
	u.pages = mustParsePages()

	mux.Handle("GET /static/", u.assets.handler())
	mux.Handle("GET /{$}", u.page("", u.home))
	mux.Handle("GET /login", u.public(u.loginForm))
	mux.Handle("POST /login", u.public(u.login))
	mux.Handle("POST /logout", u.account(u.logout))
	mux.Handle("GET /account/password", u.account(u.passwordForm))
	mux.Handle("POST /account/password", u.account(u.changePassword))
	mux.Handle("POST /lang", u.public(u.setLanguage))
	u.mountPage(mux, "GET "+pathDashboard, "dashboard.view", u.dashboard)
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

	mux.Handle("GET /api/session", u.apiAccount(u.apiSession))
	mux.Handle("DELETE /api/session", u.apiAccount(u.apiLogout))

	// Everything else is an unknown page.
	mux.Handle("/", u.public(u.notFound))
	return u
}

// mountPage registers a page that has an entry in the navigation; the
// entry shows from then on (to users holding perm).
func (u *UI) mountPage(mux *http.ServeMux, pattern, perm string, h handler) {
	_, path, _ := strings.Cut(pattern, " ")
	u.mounted[path] = true
	mux.Handle(pattern, u.page(perm, h))
}

// home sends a signed-in user to the first page it may open.
func (u *UI) home(w http.ResponseWriter, r *http.Request) error {
	s := sessionOf(r)
	for _, g := range navigation {
		for _, it := range g.items {
			if u.mounted[it.path] && s.Can(it.perm) {
				http.Redirect(w, r, it.path, http.StatusSeeOther)
				return nil
			}
		}
	}
	return u.render(w, r, http.StatusOK, "home.html", keyTitleHome, nil)
}

func (u *UI) notFound(w http.ResponseWriter, r *http.Request) error {
	return &pageError{status: http.StatusNotFound, message: keyErrNotFound}
}

// context helpers

type ctxKey int

const stateKey ctxKey = iota

// state is what the middleware learns about a request: its language, its
// session (nil when nobody is signed in) and the sign-in form's CSRF
// token.
type state struct {
	lang    string
	session *Session
	// preCSRF is the token of forms shown before sign-in (login,
	// language), kept in a cookie; set once created or read.
	preCSRF string
	// ended is set when the request carried a session that has ended.
	ended bool
}

func stateOf(r *http.Request) *state {
	if st, ok := r.Context().Value(stateKey).(*state); ok {
		return st
	}
	return &state{lang: defaultLang}
}

func withState(r *http.Request, st *state) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), stateKey, st))
}
