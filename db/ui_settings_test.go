package db_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"backupd/db"
)

func TestUpdateSettingIsReadModifyWrite(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var rules []db.NoiseRule
	err := s.UpdateSetting(ctx, db.SettingNoiseRules, &rules, func(found bool) error {
		if found {
			t.Error("a setting never stored is reported found")
		}
		rules = append(rules, db.NoiseRule{Pattern: "^x$"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SettingUpdatedAt(ctx, db.SettingNoiseRules); err != nil || !ok {
		t.Fatalf("SettingUpdatedAt after a write: %v %v", ok, err)
	}
	refuse := errors.New("no")
	var again []db.NoiseRule
	err = s.UpdateSetting(ctx, db.SettingNoiseRules, &again, func(found bool) error {
		if !found || len(again) != 1 || again[0].Pattern != "^x$" {
			t.Errorf("change sees %v (found %v), want the stored rule", again, found)
		}
		again = nil
		return refuse
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("error of change = %v, want it returned", err)
	}
	got, err := s.NoiseRules(ctx)
	if err != nil || len(got) != 1 {
		t.Fatalf("a refused change stored something: %v %v", got, err)
	}
	if _, ok, _ := s.SettingUpdatedAt(ctx, "never"); ok {
		t.Error("SettingUpdatedAt reports a setting never stored")
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
