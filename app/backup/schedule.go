package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	_ "time/tzdata" // schedules name IANA zones; hosts without zoneinfo still know them

	"github.com/adhocore/gronx"

	"backupd/db"
	"backupd/db/queue"
)

// Schedule limits.
const (
	// MaxSpreadSeconds bounds a schedule's spread: a day.
	MaxSpreadSeconds = 86400
	// MaxNextRuns bounds one NextRuns call.
	MaxNextRuns = 1000
	// scheduleMaxWait is the longest the scheduler sleeps, so that
	// schedules saved by another process (or with no next run yet) are
	// picked up soon.
	scheduleMaxWait = 30 * time.Second
	// scheduleLateGrace is how late a fire may be and still spread its
	// devices from the tick; a later (catch-up) fire spreads them from
	// the moment it fires instead, so that they do not all start at once.
	scheduleLateGrace = time.Minute
	// scheduleEnqueueTimeout bounds queueing one fire's jobs.
	scheduleEnqueueTimeout = time.Minute
	// scheduleMaxHops bounds the time-zone periods one NextRuns step
	// looks through (a period lasts months; a 29 February schedule
	// crosses about sixteen).
	scheduleMaxHops = 128
	// maxCronLength bounds what is handed to the cron parser.
	maxCronLength = 256
)

// DefaultScheduleName, DefaultScheduleCron and DefaultScheduleSpread
// describe the schedule a fresh install gets: every device at 02:00,
// spread over an hour.
const (
	DefaultScheduleName   = "Nightly"
	DefaultScheduleCron   = "0 2 * * *"
	DefaultScheduleSpread = 3600
)

// ScheduleProblem is one field of a schedule that is not acceptable.
// Field is the API's name for it (name, cron, timezone, target,
// target_ids, spread_seconds).
type ScheduleProblem struct {
	Field   string
	Message string
}

// InvalidScheduleError lists every problem of a schedule, in field order,
// so that the API reports them all at once.
type InvalidScheduleError struct {
	Problems []ScheduleProblem
}

func (e *InvalidScheduleError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "invalid schedule: " + strings.Join(parts, "; ")
}

// cronFieldNames are the five fields of a cron expression, in order.
var cronFieldNames = [5]string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// parseCron checks expr (five fields, or a macro such as @daily) and
// returns gronx's segments: seconds (always "0"), then the five fields.
func parseCron(expr string) ([]string, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, errors.New(`must not be empty; use five fields ("minute hour day-of-month month day-of-week", e.g. "0 2 * * *") or a macro such as @daily`)
	}
	if len(expr) > maxCronLength {
		return nil, fmt.Errorf("is longer than %d characters", maxCronLength)
	}
	fields := strings.Fields(expr)
	if strings.HasPrefix(expr, "@") {
		segs, err := gronx.Segments(expr)
		// A macro expands to five fields, which gronx prefixes with a
		// zero second; @everysecond and unknown names do not.
		if len(fields) != 1 || err != nil || len(segs) != 6 || segs[0] != "0" || !gronx.IsValid(expr) {
			return nil, fmt.Errorf("unknown macro %q; use @yearly, @monthly, @weekly, @daily, @hourly, or five fields", expr)
		}
		return segs, nil
	}
	if len(fields) != 5 {
		return nil, fmt.Errorf(`has %d fields; want 5: minute hour day-of-month month day-of-week (e.g. "0 2 * * *")`, len(fields))
	}
	// Check field by field, to say which one is wrong.
	for i, f := range fields {
		probe := []string{"*", "*", "*", "*", "*"}
		probe[i] = f
		if !gronx.IsValid(strings.Join(probe, " ")) {
			return nil, fmt.Errorf("%s field %q is not valid", cronFieldNames[i], f)
		}
	}
	if !gronx.IsValid(expr) {
		return nil, fmt.Errorf("%q is not a valid cron expression", expr)
	}
	return gronx.Segments(expr)
}

