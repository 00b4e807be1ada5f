package core

import (
	"bytes"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"backupd/app/auth"
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
func (v *View) Time(t time.Time) string { return v.ui.TimeText(t) }

// ISOTime is t for a <time datetime> attribute.
func (v *View) ISOTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Num writes n with thousands separators (20,000).
func (v *View) Num(n int) string { return FormatNum(n) }

// FormatNum writes n with thousands separators (20,000), as $.Num does.
func FormatNum(n int) string {
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

// RoleName is a role's name as the page's language says it: the
// built-in roles' names are translated (stored, they are English, and
// no custom role may take them); a custom role's is as typed.
func (v *View) RoleName(name string) string {
	if key, ok := builtinRoleNames[name]; ok {
		return v.T(key)
	}
	return name
}

// builtinRoleNames are the built-in roles' names' message keys.
var builtinRoleNames = map[string]string{
	auth.RoleAdministrator: keyRoleAdministrator,
	auth.RoleOperator:      keyRoleOperator,
	auth.RoleViewer:        keyRoleViewer,
	auth.RoleBackupReader:  keyRoleBackupReader,
}

// Render executes page (a file of embed/ui/templates) inside the layout
// and writes it with status. title is the page title's message key; the
// template reaches data as $.Data.
func (u *UI) Render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) error {
	t, ok := u.pages[page]
	if !ok {
		return errors.New("no page template " + page)
	}
	st := stateOf(r)
	// A session still owing a step of signing in has not signed in as
	// far as the page's frame goes (no menu, no navigation); its forms
	// carry its CSRF token all the same.
	shown := st.session
	if shown != nil && shown.Pending != "" {
		shown = nil
	}
	v := &View{
		Lang: st.lang, HTMLLang: htmlLang[st.lang], Title: title, Session: shown,
		CSRF: u.csrfToken(w, r), Here: r.URL.RequestURI(), Version: u.Version,
		RequestID: web.RequestID(r.Context()), Data: data, ui: u,
	}
	if shown != nil && !shown.MustChangePassword {
		v.Nav, v.Current = u.navFor(shown, r.URL.Path)
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

// PartView is what a partial given more than the page's data runs on: the
// page's view, for its texts and permissions, and Part, the partial's
// own data.
type PartView struct {
	*View
	Part any
}

// With hands part to a partial along with the page's view:
//
//	{{template "diff-gap" $.With .Gap}}
func (v *View) With(part any) PartView { return PartView{View: v, Part: part} }
