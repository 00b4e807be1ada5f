package ui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"backupd/db"
	"backupd/embed"
	"backupd/web"
)

// View is the data of every page template. Page-specific data is in Data.
// Templates translate with {{$.T "key"}} (fmt arguments may follow), and
// read the session through $.Session (nil when nobody is signed in).
type View struct {
	Lang     string
	HTMLLang string
	// Title is the page title's key.
	Title   string
	Session *Session
	// CSRF is the token every form of the page sends as the hidden field
	// "csrf" (and JavaScript as the X-CSRF-Token header, from the
	// csrf-token meta element).
	CSRF string
	// Nav is the navigation the user may see; Current the path of the
	// page's entry.
	Nav     []navGroup
	Current string
	// Here is this page's path and query, where the language switcher
	// comes back to.
	Here      string
	Version   string
	RequestID string
	Data      any

	ui *UI
}

// T is the text of key in the page's language, formatted with args.
func (v *View) T(key string, args ...any) string { return v.ui.catalog.text(v.Lang, key, args...) }

// TArgs is T with the arguments in a slice, for a message a handler
// chose (key and arguments in the page's data).
func (v *View) TArgs(key string, args []any) string { return v.ui.catalog.text(v.Lang, key, args...) }

// Asset is the URL of a static file, with its content hash so that a new
// release is never served from a stale cache.
func (v *View) Asset(name string) string { return v.ui.assets.url(name) }

// Time shows t in the server's time zone, to the minute.
func (v *View) Time(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(v.ui.loc).Format("2006-01-02 15:04")
}

// ISOTime is t for a <time datetime> attribute.
func (v *View) ISOTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Num writes n with thousands separators (20,000).
func (v *View) Num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// LineNo is the 1-based number of the line at index i, for line anchors
// (#L12) that search results link to.
func (v *View) LineNo(i int) int { return i + 1 }

// Can reports whether the signed-in user holds perm.
func (v *View) Can(perm string) bool { return v.Session.Can(perm) }

// render executes page (a file of embed/ui/templates) inside the layout
// and writes it with status. title is the page title's message key.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) error {
	t, ok := u.pages[page]
	if !ok {
		return errors.New("no page template " + page)
	}
	st := stateOf(r)
	v := &View{
		Lang: st.lang, HTMLLang: htmlLang[st.lang], Title: title, Session: st.session,
		CSRF: u.csrfToken(w, r), Here: r.URL.RequestURI(), Version: u.deps.Version,
		RequestID: web.RequestID(r.Context()), Data: data, ui: u,
	}
	if st.session != nil && !st.session.MustChangePassword {
		v.Nav, v.Current = u.navFor(st.session, r.URL.Path)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// pageError is an error page: status and a message key (with arguments).
type pageError struct {
	status  int
	message string
	args    []any
}

func (e *pageError) Error() string { return "page error " + strconv.Itoa(e.status) + ": " + e.message }

// errorPage is the data of error.html.
type errorPage struct {
	Status  int
	Message string
	Args    []any
}

// pageFailed answers a page handler's error, if any: its error page, a
// 403 for a CSRF failure, a 404 for db.ErrNotFound, or a logged 500 that
// shows the request id and never the error itself.
func (u *UI) pageFailed(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		return
	}
	var pe *pageError
	var ce *csrfError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &pe):
	case errors.As(err, &ce):
		u.log.Warn("refused a cross-site or tokenless request", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "reason", ce.reason)
		pe = &pageError{status: http.StatusForbidden, message: keyErrCSRF}
	case errors.As(err, &mbe):
		pe = &pageError{status: http.StatusRequestEntityTooLarge, message: keyErrTooLarge}
	case errors.Is(err, db.ErrNotFound):
		pe = &pageError{status: http.StatusNotFound, message: keyErrNotFound}
	default:
		u.log.Error("page failed", "request_id", web.RequestID(r.Context()), "method", r.Method,
			"path", r.URL.Path, "err", err)
		pe = &pageError{status: http.StatusInternalServerError, message: keyErrInternal}
	}
	title := keyTitleError
	if pe.status == http.StatusNotFound {
		title = keyTitleNotFound
	}
	if rerr := u.render(w, r, pe.status, "error.html", title, errorPage{Status: pe.status, Message: pe.message, Args: pe.args}); rerr != nil {
		u.log.Error("render error page", "request_id", web.RequestID(r.Context()), "err", rerr)
		http.Error(w, http.StatusText(pe.status), pe.status)
	}
}

