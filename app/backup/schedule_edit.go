package backup

import (
	"context"
	"slices"
	"time"

	"backupd/db"
)

// Changing a schedule decides when it fires next: a schedule created or
// switched on, or given a new expression or zone, starts from now (never
// a tick it missed while off or under its old rule); any other change
// leaves the planned next run as it was. The scheduler computes a run
// that is left unset within half a minute, so a schedule whose first run
// cannot be computed here is stored all the same.

// CreateSchedule checks sc as the scheduler will run it
// (ValidateSchedule: an *InvalidScheduleError) and stores it, an enabled
// one with its first run from now. The store refuses a taken name
// (db.ErrNameExists) and a target that is gone (*db.ErrReference).
func CreateSchedule(ctx context.Context, store *db.Store, sc db.Schedule, now time.Time) (db.Schedule, error) {
	if err := ValidateSchedule(sc); err != nil {
		return db.Schedule{}, err
	}
	sc.NextRunAt = firstRun(sc, now)
	return store.CreateSchedule(ctx, sc)
}

// UpdateSchedule replaces the fields a user sets of schedule id (name,
// cron, timezone, target, spread, enabled) with sc's, checked as by
// CreateSchedule, and returns the names of the fields that changed, for
// the audit log.
func UpdateSchedule(ctx context.Context, store *db.Store, id int64, sc db.Schedule, now time.Time) (db.Schedule, []string, error) {
	if err := ValidateSchedule(sc); err != nil {
		return db.Schedule{}, nil, err
	}
	first := firstRun(sc, now)
	var changed []string
	out, err := store.UpdateSchedule(ctx, id, func(x *db.Schedule) error {
		changed = scheduleChanges(*x, sc)
		if sc.Enabled && (x.Cron != sc.Cron || x.Timezone != sc.Timezone || !x.Enabled || x.NextRunAt == nil) {
			x.NextRunAt = first
		}
		x.Name, x.Cron, x.Timezone, x.Target = sc.Name, sc.Cron, sc.Timezone, sc.Target
		x.TargetIDs, x.SpreadSeconds, x.Enabled = sc.TargetIDs, sc.SpreadSeconds, sc.Enabled
		return nil
	})
	return out, changed, err
}

// SetScheduleEnabled switches schedule id on or off. Switched on, it
// fires first at its next tick from now.
func SetScheduleEnabled(ctx context.Context, store *db.Store, id int64, on bool, now time.Time) (db.Schedule, error) {
	return store.UpdateSchedule(ctx, id, func(x *db.Schedule) error {
		if on && (!x.Enabled || x.NextRunAt == nil) {
			probe := *x
			probe.Enabled = true
			x.NextRunAt = firstRun(probe, now)
		}
		x.Enabled = on
		return nil
	})
}

// firstRun is when an enabled schedule fires first from now; nil leaves
// it to the scheduler.
func firstRun(sc db.Schedule, now time.Time) *time.Time {
	if !sc.Enabled {
		return nil
	}
	runs, err := NextRuns(sc.Cron, sc.Timezone, now, 1)
	if err != nil {
		return nil
	}
	return &runs[0]
}

// scheduleChanges names the user's fields that differ between a and b.
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