// loadZone loads an IANA time zone; "Local" is refused, since it would
// mean whatever zone the host happens to run in.
func loadZone(tz string) (*time.Location, error) {
	if tz == "" {
		return nil, errors.New(`must not be empty; use an IANA name such as "UTC" or "Europe/Berlin"`)
	}
	if tz == "Local" {
		return nil, errors.New(`"Local" depends on the host; use an IANA name such as "UTC" or "Europe/Berlin"`)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name such as \"UTC\" or \"Europe/Berlin\"", tz)
	}
	return loc, nil
}

// ValidateSchedule checks the fields a user sets on a schedule. It returns
// nil or an *InvalidScheduleError naming each bad field.
func ValidateSchedule(s db.Schedule) error {
	var problems []ScheduleProblem
	add := func(field, format string, args ...any) {
		problems = append(problems, ScheduleProblem{field, fmt.Sprintf(format, args...)})
	}
	name := strings.TrimSpace(s.Name)
	switch {
	case name == "":
		add("name", "must not be blank")
	case len([]rune(name)) > 128:
		add("name", "must be at most 128 characters")
	}
	cronOK := false
	if _, err := parseCron(s.Cron); err != nil {
		add("cron", "%s", err)
	} else {
		cronOK = true
	}
	if _, err := loadZone(s.Timezone); err != nil {
		add("timezone", "%s", err)
	} else if cronOK {
		// A valid expression may still never match (30 February).
		if _, err := NextRuns(s.Cron, s.Timezone, time.Now(), 1); err != nil {
			add("cron", "never fires: %s", err)
		}
	}
	switch s.Target {
	case db.ScheduleTargetAll:
		if len(s.TargetIDs) > 0 {
			add("target_ids", "must be empty when target is %q", db.ScheduleTargetAll)
		}
	case db.ScheduleTargetGroups, db.ScheduleTargetDevices:
		if len(s.TargetIDs) == 0 {
			add("target_ids", "must list at least one %s ID when target is %q", strings.TrimSuffix(s.Target, "s"), s.Target)
		}
		for _, id := range s.TargetIDs {
			if id <= 0 {
				add("target_ids", "%d is not a valid ID", id)
				break
			}
		}
	default:
		add("target", "must be one of %q, %q, %q; got %q", db.ScheduleTargetAll, db.ScheduleTargetGroups, db.ScheduleTargetDevices, s.Target)
	}
	if s.SpreadSeconds < 0 || s.SpreadSeconds > MaxSpreadSeconds {
		add("spread_seconds", "must be between 0 and %d seconds; got %d", MaxSpreadSeconds, s.SpreadSeconds)
	}
	if len(problems) > 0 {
		return &InvalidScheduleError{problems}
	}
	return nil
}

// NextRuns returns the next n (at most MaxNextRuns) times cron fires in
// time zone tz strictly after after, in that zone.
//
// Daylight-saving changes follow Vixie cron: an expression with a fixed
// minute and hour ("30 2 * * *") fires once a day even when the clock
// goes back and 02:30 happens twice (the first time), and fires at the
// moment the clock jumps forward when its time is skipped, so a nightly
// backup is never lost nor doubled. An expression whose minute or hour
// is a wildcard or step ("*/15 * * * *", "0 * * * *") keeps its pace in
// real time: it fires in both passes of a repeated hour and not in a
// skipped one.
func NextRuns(cron, tz string, after time.Time, n int) ([]time.Time, error) {
	if n < 0 || n > MaxNextRuns {
		return nil, fmt.Errorf("n must be between 0 and %d", MaxNextRuns)
	}
	segs, err := parseCron(cron)
	if err != nil {
		return nil, fmt.Errorf("cron: %w", err)
	}
	loc, err := loadZone(tz)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	expr := strings.Join(segs[1:], " ")
	fixed := !strings.HasPrefix(segs[1], "*") && !strings.HasPrefix(segs[2], "*")
	out := make([]time.Time, 0, n)
	t := after
	for len(out) < n {
		if t, err = nextFire(expr, loc, fixed, t); err != nil {
			return nil, err
		}
		out = append(out, t.In(loc))
	}
	return out, nil
}

