// Package core is what every room of the web interface stands on: the
// request wrappers (Page, API, Public, Account) that load the session,
// check CSRF and the permission and turn a returned error into an error
// page or the API's envelope; Render and the View every template gets;
// the session, the CSRF token and the language; the i18n catalog; the
// navigation and the paths rooms link each other by; form, pager and
// audit helpers. It holds no page of its own but the error page and the
// language switch.
//
// A room (web/ui/devices, web/ui/admin, …) keeps a *UI and registers its
// pages on it; rooms never import each other, only core, app and db.
package core

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"backupd/app/backup"
	"backupd/app/redact"
	"backupd/app/restore"
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
	// Restores takes restore requests and decisions (with Engine for
	// the backups they take); nil when the process backs nothing up, and
	// the restore pages then say that restores do not run here.
	Restores *restore.Service
	Log      *slog.Logger
	// Location is the time zone times are shown in and days are cut in.
	Location *time.Location
	Version  string
	// Now is the clock; nil means time.Now. Tests move it to expire
	// sessions and login locks.
	Now func() time.Time
}

// UI is the shared core of the mounted interface. Its Deps are filled
// in: Log, Location and Now are never nil.
type UI struct {
	Deps
	catalog catalog
	pages   map[string]*template.Template
	assets  assets
	// mounted holds the paths of the pages this build serves, so the
	// navigation shows only those.
	mounted map[string]bool
	// keys masks the secrets of configurations pages show.
	keys *redact.Keyring
}

// New loads the catalogs, templates and static files (all embedded; a
// broken one is a programming error and panics) and fills in the
// defaults of deps.
func New(deps Deps) *UI {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Location == nil {
		deps.Location = time.Local
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &UI{
		Deps:    deps,
		catalog: mustLoadCatalog(),
		pages:   mustParsePages(),
		assets:  mustLoadAssets(),
		mounted: map[string]bool{},
		keys:    redact.NewKeyring(deps.Sealer),
	}
}

// Text is key's text in lang, formatted with args: for texts a handler
// writes itself (JSON for a page's script, lists it joins).
func (u *UI) Text(lang, key string, args ...any) string { return u.catalog.text(lang, key, args...) }

// Static serves the static files under /static/.
func (u *UI) Static() http.Handler { return u.assets.handler() }

// NotFound is the page of every path no room serves.
func (u *UI) NotFound(w http.ResponseWriter, r *http.Request) error {
	return &PageError{Status: http.StatusNotFound, Message: keyErrNotFound}
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

// LangOf is the language of the request's pages ("en", "zh").
func LangOf(r *http.Request) string { return stateOf(r).lang }

// SessionEnded reports whether the request carried a session that has
// ended (expired, signed out elsewhere, user disabled).
func SessionEnded(r *http.Request) bool { return stateOf(r).ended }
