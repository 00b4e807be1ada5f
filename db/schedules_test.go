package db_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"backupd/db"
)

func schedFixture(name string) db.Schedule {
	return db.Schedule{Name: name, Cron: "0 2 * * *", Timezone: "UTC", Target: db.ScheduleTargetAll, SpreadSeconds: 60, Enabled: true}
}

func schedCreate(t *testing.T, s *db.Store, sc db.Schedule) db.Schedule {
	t.Helper()
	out, err := s.CreateSchedule(context.Background(), sc)
	if err != nil {
		t.Fatalf("CreateSchedule(%q): %v", sc.Name, err)
	}
	return out
}

func TestScheduleCRUD(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	g := createGroup(t, s, "core", nil)

	sc := schedFixture("Core nightly")
	sc.Target, sc.TargetIDs = db.ScheduleTargetGroups, []int64{g.ID, g.ID}
	created := schedCreate(t, s, sc)
	if created.ID == 0 || created.Name != "Core nightly" || created.Cron != "0 2 * * *" || created.Timezone != "UTC" ||
		created.Target != db.ScheduleTargetGroups || !slices.Equal(created.TargetIDs, []int64{g.ID}) ||
		created.SpreadSeconds != 60 || !created.Enabled || created.LastRunAt != nil || created.NextRunAt != nil ||
		created.CreatedAt == "" || created.UpdatedAt == "" {
		t.Fatalf("created = %+v", created)
	}
	got, err := s.GetSchedule(ctx, created.ID)
	if err != nil || got.Name != created.Name || !slices.Equal(got.TargetIDs, created.TargetIDs) {
		t.Fatalf("GetSchedule = %+v, %v", got, err)
	}

	all := schedCreate(t, s, schedFixture("All"))
	if all.TargetIDs == nil || len(all.TargetIDs) != 0 {
		t.Errorf("target all: TargetIDs = %#v, want empty non-nil", all.TargetIDs)
	}
	if _, err := s.CreateSchedule(ctx, schedFixture("core NIGHTLY")); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("duplicate name ignoring case: err = %v, want ErrNameExists", err)
	}

	items, total, err := s.ListSchedules(ctx, 1, 1)
	if err != nil || total != 2 || len(items) != 1 || items[0].ID != all.ID {
		t.Errorf("ListSchedules(1, 1) = %v, %d, %v", items, total, err)
	}

	if _, err := s.UpdateSchedule(ctx, created.ID, func(sc *db.Schedule) error { sc.Name = "ALL"; return nil }); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("rename onto another name: err = %v, want ErrNameExists", err)
	}
	updated, err := s.UpdateSchedule(ctx, created.ID, func(sc *db.Schedule) error {
		sc.Name, sc.SpreadSeconds, sc.Target, sc.TargetIDs = "Everything", 0, db.ScheduleTargetAll, []int64{99}
		return nil
	})
	if err != nil || updated.Name != "Everything" || updated.SpreadSeconds != 0 || updated.Target != db.ScheduleTargetAll || len(updated.TargetIDs) != 0 {
		t.Errorf("UpdateSchedule = %+v, %v", updated, err)
	}
	refuse := errors.New("refused")
	if _, err := s.UpdateSchedule(ctx, created.ID, func(*db.Schedule) error { return refuse }); !errors.Is(err, refuse) {
		t.Errorf("patch error = %v, want it returned", err)
	}

	if err := s.DeleteSchedule(ctx, created.ID); err != nil {
		t.Fatalf("DeleteSchedule: %v", err)
	}
	if _, err := s.GetSchedule(ctx, created.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetSchedule after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSchedule(ctx, created.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("DeleteSchedule twice: %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateSchedule(ctx, created.ID, func(*db.Schedule) error { return nil }); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("UpdateSchedule missing: %v, want ErrNotFound", err)
	}
}

func TestScheduleTargetsMustExist(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	g := createGroup(t, s, "g", nil)
	dev := insertDevice(t, s, "r1", nil, nil, nil)

	for _, c := range []struct {
		target string
		ids    []int64
		ok     bool
	}{
		{db.ScheduleTargetGroups, []int64{g.ID}, true},
		{db.ScheduleTargetGroups, []int64{g.ID, 777}, false},
		{db.ScheduleTargetDevices, []int64{dev}, true},
		{db.ScheduleTargetDevices, []int64{dev, 888}, false},
	} {
		sc := schedFixture("s")
		sc.Target, sc.TargetIDs = c.target, c.ids
		out, err := s.CreateSchedule(ctx, sc)
		var ref *db.ErrReference
		switch {
		case c.ok && err != nil:
			t.Errorf("%s %v: %v", c.target, c.ids, err)
		case !c.ok && (!errors.As(err, &ref) || ref.Field != "target_ids"):
			t.Errorf("%s %v: err = %v, want *ErrReference on target_ids", c.target, c.ids, err)
		}
		if err == nil {
			if err := s.DeleteSchedule(ctx, out.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestScheduleClaimRunOnlyOnce(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	tick := time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)
	next := tick.Add(24 * time.Hour)
	sc := schedFixture("n")
	sc.NextRunAt = &tick
	sc = schedCreate(t, s, sc)

	due, err := s.DueSchedules(ctx, tick.Add(-time.Second))
	if err != nil || len(due) != 0 {
		t.Fatalf("DueSchedules before the tick = %v, %v; want none", due, err)
	}
	due, err = s.DueSchedules(ctx, tick)
	if err != nil || len(due) != 1 || due[0].ID != sc.ID || !due[0].NextRunAt.Equal(tick) {
		t.Fatalf("DueSchedules at the tick = %v, %v", due, err)
	}
	if at, ok, err := s.NextScheduleRunAfter(ctx, tick.Add(-time.Minute)); err != nil || !ok || !at.Equal(tick) {
		t.Errorf("NextScheduleRunAfter = %v %v %v, want %v", at, ok, err, tick)
	}

	if ok, err := s.ClaimScheduleRun(ctx, sc.ID, tick, next); err != nil || !ok {
		t.Fatalf("first claim = %v, %v; want true", ok, err)
	}
	if ok, err := s.ClaimScheduleRun(ctx, sc.ID, tick, next); err != nil || ok {
		t.Fatalf("second claim of the same tick = %v, %v; want false", ok, err)
	}
	got, _ := s.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(next) || got.LastRunAt == nil || !got.LastRunAt.Equal(tick) {
		t.Errorf("after claim: next %v last %v, want %v %v", got.NextRunAt, got.LastRunAt, next, tick)
	}

	// Releasing gives the tick back, once.
	if ok, err := s.ReleaseScheduleRun(ctx, sc.ID, next, tick, nil); err != nil || !ok {
		t.Fatalf("release = %v, %v", ok, err)
	}
	got, _ = s.GetSchedule(ctx, sc.ID)
	if got.NextRunAt == nil || !got.NextRunAt.Equal(tick) || got.LastRunAt != nil {
		t.Errorf("after release: next %v last %v, want %v nil", got.NextRunAt, got.LastRunAt, tick)
	}
	if ok, _ := s.ReleaseScheduleRun(ctx, sc.ID, next, tick, nil); ok {
		t.Error("second release succeeded")
	}

	// Disabled schedules are never due.
	if _, err := s.UpdateSchedule(ctx, sc.ID, func(sc *db.Schedule) error { sc.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.DueSchedules(ctx, next.Add(time.Hour)); len(due) != 0 {
		t.Errorf("disabled schedule due: %v", due)
	}
}

func TestUpdateScheduleClearsNextRunWhenTimingChanges(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	tick := time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)
	sc := schedFixture("n")
	sc.NextRunAt = &tick
	sc = schedCreate(t, s, sc)
	if sc.NextRunAt == nil || !sc.NextRunAt.Equal(tick) {
		t.Fatalf("created next run %v, want %v", sc.NextRunAt, tick)
	}

	// A rename keeps it.
	got, err := s.UpdateSchedule(ctx, sc.ID, func(sc *db.Schedule) error { sc.Name = "renamed"; return nil })
	if err != nil || got.NextRunAt == nil || !got.NextRunAt.Equal(tick) {
		t.Fatalf("after rename: %v, %v", got.NextRunAt, err)
	}
	// A new cron expression clears it for the scheduler to recompute.
	got, err = s.UpdateSchedule(ctx, sc.ID, func(sc *db.Schedule) error { sc.Cron = "0 3 * * *"; return nil })
	if err != nil || got.NextRunAt != nil {
		t.Fatalf("after cron change: %v, %v; want nil", got.NextRunAt, err)
	}
	// Unless the patch sets it itself.
	later := tick.Add(time.Hour)
	got, err = s.UpdateSchedule(ctx, sc.ID, func(sc *db.Schedule) error { sc.Timezone, sc.NextRunAt = "Asia/Shanghai", &later; return nil })
	if err != nil || got.NextRunAt == nil || !got.NextRunAt.Equal(later) {
		t.Fatalf("after zone change with next run: %v, %v; want %v", got.NextRunAt, err, later)
	}
	if ok, err := s.InitScheduleNextRun(ctx, sc.ID, tick); err != nil || ok {
		t.Errorf("InitScheduleNextRun over an existing next run = %v, %v; want false", ok, err)
	}
}

func TestTargetDevices(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	// A tree a > b > c, and d beside it; "/1/" must not match "/10/".
	a := createGroup(t, s, "a", nil)
	b := createGroup(t, s, "b", &a.ID)
	c := createGroup(t, s, "c", &b.ID)
	d := createGroup(t, s, "d", nil)
	for i := range 6 {
		createGroup(t, s, fmt.Sprintf("filler-%d", i), nil)
	}
	ten := createGroup(t, s, "ten", nil)
	inA := insertDevice(t, s, "in-a", &a.ID, nil, nil)
	inB := insertDevice(t, s, "in-b", &b.ID, nil, nil)
	inC := insertDevice(t, s, "in-c", &c.ID, nil, nil)
	offC := insertDevice(t, s, "off-c", &c.ID, nil, nil)
	inD := insertDevice(t, s, "in-d", &d.ID, nil, nil)
	inTen := insertDevice(t, s, "in-ten", &ten.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)
	if _, err := s.Exec(ctx, `UPDATE devices SET enabled = 0 WHERE id = ?`, offC); err != nil {
		t.Fatal(err)
	}
	if a.ID != 1 || ten.ID != 11 {
		t.Fatalf("group ids %d %d, the test wants 1 and 11", a.ID, ten.ID)
	}

	for _, tc := range []struct {
		name   string
		target string
		ids    []int64
		want   []int64
	}{
		{"all", db.ScheduleTargetAll, nil, []int64{inA, inB, inC, inD, inTen, loose}},
		{"group with subgroups", db.ScheduleTargetGroups, []int64{a.ID}, []int64{inA, inB, inC}},
		{"subgroup", db.ScheduleTargetGroups, []int64{b.ID}, []int64{inB, inC}},
		{"overlapping groups", db.ScheduleTargetGroups, []int64{a.ID, c.ID, d.ID}, []int64{inA, inB, inC, inD}},
		{"missing group", db.ScheduleTargetGroups, []int64{404}, []int64{}},
		{"devices", db.ScheduleTargetDevices, []int64{loose, offC, 404, inA}, []int64{inA, loose}},
		{"no devices", db.ScheduleTargetDevices, nil, []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.TargetDevices(ctx, tc.target, tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := s.TargetDevices(ctx, "everything", nil); err == nil {
		t.Error("unknown target: no error")
	}
}

func TestTargetDevicesAtTenThousand(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	g := createGroup(t, s, "big", nil)
	sub := createGroup(t, s, "big-sub", &g.ID)
	// 10,000 devices, half in the subgroup, every tenth disabled.
	if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
		INSERT INTO devices (name, host, port, platform, login_method, group_id, enabled, created_at, updated_at)
		SELECT 'dev-' || i, '10.0.0.1', 22, 'cisco_ios', 'ssh', CASE WHEN i % 2 = 0 THEN CAST(? AS INTEGER) ELSE CAST(? AS INTEGER) END,
			CASE WHEN i % 10 <> 0 THEN 1 ELSE 0 END, ?, ? FROM n`,
		g.ID, sub.ID, db.Now(), db.Now()); err != nil {
		t.Fatal(err)
	}
	all, err := s.TargetDevices(ctx, db.ScheduleTargetAll, nil)
	if err != nil || len(all) != 9000 {
		t.Fatalf("all: %d devices, %v; want 9000", len(all), err)
	}
	groups, err := s.TargetDevices(ctx, db.ScheduleTargetGroups, []int64{g.ID})
	if err != nil || !slices.Equal(groups, all) {
		t.Fatalf("group with subgroup: %d devices, %v; want the 9000", len(groups), err)
	}
	devs, err := s.TargetDevices(ctx, db.ScheduleTargetDevices, all)
	if err != nil || !slices.Equal(devs, all) {
		t.Fatalf("devices: %d, %v; want the 9000", len(devs), err)
	}

	// EnabledDeviceAddresses walks them all by pages.
	var seen []int64
	var after int64
	for pages := 0; pages < 100; pages++ {
		page, err := s.EnabledDeviceAddresses(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			if a.Host != "10.0.0.1" || a.Port != 22 {
				t.Fatalf("address %+v", a)
			}
			seen = append(seen, a.ID)
		}
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(seen, all) {
		t.Errorf("EnabledDeviceAddresses walked %d devices, want the 9000 enabled", len(seen))
	}
}

func BenchmarkTargetDevicesGroups(b *testing.B) {
	ctx := context.Background()
	s, err := db.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	g, err := s.CreateGroup(ctx, "big", nil)
	if err != nil {
		b.Fatal(err)
	}
	sub, err := s.CreateGroup(ctx, "sub", &g.ID)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
		INSERT INTO devices (name, host, port, platform, login_method, group_id, created_at, updated_at)
		SELECT 'dev-' || i, '10.0.0.1', 22, 'cisco_ios', 'ssh', CASE WHEN i % 2 = 0 THEN ? ELSE ? END, ?, ? FROM n`,
		g.ID, sub.ID, db.Now(), db.Now()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ids, err := s.TargetDevices(ctx, db.ScheduleTargetGroups, []int64{g.ID})
		if err != nil || len(ids) != 20000 {
			b.Fatal(len(ids), err)
		}
	}
}

func TestScheduleTargetsFollowScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	branch := createGroup(t, s, "Branch", nil)
	r1 := insertDevice(t, s, "R1", &core.ID, nil, nil)
	a1 := insertDevice(t, s, "a1", &access.ID, nil, nil)
	b1 := insertDevice(t, s, "b1", &branch.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)
	coreScope := db.Scope{GroupIDs: []int64{core.ID}}
	all := db.Scope{All: true}

	groups, err := s.ScheduleGroups(ctx, coreScope)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"Core", "Access"}) {
		t.Errorf("groups in the Core scope: %v, want [Core Access]", names)
	}
	if g, _ := s.ScheduleGroups(ctx, db.Scope{}); len(g) != 0 {
		t.Errorf("an empty scope sees groups %v", g)
	}

	found, err := s.ScheduleDevicesByName(ctx, coreScope, []string{"r1", "A1", "b1", "loose", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range found {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []int64{a1, r1}) {
		t.Errorf("devices found by name in the Core scope: %v, want [%d %d] (case ignored, by name)", ids, a1, r1)
	}
	if found, _ := s.ScheduleDevicesByName(ctx, all, []string{"loose"}); len(found) != 1 {
		t.Errorf("an all-groups user does not find a device outside any group")
	}
	refs, err := s.ScheduleDeviceNames(ctx, []int64{b1, r1, 9999})
	if err != nil || len(refs) != 2 || refs[0].Name != "b1" || refs[1].Name != "R1" {
		t.Errorf("ScheduleDeviceNames = %v, %v; want b1 and R1 (by name, ignoring case), the missing id skipped", refs, err)
	}

	for _, c := range []struct {
		scope  db.Scope
		target string
		ids    []int64
		want   bool
	}{
		{all, db.ScheduleTargetAll, nil, true},
		{coreScope, db.ScheduleTargetAll, nil, false},
		{coreScope, db.ScheduleTargetGroups, []int64{core.ID, access.ID}, true},
		{coreScope, db.ScheduleTargetGroups, []int64{access.ID, 9999}, true},
		{coreScope, db.ScheduleTargetGroups, []int64{access.ID, branch.ID}, false},
		{db.Scope{GroupIDs: []int64{access.ID}}, db.ScheduleTargetGroups, []int64{core.ID}, false},
		{coreScope, db.ScheduleTargetDevices, []int64{r1, a1}, true},
		{coreScope, db.ScheduleTargetDevices, []int64{r1, b1}, false},
		{coreScope, db.ScheduleTargetDevices, []int64{loose}, false},
		{db.Scope{}, db.ScheduleTargetDevices, []int64{r1}, false},
		{db.Scope{}, db.ScheduleTargetGroups, []int64{core.ID}, false},
	} {
		got, err := s.ScheduleTargetInScope(ctx, c.scope, c.target, c.ids)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("ScheduleTargetInScope(%+v, %s, %v) = %v, want %v", c.scope, c.target, c.ids, got, c.want)
		}
	}
}