// wallClock is the local time of t in a period of offset seconds, as a
// UTC time: in UTC no wall time is skipped or repeated, so gronx can
// search it safely.
func wallClock(t time.Time, offset int) time.Time {
	return t.UTC().Add(time.Duration(offset) * time.Second)
}

// nextFire is the first fire of expr strictly after after. It walks the
// zone's periods of constant UTC offset (time.Time.ZoneBounds), searching
// each one's wall clock.
func nextFire(expr string, loc *time.Location, fixed bool, after time.Time) (time.Time, error) {
	from := after.UTC().Truncate(time.Second).Add(time.Second)
	for range scheduleMaxHops {
		local := from.In(loc)
		_, offset := local.Zone()
		start, end := local.ZoneBounds()
		lower := wallClock(from, offset)
		if !start.IsZero() {
			_, prevOffset := start.Add(-time.Second).In(loc).Zone()
			switch {
			case prevOffset < offset && fixed && from.Equal(start):
				// The clock just jumped forward: a fixed time in the
				// skipped stretch fires now, at the jump.
				w, err := gronx.NextTickAfter(expr, wallClock(start, prevOffset), true)
				if err == nil && w.Before(wallClock(start, offset)) {
					return start, nil
				}
			case prevOffset > offset && fixed:
				// The clock went back: the repeated stretch already fired
				// in the previous period.
				if repeatedEnd := wallClock(start, prevOffset); lower.Before(repeatedEnd) {
					lower = repeatedEnd
				}
			}
		}
		w, err := gronx.NextTickAfter(expr, lower, true)
		if err != nil {
			return time.Time{}, fmt.Errorf("no fire time found after %s: %w", lower.Format(time.DateTime), err)
		}
		at := w.Add(-time.Duration(offset) * time.Second)
		if end.IsZero() || at.Before(end) {
			return at, nil
		}
		from = end
	}
	return time.Time{}, fmt.Errorf("no fire time found within %d time-zone changes after %s", scheduleMaxHops, after.UTC().Format(time.DateTime))
}

// Scheduler fires the schedules stored in the database: each due tick of
// an enabled schedule queues backups of its target devices, once, however
// many processes share the database.
type Scheduler struct {
	store *db.Store
	enq   func(ctx context.Context, reqs []queue.JobRequest) ([]int64, error)
	log   *slog.Logger
	wake  chan struct{}
	// queued, when set, makes each tick queue its backups in the
	// transaction that moves the schedule on (NewStoreScheduler); it is
	// called after.
	queued func()
}

// NewStoreScheduler returns a scheduler that queues each tick's backups in
// the same transaction that moves the schedule to its next run
// (db.Store.FireScheduleRun), then calls queued (the engine's Poke). With
// several nodes, a leader that dies in the middle of a tick leaves it
// either fired or still due for the next leader: never doubled, never
// lost.
func NewStoreScheduler(store *db.Store, queued func(), log *slog.Logger) *Scheduler {
	s := NewScheduler(store, nil, log)
	s.queued = queued
	if s.queued == nil {
		s.queued = func() {}
	}
	return s
}

// NewScheduler returns a scheduler that queues backups through enq
// (the engine's EnqueueRequests, or the store's EnqueueJobs).
func NewScheduler(store *db.Store, enq func(ctx context.Context, reqs []queue.JobRequest) ([]int64, error), log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	return &Scheduler{store: store, enq: enq, log: log, wake: make(chan struct{}, 1)}
}

