package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"backupd/db"
)

// The device list filters by where a device comes from: the devices
// made by hand (no inventory source), those of one source (not another
// source's), and those a sync disabled (not those a person disabled, nor
// the enabled ones), alone or with the other filters.
func TestListDevicesBySource(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	eu, us := newInventorySource(t, s, "NetBox EU"), newInventorySource(t, s, "NetBox US")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	res := applySync(t, s, eu.ID, at,
		db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("eu-up", "192.0.2.1")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("eu-gone", "192.0.2.2")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "3", Device: netboxDevice("eu-off", "192.0.2.3")})
	gone, off := res.CreatedIDs[1], res.CreatedIDs[2]
	applySync(t, s, eu.ID, at.Add(time.Hour), db.InventoryChange{Kind: db.InventoryDisable, Key: "2", DeviceID: gone})
	if _, err := s.UpdateDevice(ctx, off, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	applySync(t, s, us.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("us-up", "192.0.2.4")})
	insertDevice(t, s, "hand-made", nil, nil, nil)

	yes, no := true, false
	for _, tc := range []struct {
		name string
		f    db.DeviceFilter
		want []string
	}{
		{"any", db.DeviceFilter{}, []string{"eu-gone", "eu-off", "eu-up", "hand-made", "us-up"}},
		{"made by hand", db.DeviceFilter{HandMade: true}, []string{"hand-made"}},
		{"one source", db.DeviceFilter{InventorySourceID: &eu.ID}, []string{"eu-gone", "eu-off", "eu-up"}},
		{"the other source", db.DeviceFilter{InventorySourceID: &us.ID}, []string{"us-up"}},
		{"disabled by a sync", db.DeviceFilter{DisabledBySync: true}, []string{"eu-gone"}},
		{"disabled by a sync of the other source", db.DeviceFilter{DisabledBySync: true, InventorySourceID: &us.ID}, nil},
		{"one source, disabled", db.DeviceFilter{InventorySourceID: &eu.ID, Enabled: &no}, []string{"eu-gone", "eu-off"}},
		{"one source, enabled, by name", db.DeviceFilter{InventorySourceID: &eu.ID, Enabled: &yes, Query: "eu-"}, []string{"eu-up"}},
		{"made by hand and of a source", db.DeviceFilter{HandMade: true, InventorySourceID: &eu.ID}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, total, err := s.ListDevices(ctx, db.Scope{All: true}, tc.f, 50, 0)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range list {
				names = append(names, d.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tc.want) || total != len(tc.want) {
				t.Errorf("got %v (total %d), want %v", names, total, tc.want)
			}
			ids, err := s.DeviceIDsMatching(ctx, db.Scope{All: true}, tc.f)
			if err != nil || len(ids) != len(tc.want) {
				t.Errorf("DeviceIDsMatching: %v, %v; want %d", ids, err, len(tc.want))
			}
		})
	}
}