// localPath returns raw when it is a path on this site (for a redirect
// after sign-in or a language switch), else fallback: never another host,
// not even through "//host" or "/\host".
func localPath(raw, fallback string) string {
	if raw == "" || len(raw) > 2048 || !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") || strings.HasPrefix(raw, "/\\") {
		return fallback
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return fallback
	}
	for _, c := range raw {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return fallback
		}
	}
	return raw
}

// Templates: every page file is parsed with the layout and the shared
// partials and executed as "layout"; it defines "content".
func mustParsePages() map[string]*template.Template {
	pages, err := parsePages()
	if err != nil {
		panic("web/ui: " + err.Error())
	}
	return pages
}

var sharedTemplates = []string{"templates/layout.html", "templates/partials.html"}

func parsePages() (map[string]*template.Template, error) {
	fsys, err := fs.Sub(embed.UI, "ui")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		name := path.Base(f)
		if name == "layout.html" || name == "partials.html" {
			continue
		}
		t, err := template.New(name).ParseFS(fsys, append(sharedTemplates, f)...)
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// assets are the static files, held in memory (they are small), with a
// content hash for each URL. The style sheets under css/ are served as
// one app.css and the scripts under js/ as one app.js, each in file-name
// order, so that every area of the interface keeps its own file and a
// page still loads one of each.
type assets struct {
	files  map[string][]byte
	hashes map[string]string
}

// bundles are the served files made of a folder's files.
var bundles = []struct{ name, dir, ext string }{
	{"app.css", "css", ".css"},
	{"app.js", "js", ".js"},
}

func mustLoadAssets() assets {
	a, err := loadAssets()
	if err != nil {
		panic("web/ui: " + err.Error())
	}
	return a
}

func loadAssets() (assets, error) {
	fsys, err := fs.Sub(embed.UI, "ui/static")
	if err != nil {
		return assets{}, err
	}
	a := assets{files: map[string][]byte{}, hashes: map[string]string{}}
	bundled := map[string]*bytes.Buffer{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		for _, bu := range bundles {
			if path.Dir(p) == bu.dir && path.Ext(p) == bu.ext {
				// WalkDir goes in lexical order: the bundle is in file-name
				// order.
				if bundled[bu.name] == nil {
					bundled[bu.name] = &bytes.Buffer{}
				}
				fmt.Fprintf(bundled[bu.name], "/* %s */\n", p)
				bundled[bu.name].Write(b)
				bundled[bu.name].WriteString("\n")
				return nil
			}
		}
		a.files[p] = b
		return nil
	})
	if err != nil {
		return assets{}, err
	}
	for _, bu := range bundles {
		if bundled[bu.name] == nil {
			return assets{}, errors.New("no files in static/" + bu.dir)
		}
		a.files[bu.name] = bundled[bu.name].Bytes()
	}
	for name, b := range a.files {
		sum := sha256.Sum256(b)
		a.hashes[name] = hex.EncodeToString(sum[:6])
	}
	return a, nil
}

func (a assets) url(name string) string {
	h, ok := a.hashes[name]
	if !ok {
		// A template names a file that does not exist: the page test
		// catches it as a 404 on the URL.
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + h
}

// handler serves the static files, cached for a year (their URLs change
// with their content), no directory listings.
func (a assets) handler() http.Handler {
	start := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		b, ok := a.files[name]
		if !ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("ETag", `"`+a.hashes[name]+`"`)
		http.ServeContent(w, r, name, start, bytes.NewReader(b))
	})
}
