package backup_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

func schedOpenStore(t *testing.T) *db.Store {
	t.Helper()
	return dbtest.Open(t)
}

// schedAddDevices inserts n devices named prefix-1 … prefix-n in group
// (nil: none) and returns their IDs.
func schedAddDevices(t *testing.T, s *db.Store, prefix string, n int, group *int64, enabled bool) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	err := func(tx *sql.DB) error {
		rows, err := tx.QueryContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO devices (name, host, port, platform, login_method, group_id, enabled, created_at, updated_at)
			SELECT ? || '-' || i, '127.0.0.1', 22, 'cisco_ios', 'ssh', ?, ?, ?, ? FROM n ORDER BY i
			RETURNING id`, n, prefix, group, enabled, db.Now(), db.Now())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	}(dbtest.Poke(t, s))
	if err != nil || len(ids) != n {
		t.Fatalf("insert devices: %d of %d, %v", len(ids), n, err)
	}
	// Inserted in name order, so ids ascend with the names.
	slices.Sort(ids)
	return ids
}

func schedCreate(t *testing.T, s *db.Store, sc db.Schedule) db.Schedule {
	t.Helper()
	if sc.Timezone == "" {
		sc.Timezone = "UTC"
	}
	if sc.Target == "" {
		sc.Target = db.ScheduleTargetAll
	}
	out, err := s.CreateSchedule(context.Background(), sc)
	if err != nil {
		t.Fatalf("CreateSchedule(%q): %v", sc.Name, err)
	}
	return out
}

// schedRecorder queues jobs in the store and remembers every call.
type schedRecorder struct {
	store *db.Store
	mu    sync.Mutex
	calls [][]queue.JobRequest
	fired chan struct{}
}

func newSchedRecorder(s *db.Store) *schedRecorder {
	return &schedRecorder{store: s, fired: make(chan struct{}, 16)}
}

func (r *schedRecorder) enqueue(ctx context.Context, reqs []queue.JobRequest) ([]int64, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(reqs))
	r.mu.Unlock()
	select {
	case r.fired <- struct{}{}:
	default:
	}
	return r.store.EnqueueJobs(ctx, reqs)
}

func (r *schedRecorder) all() [][]queue.JobRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func schedDeviceIDs(reqs []queue.JobRequest) []int64 {
	ids := make([]int64, len(reqs))
	for i, r := range reqs {
		ids[i] = r.DeviceID
	}
	slices.Sort(ids)
	return ids
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestValidateSchedule(t *testing.T) {
	valid := db.Schedule{Name: "Nightly", Cron: "0 2 * * *", Timezone: "UTC", Target: db.ScheduleTargetAll, SpreadSeconds: 3600, Enabled: true}
	for _, c := range []struct {
		name   string
		change func(*db.Schedule)
	}{
		{"default", func(*db.Schedule) {}},
		{"daily macro", func(s *db.Schedule) { s.Cron = "@daily" }},
		{"hourly macro", func(s *db.Schedule) { s.Cron = "@hourly" }},
		{"weekdays", func(s *db.Schedule) { s.Cron = "30 1 * * MON-FRI" }},
		{"steps and lists", func(s *db.Schedule) { s.Cron = "*/15 0,12 1-7 * *" }},
		{"zone", func(s *db.Schedule) { s.Timezone = "Asia/Shanghai" }},
		{"groups", func(s *db.Schedule) { s.Target, s.TargetIDs = db.ScheduleTargetGroups, []int64{1, 2} }},
		{"devices", func(s *db.Schedule) { s.Target, s.TargetIDs = db.ScheduleTargetDevices, []int64{7} }},
		{"no spread", func(s *db.Schedule) { s.SpreadSeconds = 0 }},
		{"full day spread", func(s *db.Schedule) { s.SpreadSeconds = 86400 }},
	} {
		t.Run("valid "+c.name, func(t *testing.T) {
			s := valid
			c.change(&s)
			if err := backup.ValidateSchedule(s); err != nil {
				t.Errorf("%+v: %v", s, err)
			}
		})
	}

	for _, c := range []struct {
		name    string
		change  func(*db.Schedule)
		field   string
		message string // a part of the message
	}{
		{"blank name", func(s *db.Schedule) { s.Name = "  " }, "name", "blank"},
		{"long name", func(s *db.Schedule) { s.Name = strings.Repeat("n", 129) }, "name", "128"},
		{"empty cron", func(s *db.Schedule) { s.Cron = "" }, "cron", "empty"},
		{"four fields", func(s *db.Schedule) { s.Cron = "0 2 * *" }, "cron", "4 fields"},
		{"six fields", func(s *db.Schedule) { s.Cron = "0 0 2 * * *" }, "cron", "6 fields"},
		{"minute out of range", func(s *db.Schedule) { s.Cron = "61 2 * * *" }, "cron", "minute"},
		{"hour out of range", func(s *db.Schedule) { s.Cron = "0 24 * * *" }, "cron", "hour"},
		{"day-of-month zero", func(s *db.Schedule) { s.Cron = "0 2 0 * *" }, "cron", "day-of-month"},
		{"month 13", func(s *db.Schedule) { s.Cron = "0 2 * 13 *" }, "cron", "month"},
		{"weekday 8", func(s *db.Schedule) { s.Cron = "0 2 * * 8" }, "cron", "day-of-week"},
		{"zero step", func(s *db.Schedule) { s.Cron = "*/0 * * * *" }, "cron", "minute"},
		{"words", func(s *db.Schedule) { s.Cron = "at two every night" }, "cron", "fields"},
		{"seconds macro", func(s *db.Schedule) { s.Cron = "@everysecond" }, "cron", "macro"},
		{"unknown macro", func(s *db.Schedule) { s.Cron = "@nightly" }, "cron", "macro"},
		{"never fires", func(s *db.Schedule) { s.Cron = "0 0 30 2 *" }, "cron", "never"},
		{"unknown zone", func(s *db.Schedule) { s.Timezone = "Mars/Olympus_Mons" }, "timezone", "unknown"},
		{"empty zone", func(s *db.Schedule) { s.Timezone = "" }, "timezone", "empty"},
		{"host zone", func(s *db.Schedule) { s.Timezone = "Local" }, "timezone", "Local"},
		{"unknown target", func(s *db.Schedule) { s.Target = "everything" }, "target", "one of"},
		{"groups without IDs", func(s *db.Schedule) { s.Target = db.ScheduleTargetGroups }, "target_ids", "at least one group"},
		{"devices without IDs", func(s *db.Schedule) { s.Target, s.TargetIDs = db.ScheduleTargetDevices, []int64{} }, "target_ids", "at least one device"},
		{"all with IDs", func(s *db.Schedule) { s.TargetIDs = []int64{1} }, "target_ids", "empty"},
		{"bad ID", func(s *db.Schedule) { s.Target, s.TargetIDs = db.ScheduleTargetDevices, []int64{3, 0} }, "target_ids", "0"},
		{"negative spread", func(s *db.Schedule) { s.SpreadSeconds = -1 }, "spread_seconds", "between 0 and 86400"},
		{"spread over a day", func(s *db.Schedule) { s.SpreadSeconds = 86401 }, "spread_seconds", "between 0 and 86400"},
	} {
		t.Run("invalid "+c.name, func(t *testing.T) {
			s := valid
			c.change(&s)
			err := backup.ValidateSchedule(s)
			var inv *backup.InvalidScheduleError
			if !errors.As(err, &inv) {
				t.Fatalf("%+v: err = %v, want *InvalidScheduleError", s, err)
			}
			if len(inv.Problems) != 1 || inv.Problems[0].Field != c.field || !strings.Contains(inv.Problems[0].Message, c.message) {
				t.Errorf("problems = %+v, want one on %s mentioning %q", inv.Problems, c.field, c.message)
			}
		})
	}

	t.Run("every bad field reported", func(t *testing.T) {
		err := backup.ValidateSchedule(db.Schedule{Cron: "x", Timezone: "Nowhere/Else", Target: "x", SpreadSeconds: -5})
		var inv *backup.InvalidScheduleError
		if !errors.As(err, &inv) {
			t.Fatalf("err = %v", err)
		}
		var fields []string
		for _, p := range inv.Problems {
			fields = append(fields, p.Field)
		}
		if want := []string{"name", "cron", "timezone", "target", "spread_seconds"}; !slices.Equal(fields, want) {
			t.Errorf("fields = %v, want %v", fields, want)
		}
	})
}

func TestNextRuns(t *testing.T) {
	for _, c := range []struct {
		name        string
		cron, zone  string
		after       string
		want        []string
		wantLocName string
	}{
		{"daily UTC", "0 2 * * *", "UTC", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T02:00:00Z", "2026-01-02T02:00:00Z", "2026-01-03T02:00:00Z"}, "UTC"},
		{"a tick is not after itself", "0 2 * * *", "UTC", "2026-01-01T02:00:00Z",
			[]string{"2026-01-02T02:00:00Z"}, "UTC"},
		{"sub-second after", "0 2 * * *", "UTC", "2026-01-01T01:59:59.999Z",
			[]string{"2026-01-01T02:00:00Z"}, "UTC"},
		{"hourly macro", "@hourly", "UTC", "2026-01-01T00:30:00Z",
			[]string{"2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"}, "UTC"},
		{"Shanghai", "0 2 * * *", "Asia/Shanghai", "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T18:00:00Z", "2026-01-02T18:00:00Z"}, "Asia/Shanghai"},
		{"leap day", "0 0 29 2 *", "UTC", "2026-03-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}, "UTC"},
		// Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST (01:00 UTC);
		// 2026-10-25 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"Berlin skipped nightly fires at the jump", "30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}, "Europe/Berlin"},
		{"Berlin skipped and real hour fire once", "0 2,3 * * *", "Europe/Berlin", "2026-03-28T23:30:00Z",
			[]string{"2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z", "2026-03-30T01:00:00Z"}, "Europe/Berlin"},
		{"Berlin steps skip the missing hour", "*/30 * * * *", "Europe/Berlin", "2026-03-29T00:00:00Z",
			[]string{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}, "Europe/Berlin"},
		{"Berlin repeated nightly fires once", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}, "Europe/Berlin"},
		{"Berlin hourly fires in both passes", "0 * * * *", "Europe/Berlin", "2026-10-24T23:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"}, "Europe/Berlin"},
		{"Berlin after the first pass", "30 2 * * *", "Europe/Berlin", "2026-10-25T01:10:00Z",
			[]string{"2026-10-26T01:30:00Z"}, "Europe/Berlin"},
		// New York: 2026-03-08 02:00 EST becomes 03:00 EDT (07:00 UTC);
		// 2026-11-01 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"New York skipped", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}, "America/New_York"},
		{"New York repeated", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}, "America/New_York"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := backup.NextRuns(c.cron, c.zone, utc(c.after), len(c.want))
			if err != nil {
				t.Fatal(err)
			}
			var gotS []string
			for _, g := range got {
				gotS = append(gotS, g.UTC().Format(time.RFC3339))
				if g.Location().String() != c.wantLocName {
					t.Errorf("%v is in %s, want %s", g, g.Location(), c.wantLocName)
				}
			}
			if !slices.Equal(gotS, c.want) {
				t.Errorf("NextRuns(%q, %s, %s) = %v, want %v", c.cron, c.zone, c.after, gotS, c.want)
			}
		})
	}

	for _, c := range []struct {
		name, cron, zone string
		n                int
	}{
		{"too many", "0 2 * * *", "UTC", backup.MaxNextRuns + 1},
		{"negative", "0 2 * * *", "UTC", -1},
		{"bad cron", "0 2 * *", "UTC", 1},
		{"bad zone", "0 2 * * *", "Nowhere/Else", 1},
		{"never", "0 0 31 2 *", "Europe/Berlin", 1},
	} {
		t.Run("error "+c.name, func(t *testing.T) {
			if got, err := backup.NextRuns(c.cron, c.zone, utc("2026-01-01T00:00:00Z"), c.n); err == nil {
				t.Errorf("NextRuns = %v, want an error", got)
			}
		})
	}
	if got, err := backup.NextRuns("0 2 * * *", "UTC", time.Now(), 0); err != nil || len(got) != 0 {
		t.Errorf("n = 0: %v, %v", got, err)
	}
}

// TestNextRunsAcrossYearsOfDST checks invariants over many transitions:
// a fixed daily time fires exactly once per local day, and a fixed pace
// stays exact in real time.
func TestNextRunsAcrossYearsOfDST(t *testing.T) {
	for _, zone := range []string{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Shanghai"} {
		t.Run(zone, func(t *testing.T) {
			loc, _ := time.LoadLocation(zone)
			runs, err := backup.NextRuns("30 2 * * *", zone, utc("2025-12-31T00:00:00Z"), backup.MaxNextRuns)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(runs); i++ {
				prev, cur := runs[i-1].In(loc), runs[i].In(loc)
				py, pm, pd := prev.Date()
				if want := time.Date(py, pm, pd+1, 0, 0, 0, 0, time.UTC); !sameDate(cur, want) {
					t.Fatalf("fire %d at %v follows %v: not on the next local day", i, cur, prev)
				}
				if h, m, _ := cur.Clock(); !(h == 2 && m == 30) && !(h == 3 && m == 0) {
					// 02:30, or 03:00 when the clock jumps over 02:30.
					t.Errorf("fire %d at %v", i, cur)
				}
			}
			for _, cron := range []string{"0 * * * *", "*/15 * * * *"} {
				step := time.Hour
				if cron == "*/15 * * * *" {
					step = 15 * time.Minute
				}
				// Spans that cross the 2026 changes of both hemispheres' zones.
				for _, from := range []string{"2026-03-01T00:00:00Z", "2026-03-25T00:00:00Z", "2026-10-20T00:00:00Z", "2026-10-28T00:00:00Z"} {
					runs, err := backup.NextRuns(cron, zone, utc(from), backup.MaxNextRuns)
					if err != nil {
						t.Fatal(err)
					}
					for i := 1; i < len(runs); i++ {
						if d := runs[i].Sub(runs[i-1]); d != step && zone != "Australia/Lord_Howe" {
							t.Fatalf("%s: %v then %v: %v apart, want %v", cron, runs[i-1], runs[i], d, step)
						}
					}
				}
			}
		})
	}
}

func sameDate(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func TestTickFiresDueScheduleOnce(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	// A second handle on the same database stands for a second process.
	other := dbtest.Reopen(t, store)
	devices := schedAddDevices(t, store, "r", 5, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	sc := schedCreate(t, store, db.Schedule{Name: "n", Cron: "0 2 * * *", SpreadSeconds: 600, Enabled: true, NextRunAt: &tick})

	recs := []*schedRecorder{newSchedRecorder(store), newSchedRecorder(other)}
	scheds := []*backup.Scheduler{
		backup.NewScheduler(store, recs[0].enqueue, nil),
		backup.NewScheduler(other, recs[1].enqueue, nil),
	}
	// Round after round, both tick the same moment at once, from a common
	// start, so that both read the schedule as due before either claims.
	const rounds = 100
	for round := range rounds {
		if round > 0 {
			if _, err := dbtest.Poke(t, store).ExecContext(ctx, `DELETE FROM jobs`); err != nil {
				t.Fatal(err)
			}
			if ok, err := store.ReleaseScheduleRun(ctx, sc.ID, utc("2026-05-02T02:00:00Z"), tick, nil); err != nil || !ok {
				t.Fatalf("round %d: reset = %v, %v", round, ok, err)
			}
		}
		start := make(chan struct{})
		fired := make([]int, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				<-start
				n, err := scheds[i].Tick(ctx, tick)
				if err != nil {
					t.Error(err)
				}
				fired[i] = n
			})
		}
		close(start)
		wg.Wait()
		if fired[0]+fired[1] != 1 {
			t.Fatalf("round %d: fired %v, want once in all", round, fired)
		}
	}
	calls := append(recs[0].all(), recs[1].all()...)
	if len(calls) != rounds {
		t.Fatalf("%d enqueue calls in %d rounds, want one per round", len(calls), rounds)
	}
	if got := schedDeviceIDs(calls[0]); !slices.Equal(got, devices) {
		t.Errorf("queued devices %v, want %v", got, devices)
	}
	for _, r := range calls[0] {
		if r.Trigger != queue.TriggerSchedule {
			t.Errorf("trigger %q, want %q", r.Trigger, queue.TriggerSchedule)
		}
	}
	queued, _, err := store.JobCounts(ctx)
	if err != nil || queued != 5 {
		t.Errorf("queued jobs = %d, %v; want 5", queued, err)
	}
	// The same moment again: nothing left to fire.
	if n, err := scheds[0].Tick(ctx, tick); err != nil || n != 0 {
		t.Errorf("Tick again = %d, %v; want 0", n, err)
	}
	got, _ := store.GetSchedule(ctx, sc.ID)
	if got.LastRunAt == nil || !got.LastRunAt.Equal(tick) || got.NextRunAt == nil || !got.NextRunAt.Equal(utc("2026-05-02T02:00:00Z")) {
		t.Errorf("after fire: last %v next %v", got.LastRunAt, got.NextRunAt)
	}
}

func TestTickComputesMissingNextRunWithoutFiring(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	schedAddDevices(t, store, "r", 2, nil, true)
	sc := schedCreate(t, store, db.Schedule{Name: "every minute", Cron: "* * * * *", Enabled: true})
	rec := newSchedRecorder(store)
	s := backup.NewScheduler(store, rec.enqueue, nil)

	now := utc("2026-05-01T10:00:30Z")
	if n, err := s.Tick(ctx, now); err != nil || n != 0 {
		t.Fatalf("first Tick = %d, %v; want 0", n, err)
	}
	got, _ := store.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(utc("2026-05-01T10:01:00Z")) {
		t.Fatalf("next run %v, want 10:01", got.NextRunAt)
	}
	if len(rec.all()) != 0 {
		t.Fatal("queued backups while only computing the next run")
	}
	if n, err := s.Tick(ctx, utc("2026-05-01T10:01:00Z")); err != nil || n != 1 {
		t.Fatalf("Tick at the next run = %d, %v; want 1", n, err)
	}
}

func TestTickSkipsDisabledSchedulesAndDevices(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	on := schedAddDevices(t, store, "on", 3, nil, true)
	off := schedAddDevices(t, store, "off", 2, nil, false)
	tick := utc("2026-05-01T02:00:00Z")
	disabled := schedCreate(t, store, db.Schedule{Name: "disabled", Cron: "0 2 * * *", Enabled: false, NextRunAt: &tick})
	listed := schedCreate(t, store, db.Schedule{Name: "listed", Cron: "0 2 * * *", Enabled: true, NextRunAt: &tick,
		Target: db.ScheduleTargetDevices, TargetIDs: []int64{on[0], off[0], on[2]}})
	all := schedCreate(t, store, db.Schedule{Name: "all", Cron: "0 2 * * *", Enabled: true, NextRunAt: &tick})
	rec := newSchedRecorder(store)
	s := backup.NewScheduler(store, rec.enqueue, nil)

	if n, err := s.Tick(ctx, tick); err != nil || n != 2 {
		t.Fatalf("Tick = %d, %v; want 2", n, err)
	}
	calls := rec.all()
	if len(calls) != 2 {
		t.Fatalf("%d enqueue calls, want 2", len(calls))
	}
	// Schedules fire in id order.
	if got := schedDeviceIDs(calls[0]); !slices.Equal(got, []int64{on[0], on[2]}) {
		t.Errorf("%s queued %v, want %v", listed.Name, got, []int64{on[0], on[2]})
	}
	if got := schedDeviceIDs(calls[1]); !slices.Equal(got, on) {
		t.Errorf("%s queued %v, want %v", all.Name, got, on)
	}
	got, _ := store.GetSchedule(ctx, disabled.ID)
	if got.LastRunAt != nil || got.NextRunAt == nil || !got.NextRunAt.Equal(tick) {
		t.Errorf("disabled schedule touched: last %v next %v", got.LastRunAt, got.NextRunAt)
	}
}

func TestTickSpreadsDevicesDeterministically(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	devices := schedAddDevices(t, store, "r", 1000, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	const spread = 3600
	sc := schedCreate(t, store, db.Schedule{Name: "n", Cron: "0 2 * * *", SpreadSeconds: spread, Enabled: true, NextRunAt: &tick})
	rec := newSchedRecorder(store)
	s := backup.NewScheduler(store, rec.enqueue, nil)

	slots := func(night int, tick time.Time) map[int64]time.Duration {
		t.Helper()
		if n, err := s.Tick(ctx, tick); err != nil || n != 1 {
			t.Fatalf("night %d: Tick = %d, %v", night, n, err)
		}
		calls := rec.all()
		if len(calls) != night {
			t.Fatalf("night %d: %d enqueue calls", night, len(calls))
		}
		reqs := calls[night-1]
		if got := schedDeviceIDs(reqs); !slices.Equal(got, devices) {
			t.Fatalf("night %d: queued %d devices, want 1000", night, len(got))
		}
		out := map[int64]time.Duration{}
		distinct := map[time.Time]bool{}
		var lo, hi time.Duration = spread * time.Second, 0
		for _, r := range reqs {
			off := r.NotBefore.Sub(tick)
			if off < 0 || off >= spread*time.Second {
				t.Fatalf("device %d not before %v: outside [%v, %v)", r.DeviceID, r.NotBefore, tick, tick.Add(spread*time.Second))
			}
			out[r.DeviceID] = off
			distinct[r.NotBefore] = true
			lo, hi = min(lo, off), max(hi, off)
		}
		if len(distinct) < 900 {
			t.Errorf("night %d: only %d distinct start times for 1000 devices", night, len(distinct))
		}
		if lo > 10*time.Minute || hi < 50*time.Minute {
			t.Errorf("night %d: slots span only [%v, %v] of an hour", night, lo, hi)
		}
		return out
	}
	first := slots(1, tick)

	// The queue holds what was asked.
	queued, _, err := store.JobCounts(ctx)
	if err != nil || queued != 1000 {
		t.Fatalf("queued %d, %v", queued, err)
	}

	got, _ := store.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil {
		t.Fatal("no next run")
	}
	second := slots(2, *got.NextRunAt)
	for id, off := range first {
		if second[id] != off {
			t.Fatalf("device %d moved from slot %v to %v", id, off, second[id])
		}
	}
}

func TestTickJobsCarrySpreadSlot(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	schedAddDevices(t, store, "r", 20, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	schedCreate(t, store, db.Schedule{Name: "n", Cron: "0 2 * * *", SpreadSeconds: 900, Enabled: true, NextRunAt: &tick})
	var ids []int64
	var reqs []queue.JobRequest
	s := backup.NewScheduler(store, func(ctx context.Context, r []queue.JobRequest) ([]int64, error) {
		reqs = r
		var err error
		ids, err = store.EnqueueJobs(ctx, r)
		return ids, err
	}, nil)
	if n, err := s.Tick(ctx, tick); err != nil || n != 1 {
		t.Fatalf("Tick = %d, %v", n, err)
	}
	jobs, err := store.GetJobs(ctx, ids)
	if err != nil || len(jobs) != 20 {
		t.Fatalf("GetJobs = %d, %v", len(jobs), err)
	}
	want := map[int64]time.Time{}
	for _, r := range reqs {
		want[r.DeviceID] = r.NotBefore
	}
	for _, j := range jobs {
		if j.Trigger != queue.TriggerSchedule || j.State != queue.JobQueued || !j.NotBefore.Equal(want[j.DeviceID].Truncate(time.Millisecond)) {
			t.Errorf("job %+v, want trigger schedule, queued, not before %v", j, want[j.DeviceID])
		}
	}
}

func TestTickMissedTicksFireOnce(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	devices := schedAddDevices(t, store, "r", 50, nil, true)
	missed := utc("2026-05-01T01:00:00Z")
	sc := schedCreate(t, store, db.Schedule{Name: "hourly", Cron: "0 * * * *", SpreadSeconds: 300, Enabled: true, NextRunAt: &missed})
	rec := newSchedRecorder(store)
	s := backup.NewScheduler(store, rec.enqueue, nil)

	// Down from before 01:00 until 05:30:20: four ticks missed, one fire.
	now := utc("2026-05-01T05:30:20Z")
	if n, err := s.Tick(ctx, now); err != nil || n != 1 {
		t.Fatalf("Tick = %d, %v; want 1", n, err)
	}
	if n, err := s.Tick(ctx, now.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("Tick a minute later = %d, %v; want 0", n, err)
	}
	calls := rec.all()
	if len(calls) != 1 || !slices.Equal(schedDeviceIDs(calls[0]), devices) {
		t.Fatalf("enqueue calls %d, want one with the 50 devices", len(calls))
	}
	// A late fire spreads from when it fires, not from the old tick.
	for _, r := range calls[0] {
		if r.NotBefore.Before(now) || !r.NotBefore.Before(now.Add(300*time.Second)) {
			t.Errorf("device %d not before %v, want within [%v, +5m)", r.DeviceID, r.NotBefore, now)
		}
	}
	got, _ := store.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(utc("2026-05-01T06:00:00Z")) || got.LastRunAt == nil || !got.LastRunAt.Equal(missed) {
		t.Errorf("next %v last %v; want 06:00 and 01:00", got.NextRunAt, got.LastRunAt)
	}
}

func TestTickGroupsTargetIncludesSubgroups(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	mk := func(name string, parent *int64) int64 {
		g, err := store.CreateGroup(ctx, name, parent)
		if err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	site := mk("site", nil)
	floor := mk("floor", &site)
	rack := mk("rack", &floor)
	other := mk("other", nil)
	inSite := schedAddDevices(t, store, "site", 2, &site, true)
	inRack := schedAddDevices(t, store, "rack", 3, &rack, true)
	schedAddDevices(t, store, "rack-off", 2, &rack, false)
	schedAddDevices(t, store, "other", 2, &other, true)
	schedAddDevices(t, store, "loose", 2, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	schedCreate(t, store, db.Schedule{Name: "site", Cron: "0 2 * * *", Enabled: true, NextRunAt: &tick,
		Target: db.ScheduleTargetGroups, TargetIDs: []int64{site}})
	rec := newSchedRecorder(store)
	if n, err := backup.NewScheduler(store, rec.enqueue, nil).Tick(ctx, tick); err != nil || n != 1 {
		t.Fatalf("Tick = %d, %v", n, err)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(inSite), inRack...)))
	calls := rec.all()
	if len(calls) != 1 || !slices.Equal(schedDeviceIDs(calls[0]), want) {
		t.Fatalf("queued %v, want %v", calls, want)
	}
}

func TestTickRetriesWhenQueueingFails(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	schedAddDevices(t, store, "r", 3, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	sc := schedCreate(t, store, db.Schedule{Name: "n", Cron: "0 2 * * *", Enabled: true, NextRunAt: &tick})
	fail := true
	calls := 0
	s := backup.NewScheduler(store, func(ctx context.Context, reqs []queue.JobRequest) ([]int64, error) {
		calls++
		if fail {
			return nil, errors.New("disk full")
		}
		return store.EnqueueJobs(ctx, reqs)
	}, nil)
	if n, err := s.Tick(ctx, tick); err == nil || n != 0 {
		t.Fatalf("failing Tick = %d, %v; want 0 and an error", n, err)
	}
	got, _ := store.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(tick) || got.LastRunAt != nil {
		t.Fatalf("after failure: next %v last %v; want the tick back", got.NextRunAt, got.LastRunAt)
	}
	fail = false
	if n, err := s.Tick(ctx, tick.Add(30*time.Second)); err != nil || n != 1 {
		t.Fatalf("retry Tick = %d, %v; want 1", n, err)
	}
	if calls != 2 {
		t.Errorf("%d enqueue calls, want 2", calls)
	}
}

func TestSchedulerRunFiresAtTheTick(t *testing.T) {
	store := schedOpenStore(t)
	schedAddDevices(t, store, "r", 2, nil, true)
	// A tick two seconds ahead: well before the 30 s fallback wake-up.
	tick := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	schedCreate(t, store, db.Schedule{Name: "soon", Cron: "* * * * *", Enabled: true, NextRunAt: &tick})
	rec := newSchedRecorder(store)
	s := backup.NewScheduler(store, rec.enqueue, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	select {
	case <-rec.fired:
	case <-time.After(15 * time.Second):
		t.Error("schedule did not fire within 15 s of its tick")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if calls := rec.all(); len(calls) != 1 || len(calls[0]) != 2 {
		t.Errorf("enqueue calls %v, want one with 2 devices", calls)
	}
}

func TestEnsureDefaultSchedule(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	for range 2 {
		if err := backup.EnsureDefaultSchedule(ctx, store, "Europe/Berlin"); err != nil {
			t.Fatal(err)
		}
	}
	items, total, err := store.ListSchedules(ctx, 10, 0)
	if err != nil || total != 1 {
		t.Fatalf("schedules = %v, %d, %v; want exactly one", items, total, err)
	}
	n := items[0]
	if n.Name != "Nightly" || n.Cron != "0 2 * * *" || n.Timezone != "Europe/Berlin" || n.Target != db.ScheduleTargetAll ||
		n.SpreadSeconds != 3600 || !n.Enabled || n.NextRunAt == nil || !n.NextRunAt.After(time.Now()) {
		t.Errorf("default schedule = %+v", n)
	}
	if err := backup.ValidateSchedule(n); err != nil {
		t.Errorf("default schedule invalid: %v", err)
	}

	// Deleted by the user: not recreated.
	if err := store.DeleteSchedule(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if err := backup.EnsureDefaultSchedule(ctx, store, "UTC"); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := store.ListSchedules(ctx, 10, 0); total != 0 {
		t.Errorf("deleted default schedule came back: %d schedules", total)
	}

	t.Run("existing schedules", func(t *testing.T) {
		store := schedOpenStore(t)
		schedCreate(t, store, db.Schedule{Name: "mine", Cron: "0 4 * * *", Enabled: true})
		if err := backup.EnsureDefaultSchedule(ctx, store, ""); err != nil {
			t.Fatal(err)
		}
		if items, _, _ := store.ListSchedules(ctx, 10, 0); len(items) != 1 || items[0].Name != "mine" {
			t.Errorf("schedules = %+v, want only the user's", items)
		}
	})
	t.Run("default zone", func(t *testing.T) {
		store := schedOpenStore(t)
		if err := backup.EnsureDefaultSchedule(ctx, store, ""); err != nil {
			t.Fatal(err)
		}
		if items, _, _ := store.ListSchedules(ctx, 10, 0); len(items) != 1 || items[0].Timezone != "UTC" {
			t.Errorf("schedules = %+v, want Nightly in UTC", items)
		}
	})
	t.Run("bad zone", func(t *testing.T) {
		store := schedOpenStore(t)
		if err := backup.EnsureDefaultSchedule(ctx, store, "Nowhere/Else"); err == nil {
			t.Error("no error for an unknown zone")
		}
		if _, total, _ := store.ListSchedules(ctx, 10, 0); total != 0 {
			t.Errorf("%d schedules after a failure", total)
		}
		// A later start with a good zone still creates it.
		if err := backup.EnsureDefaultSchedule(ctx, store, "Asia/Shanghai"); err != nil {
			t.Fatal(err)
		}
		if _, total, _ := store.ListSchedules(ctx, 10, 0); total != 1 {
			t.Errorf("%d schedules, want 1", total)
		}
	})
}

func ExampleNextRuns() {
	runs, _ := backup.NextRuns("30 2 * * *", "Europe/Berlin", time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC), 2)
	for _, r := range runs {
		fmt.Println(r.Format(time.RFC3339))
	}
	// Output:
	// 2026-03-29T03:00:00+02:00
	// 2026-03-30T02:30:00+02:00
}

// A store scheduler (serve's) queues a tick's backups in the transaction
// that moves the schedule on: two of them on two handles ticking the same
// moment fire it once, and the one that fired says so (queued).
func TestStoreSchedulerFiresTickOnceWithItsJobs(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	other := dbtest.Reopen(t, store)
	devices := schedAddDevices(t, store, "r", 5, nil, true)
	tick := utc("2026-05-01T02:00:00Z")
	sc := schedCreate(t, store, db.Schedule{Name: "n", Cron: "0 2 * * *", SpreadSeconds: 600, Enabled: true, NextRunAt: &tick})
	var queued [2]int
	scheds := []*backup.Scheduler{
		backup.NewStoreScheduler(store, func() { queued[0]++ }, nil),
		backup.NewStoreScheduler(other, func() { queued[1]++ }, nil),
	}
	start := make(chan struct{})
	fired := make([]int, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			<-start
			n, err := scheds[i].Tick(ctx, tick)
			if err != nil {
				t.Error(err)
			}
			fired[i] = n
		})
	}
	close(start)
	wg.Wait()
	if fired[0]+fired[1] != 1 || queued[0]+queued[1] != 1 || fired[0] != queued[0] {
		t.Fatalf("fired %v, queued %v; want the tick fired and announced once", fired, queued)
	}
	var jobs int
	if err := dbtest.Peek(t, store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE trigger = 'schedule'`).Scan(&jobs); err != nil || jobs != len(devices) {
		t.Fatalf("scheduled jobs = %d, %v; want %d", jobs, err, len(devices))
	}
	got, err := store.GetSchedule(ctx, sc.ID)
	if err != nil || got.LastRunAt == nil || !got.LastRunAt.Equal(tick) || got.NextRunAt == nil || !got.NextRunAt.Equal(utc("2026-05-02T02:00:00Z")) {
		t.Fatalf("schedule after the tick: %+v, %v", got, err)
	}
	// The same moment again: nothing more.
	if n, err := scheds[0].Tick(ctx, tick); err != nil || n != 0 {
		t.Fatalf("second tick = %d, %v; want nothing fired", n, err)
	}
}
