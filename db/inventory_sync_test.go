package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

var syncBy = db.AuditEntry{Username: "inventory", Interface: "cli"}

// applySync applies changes to src at at and fails t on an error.
func applySync(t *testing.T, s *db.Store, src int64, at time.Time, changes ...db.InventoryChange) db.InventorySyncResult {
	t.Helper()
	res, err := s.ApplyInventorySync(context.Background(), src, db.InventorySync{Changes: changes, At: at, By: syncBy})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

func netboxDevice(name, host string, group ...string) db.InventoryDevice {
	return db.InventoryDevice{Name: name, Host: host, Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", GroupPath: group}
}

func mustDevice(t *testing.T, s *db.Store, id int64) db.Device {
	t.Helper()
	d, err := s.GetDevice(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Three syncs: the first creates two devices (their group path made as
// nested groups), the second updates one and disables the other that
// vanished, the third enables it again when it comes back. Each change
// is audited naming the source and the key, and the source keeps when
// and how its last sync went.
func TestInventorySyncCreateUpdateDisableEnable(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox EU")
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	res := applySync(t, s, src.ID, t0,
		db.InventoryChange{Kind: db.InventoryCreate, Key: "101", Device: netboxDevice("par-core-1", "192.0.2.1", "EU", "Paris")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "102", Device: netboxDevice("par-core-2", "192.0.2.2", "EU", "Paris")})
	if res.Created != 2 || len(res.CreatedIDs) != 2 || len(res.Skipped) != 0 {
		t.Fatalf("first sync %+v", res)
	}
	one, two := res.CreatedIDs[0], res.CreatedIDs[1]
	d := mustDevice(t, s, one)
	if d.InventorySourceID == nil || *d.InventorySourceID != src.ID || d.InventoryKey == nil || *d.InventoryKey != "101" ||
		!d.Enabled || d.DisabledBySync || d.Host != "192.0.2.1" || d.ZoneID != db.LocalZone || d.GroupID == nil {
		t.Fatalf("created %+v", d)
	}
	labels, err := s.DeviceLabelsOf(ctx, d)
	if err != nil || strings.Join(labels.GroupPath, "/") != "EU/Paris" {
		t.Fatalf("group path %v, %v", labels.GroupPath, err)
	}
	if n := countRows(t, s, "device_groups"); n != 2 {
		t.Errorf("%d groups, want EU and Paris once each", n)
	}
	synced, err := s.SyncedDevices(ctx, src.ID)
	if err != nil || len(synced) != 2 || synced[0].Key != "101" || synced[0].DeviceID != one ||
		strings.Join(synced[0].Device.GroupPath, "/") != "EU/Paris" || synced[1].Device.Host != "192.0.2.2" {
		t.Fatalf("synced %+v, %v", synced, err)
	}

	t1 := t0.Add(time.Hour)
	res = applySync(t, s, src.ID, t1,
		db.InventoryChange{Kind: db.InventoryUpdate, Key: "101", DeviceID: one, Fields: []string{db.InventoryFieldHost, db.InventoryFieldGroup},
			Device: netboxDevice("", "198.51.100.1", "EU", "Lyon"), Was: netboxDevice("", "192.0.2.1", "EU", "Paris")},
		db.InventoryChange{Kind: db.InventoryDisable, Key: "102", DeviceID: two})
	if res.Updated != 1 || res.Disabled != 1 || len(res.Skipped) != 0 {
		t.Fatalf("second sync %+v", res)
	}
	d = mustDevice(t, s, one)
	labels, _ = s.DeviceLabelsOf(ctx, d)
	if d.Host != "198.51.100.1" || d.Name != "par-core-1" || strings.Join(labels.GroupPath, "/") != "EU/Lyon" {
		t.Errorf("updated %+v in %v", d, labels.GroupPath)
	}
	if d := mustDevice(t, s, two); d.Enabled || !d.DisabledBySync {
		t.Errorf("disabled %+v", d)
	}

	t2 := t1.Add(time.Hour)
	res = applySync(t, s, src.ID, t2, db.InventoryChange{Kind: db.InventoryEnable, Key: "102", DeviceID: two})
	if res.Enabled != 1 || len(res.Skipped) != 0 {
		t.Fatalf("third sync %+v", res)
	}
	if d := mustDevice(t, s, two); !d.Enabled || d.DisabledBySync {
		t.Errorf("enabled again %+v", d)
	}
	got, err := s.InventorySource(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	var counts map[string]int
	if err := json.Unmarshal(got.LastCounts, &counts); err != nil {
		t.Fatal(err)
	}
	if got.LastSyncAt == nil || *got.LastSyncAt != t2.Format(db.TimeFormat) || got.LastStatus != db.InventorySyncOK ||
		counts["enabled"] != 1 || counts["created"] != 0 {
		t.Errorf("source after the syncs %+v (%v)", got, counts)
	}

	entries, _, err := s.ListAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		actions = append(actions, e.Action+" "+e.TargetID+" "+fmt.Sprint(e.Details["key"]))
		if e.Details["source"] != "NetBox EU" || e.TargetType != "device" || e.Username != "inventory" {
			t.Errorf("entry %+v does not name the source", e)
		}
	}
	want := []string{
		fmt.Sprintf("inventory.sync.create %d 101", one), fmt.Sprintf("inventory.sync.create %d 102", two),
		fmt.Sprintf("inventory.sync.update %d 101", one), fmt.Sprintf("inventory.sync.disable %d 102", two),
		fmt.Sprintf("inventory.sync.enable %d 102", two),
	}
	if strings.Join(actions, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(actions, "\n"), strings.Join(want, "\n"))
	}
}

// CreatedIDs hand back the devices a sync created, one per create in
// the order of the creates among the other changes (some of them
// skipped), so that the report can link each create to its device.
func TestInventorySyncCreatedIDsFollowTheirCreates(t *testing.T) {
	s := openStore(t)
	src := newInventorySource(t, s, "NetBox")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	first := applySync(t, s, src.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("a", "192.0.2.1")})
	res := applySync(t, s, src.ID, at.Add(time.Hour),
		db.InventoryChange{Kind: db.InventoryEnable, Key: "1", DeviceID: first.CreatedIDs[0]}, // skipped: enabled
		db.InventoryChange{Kind: db.InventoryCreate, Key: "3", Device: netboxDevice("c", "192.0.2.3")},
		db.InventoryChange{Kind: db.InventoryDisable, Key: "1", DeviceID: first.CreatedIDs[0]},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("b", "192.0.2.2")})
	if res.Created != 2 || len(res.CreatedIDs) != 2 || len(res.Skipped) != 1 || res.Skipped[0].Index != 0 {
		t.Fatalf("second sync %+v", res)
	}
	for i, want := range []string{"3 c", "2 b"} {
		d := mustDevice(t, s, res.CreatedIDs[i])
		got := d.Name
		if d.InventoryKey != nil {
			got = *d.InventoryKey + " " + d.Name
		}
		if got != want || slices.Contains(first.CreatedIDs, d.ID) {
			t.Errorf("created id %d is device %d (key and name %q), want %s", i, d.ID, got, want)
		}
	}
}

// A device a person disabled is never enabled by a sync, nor marked as
// the sync's by a disable; a device the sync disabled that a person
// enables is the person's again.
func TestInventorySyncNeverEnablesPersonDisabled(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	res := applySync(t, s, src.ID, at,
		db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("sw1", "192.0.2.1")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("sw2", "192.0.2.2")})
	sw1, sw2 := res.CreatedIDs[0], res.CreatedIDs[1]
	if _, err := s.UpdateDevice(ctx, sw1, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	res = applySync(t, s, src.ID, at.Add(time.Hour),
		db.InventoryChange{Kind: db.InventoryDisable, Key: "1", DeviceID: sw1},
		db.InventoryChange{Kind: db.InventoryDisable, Key: "2", DeviceID: sw2})
	if res.Disabled != 1 || len(res.Skipped) != 1 || res.Skipped[0].Reason != db.InventorySkipAlreadyDisabled || res.Skipped[0].Index != 0 {
		t.Fatalf("disable %+v", res)
	}
	if d := mustDevice(t, s, sw1); d.Enabled || d.DisabledBySync {
		t.Errorf("a person's disable became the sync's: %+v", d)
	}
	res = applySync(t, s, src.ID, at.Add(2*time.Hour), db.InventoryChange{Kind: db.InventoryEnable, Key: "1", DeviceID: sw1})
	if res.Enabled != 0 || len(res.Skipped) != 1 || res.Skipped[0].Reason != db.InventorySkipNotDisabledBySync {
		t.Fatalf("enable of a person's disable %+v", res)
	}
	if d := mustDevice(t, s, sw1); d.Enabled {
		t.Errorf("the sync enabled what a person disabled: %+v", d)
	}
	// sw2, disabled by the sync: a person's edit that leaves it
	// disabled leaves it the sync's to enable.
	if _, err := s.UpdateDevice(ctx, sw2, func(d *db.Device) error { d.Remarks = ptr("rack 4"); return nil }); err != nil {
		t.Fatal(err)
	}
	if d := mustDevice(t, s, sw2); !d.DisabledBySync || d.Enabled {
		t.Errorf("an edit took the sync's disable: %+v", d)
	}
	// Enabled by a person, disabled by a person again: the person's.
	for _, on := range []bool{true, false} {
		if _, err := s.UpdateDevice(ctx, sw2, func(d *db.Device) error { d.Enabled = on; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if d := mustDevice(t, s, sw2); d.DisabledBySync || d.InventoryKey == nil || *d.InventoryKey != "2" {
		t.Errorf("after a person's edits %+v", d)
	}
	res = applySync(t, s, src.ID, at.Add(3*time.Hour), db.InventoryChange{Kind: db.InventoryEnable, Key: "2", DeviceID: sw2})
	if res.Enabled != 0 || len(res.Skipped) != 1 {
		t.Fatalf("enable of sw2 %+v", res)
	}
}

// A device made by hand is touched by no change but a claim; once
// claimed, the source updates it.
func TestInventorySyncLeavesHandMadeDevices(t *testing.T) {
	s := openStore(t)
	src := newInventorySource(t, s, "NetBox")
	hand := insertDevice(t, s, "edge-1", nil, nil, nil)
	before := mustDevice(t, s, hand)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	was := netboxDevice("edge-1", "127.0.0.1")
	res := applySync(t, s, src.ID, at,
		db.InventoryChange{Kind: db.InventoryUpdate, Key: "7", DeviceID: hand, Fields: []string{db.InventoryFieldHost},
			Device: netboxDevice("", "192.0.2.7"), Was: was},
		db.InventoryChange{Kind: db.InventoryDisable, Key: "7", DeviceID: hand},
		db.InventoryChange{Kind: db.InventoryEnable, Key: "7", DeviceID: hand})
	if res.Updated+res.Disabled+res.Enabled != 0 || len(res.Skipped) != 3 {
		t.Fatalf("changes to a hand-made device %+v", res)
	}
	for _, sk := range res.Skipped {
		if sk.Reason != db.InventorySkipNotOwned {
			t.Errorf("skipped %+v, want not_owned", sk)
		}
	}
	if after := mustDevice(t, s, hand); !reflect.DeepEqual(after, before) {
		t.Errorf("hand-made device changed:\n%+v\n%+v", before, after)
	}
	if n := len(auditActions(t, s)); n != 0 {
		t.Errorf("%d audit entries for skipped changes", n)
	}
	res = applySync(t, s, src.ID, at.Add(time.Hour),
		db.InventoryChange{Kind: db.InventoryClaim, Key: "7", DeviceID: hand, Was: was},
		db.InventoryChange{Kind: db.InventoryUpdate, Key: "7", DeviceID: hand, Fields: []string{db.InventoryFieldHost},
			Device: netboxDevice("", "192.0.2.7"), Was: was})
	if res.Claimed != 1 || res.Updated != 1 || len(res.Skipped) != 0 {
		t.Fatalf("claim %+v", res)
	}
	if d := mustDevice(t, s, hand); d.Host != "192.0.2.7" || d.InventoryKey == nil || *d.InventoryKey != "7" {
		t.Errorf("claimed %+v", d)
	}
	// Claimed already: a second claim, by this source or another, is skipped.
	other := newInventorySource(t, s, "CMDB")
	res = applySync(t, s, other.ID, at.Add(2*time.Hour), db.InventoryChange{Kind: db.InventoryClaim, Key: "x", DeviceID: hand})
	if len(res.Skipped) != 1 || res.Skipped[0].Reason != db.InventorySkipNotOwned {
		t.Errorf("claim of another source's device %+v", res)
	}
}

// A person's edit between the plan and the apply wins: the change that
// would overwrite it is skipped and reported, the others apply.
func TestInventorySyncSkipsDevicesEditedSincePlan(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	res := applySync(t, s, src.ID, at,
		db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("a", "192.0.2.1")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("b", "192.0.2.2")})
	a, b := res.CreatedIDs[0], res.CreatedIDs[1]
	if _, err := s.UpdateDevice(ctx, a, func(d *db.Device) error { d.Host = "10.0.0.1"; return nil }); err != nil {
		t.Fatal(err)
	}
	host := []string{db.InventoryFieldHost}
	res = applySync(t, s, src.ID, at.Add(time.Hour),
		db.InventoryChange{Kind: db.InventoryUpdate, Key: "1", DeviceID: a, Fields: host, Device: netboxDevice("", "192.0.2.11"), Was: netboxDevice("", "192.0.2.1")},
		db.InventoryChange{Kind: db.InventoryUpdate, Key: "2", DeviceID: b, Fields: host, Device: netboxDevice("", "192.0.2.12"), Was: netboxDevice("", "192.0.2.2")})
	if res.Updated != 1 || len(res.Skipped) != 1 || res.Skipped[0].Reason != db.InventorySkipChanged || res.Skipped[0].DeviceID != a {
		t.Fatalf("apply %+v", res)
	}
	if d := mustDevice(t, s, a); d.Host != "10.0.0.1" {
		t.Errorf("the person's host was overwritten: %s", d.Host)
	}
	if d := mustDevice(t, s, b); d.Host != "192.0.2.12" {
		t.Errorf("the other update was not applied: %s", d.Host)
	}
	// A device deleted since the plan is skipped too.
	if err := s.DeleteDevice(ctx, b); err != nil {
		t.Fatal(err)
	}
	res = applySync(t, s, src.ID, at.Add(2*time.Hour), db.InventoryChange{Kind: db.InventoryDisable, Key: "2", DeviceID: b})
	if len(res.Skipped) != 1 || res.Skipped[0].Reason != db.InventorySkipGone {
		t.Errorf("disable of a deleted device %+v", res)
	}
}

// One change that cannot apply (a name another device has, a credential
// that does not exist, a key the source gave already) rolls the whole
// sync back: no device, group or audit entry is written, and the
// source's last sync stays as it was.
func TestInventorySyncFailureRollsBackEverything(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox")
	insertDevice(t, s, "core-1", nil, nil, nil)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	first := applySync(t, s, src.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("edge-1", "192.0.2.1")})
	devices, audit, groups := countRows(t, s, "devices"), countRows(t, s, "audit_log"), countRows(t, s, "device_groups")
	missing := int64(999)
	for name, tc := range map[string]struct {
		bad  db.InventoryChange
		want func(error) bool
	}{
		"name clash": {db.InventoryChange{Kind: db.InventoryCreate, Key: "3", Device: netboxDevice("CORE-1", "192.0.2.3", "DC")},
			func(err error) bool { return errors.Is(err, db.ErrNameExists) }},
		"rename clash": {db.InventoryChange{Kind: db.InventoryUpdate, Key: "1", DeviceID: first.CreatedIDs[0], Fields: []string{db.InventoryFieldName},
			Device: netboxDevice("core-1", ""), Was: netboxDevice("edge-1", "")},
			func(err error) bool { return errors.Is(err, db.ErrNameExists) }},
		"missing credential": {db.InventoryChange{Kind: db.InventoryCreate, Key: "3",
			Device: db.InventoryDevice{Name: "x", Host: "192.0.2.3", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", CredentialID: &missing}},
			func(err error) bool {
				var ref *db.ErrReference
				return errors.As(err, &ref) && ref.Field == "credential_id"
			}},
		"key given": {db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("edge-9", "192.0.2.9")},
			func(err error) bool { return errors.Is(err, db.ErrInventoryKeyTaken) }},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.ApplyInventorySync(ctx, src.ID, db.InventorySync{At: at.Add(time.Hour), By: syncBy, Changes: []db.InventoryChange{
				{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("edge-2", "192.0.2.2", "DC", "Row 1")},
				{Kind: db.InventoryDisable, Key: "1", DeviceID: first.CreatedIDs[0]},
				tc.bad,
			}})
			var ce *db.InventoryChangeError
			if !errors.As(err, &ce) || ce.Index != 2 || !tc.want(err) {
				t.Fatalf("apply: %v", err)
			}
			if d, a, g := countRows(t, s, "devices"), countRows(t, s, "audit_log"), countRows(t, s, "device_groups"); d != devices || a != audit || g != groups {
				t.Errorf("after a failed sync: %d devices, %d audit entries, %d groups; want %d, %d, %d", d, a, g, devices, audit, groups)
			}
			if d := mustDevice(t, s, first.CreatedIDs[0]); !d.Enabled {
				t.Error("the disable before the failing change was kept")
			}
			if got, _ := s.InventorySource(ctx, src.ID); got.LastSyncAt == nil || *got.LastSyncAt != at.Format(db.TimeFormat) {
				t.Errorf("last sync moved to %v", got.LastSyncAt)
			}
		})
	}
	// Two creates under one key in one list are refused before anything.
	_, err := s.ApplyInventorySync(ctx, src.ID, db.InventorySync{At: at, By: syncBy, Changes: []db.InventoryChange{
		{Kind: db.InventoryCreate, Key: "5", Device: netboxDevice("p", "192.0.2.5")},
		{Kind: db.InventoryCreate, Key: "5", Device: netboxDevice("q", "192.0.2.6")},
	}})
	if !errors.Is(err, db.ErrInventoryKeyTaken) {
		t.Errorf("one key twice: %v", err)
	}
	if _, err := s.ApplyInventorySync(ctx, src.ID+100, db.InventorySync{At: at, By: syncBy}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a missing source: %v", err)
	}
}

// A source gives a key to one device: the index refuses a second, of
// the same source only; devices without a source have no key to clash.
func TestInventoryKeyUniquePerSource(t *testing.T) {
	s := openStore(t)
	a, b := newInventorySource(t, s, "A"), newInventorySource(t, s, "B")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	applySync(t, s, a.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("a1", "192.0.2.1")})
	applySync(t, s, b.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("b1", "192.0.2.2")})
	hand := insertDevice(t, s, "hand", nil, nil, nil)
	_, err := s.ApplyInventorySync(context.Background(), a.ID, db.InventorySync{At: at, By: syncBy,
		Changes: []db.InventoryChange{{Kind: db.InventoryClaim, Key: "1", DeviceID: hand}}})
	if !errors.Is(err, db.ErrInventoryKeyTaken) {
		t.Errorf("claim under a key given: %v", err)
	}
	// The index itself, below the store's checks.
	_, err = s.InsertID(context.Background(), `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at,
		inventory_source_id, inventory_key) VALUES ('a2', 'h', 22, 'cisco_ios', 'ssh', ?, ?, ?, '1')`, db.Now(), db.Now(), a.ID)
	if err == nil {
		t.Error("the index let a source give one key twice")
	}
	// Devices without a source share the NULL key freely.
	for i := range 2 {
		insertDevice(t, s, fmt.Sprintf("loose-%d", i), nil, nil, nil)
	}
}

