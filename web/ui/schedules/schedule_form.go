package schedules

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/app/inventory"
	"backupd/db"
	"backupd/web/ui/core"
)

// scheduleFields are the form's values as typed, kept to show the form
// again after a refusal or a preview.
type scheduleFields struct {
	Name     string
	Cron     string
	Timezone string
	Spread   string
	Enabled  bool
	Target   string
	GroupIDs map[int64]bool
	Devices  string
}

func parseScheduleFields(r *http.Request) scheduleFields {
	f := scheduleFields{
		Name:     strings.TrimSpace(r.PostFormValue("name")),
		Cron:     strings.Join(strings.Fields(r.PostFormValue("cron")), " "),
		Timezone: strings.TrimSpace(r.PostFormValue("timezone")),
		Spread:   strings.TrimSpace(r.PostFormValue("spread_seconds")),
		Enabled:  r.PostFormValue("enabled") != "",
		Target:   r.PostFormValue("target"),
		GroupIDs: map[int64]bool{},
		Devices:  r.PostFormValue("devices"),
	}
	for _, v := range r.PostForm["group_ids"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
			f.GroupIDs[id] = true
		}
	}
	return f
}

// scheduleCronPreset is a suggestion of the cron field.
type scheduleCronPreset struct {
	Cron  string
	Label string
}

// scheduleFormPage is the data of schedules_form.html.
type scheduleFormPage struct {
	// ID is 0 for a new schedule.
	ID     int64
	Action string
	Form   scheduleFields
	Groups []core.GroupCheck
	// CanTargetAll: only a user who sees every group may back up all
	// devices.
	CanTargetAll bool
	// Editable is false when the user may only look.
	Editable  bool
	CanDelete bool
	// HiddenDevices counts the devices of a target the user may not see.
	HiddenDevices int
	Errors        core.FormErrors
	Preview       schedulePreview
	Zones         []string
	Presets       []scheduleCronPreset
	MaxSpread     int
	MaxDevices    int
	NextRun       scheduleRun
	LastRun       scheduleRun
}

// schedulePreview is the next fire times of a cron expression in a zone.
type schedulePreview struct {
	Description string
	Timezone    string
	Runs        []scheduleRun
	// Error is a message key (with Args) when the expression or the zone
	// cannot be used.
	Error string
	Args  []any
}

// scheduleZones are suggested in the time-zone field; any IANA name is
// accepted.
var scheduleZones = []string{
	"UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "Europe/Moscow", "America/New_York",
	"America/Chicago", "America/Denver", "America/Los_Angeles", "America/Sao_Paulo", "Asia/Shanghai",
	"Asia/Hong_Kong", "Asia/Tokyo", "Asia/Singapore", "Asia/Kolkata", "Asia/Dubai", "Australia/Sydney",
}

// scheduleCronPresets are common shapes, offered as suggestions of the
// cron field.
var scheduleCronPresets = []string{"0 2 * * *", "30 6 * * 1", "0 3 * * 1-5", "0 */4 * * *", "*/15 * * * *", "0 1 1 * *"}

// scheduleFormPageFor fills what every rendering of the schedule form needs.
func (u *handlers) scheduleFormPageFor(r *http.Request, id int64, f scheduleFields, editable bool) (scheduleFormPage, error) {
	ctx := r.Context()
	s := core.SessionOf(r)
	lang := core.LangOf(r)
	p := scheduleFormPage{
		ID: id, Action: "/schedules", Form: f, CanTargetAll: s.Scope().All, Editable: editable,
		MaxSpread: backup.MaxSpreadSeconds, MaxDevices: inventory.MaxTargetDevices,
		Preview: u.schedulePreviewOf(lang, f.Cron, f.Timezone),
	}
	if id != 0 {
		p.Action = "/schedules/" + strconv.FormatInt(id, 10)
	}
	groups, err := u.Store.ScheduleGroups(ctx, s.Scope())
	if err != nil {
		return p, err
	}
	p.Groups = core.GroupChecklist(groups, f.GroupIDs)
	p.Zones = []string{u.DefaultZone()}
	for _, z := range scheduleZones {
		if !slices.Contains(p.Zones, z) {
			p.Zones = append(p.Zones, z)
		}
	}
	for _, c := range scheduleCronPresets {
		p.Presets = append(p.Presets, scheduleCronPreset{Cron: c, Label: u.describeCron(lang, c)})
	}
	return p, nil
}

