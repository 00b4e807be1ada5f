package ui

import "net/http"

// mountDevices registers the devices list: filters, paging, create / edit / delete, back up now, CSV import and export.
func (u *UI) mountDevices(mux *http.ServeMux) {}