// Deleting a source leaves its devices, their history and audit, made by
// hand from then on: no source, no key, no sync's disable to undo.
func TestDeleteInventorySourceKeepsDevices(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	res := applySync(t, s, src.ID, at,
		db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("a", "192.0.2.1")},
		db.InventoryChange{Kind: db.InventoryCreate, Key: "2", Device: netboxDevice("b", "192.0.2.2")})
	applySync(t, s, src.ID, at.Add(time.Hour), db.InventoryChange{Kind: db.InventoryDisable, Key: "2", DeviceID: res.CreatedIDs[1]})
	audit := countRows(t, s, "audit_log")
	if err := s.DeleteInventorySource(ctx, src.ID, nil); err != nil {
		t.Fatal(err)
	}
	for i, id := range res.CreatedIDs {
		d := mustDevice(t, s, id)
		if d.InventorySourceID != nil || d.InventoryKey != nil || d.DisabledBySync || d.Enabled != (i == 0) {
			t.Errorf("device after its source went %+v", d)
		}
	}
	if n := countRows(t, s, "audit_log"); n != audit {
		t.Errorf("audit %d, was %d", n, audit)
	}
	if synced, err := s.SyncedDevices(ctx, src.ID); err != nil || len(synced) != 0 {
		t.Errorf("synced of a deleted source %v, %v", synced, err)
	}
}

