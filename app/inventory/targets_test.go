package inventory_test

import (
	"context"
	"slices"
	"testing"

	"backupd/app/inventory"
	"backupd/db"
	"backupd/internal/dbtest"
)

func TestTargetNamesSplitsAndDropsRepeats(t *testing.T) {
	got := inventory.TargetNames("core-rtr-01\r\n  campus-sw-07 ,dc-fw-01\n\nCORE-RTR-01,,")
	want := []string{"core-rtr-01", "campus-sw-07", "dc-fw-01"}
	if !slices.Equal(got, want) {
		t.Errorf("TargetNames = %q, want %q", got, want)
	}
	if got := inventory.TargetNames(" \n , "); len(got) != 0 {
		t.Errorf("blank text names %q", got)
	}
}

// A device outside the caller's groups is as missing as one that does
// not exist: a scoped user learns nothing of the others' devices.
func TestDevicesNamedStaysInScope(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	core, err := store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, group int64) int64 {
		t.Helper()
		d := inventory.NewDevice()
		d.Name, d.Host, d.Platform, d.GroupID = name, "192.0.2.1", "cisco_ios", &group
		out, err := store.CreateDevice(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return out.ID
	}
	rtr := add("core-rtr-01", core.ID)
	add("lab-sw-01", lab.ID)

	ids, missing, err := inventory.DevicesNamed(ctx, store, db.Scope{GroupIDs: []int64{core.ID}},
		[]string{"CORE-RTR-01", "lab-sw-01", "nowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []int64{rtr}) || !slices.Equal(missing, []string{"lab-sw-01", "nowhere"}) {
		t.Errorf("scoped to Core: ids %v, missing %q; want [%d], [lab-sw-01 nowhere]", ids, missing, rtr)
	}
	ids, missing, err = inventory.DevicesNamed(ctx, store, db.Scope{All: true}, []string{"lab-sw-01", "core-rtr-01"})
	if err != nil || len(ids) != 2 || len(missing) != 0 {
		t.Errorf("all groups: ids %v, missing %q, %v", ids, missing, err)
	}
}
