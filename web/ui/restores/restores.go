// Package restores is the room of restores: putting a stored version
// back on its device (app/restore). A request comes from a version's
// page (POST /restores, with an optional reason); the list shows the
// restores of the user's devices, newest first, with a view of those
// waiting for approval; a restore's page shows the preview (the diff from
// the device's configuration now to the version, noise marked, secrets
// masked unless the user may reveal them), the approve, reject and cancel
// forms, the stage while it runs (its script follows GET
// /api/restores/{id}), and how it ended: verified or rolled back, the
// error, the backups it took and the session's transcript.
//
// Asking for a restore needs configs.restore, deciding one
// configs.approve; the list and a restore's page need either. A restore
// of a device outside the user's device groups does not exist for the
// user (404). Every refusal of app/restore or the store (four eyes, an
// expired request, a preview that changed, an open restore, a platform
// that cannot restore…) is a sentence on the page, never an error page.
package restores

import (
	"net/http"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// handlers are the restores pages.
type handlers struct{ *core.UI }

// Mount registers the restores pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	// The list and a restore are for those who ask for restores and
	// those who decide them (mayView), which one permission cannot say.
	u.MountPage(mux, "GET "+core.PathRestores, "", u.list)
	mux.Handle("POST "+core.PathRestores, u.Page(auth.PermRestore, u.request))
	mux.Handle("GET /restores/{id}", u.Page("", u.restorePage))
	mux.Handle("POST /restores/{id}/approve", u.Page(auth.PermApprove, u.approve))
	mux.Handle("POST /restores/{id}/reject", u.Page(auth.PermApprove, u.reject))
	// The requester may withdraw a request, an approver any.
	mux.Handle("POST /restores/{id}/cancel", u.Page("", u.cancel))
	mux.Handle("GET /api/restores/{id}", u.API("", u.apiRestore))
}

// maxNoteChars bounds a reason and a decision's note, as the store does.
const maxNoteChars = 2000

// mayView reports whether s may see restores.
func mayView(s *core.Session) bool { return s.Can(auth.PermRestore) || s.Can(auth.PermApprove) }

// restoreOf loads the restore of the request's path and its device: a
// bad id, an unknown restore and one of a device outside the user's
// groups are all db.ErrNotFound; a user who may not see restores is
// forbidden.
func (u *handlers) restoreOf(r *http.Request) (db.Restore, db.Device, error) {
	if !mayView(core.SessionOf(r)) {
		return db.Restore{}, db.Device{}, core.Forbidden()
	}
	id, err := core.PathID(r)
	if err != nil {
		return db.Restore{}, db.Device{}, err
	}
	ctx := r.Context()
	rs, err := u.Store.Restore(ctx, id)
	if err != nil {
		return rs, db.Device{}, err
	}
	d, err := u.deviceInScope(r, rs.DeviceID)
	return rs, d, err
}

// deviceInScope loads a device of the user's groups; any other is
// db.ErrNotFound.
func (u *handlers) deviceInScope(r *http.Request, id int64) (db.Device, error) {
	d, err := u.Store.GetDevice(r.Context(), id)
	if err != nil {
		return d, err
	}
	ok, err := u.Store.DeviceInScope(r.Context(), core.SessionOf(r).Scope(), d)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, db.ErrNotFound
	}
	return d, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
