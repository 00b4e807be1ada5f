package ui

import "net/http"

// mountDeviceDetail registers one device: its history, versions, diffs and host key.
func (u *UI) mountDeviceDetail(mux *http.ServeMux) {}
