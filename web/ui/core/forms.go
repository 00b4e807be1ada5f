package core

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/db"
	"backupd/web"
)

// Input bounds every room applies alike.
const (
	// MaxUsernameBytes and MaxPasswordBytes bound the sign-in and
	// password forms.
	MaxUsernameBytes = 128
	MaxPasswordBytes = 4096
	// MaxNameChars bounds a name typed into an administration form (a
	// role, an API key, a zone), as the public API does.
	MaxNameChars = 128
)

// FieldError is a form field's problem: a message key with its
// arguments, shown beside the field and in the form's summary.
type FieldError struct {
	Field string
	Key   string
	Args  []any
}

// FormErrors collects a form's problems in the order found, and by field
// for the inline messages.
type FormErrors struct {
	List []FieldError
	// ByField holds each field's first problem; a pointer, so that a
	// template's {{with index .ByField "name"}} is false for a good field.
	ByField map[string]*FieldError
}

// Add records a problem of field: the message key and its arguments.
func (e *FormErrors) Add(field, key string, args ...any) {
	fe := FieldError{Field: field, Key: key, Args: args}
	e.List = append(e.List, fe)
	if e.ByField == nil {
		e.ByField = map[string]*FieldError{}
	}
	if _, seen := e.ByField[field]; !seen {
		e.ByField[field] = &fe
	}
}

// Has reports whether field has a problem.
func (e *FormErrors) Has(field string) bool {
	_, ok := e.ByField[field]
	return ok
}

// Empty reports whether the form has no problem.
func (e *FormErrors) Empty() bool { return len(e.List) == 0 }

// Field is a form field as typed, line endings normalised (browsers send
// a textarea with CRLF), and whether it fits in max characters.
func Field(r *http.Request, name string, max int) (string, bool) {
	v := strings.ReplaceAll(r.PostFormValue(name), "\r\n", "\n")
	return v, utf8.RuneCountInString(v) <= max
}

// Checked reports whether a checkbox was ticked.
func Checked(r *http.Request, name string) bool { return r.PostFormValue(name) != "" }

// PathID reads the {id} of a path; anything but a positive number is a
// page that does not exist (db.ErrNotFound).
func PathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, db.ErrNotFound
	}
	return id, nil
}

// PathInt reads a positive integer path value ({id}, {n}); ok is false
// for a bad one, a page that does not exist.
func PathInt(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

// FormIDs reads a repeated form field of ids, duplicates dropped; ok is
// false when one is not a positive number.
func FormIDs(r *http.Request, field string) (ids []int64, ok bool) {
	for _, v := range r.PostForm[field] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return nil, false
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, true
}

// After a change, a form answers with a redirect whose query names what
// was done, and the page it lands on turns that into a notice. The
// administration pages say it as done=…, the others as notice=….

// RedirectDone answers a change with a redirect to target carrying
// done=code.
func RedirectDone(w http.ResponseWriter, r *http.Request, target, code string) {
	http.Redirect(w, r, withParam(target, "done", code), http.StatusSeeOther)
}

// DoneNotice turns the "done" query parameter into a message key of
// known, "" when there is none or it is unknown.
func DoneNotice(r *http.Request, known map[string]string) string {
	return known[r.URL.Query().Get("done")]
}

// RedirectNotice answers a form that did its work: back to path, with
// notice=code when code is set.
func RedirectNotice(w http.ResponseWriter, r *http.Request, path, code string) {
	if code != "" {
		path = withParam(path, "notice", code)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// Notice is the message key of the ?notice= a redirect carried, if the
// page knows it.
func Notice(r *http.Request, known map[string]string) string {
	return known[r.URL.Query().Get("notice")]
}

func withParam(target, name, value string) string {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + name + "=" + url.QueryEscape(value)
}

// LocalPath returns raw when it is a path on this site (for a redirect
// after sign-in or a language switch), else fallback: never another host,
// not even through "//host" or "/\host".
func LocalPath(raw, fallback string) string {
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

// ClientIP is the address of the peer (no forwarding header is trusted).
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Origin is the scheme and host the request came to.
func Origin(r *http.Request) string {
	scheme := "http"
	if web.IsHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// Truncate cuts s to at most n bytes without splitting a character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// NameLength is the length of a name as people count it.
func NameLength(s string) int { return len([]rune(s)) }
