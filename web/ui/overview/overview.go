// Package overview is the room of what the appliance is doing and has
// done: the dashboard (counts, failures, changes, a month of backups as a
// chart), the jobs page (queued, running and finished backups with live
// progress and cancel, and GET/DELETE /api/jobs for its script), the
// fleet-wide list of configuration changes, and the search through the
// stored configurations.
package overview

import (
	"net/http"

	"backupd/web/ui/core"
)

// handlers are the overview pages.
type handlers struct{ *core.UI }

// Mount registers the overview pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathDashboard, "dashboard.view", u.dashboard)

	u.MountPage(mux, "GET "+core.PathJobs, "backups.view", u.jobs)
	mux.Handle("POST /jobs/{id}/cancel", u.Page("backups.create", u.cancelJob))
	mux.Handle("GET /api/jobs", u.API("backups.view", u.apiJobs))
	mux.Handle("DELETE /api/jobs/{id}", u.API("backups.create", u.apiCancelJob))

	u.MountPage(mux, "GET "+core.PathSearch, "backups.view", u.search)
	u.MountPage(mux, "GET "+core.PathChanges, "backups.view", u.changes)
	mux.Handle("GET /api/changes", u.API("backups.view", u.apiChanges))
}
