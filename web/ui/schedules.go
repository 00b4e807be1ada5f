package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adhocore/gronx"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web"
	"backupd/web/ui/core"
)

// Schedule page bounds.
const (
	schedulesPerPage = 50
	// schedulePreviewRuns is how many fire times a preview lists.
	schedulePreviewRuns = 5
	// maxScheduleDevices bounds a device-list target typed into the form;
	// larger fleets are targeted by group.
	maxScheduleDevices = 5000
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

func (u *UI) schedules(w http.ResponseWriter, r *http.Request) error {
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
func (u *UI) scheduleTargetSummary(lang string, sc db.Schedule, inScope bool, groupNames map[int64]string) string {
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
func (u *UI) scheduleFormPageFor(r *http.Request, id int64, f scheduleFields, editable bool) (scheduleFormPage, error) {
	ctx := r.Context()
	s := core.SessionOf(r)
	lang := core.LangOf(r)
	p := scheduleFormPage{
		ID: id, Action: "/schedules", Form: f, CanTargetAll: s.Scope().All, Editable: editable,
		MaxSpread: backup.MaxSpreadSeconds, MaxDevices: maxScheduleDevices,
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

func (u *UI) newScheduleForm(w http.ResponseWriter, r *http.Request) error {
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
func (u *UI) scheduleForm(w http.ResponseWriter, r *http.Request) error {
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

func (u *UI) fillScheduleRuns(r *http.Request, p *scheduleFormPage, sc db.Schedule) {
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
func (u *UI) loadSchedule(r *http.Request) (db.Schedule, bool, error) {
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
func (u *UI) loadScheduleToChange(r *http.Request) (db.Schedule, error) {
	sc, inScope, err := u.loadSchedule(r)
	if err != nil {
		return sc, err
	}
	if !inScope {
		return sc, core.Forbidden()
	}
	return sc, nil
}

// scheduleProblemKeys turn the fields of backup.ValidateSchedule's
// problems into the form's messages.
var scheduleProblemKeys = map[string]string{
	"name":           keySchedErrName,
	"cron":           keySchedErrCron,
	"timezone":       keySchedErrZone,
	"spread_seconds": keySchedErrSpread,
	"target":         keySchedErrTarget,
}

// scheduleFromFields turns the form into a schedule: backup.ValidateSchedule
// checks it as the scheduler will run it, and the target must lie in the
// user's groups — "all devices" only for a user who sees every group;
// asking for more than that is refused outright (forbidden), since the
// form never offers it.
func (u *UI) scheduleFromFields(ctx context.Context, s *core.Session, f scheduleFields) (db.Schedule, core.FormErrors, error) {
	var errs core.FormErrors
	sc := db.Schedule{Name: f.Name, Cron: f.Cron, Timezone: f.Timezone, Target: f.Target, Enabled: f.Enabled}
	if f.Spread != "" {
		n, err := strconv.Atoi(f.Spread)
		if err != nil {
			errs.Add("spread_seconds", keySchedSpreadNumber, backup.MaxSpreadSeconds)
		} else {
			sc.SpreadSeconds = n
		}
	}
	scope := s.Scope()
	switch f.Target {
	case db.ScheduleTargetAll:
		if !scope.All {
			return sc, errs, core.Forbidden()
		}
	case db.ScheduleTargetGroups:
		for id := range f.GroupIDs {
			sc.TargetIDs = append(sc.TargetIDs, id)
		}
		slices.Sort(sc.TargetIDs)
		if len(sc.TargetIDs) == 0 {
			errs.Add("target", keySchedNoGroups)
			break
		}
		ok, err := u.Store.ScheduleTargetInScope(ctx, scope, sc.Target, sc.TargetIDs)
		if err != nil {
			return sc, errs, err
		}
		if !ok {
			return sc, errs, core.Forbidden()
		}
	case db.ScheduleTargetDevices:
		ids, err := u.scheduleDeviceIDs(ctx, scope, f.Devices, &errs)
		if err != nil {
			return sc, errs, err
		}
		sc.TargetIDs = ids
	}
	if err := backup.ValidateSchedule(sc); err != nil {
		var invalid *backup.InvalidScheduleError
		if !errors.As(err, &invalid) {
			return sc, errs, err
		}
		for _, p := range invalid.Problems {
			field := p.Field
			if field == "target_ids" {
				field = "target"
			}
			if errs.Has(field) {
				continue // the form's own message already says it
			}
			errs.Add(field, scheduleProblemKeys[field], p.Message)
		}
	}
	return sc, errs, nil
}

// scheduleDeviceIDs resolves the device names typed into the form (one a
// line, or separated by commas) among the devices the user sees. Names
// that match none are reported together.
func (u *UI) scheduleDeviceIDs(ctx context.Context, scope db.Scope, text string, errs *core.FormErrors) ([]int64, error) {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' }) {
		name := strings.TrimSpace(line)
		if name == "" || seen[strings.ToLower(name)] {
			continue
		}
		seen[strings.ToLower(name)] = true
		names = append(names, name)
	}
	switch {
	case len(names) == 0:
		errs.Add("target", keySchedNoDevices)
		return nil, nil
	case len(names) > maxScheduleDevices:
		errs.Add("target", keySchedTooManyDevices, maxScheduleDevices)
		return nil, nil
	}
	refs, err := u.Store.ScheduleDevicesByName(ctx, scope, names)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	ids := make([]int64, len(refs))
	for i, d := range refs {
		ids[i] = d.ID
		found[strings.ToLower(d.Name)] = true
	}
	var missing []string
	for _, n := range names {
		if !found[strings.ToLower(n)] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		errs.Add("target", keySchedUnknownDevices, len(missing), strings.Join(shown, ", "))
	}
	return ids, nil
}

// scheduleFirstRun is when an enabled schedule fires first from now; nil
// leaves it to the scheduler, which computes it within half a minute.
func (u *UI) scheduleFirstRun(sc db.Schedule) *time.Time {
	if !sc.Enabled {
		return nil
	}
	runs, err := backup.NextRuns(sc.Cron, sc.Timezone, u.Now(), 1)
	if err != nil {
		return nil
	}
	return &runs[0]
}

func (u *UI) createSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	f := parseScheduleFields(r)
	p, err := u.scheduleFormPageFor(r, 0, f, true)
	if err != nil {
		return err
	}
	if r.PostFormValue("action") == "preview" {
		return u.Render(w, r, http.StatusOK, "schedules_form.html", keySchedTitleNew, p)
	}
	sc, errs, err := u.scheduleFromFields(ctx, s, f)
	if err != nil {
		return err
	}
	if !errs.Empty() {
		p.Errors = errs
		return u.Render(w, r, http.StatusUnprocessableEntity, "schedules_form.html", keySchedTitleNew, p)
	}
	sc.NextRunAt = u.scheduleFirstRun(sc)
	created, err := u.Store.CreateSchedule(ctx, sc)
	if status, key := scheduleSaveRefusal(err); key != "" {
		p.Errors.Add(scheduleRefusalField(key), key)
		return u.Render(w, r, status, "schedules_form.html", keySchedTitleNew, p)
	}
	if err != nil {
		return err
	}
	u.Audit(r, "schedule.create", "schedule", created.ID, map[string]any{
		"name": created.Name, "cron": created.Cron, "timezone": created.Timezone, "target": created.Target,
		"targets": len(created.TargetIDs), "spread_seconds": created.SpreadSeconds, "enabled": created.Enabled,
	})
	http.Redirect(w, r, "/schedules?done=created", http.StatusSeeOther)
	return nil
}

// scheduleSaveRefusal maps the store's refusals of a schedule to a status
// and a message key ("" when err is no refusal).
func scheduleSaveRefusal(err error) (int, string) {
	var ref *db.ErrReference
	switch {
	case errors.Is(err, db.ErrNameExists):
		return http.StatusConflict, keySchedNameTaken
	case errors.As(err, &ref):
		return http.StatusUnprocessableEntity, keySchedTargetGone
	}
	return 0, ""
}

func scheduleRefusalField(key string) string {
	if key == keySchedNameTaken {
		return "name"
	}
	return "target"
}

func (u *UI) updateSchedule(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	s := core.SessionOf(r)
	cur, err := u.loadScheduleToChange(r)
	if err != nil {
		return err
	}
	f := parseScheduleFields(r)
	p, err := u.scheduleFormPageFor(r, cur.ID, f, true)
	if err != nil {
		return err
	}
	p.CanDelete = s.Can("schedules.delete")
	u.fillScheduleRuns(r, &p, cur)
	if r.PostFormValue("action") == "preview" {
		return u.Render(w, r, http.StatusOK, "schedules_form.html", keySchedTitleEdit, p)
	}
	sc, errs, err := u.scheduleFromFields(ctx, s, f)
	if err != nil {
		return err
	}
	if !errs.Empty() {
		p.Errors = errs
		return u.Render(w, r, http.StatusUnprocessableEntity, "schedules_form.html", keySchedTitleEdit, p)
	}
	first := u.scheduleFirstRun(sc)
	var changed []string
	_, err = u.Store.UpdateSchedule(ctx, cur.ID, func(x *db.Schedule) error {
		changed = scheduleChanges(*x, sc)
		// A new expression, zone or a schedule switched on starts from
		// now; otherwise the planned next run stands.
		if sc.Enabled && (x.Cron != sc.Cron || x.Timezone != sc.Timezone || !x.Enabled || x.NextRunAt == nil) {
			x.NextRunAt = first
		}
		x.Name, x.Cron, x.Timezone, x.Target = sc.Name, sc.Cron, sc.Timezone, sc.Target
		x.TargetIDs, x.SpreadSeconds, x.Enabled = sc.TargetIDs, sc.SpreadSeconds, sc.Enabled
		return nil
	})
	if status, key := scheduleSaveRefusal(err); key != "" {
		p.Errors.Add(scheduleRefusalField(key), key)
		return u.Render(w, r, status, "schedules_form.html", keySchedTitleEdit, p)
	}
	if err != nil {
		return err
	}
	u.Audit(r, "schedule.update", "schedule", cur.ID, map[string]any{"name": sc.Name, "changed": changed})
	http.Redirect(w, r, "/schedules?done=updated", http.StatusSeeOther)
	return nil
}

// scheduleChanges names the fields that differ, for the audit log.
func scheduleChanges(a, b db.Schedule) []string {
	changed := []string{}
	add := func(field string, differs bool) {
		if differs {
			changed = append(changed, field)
		}
	}
	add("name", a.Name != b.Name)
	add("cron", a.Cron != b.Cron)
	add("timezone", a.Timezone != b.Timezone)
	add("target", a.Target != b.Target)
	add("target_ids", !slices.Equal(a.TargetIDs, b.TargetIDs))
	add("spread_seconds", a.SpreadSeconds != b.SpreadSeconds)
	add("enabled", a.Enabled != b.Enabled)
	return changed
}

func (u *UI) enableSchedule(w http.ResponseWriter, r *http.Request) error {
	return u.setScheduleEnabled(w, r, true)
}

func (u *UI) disableSchedule(w http.ResponseWriter, r *http.Request) error {
	return u.setScheduleEnabled(w, r, false)
}

// setScheduleEnabled switches a schedule on or off from the list. Switched
// on, it fires first at its next tick from now: never a tick it missed
// while off.
func (u *UI) setScheduleEnabled(w http.ResponseWriter, r *http.Request, on bool) error {
	cur, err := u.loadScheduleToChange(r)
	if err != nil {
		return err
	}
	probe := cur
	probe.Enabled = on
	first := u.scheduleFirstRun(probe)
	if _, err := u.Store.UpdateSchedule(r.Context(), cur.ID, func(x *db.Schedule) error {
		if on && (!x.Enabled || x.NextRunAt == nil) {
			x.NextRunAt = first
		}
		x.Enabled = on
		return nil
	}); err != nil {
		return err
	}
	u.Audit(r, "schedule.update", "schedule", cur.ID, map[string]any{"name": cur.Name, "enabled": on})
	done := "disabled"
	if on {
		done = "enabled"
	}
	http.Redirect(w, r, scheduleListURL(r, done), http.StatusSeeOther)
	return nil
}

// scheduleListURL is the list page the form came from, with a notice.
func scheduleListURL(r *http.Request, done string) string {
	target := "/schedules?done=" + done
	if n, err := strconv.Atoi(r.PostFormValue("page")); err == nil && n > 1 {
		target += "&page=" + strconv.Itoa(n)
	}
	return target
}

func (u *UI) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	cur, err := u.loadScheduleToChange(r)
	if err != nil {
		return err
	}
	if err := u.Store.DeleteSchedule(r.Context(), cur.ID); err != nil {
		return err
	}
	u.Audit(r, "schedule.delete", "schedule", cur.ID, map[string]any{"name": cur.Name})
	http.Redirect(w, r, scheduleListURL(r, "deleted"), http.StatusSeeOther)
	return nil
}

// schedulePreviewOf lists the next fire times of cron in zone tz from
// now, with a plain description of the expression when it has a common
// shape.
func (u *UI) schedulePreviewOf(lang, cron, tz string) schedulePreview {
	p := schedulePreview{Timezone: tz}
	runs, err := backup.NextRuns(cron, tz, u.Now(), schedulePreviewRuns)
	if err != nil {
		p.Error, p.Args = keySchedPreviewInvalid, []any{err.Error()}
		return p
	}
	p.Description = u.describeCron(lang, cron)
	for _, t := range runs {
		p.Runs = append(p.Runs, u.scheduleRunAt(lang, t))
	}
	return p
}

// scheduleRunAt writes a fire time in its own zone: "Mon 2026-01-05 06:30
// CET", the zone as its abbreviation or, when it has none, its offset.
func (u *UI) scheduleRunAt(lang string, t time.Time) scheduleRun {
	abbr, offset := t.Zone()
	if abbr == "" || abbr[0] == '+' || abbr[0] == '-' {
		sign := '+'
		if offset < 0 {
			sign, offset = '-', -offset
		}
		abbr = fmt.Sprintf("UTC%c%02d:%02d", sign, offset/3600, offset%3600/60)
	}
	day := u.Text(lang, keySchedDayShort[t.Weekday()])
	return scheduleRun{At: t, Text: day + " " + t.Format("2006-01-02 15:04") + " " + abbr}
}

// previewJSON is the answer of GET /api/schedules/preview.
type previewJSON struct {
	Description string        `json:"description"`
	Timezone    string        `json:"timezone"`
	Runs        []previewTime `json:"runs"`
}

type previewTime struct {
	At   string `json:"at"`
	Text string `json:"text"`
}

// apiSchedulePreview is the form's live preview: the next fire times of
// ?cron= in ?tz= (the default zone when empty). A bad expression or zone
// is a 422 naming the field.
func (u *UI) apiSchedulePreview(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	cron := strings.Join(strings.Fields(q.Get("cron")), " ")
	tz := strings.TrimSpace(q.Get("tz"))
	if tz == "" {
		tz = u.DefaultZone()
	}
	runs, err := backup.NextRuns(cron, tz, u.Now(), schedulePreviewRuns)
	if err != nil {
		field, msg, ok := strings.Cut(err.Error(), ": ")
		if !ok || (field != "cron" && field != "timezone") {
			field, msg = "cron", err.Error()
		}
		if field == "timezone" {
			field = "tz"
		}
		// The message itself, not a generic one, so that the page's script
		// can show it as it is.
		return web.Validation(field+": "+msg, web.FieldError{Location: "query", Field: field, Message: msg})
	}
	lang := core.LangOf(r)
	out := previewJSON{Description: u.describeCron(lang, cron), Timezone: tz, Runs: []previewTime{}}
	for _, t := range runs {
		out.Runs = append(out.Runs, previewTime{At: t.Format(time.RFC3339), Text: u.scheduleRunAt(lang, t).Text})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}

// deviceChoice is one answer of GET /api/schedules/devices.
type deviceChoice struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Host string `json:"host"`
}

// apiScheduleDevices finds devices by name or host for the form's device
// target: the first few the user sees, never the whole inventory.
func (u *UI) apiScheduleDevices(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len([]rune(q)) > 128 {
		return web.FieldInvalid("query", "q", "must be at most 128 characters")
	}
	out := struct {
		Items []deviceChoice `json:"items"`
		Total int            `json:"total"`
	}{Items: []deviceChoice{}}
	if q == "" {
		return core.WriteJSON(w, http.StatusOK, out)
	}
	devices, total, err := u.Store.ListDevices(r.Context(), core.SessionOf(r).Scope(), db.DeviceFilter{Query: q}, scheduleSearchLimit, 0)
	if err != nil {
		return err
	}
	out.Total = total
	for _, d := range devices {
		out.Items = append(out.Items, deviceChoice{ID: d.ID, Name: d.Name, Host: d.Host})
	}
	return core.WriteJSON(w, http.StatusOK, out)
}

// describeCron says in plain words when a cron expression fires, for the
// common shapes: every N minutes, hourly, every N hours, daily at some
// times, on some weekdays, on some days of the month. Anything else
// (months, steps in odd places, both kinds of day) gets "" and the
// preview's list of fire times speaks for it.
func (u *UI) describeCron(lang, expr string) string {
	if _, err := backup.NextRuns(expr, "UTC", u.Now(), 0); err != nil {
		return ""
	}
	segs, err := gronx.Segments(expr)
	if err != nil || len(segs) != 6 || segs[0] != "0" {
		return ""
	}
	minute, hour, dom, month, dow := segs[1], segs[2], segs[3], segs[4], segs[5]
	wild := func(s string) bool { return s == "*" || s == "?" }
	if !wild(month) {
		return ""
	}
	t := func(key string, args ...any) string { return u.Text(lang, key, args...) }
	everyDay := wild(dom) && wild(dow)
	m, minuteFixed := cronNumber(minute, 0, 59)
	switch {
	case wild(minute) && wild(hour) && everyDay:
		return t(keySchedDescEveryMinute)
	case wild(hour) && everyDay:
		if n, ok := cronStep(minute, 60); ok {
			return t(keySchedDescEveryMinutes, n)
		}
		if minuteFixed {
			return t(keySchedDescHourly, m)
		}
		return ""
	case !minuteFixed:
		return ""
	}
	if n, ok := cronStep(hour, 24); ok && everyDay {
		return t(keySchedDescEveryHours, n, m)
	}
	hours, ok := cronList(hour, 0, 23)
	if !ok {
		return ""
	}
	times := make([]string, len(hours))
	for i, h := range hours {
		times[i] = fmt.Sprintf("%02d:%02d", h, m)
	}
	at := strings.Join(times, t(core.KeyListSep))
	switch {
	case everyDay:
		return t(keySchedDescDaily, at)
	case wild(dom):
		if days, ok := u.cronWeekdays(lang, dow); ok {
			return t(keySchedDescWeekly, days, at)
		}
	case wild(dow):
		if days, ok := cronList(dom, 1, 31); ok {
			parts := make([]string, len(days))
			for i, d := range days {
				parts[i] = strconv.Itoa(d)
			}
			return t(keySchedDescMonthly, strings.Join(parts, t(core.KeyListSep)), at)
		}
	}
	return ""
}

// cronWeekdays names the days of a day-of-week field made of days and
// ranges ("1", "1,3", "1-5"; 0 and 7 are Sunday).
func (u *UI) cronWeekdays(lang, field string) (string, bool) {
	var parts []string
	for _, item := range strings.Split(field, ",") {
		from, to, isRange := strings.Cut(item, "-")
		a, ok := cronNumber(from, 0, 7)
		if !ok {
			return "", false
		}
		if !isRange {
			parts = append(parts, u.Text(lang, keySchedDayLong[a%7]))
			continue
		}
		b, ok := cronNumber(to, 0, 7)
		if !ok || b <= a {
			return "", false
		}
		parts = append(parts, u.Text(lang, keySchedDescDayRange,
			u.Text(lang, keySchedDayLong[a%7]), u.Text(lang, keySchedDayLong[b%7])))
	}
	return strings.Join(parts, u.Text(lang, core.KeyListSep)), true
}

// cronNumber reads a plain number field within [lo, hi].
func cronNumber(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi && !strings.HasPrefix(s, "+")
}

// cronList reads a comma-separated list of plain numbers, sorted.
func cronList(s string, lo, hi int) ([]int, bool) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		n, ok := cronNumber(item, lo, hi)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// cronStep reads "*/n" where n divides period evenly: only then does the
// step keep the same pace across the hour or day boundary, and "every n"
// say the truth.
func cronStep(s string, period int) (int, bool) {
	rest, ok := strings.CutPrefix(s, "*/")
	if !ok {
		return 0, false
	}
	n, ok := cronNumber(rest, 2, period-1)
	return n, ok && period%n == 0
}