// A failed sync records its failure and changes nothing else.
func TestRecordInventorySyncFailure(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := newInventorySource(t, s, "NetBox")
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	res := applySync(t, s, src.ID, at, db.InventoryChange{Kind: db.InventoryCreate, Key: "1", Device: netboxDevice("a", "192.0.2.1")})
	before := mustDevice(t, s, res.CreatedIDs[0])
	ok, _ := s.InventorySource(ctx, src.ID)
	audit := countRows(t, s, "audit_log")
	if err := s.RecordInventorySyncFailure(ctx, src.ID, at.Add(time.Hour), "page 3 of 5: HTTP 502 "+strings.Repeat("x", 10000)); err != nil {
		t.Fatal(err)
	}
	got, _ := s.InventorySource(ctx, src.ID)
	if got.LastStatus != db.InventorySyncFailed || !strings.HasPrefix(got.LastError, "page 3 of 5: HTTP 502") ||
		len(got.LastError) > db.MaxInventoryErrorBytes || *got.LastSyncAt != at.Add(time.Hour).Format(db.TimeFormat) ||
		string(got.LastCounts) != string(ok.LastCounts) {
		t.Errorf("after a failure %+v", got)
	}
	if after := mustDevice(t, s, before.ID); !reflect.DeepEqual(after, before) {
		t.Errorf("a failure changed a device")
	}
	if n := countRows(t, s, "audit_log"); n != audit {
		t.Errorf("audit %d, was %d", n, audit)
	}
	if err := s.RecordInventorySyncFailure(ctx, src.ID+100, at, "x"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("a missing source: %v", err)
	}
	// The next good sync clears the error.
	applySync(t, s, src.ID, at.Add(2*time.Hour))
	if got, _ := s.InventorySource(ctx, src.ID); got.LastStatus != db.InventorySyncOK || got.LastError != "" {
		t.Errorf("after a good sync %+v", got)
	}
}
