package ui

import (
	"net/http"
	"strconv"
)

// mountBackupSettings registers schedules, change-detection rules and
// retention settings: the pages that decide when devices are backed up,
// what counts as a change, and how long versions are kept.
func (u *UI) mountBackupSettings(mux *http.ServeMux) {
	u.mountPage(mux, "GET /schedules", "schedules.view", u.schedules)
	mux.Handle("GET /schedules/new", u.page("schedules.create", u.newScheduleForm))
	mux.Handle("POST /schedules", u.page("schedules.create", u.createSchedule))
	mux.Handle("GET /schedules/{id}", u.page("schedules.view", u.scheduleForm))
	mux.Handle("POST /schedules/{id}", u.page("schedules.update", u.updateSchedule))
	mux.Handle("POST /schedules/{id}/enable", u.page("schedules.update", u.enableSchedule))
	mux.Handle("POST /schedules/{id}/disable", u.page("schedules.update", u.disableSchedule))
	mux.Handle("POST /schedules/{id}/delete", u.page("schedules.delete", u.deleteSchedule))
	mux.Handle("GET /api/schedules/preview", u.api("schedules.view", u.apiSchedulePreview))
	mux.Handle("GET /api/schedules/devices", u.api("schedules.view", u.apiScheduleDevices))

	u.mountPage(mux, "GET /rules", "settings.view", u.rules)
	mux.Handle("POST /rules", u.page("settings.update", u.addRule))
	mux.Handle("POST /rules/try", u.page("settings.view", u.tryRules))
	mux.Handle("GET /rules/{n}", u.page("settings.update", u.ruleForm))
	mux.Handle("POST /rules/{n}", u.page("settings.update", u.updateRule))
	mux.Handle("POST /rules/{n}/delete", u.page("settings.update", u.deleteRule))

	u.mountPage(mux, "GET /settings", "settings.view", u.settings)
	mux.Handle("POST /settings/retention", u.page("settings.update", u.saveRetention))
	mux.Handle("POST /settings/retention/apply", u.page("backups.delete", u.applyRetention))
	mux.Handle("POST /settings/syslog", u.page("settings.update", u.saveSyslogPatterns))
	mux.Handle("POST /settings/git", u.page("settings.update", u.saveGit))
	mux.Handle("POST /settings/outbound", u.page("settings.update", u.saveOutbound))
}

// settingsFieldError is a form field's problem: a message key with its
// arguments, shown beside the field and in the form's summary.
type settingsFieldError struct {
	Field string
	Key   string
	Args  []any
}

// settingsFormErrors collects a form's problems in the order found, and
// by field for the inline messages.
type settingsFormErrors struct {
	List []settingsFieldError
	// ByField holds each field's first problem; a pointer, so that a
	// template's {{with index .ByField "name"}} is false for a good field.
	ByField map[string]*settingsFieldError
}

func (e *settingsFormErrors) add(field, key string, args ...any) {
	fe := settingsFieldError{Field: field, Key: key, Args: args}
	e.List = append(e.List, fe)
	if e.ByField == nil {
		e.ByField = map[string]*settingsFieldError{}
	}
	if _, seen := e.ByField[field]; !seen {
		e.ByField[field] = &fe
	}
}

func (e *settingsFormErrors) has(field string) bool {
	_, ok := e.ByField[field]
	return ok
}

func (e *settingsFormErrors) empty() bool { return len(e.List) == 0 }

// settingsPathID reads a positive integer path value ({id}, {n}); a bad
// one is a page that does not exist.
func settingsPathID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}