func (u *handlers) newScheduleForm(w http.ResponseWriter, r *http.Request) error {
	f := scheduleFields{
		Cron: backup.DefaultScheduleCron, Timezone: u.DefaultZone(),
		Spread: strconv.Itoa(backup.DefaultScheduleSpread), Enabled: true, Target: db.ScheduleTargetAll,
		GroupIDs: map[int64]bool{},
	}
	if !core.SessionOf(r).Scope().All {
		f.Target = db.ScheduleTargetGroups
	}
	p, err := u.scheduleFormPageFor(r, 0, f, true)
	if err != nil {
		return err
	}
	return u.Render(w, r, http.StatusOK, "schedules_form.html", keySchedTitleNew, p)
}

// scheduleForm shows one schedule: a form to change it for those who may,
// the same values read-only for the others.
func (u *handlers) scheduleForm(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	sc, inScope, err := u.loadSchedule(r)
	if err != nil {
		return err
	}
	f := scheduleFields{
		Name: sc.Name, Cron: sc.Cron, Timezone: sc.Timezone, Spread: strconv.Itoa(sc.SpreadSeconds),
		Enabled: sc.Enabled, Target: sc.Target, GroupIDs: map[int64]bool{},
	}
	hidden := 0
	switch sc.Target {
	case db.ScheduleTargetGroups:
		for _, id := range sc.TargetIDs {
			f.GroupIDs[id] = true
		}
	case db.ScheduleTargetDevices:
		// Device names are shown only to users who see those devices.
		if inScope {
			refs, err := u.Store.ScheduleDeviceNames(ctx, sc.TargetIDs)
			if err != nil {
				return err
			}
			names := make([]string, len(refs))
			for i, d := range refs {
				names[i] = d.Name
			}
			f.Devices = strings.Join(names, "\n")
		} else {
			hidden = len(sc.TargetIDs)
		}
	}
	p, err := u.scheduleFormPageFor(r, sc.ID, f, inScope && s.Can("schedules.update"))
	if err != nil {
		return err
	}
	p.CanDelete = inScope && s.Can("schedules.delete")
	p.HiddenDevices = hidden
	u.fillScheduleRuns(r, &p, sc)
	return u.Render(w, r, http.StatusOK, "schedules_form.html", keySchedTitleEdit, p)
}

func (u *handlers) fillScheduleRuns(r *http.Request, p *scheduleFormPage, sc db.Schedule) {
	lang := core.LangOf(r)
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		loc = u.Location
	}
	if sc.NextRunAt != nil && sc.Enabled {
		p.NextRun = u.scheduleRunAt(lang, sc.NextRunAt.In(loc))
	}
	if sc.LastRunAt != nil {
		p.LastRun = u.scheduleRunAt(lang, sc.LastRunAt.In(loc))
	}
}

// loadSchedule reads the schedule of the request's {id} and whether its
// target lies in the user's groups.
func (u *handlers) loadSchedule(r *http.Request) (db.Schedule, bool, error) {
	id, ok := core.PathInt(r, "id")
	if !ok {
		return db.Schedule{}, false, db.ErrNotFound
	}
	sc, err := u.Store.GetSchedule(r.Context(), id)
	if err != nil {
		return sc, false, err
	}
	inScope, err := u.Store.ScheduleTargetInScope(r.Context(), core.SessionOf(r).Scope(), sc.Target, sc.TargetIDs)
	return sc, inScope, err
}

// loadScheduleToChange is loadSchedule for a change: a schedule whose
// target reaches beyond the user's groups is refused.
func (u *handlers) loadScheduleToChange(r *http.Request) (db.Schedule, error) {
	sc, inScope, err := u.loadSchedule(r)
	if err != nil {
		return sc, err
	}
	if !inScope {
		return sc, core.Forbidden()
	}
	return sc, nil
}