// Wake makes Run look at the schedules now, rather than at its next
// planned wake-up (at most 30 s away): for a schedule just saved.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run fires schedules until ctx is done, then returns nil. It wakes at the
// next due tick, at least every 30 s, and when woken by Wake. Failures are
// logged and retried; they never stop it.
func (s *Scheduler) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-s.wake:
		}
		s.safeTick(ctx, time.Now())
		if ctx.Err() != nil {
			return nil
		}
		timer.Reset(s.sleepFor(ctx, time.Now()))
	}
}

// safeTick runs Tick, logging its error or panic.
func (s *Scheduler) safeTick(ctx context.Context, now time.Time) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("scheduler tick panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if _, err := s.Tick(ctx, now); err != nil && ctx.Err() == nil {
		s.log.Error("scheduler tick failed", "err", err)
	}
}

// sleepFor is how long Run waits: until the next tick still to come, at
// most scheduleMaxWait. A tick left due by a failure does not shorten it,
// so failures are retried every scheduleMaxWait, never in a busy loop.
func (s *Scheduler) sleepFor(ctx context.Context, now time.Time) time.Duration {
	wait := scheduleMaxWait
	at, ok, err := s.store.NextScheduleRunAfter(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("scheduler cannot read the next run", "err", err)
		}
	} else if ok {
		wait = min(wait, max(at.Sub(now), 0))
	}
	return wait
}

// Tick does the scheduler's work as of now: every enabled schedule whose
// next run is at or before now fires once, however many ticks it missed,
// and gets its next run after now; an enabled schedule with no next run
// gets one without firing. It returns how many schedules fired. Tests
// call it with a chosen now.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) (fired int, err error) {
	due, err := s.store.DueSchedules(ctx, now)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, sc := range due {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		ok, err := s.handle(ctx, sc, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %d (%s): %w", sc.ID, sc.Name, err))
		}
		if ok {
			fired++
		}
	}
	return fired, errors.Join(errs...)
}

// handle fires one due schedule, or computes the first next run of a new
// one. It reports whether this call fired it.
func (s *Scheduler) handle(ctx context.Context, sc db.Schedule, now time.Time) (bool, error) {
	runs, err := NextRuns(sc.Cron, sc.Timezone, now, 1)
	if err != nil {
		return false, fmt.Errorf("compute next run: %w", err)
	}
	next := runs[0]
	if sc.NextRunAt == nil {
		_, err := s.store.InitScheduleNextRun(ctx, sc.ID, next)
		return false, err
	}
	tick := *sc.NextRunAt
	if s.queued != nil {
		return s.fireAtomic(ctx, sc, tick, next, now)
	}
	claimed, err := s.store.ClaimScheduleRun(ctx, sc.ID, tick, next)
	if err != nil || !claimed {
		// Not claimed: another scheduler fired this tick, or the schedule
		// changed since it was read.
		return false, err
	}
	n, err := s.fire(ctx, sc, tick, now)
	if err != nil {
		// Nothing was queued: give the tick back so that the next wake
		// tries again.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, rerr := s.store.ReleaseScheduleRun(rctx, sc.ID, next, tick, sc.LastRunAt); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return false, err
	}
	s.log.Info("schedule fired", "schedule", sc.Name, "schedule_id", sc.ID, "devices", n,
		"tick", tick.UTC().Format(time.RFC3339), "spread_seconds", sc.SpreadSeconds, "next_run", next.UTC().Format(time.RFC3339))
	return true, nil
}

// fireAtomic fires a due tick through db.Store.FireScheduleRun.
func (s *Scheduler) fireAtomic(ctx context.Context, sc db.Schedule, tick, next, now time.Time) (bool, error) {
	reqs, err := s.requests(ctx, sc, tick, now)
	if err != nil {
		return false, err
	}
	// Not cut short by a shutdown arriving at the tick.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scheduleEnqueueTimeout)
	defer cancel()
	fired, err := s.store.FireScheduleRun(ectx, sc.ID, tick, next, reqs)
	if err != nil || !fired {
		// Not fired: another scheduler fired this tick, or the schedule
		// changed since it was read; on an error the tick stays due.
		return false, err
	}
	s.queued()
	s.log.Info("schedule fired", "schedule", sc.Name, "schedule_id", sc.ID, "devices", len(reqs),
		"tick", tick.UTC().Format(time.RFC3339), "spread_seconds", sc.SpreadSeconds, "next_run", next.UTC().Format(time.RFC3339))
	return true, nil
}

