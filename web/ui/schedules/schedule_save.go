package schedules

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web/ui/core"
)

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
func (u *handlers) scheduleFromFields(ctx context.Context, s *core.Session, f scheduleFields) (db.Schedule, core.FormErrors, error) {
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
		ids, err := u.TargetDevices(ctx, scope, f.Devices, &errs)
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

func (u *handlers) createSchedule(w http.ResponseWriter, r *http.Request) error {
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
	created, err := backup.CreateSchedule(ctx, u.Store, sc, u.Now())
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

func (u *handlers) updateSchedule(w http.ResponseWriter, r *http.Request) error {
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
	_, changed, err := backup.UpdateSchedule(ctx, u.Store, cur.ID, sc, u.Now())
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

func (u *handlers) enableSchedule(w http.ResponseWriter, r *http.Request) error {
	return u.setScheduleEnabled(w, r, true)
}

func (u *handlers) disableSchedule(w http.ResponseWriter, r *http.Request) error {
	return u.setScheduleEnabled(w, r, false)
}

// setScheduleEnabled switches a schedule on or off from the list
// (backup.SetScheduleEnabled: switched on, it fires first at its next
// tick from now, never a tick it missed while off).
func (u *handlers) setScheduleEnabled(w http.ResponseWriter, r *http.Request, on bool) error {
	cur, err := u.loadScheduleToChange(r)
	if err != nil {
		return err
	}
	if _, err := backup.SetScheduleEnabled(r.Context(), u.Store, cur.ID, on, u.Now()); err != nil {
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

func (u *handlers) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
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
