package ui

import (
	"net/http"
)

// mountBackupSettings registers schedules, change-detection rules and
// retention settings: the pages that decide when devices are backed up,
// what counts as a change, and how long versions are kept.
func (u *UI) mountBackupSettings(mux *http.ServeMux) {
	u.MountPage(mux, "GET /schedules", "schedules.view", u.schedules)
	mux.Handle("GET /schedules/new", u.Page("schedules.create", u.newScheduleForm))
	mux.Handle("POST /schedules", u.Page("schedules.create", u.createSchedule))
	mux.Handle("GET /schedules/{id}", u.Page("schedules.view", u.scheduleForm))
	mux.Handle("POST /schedules/{id}", u.Page("schedules.update", u.updateSchedule))
	mux.Handle("POST /schedules/{id}/enable", u.Page("schedules.update", u.enableSchedule))
	mux.Handle("POST /schedules/{id}/disable", u.Page("schedules.update", u.disableSchedule))
	mux.Handle("POST /schedules/{id}/delete", u.Page("schedules.delete", u.deleteSchedule))
	mux.Handle("GET /api/schedules/preview", u.API("schedules.view", u.apiSchedulePreview))
	mux.Handle("GET /api/schedules/devices", u.API("schedules.view", u.apiScheduleDevices))

	u.MountPage(mux, "GET /rules", "settings.view", u.rules)
	mux.Handle("POST /rules", u.Page("settings.update", u.addRule))
	mux.Handle("POST /rules/try", u.Page("settings.view", u.tryRules))
	mux.Handle("GET /rules/{n}", u.Page("settings.update", u.ruleForm))
	mux.Handle("POST /rules/{n}", u.Page("settings.update", u.updateRule))
	mux.Handle("POST /rules/{n}/delete", u.Page("settings.update", u.deleteRule))

	u.MountPage(mux, "GET /settings", "settings.view", u.settings)
	mux.Handle("POST /settings/retention", u.Page("settings.update", u.saveRetention))
	mux.Handle("POST /settings/retention/apply", u.Page("backups.delete", u.applyRetention))
	mux.Handle("POST /settings/syslog", u.Page("settings.update", u.saveSyslogPatterns))
	mux.Handle("POST /settings/git", u.Page("settings.update", u.saveGit))
	mux.Handle("POST /settings/outbound", u.Page("settings.update", u.saveOutbound))
}
