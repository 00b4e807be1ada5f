// Package inventory is the room of what devices are filed under and
// log in with: the device groups (a tree, on one page), the credentials
// (write-only secrets, sealed as the public API seals them) and the
// command templates. Every form posts to the server and answers with a
// redirect and a notice (or the form again, with what was typed and what
// to change), so the pages work without JavaScript; the script only adds
// conveniences. The devices themselves are web/ui/devices.
package inventory

import (
	"net/http"
	"strconv"

	"backupd/web/ui/core"
)

// handlers are the inventory pages.
type handlers struct{ *core.UI }

// Mount registers groups, credentials and templates on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathGroups, "groups.view", u.groupTree)
	mux.Handle("POST /groups", u.Page("groups.create", u.createGroup))
	mux.Handle("GET /groups/{id}", u.Page("groups.view", u.groupDetail))
	mux.Handle("POST /groups/{id}/rename", u.Page("groups.update", u.renameGroup))
	mux.Handle("POST /groups/{id}/move", u.Page("groups.update", u.moveGroup))
	mux.Handle("POST /groups/{id}/order", u.Page("groups.update", u.reorderGroup))
	mux.Handle("POST /groups/{id}/delete", u.Page("groups.delete", u.deleteGroup))

	u.MountPage(mux, "GET "+core.PathCredentials, "credentials.view", u.credentialList)
	mux.Handle("GET /credentials/new", u.Page("credentials.create", u.newCredentialForm))
	mux.Handle("POST /credentials", u.Page("credentials.create", u.createCredential))
	mux.Handle("GET /credentials/{id}", u.Page("credentials.view", u.credentialDetail))
	mux.Handle("POST /credentials/{id}", u.Page("credentials.update", u.updateCredential))
	mux.Handle("POST /credentials/{id}/delete", u.Page("credentials.delete", u.deleteCredential))

	u.MountPage(mux, "GET "+core.PathTemplates, "templates.view", u.templateList)
	mux.Handle("GET /templates/new", u.Page("templates.create", u.newTemplateForm))
	mux.Handle("POST /templates", u.Page("templates.create", u.createTemplate))
	mux.Handle("GET /templates/{id}", u.Page("templates.view", u.templateDetail))
	mux.Handle("POST /templates/{id}", u.Page("templates.update", u.updateTemplate))
	mux.Handle("POST /templates/{id}/delete", u.Page("templates.delete", u.deleteTemplate))
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