// requests are the backups a tick of sc queues: its target devices, each
// at its slot in the spread window.
func (s *Scheduler) requests(ctx context.Context, sc db.Schedule, tick, now time.Time) ([]queue.JobRequest, error) {
	ids, err := s.store.TargetDevices(ctx, sc.Target, sc.TargetIDs)
	if err != nil {
		return nil, err
	}
	base := tick
	if now.Sub(tick) > scheduleLateGrace {
		base = now
	}
	reqs := make([]queue.JobRequest, len(ids))
	for i, id := range ids {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: queue.TriggerSchedule, NotBefore: base.Add(scheduleSlot(sc.ID, id, sc.SpreadSeconds))}
	}
	return reqs, nil
}

// fire queues the schedule's target devices and returns how many.
func (s *Scheduler) fire(ctx context.Context, sc db.Schedule, tick, now time.Time) (int, error) {
	reqs, err := s.requests(ctx, sc, tick, now)
	if err != nil || len(reqs) == 0 {
		return 0, err
	}
	// Queued in one call, so a failure queues nothing (and the tick is
	// retried), and not cut short by a shutdown arriving at the tick.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scheduleEnqueueTimeout)
	defer cancel()
	if _, err := s.enq(ectx, reqs); err != nil {
		return 0, fmt.Errorf("queue %d devices: %w", len(reqs), err)
	}
	return len(reqs), nil
}

// scheduleSlot is the device's offset within a schedule's spread window:
// a hash of both IDs, so devices are spread evenly and each keeps its
// slot from one night to the next.
func scheduleSlot(scheduleID, deviceID int64, spreadSeconds int) time.Duration {
	if spreadSeconds <= 0 {
		return 0
	}
	// splitmix64's finaliser over both IDs.
	x := uint64(scheduleID)*0x9e3779b97f4a7c15 ^ uint64(deviceID)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return time.Duration(x%uint64(spreadSeconds*1000)) * time.Millisecond
}

// EnsureDefaultSchedule creates the "Nightly" schedule (02:00 in zone tz,
// default UTC, every device, spread over an hour) on a fresh install. It
// does so once: a setting remembers it, so a user who deletes the
// schedule does not get it back, and an install that already has
// schedules gets none.
func EnsureDefaultSchedule(ctx context.Context, store *db.Store, tz string) error {
	if tz == "" {
		tz = "UTC"
	}
	var created bool
	if _, err := store.GetSetting(ctx, db.SettingDefaultScheduleCreated, &created); err != nil {
		return err
	}
	if created {
		return nil
	}
	_, total, err := store.ListSchedules(ctx, 1, 0)
	if err != nil {
		return err
	}
	if total == 0 {
		sc := db.Schedule{
			Name: DefaultScheduleName, Cron: DefaultScheduleCron, Timezone: tz,
			Target: db.ScheduleTargetAll, SpreadSeconds: DefaultScheduleSpread, Enabled: true,
		}
		if err := ValidateSchedule(sc); err != nil {
			return fmt.Errorf("default schedule: %w", err)
		}
		runs, err := NextRuns(sc.Cron, sc.Timezone, time.Now(), 1)
		if err != nil {
			return fmt.Errorf("default schedule: %w", err)
		}
		sc.NextRunAt = &runs[0]
		// Another process starting at the same time may have created it.
		if _, err := store.CreateSchedule(ctx, sc); err != nil && !errors.Is(err, db.ErrNameExists) {
			return fmt.Errorf("default schedule: %w", err)
		}
	}
	return store.PutSetting(ctx, db.SettingDefaultScheduleCreated, true)
}
