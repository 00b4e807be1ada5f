package backup_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
)

// A schedule created, switched on, or given a new expression or zone
// fires first at its next tick from now; any other change keeps the run
// it had planned; a disabled one plans none.
func TestScheduleEditsPlanTheNextRun(t *testing.T) {
	ctx := context.Background()
	s := schedOpenStore(t)
	now := time.Date(2026, 3, 4, 10, 17, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return time.Date(2026, 3, 4, h, m, 0, 0, time.UTC) }
	next := func(sc db.Schedule) time.Time {
		t.Helper()
		if sc.NextRunAt == nil {
			t.Fatalf("schedule %q plans no run", sc.Name)
		}
		return sc.NextRunAt.UTC()
	}

	sc, err := backup.CreateSchedule(ctx, s, db.Schedule{Name: "hourly", Cron: "30 * * * *", Timezone: "UTC",
		Target: db.ScheduleTargetAll, Enabled: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(sc); !got.Equal(at(10, 30)) {
		t.Fatalf("first run %v, want 10:30", got)
	}

	// A new name keeps the planned run, even an hour later.
	renamed := sc
	renamed.Name = "every hour"
	out, changed, err := backup.UpdateSchedule(ctx, s, sc.ID, renamed, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := next(out); !got.Equal(at(10, 30)) || !slices.Equal(changed, []string{"name"}) {
		t.Fatalf("after a rename: next %v, changed %v; want 10:30, [name]", got, changed)
	}

	// A new expression starts from now.
	recron := renamed
	recron.Cron = "45 * * * *"
	out, changed, err = backup.UpdateSchedule(ctx, s, sc.ID, recron, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(out); !got.Equal(at(10, 45)) || !slices.Equal(changed, []string{"cron"}) {
		t.Fatalf("after a new expression: next %v, changed %v; want 10:45, [cron]", got, changed)
	}

	// Off, then on again hours later: the ticks missed meanwhile are
	// not run, the next one from then is.
	if _, err := backup.SetScheduleEnabled(ctx, s, sc.ID, false, now); err != nil {
		t.Fatal(err)
	}
	out, err = backup.SetScheduleEnabled(ctx, s, sc.ID, true, at(13, 50))
	if err != nil {
		t.Fatal(err)
	}
	if got := next(out); !got.Equal(at(14, 45)) || !out.Enabled {
		t.Fatalf("switched on at 13:50: next %v (enabled %v), want 14:45", got, out.Enabled)
	}

	// A disabled schedule is created without a run.
	off, err := backup.CreateSchedule(ctx, s, db.Schedule{Name: "spare", Cron: "0 2 * * *", Timezone: "UTC",
		Target: db.ScheduleTargetAll}, now)
	if err != nil || off.NextRunAt != nil {
		t.Fatalf("disabled schedule: next %v, %v; want none", off.NextRunAt, err)
	}

	// What the scheduler could not run is refused, and not stored.
	var invalid *backup.InvalidScheduleError
	_, err = backup.CreateSchedule(ctx, s, db.Schedule{Name: "broken", Cron: "61 * * * *", Timezone: "UTC",
		Target: db.ScheduleTargetAll, Enabled: true}, now)
	if !errors.As(err, &invalid) {
		t.Fatalf("an invalid expression: %v, want an InvalidScheduleError", err)
	}
	if _, n, err := s.ListSchedules(ctx, 10, 0); err != nil || n != 2 {
		t.Fatalf("%d schedules stored (%v), want 2", n, err)
	}
}
