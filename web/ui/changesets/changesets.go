// Package changesets is the room of change sets: one snippet of
// configuration, or a template rendered per device, pushed to many
// devices (app/restore's push). The form (GET /change-sets/new) takes
// the name, the body, its variables, the devices (a group and/or names
// one a line) and how many run at once; creating it runs its dry run
// and leads to its page. The list shows the change sets of the user's
// devices, newest first, with a view of those waiting for approval; a
// change set's page shows the body as written (secrets masked unless
// the user may reveal them), the dry run (the lines each device would be
// sent, or why it cannot be), the approve, reject and cancel forms, each device's state while it runs (its script follows
// GET /api/change-sets/{id}), and how each device ended: the error with
// the device's answer, the backups before and after, and the session
// (GET /change-sets/{id}/devices/{target}).
//
// Writing a change set needs configs.push, approving or rejecting one
// configs.approve; the list and a change set's pages need either. A
// change set with any device outside the user's device groups does not
// exist for the user (404). Every refusal (a field, a template that does
// not parse, no or unknown devices, four eyes, a state that moved on) is
// a sentence on the page with what was typed kept, never an error page.
package changesets

import (
	"net/http"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// handlers are the change sets pages.
type handlers struct{ *core.UI }

// Mount registers the change sets pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	// The list and a change set are for those who write change sets and
	// those who approve them (mayView), which one permission cannot say.
	u.MountPage(mux, "GET "+core.PathChangeSets, "", u.list)
	mux.Handle("GET "+core.PathChangeSets+"/new", u.Page(auth.PermPush, u.newForm))
	mux.Handle("POST "+core.PathChangeSets, u.Page(auth.PermPush, u.create))
	mux.Handle("GET /change-sets/{id}", u.Page("", u.setPage))
	mux.Handle("GET /change-sets/{id}/devices/{target}", u.Page("", u.devicePage))
	mux.Handle("POST /change-sets/{id}/dry-run", u.Page(auth.PermPush, u.dryRun))
	mux.Handle("POST /change-sets/{id}/approve", u.Page(auth.PermApprove, u.approve))
	mux.Handle("POST /change-sets/{id}/reject", u.Page(auth.PermApprove, u.reject))
	// The creator may withdraw a change set, an approver any.
	mux.Handle("POST /change-sets/{id}/cancel", u.Page("", u.cancel))
	mux.Handle("GET /api/change-sets/{id}", u.API("", u.apiSet))
}

// maxNoteChars bounds a decision's note, as the store does (and as the
// restores pages do).
const maxNoteChars = 2000

// mayView reports whether s may see change sets.
func mayView(s *core.Session) bool { return s.Can(auth.PermPush) || s.Can(auth.PermApprove) }

// setOf loads the change set of the request's path: a bad id, an
// unknown set and one with any device outside the user's groups are all
// db.ErrNotFound; a user who may not see change sets is forbidden.
func (u *handlers) setOf(r *http.Request) (db.ChangeSet, error) {
	if !mayView(core.SessionOf(r)) {
		return db.ChangeSet{}, core.Forbidden()
	}
	id, err := core.PathID(r)
	if err != nil {
		return db.ChangeSet{}, err
	}
	ctx := r.Context()
	ok, err := u.Store.ChangeSetInScope(ctx, core.SessionOf(r).Scope(), id)
	if err != nil {
		return db.ChangeSet{}, err
	}
	if !ok {
		return db.ChangeSet{}, db.ErrNotFound
	}
	return u.Store.ChangeSet(ctx, id)
}

// mine reports whether the request's user created c.
func mine(r *http.Request, c db.ChangeSet) bool {
	return c.CreatedBy != nil && *c.CreatedBy == core.SessionOf(r).UserID
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
