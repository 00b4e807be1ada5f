package ui

import "net/http"

// mountSearch registers configuration search across the latest or all versions.
func (u *UI) mountSearch(mux *http.ServeMux) {}
