package ui

import (
	"net/http"
)

// mountSettings registers the settings page: retention, syslog, the git
// mirror, outbound connections, and facts about the server.
func (u *UI) mountSettings(mux *http.ServeMux) {
	u.MountPage(mux, "GET /settings", "settings.view", u.settings)
	mux.Handle("POST /settings/retention", u.Page("settings.update", u.saveRetention))
	mux.Handle("POST /settings/retention/apply", u.Page("backups.delete", u.applyRetention))
	mux.Handle("POST /settings/syslog", u.Page("settings.update", u.saveSyslogPatterns))
	mux.Handle("POST /settings/git", u.Page("settings.update", u.saveGit))
	mux.Handle("POST /settings/outbound", u.Page("settings.update", u.saveOutbound))
}
