// Package schedules is the room of when devices are backed up and what
// counts as a change: the schedules (cron expressions in their own time
// zones, targeting all devices, groups or named devices, with a live
// preview of the next runs) and the change-detection rules (the
// platforms' built-in noise rules, the user's own, and "try it" on a
// sample). The rules of both live in app/backup (ValidateSchedule,
// CreateSchedule, UpdateSchedule, ChangeNoiseRules); these pages read and
// show them.
package schedules

import (
	"net/http"
	"strings"
	"time"

	"backupd/db"
	"backupd/web/ui/core"
)

// handlers are the schedules and rules pages.
type handlers struct{ *core.UI }

// Mount registers the schedules and rules pages on mux.
func Mount(mux *http.ServeMux, c *core.UI) {
	u := &handlers{c}
	u.MountPage(mux, "GET "+core.PathSchedules, "schedules.view", u.schedules)
	mux.Handle("GET /schedules/new", u.Page("schedules.create", u.newScheduleForm))
	mux.Handle("POST /schedules", u.Page("schedules.create", u.createSchedule))
	mux.Handle("GET /schedules/{id}", u.Page("schedules.view", u.scheduleForm))
	mux.Handle("POST /schedules/{id}", u.Page("schedules.update", u.updateSchedule))
	mux.Handle("POST /schedules/{id}/enable", u.Page("schedules.update", u.enableSchedule))
	mux.Handle("POST /schedules/{id}/disable", u.Page("schedules.update", u.disableSchedule))
	mux.Handle("POST /schedules/{id}/delete", u.Page("schedules.delete", u.deleteSchedule))
	mux.Handle("GET /api/schedules/preview", u.API("schedules.view", u.apiSchedulePreview))
	mux.Handle("GET /api/schedules/devices", u.API("schedules.view", u.apiScheduleDevices))

	u.MountPage(mux, "GET "+core.PathRules, "settings.view", u.rules)
	mux.Handle("POST /rules", u.Page("settings.update", u.addRule))
	mux.Handle("POST /rules/try", u.Page("settings.view", u.tryRules))
	mux.Handle("GET /rules/{n}", u.Page("settings.update", u.ruleForm))
	mux.Handle("POST /rules/{n}", u.Page("settings.update", u.updateRule))
	mux.Handle("POST /rules/{n}/delete", u.Page("settings.update", u.deleteRule))
}

// Schedule page bounds.
const (
	schedulesPerPage = 50
	// schedulePreviewRuns is how many fire times a preview lists.
	schedulePreviewRuns = 5
	// scheduleGroupNames is how many group names a list row spells out.
	scheduleGroupNames = 3
	// scheduleSearchLimit bounds the device search of the form.
	scheduleSearchLimit = 10
)

// scheduleRun is a fire time as the pages show it: in the schedule's own
// time zone, with the weekday in the reader's language.
type scheduleRun struct {
	At   time.Time
	Text string
}

// scheduleRow is one schedule of the list.
type scheduleRow struct {
	ID          int64
	Name        string
	Cron        string
	Description string
	Timezone    string
	Target      string
	Enabled     bool
	NextRun     scheduleRun
	LastRun     scheduleRun
	// CanUpdate and CanDelete: the user holds the permission and the
	// schedule's target lies in the user's groups.
	CanUpdate bool
	CanDelete bool
}

// schedulesPage is the data of schedules.html.
type schedulesPage struct {
	Rows   []scheduleRow
	Pager  core.Pager
	Notice string
}

// scheduleNotices are the notices a redirect back to the list asks for.
var scheduleNotices = map[string]string{
	"created":  keySchedNoticeCreated,
	"updated":  keySchedNoticeUpdated,
	"deleted":  keySchedNoticeDeleted,
	"enabled":  keySchedNoticeEnabled,
	"disabled": keySchedNoticeDisabled,
}

func (u *handlers) schedules(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	lang := core.LangOf(r)
	pageNo := core.PageNumber(r, core.MaxListPage)
	items, total, err := u.Store.ListSchedules(ctx, schedulesPerPage, (pageNo-1)*schedulesPerPage)
	if err != nil {
		return err
	}
	var groupNames map[int64]string
	p := schedulesPage{
		Pager:  core.NewPager(r, pageNo, schedulesPerPage, total),
		Notice: scheduleNotices[r.URL.Query().Get("done")],
	}
	for _, sc := range items {
		inScope, err := u.Store.ScheduleTargetInScope(ctx, s.Scope(), sc.Target, sc.TargetIDs)
		if err != nil {
			return err
		}
		if sc.Target == db.ScheduleTargetGroups && inScope && groupNames == nil {
			if groupNames, err = u.GroupNames(ctx); err != nil {
				return err
			}
		}
		row := scheduleRow{
			ID: sc.ID, Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone, Enabled: sc.Enabled,
			Description: u.describeCron(lang, sc.Cron),
			Target:      u.scheduleTargetSummary(lang, sc, inScope, groupNames),
			CanUpdate:   inScope && s.Can("schedules.update"),
			CanDelete:   inScope && s.Can("schedules.delete"),
		}
		loc, err := time.LoadLocation(sc.Timezone)
		if err != nil {
			loc = u.Location
		}
		if sc.NextRunAt != nil && sc.Enabled {
			row.NextRun = u.scheduleRunAt(lang, sc.NextRunAt.In(loc))
		}
		if sc.LastRunAt != nil {
			row.LastRun = u.scheduleRunAt(lang, sc.LastRunAt.In(loc))
		}
		p.Rows = append(p.Rows, row)
	}
	return u.Render(w, r, http.StatusOK, "schedules.html", keySchedTitle, p)
}

// scheduleTargetSummary says what a schedule backs up. Group names are
// spelled out only to users who see those groups.
func (u *handlers) scheduleTargetSummary(lang string, sc db.Schedule, inScope bool, groupNames map[int64]string) string {
	t := func(key string, args ...any) string { return u.Text(lang, key, args...) }
	switch sc.Target {
	case db.ScheduleTargetAll:
		return t(keySchedTargetAllSummary)
	case db.ScheduleTargetGroups:
		if !inScope {
			return t(keySchedTargetGroupCount, len(sc.TargetIDs))
		}
		var names []string
		for _, id := range sc.TargetIDs {
			if n, ok := groupNames[id]; ok {
				names = append(names, n)
			}
		}
		if len(names) > scheduleGroupNames {
			return t(keySchedTargetGroupsMore, strings.Join(names[:scheduleGroupNames], t(core.KeyListSep)), len(names)-scheduleGroupNames)
		}
		return t(keySchedTargetGroups, strings.Join(names, t(core.KeyListSep)))
	default:
		return t(keySchedTargetDeviceCount, len(sc.TargetIDs))
	}
}
