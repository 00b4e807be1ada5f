package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"backupd/db"
)

// mountInventory registers groups (a tree), credentials and templates.
// Every form posts to the server and answers with a redirect and a notice
// (or the form again, with what was typed and what to change), so the
// pages work without JavaScript; the script only adds conveniences.
func (u *UI) mountInventory(mux *http.ServeMux) {
	u.mountPage(mux, "GET /groups", "groups.view", u.groupTree)
	mux.Handle("POST /groups", u.page("groups.create", u.createGroup))
	mux.Handle("GET /groups/{id}", u.page("groups.view", u.groupDetail))
	mux.Handle("POST /groups/{id}/rename", u.page("groups.update", u.renameGroup))
	mux.Handle("POST /groups/{id}/move", u.page("groups.update", u.moveGroup))
	mux.Handle("POST /groups/{id}/order", u.page("groups.update", u.reorderGroup))
	mux.Handle("POST /groups/{id}/delete", u.page("groups.delete", u.deleteGroup))

	u.mountPage(mux, "GET /credentials", "credentials.view", u.credentialList)
	mux.Handle("GET /credentials/new", u.page("credentials.create", u.newCredentialForm))
	mux.Handle("POST /credentials", u.page("credentials.create", u.createCredential))
	mux.Handle("GET /credentials/{id}", u.page("credentials.view", u.credentialDetail))
	mux.Handle("POST /credentials/{id}", u.page("credentials.update", u.updateCredential))
	mux.Handle("POST /credentials/{id}/delete", u.page("credentials.delete", u.deleteCredential))

	u.mountPage(mux, "GET /templates", "templates.view", u.templateList)
	mux.Handle("GET /templates/new", u.page("templates.create", u.newTemplateForm))
	mux.Handle("POST /templates", u.page("templates.create", u.createTemplate))
	mux.Handle("GET /templates/{id}", u.page("templates.view", u.templateDetail))
	mux.Handle("POST /templates/{id}", u.page("templates.update", u.updateTemplate))
	mux.Handle("POST /templates/{id}/delete", u.page("templates.delete", u.deleteTemplate))
}

// Input bounds, the public API's (PRODUCT §3), counted in characters.
const (
	invMaxName     = 128
	invMaxUsername = 128
	invMaxSecret   = 1024
	invMaxKey      = 16384
	invMaxRemarks  = 2000
	invMaxCommands = 65536
	invPageSize    = 50
)

// invPathID is the {id} of the URL; anything but a positive number is a
// page that does not exist.
func invPathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, db.ErrNotFound
	}
	return id, nil
}

// invField is a form field as typed, line endings normalised (browsers
// send a textarea with CRLF), and whether it fits in max characters.
func invField(r *http.Request, name string, max int) (string, bool) {
	v := strings.ReplaceAll(r.PostFormValue(name), "\r\n", "\n")
	return v, utf8.RuneCountInString(v) <= max
}

// invChecked reports whether a checkbox was ticked.
func invChecked(r *http.Request, name string) bool { return r.PostFormValue(name) != "" }

// invNotice is the message key of the ?notice= a redirect carried, if the
// page knows it.
func invNotice(r *http.Request, known map[string]string) string {
	return known[r.URL.Query().Get("notice")]
}

// invRedirect answers a form that did its work: back to a page, with a
// notice for it.
func invRedirect(w http.ResponseWriter, r *http.Request, path, notice string) {
	if notice != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "notice=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// invAudit records a change made through these pages. details name what
// changed, never a secret.
func (u *UI) invAudit(r *http.Request, action, targetType string, id int64, details map[string]any) {
	s := sessionOf(r)
	u.auditEntry(r, db.AuditEntry{
		UserID: &s.UserID, Username: s.Username, SessionID: s.auditRef(), Action: action,
		TargetType: targetType, TargetID: idString(id), Details: details,
	})
}

// invPastEnd sends a request for a page past the end of a list to its
// last page; it reports whether it did.
func invPastEnd(w http.ResponseWriter, r *http.Request, path string, page, n, total int) bool {
	if n > 0 || total == 0 || page == 1 {
		return false
	}
	last := (total + invPageSize - 1) / invPageSize
	http.Redirect(w, r, path+"?page="+strconv.Itoa(last), http.StatusSeeOther)
	return true
}
