package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// The events of an inventory source's syncs: a failure records
// inventory.sync_failed in its own transaction, to the rules of scope
// all whose threshold the failures in a row just reached; a sync that
// applies after failures records inventory.sync_recovered.

// inventoryToken is the sealed token of the sources of these tests: no
// event may hold it.
const inventoryToken = "tok-Zq81-never-in-an-event"

func tokenSource(t *testing.T, s *db.Store, name string) db.InventorySource {
	t.Helper()
	src, err := s.CreateInventorySource(context.Background(), db.InventorySource{Name: name, Kind: db.InventoryNetBox,
		Config: json.RawMessage(`{"url":"https://netbox.example.net","headers":{"X-Secret":"hdr-Vb22"}}`),
		Token:  []byte(inventoryToken), Enabled: true, IntervalMinutes: db.DefaultInventoryInterval}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// wantInventoryEvent checks that evs is one event of kind about src, to
// channel ch, with consecutive failures and reason.
func wantInventoryEvent(t *testing.T, evs []sentEvent, kind outbox.EventKind, src db.InventorySource, ch int64, consecutive int, reason string) {
	t.Helper()
	if len(evs) != 1 {
		t.Fatalf("%d events %v; want one %s", len(evs), kinds(evs), kind)
	}
	e := evs[0]
	p := e.payload
	if e.kind != kind || p.Kind != kind || e.channel != ch || p.DeviceID != 0 || p.DeviceName != "" || p.Trigger != db.TriggerInventorySync {
		t.Fatalf("event %s to channel %d: %+v; want %s to %d", e.kind, e.channel, p, kind, ch)
	}
	want := outbox.EventInventory{ID: src.ID, Name: src.Name, Kind: db.InventoryNetBox, Path: "/settings/inventory-sources"}
	if p.Inventory == nil || *p.Inventory != want {
		t.Fatalf("source %+v; want %+v", p.Inventory, want)
	}
	if p.Failure == nil || *p.Failure != (outbox.EventFailure{Stage: "sync", Reason: reason, Consecutive: consecutive}) {
		t.Fatalf("failure %+v; want %d in a row, %q", p.Failure, consecutive, reason)
	}
}

// Each failed sync raises inventory.sync_failed once, to the rule of
// scope all whose threshold its streak just reached (1 on the first, 2
// on the second, none on the third), naming the source, the error and
// the failures in a row; the sync that applies next raises
// inventory.sync_recovered to both, and the one after it nothing. Rules
// on a group or a device never get them, and no event holds the
// source's token or configuration.
func TestInventorySyncFailuresRecordTheirEvents(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	site := createGroup(t, s, "site", nil)
	dev := insertDevice(t, s, "r1", &site.ID, nil, nil)
	src := tokenSource(t, s, "NetBox EU")
	ch1, ch2 := dbtest.Channel(t, s, "all-1"), dbtest.Channel(t, s, "all-2")
	chGroup, chDevice := dbtest.Channel(t, s, "site"), dbtest.Channel(t, s, "r1")
	both := []outbox.EventKind{outbox.EventInventorySyncFailed, outbox.EventInventorySyncRecovered}
	mkRule(t, s, db.NotificationRule{Name: "all-1", Events: both, ChannelIDs: []int64{ch1}, FailureThreshold: 1})
	mkRule(t, s, db.NotificationRule{Name: "all-2", Events: both, ChannelIDs: []int64{ch2}, FailureThreshold: 2})
	mkRule(t, s, db.NotificationRule{Name: "site", Events: both, Scope: db.RuleScopeGroups, GroupIDs: []int64{site.ID},
		ChannelIDs: []int64{chGroup}, FailureThreshold: 1})
	mkRule(t, s, db.NotificationRule{Name: "r1", Events: both, Scope: db.RuleScopeDevices, DeviceIDs: []int64{dev},
		ChannelIDs: []int64{chDevice}, FailureThreshold: 1})

	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	why := "NetBox answered 403 Forbidden at https://netbox.example.net/api/dcim/devices/: Invalid token"
	fail := func(i int) []sentEvent {
		t.Helper()
		_, since := eventsAfter(t, s, 0)
		if err := s.RecordInventorySyncFailure(ctx, src.ID, t0.Add(time.Duration(i)*time.Hour), why); err != nil {
			t.Fatal(err)
		}
		evs, _ := eventsAfter(t, s, since)
		return evs
	}
	wantInventoryEvent(t, fail(1), outbox.EventInventorySyncFailed, src, ch1, 1, why)
	wantInventoryEvent(t, fail(2), outbox.EventInventorySyncFailed, src, ch2, 2, why)
	if evs := fail(3); len(evs) != 0 {
		t.Fatalf("the third failure in a row: %v; want nothing (both rules were told)", kinds(evs))
	}
	got, err := s.InventorySource(ctx, src.ID)
	if err != nil || got.LastStatus != db.InventorySyncFailed || got.LastError != why {
		t.Fatalf("source after failures: %+v, %v", got, err)
	}

	_, since := eventsAfter(t, s, 0)
	applySync(t, s, src.ID, t0.Add(4*time.Hour))
	evs, since := eventsAfter(t, s, since)
	if len(evs) != 2 || evs[0].channel != ch1 || evs[1].channel != ch2 {
		t.Fatalf("recovery: %+v; want one event to each rule of scope all", evs)
	}
	for _, e := range evs {
		wantInventoryEvent(t, []sentEvent{e}, outbox.EventInventorySyncRecovered, src, e.channel, 3, "")
	}
	applySync(t, s, src.ID, t0.Add(5*time.Hour))
	if evs, _ := eventsAfter(t, s, since); len(evs) != 0 {
		t.Fatalf("a sync after a good one: %v", kinds(evs))
	}
	// The streak starts again.
	wantInventoryEvent(t, fail(6), outbox.EventInventorySyncFailed, src, ch1, 1, why)

	all, _ := eventsAfter(t, s, 0)
	for _, e := range all {
		if e.channel == chGroup || e.channel == chDevice {
			t.Errorf("a rule on a group or a device got %s", e.kind)
		}
	}
	var raw string
	rows, err := s.Reader().Query(`SELECT payload FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "tok-Zq81") || strings.Contains(raw, "hdr-Vb22") || strings.Contains(raw, "headers") {
			t.Errorf("an event holds the source's token or configuration: %s", raw)
		}
	}
}

// A failure and its event commit together: when the event cannot be
// written the source keeps its status and its streak (the next failure
// is still the first), and an unknown source is ErrNotFound with no
// event.
func TestInventorySyncFailureEventCommitsWithIt(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	src := tokenSource(t, s, "inventory")
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "all", Events: outbox.EventKinds, ChannelIDs: []int64{ch}, FailureThreshold: 1})
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	if err := s.RecordInventorySyncFailure(ctx, src.ID+100, at, "timeout"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("an unknown source: %v", err)
	}
	if n := countRows(t, s, "outbox"); n != 0 {
		t.Fatalf("outbox %d events after an unknown source", n)
	}
	failing, dropFailing := `CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries BEGIN SELECT RAISE(ABORT, 'disk full'); END`, `DROP TRIGGER fail_delivery`
	if s.Postgres() {
		failing = `CREATE FUNCTION fail_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
			CREATE TRIGGER fail_delivery BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION fail_delivery()`
		dropFailing = `DROP TRIGGER fail_delivery ON deliveries`
	}
	if _, err := s.Exec(ctx, failing); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordInventorySyncFailure(ctx, src.ID, at, "timeout"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("a failure whose event cannot be written: %v", err)
	}
	if got, err := s.InventorySource(ctx, src.ID); err != nil || got.LastStatus != "" || got.LastSyncAt != nil {
		t.Fatalf("the source after a failure whose event failed: %+v, %v", got, err)
	}
	if _, err := s.Exec(ctx, dropFailing); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordInventorySyncFailure(ctx, src.ID, at, "timeout"); err != nil {
		t.Fatal(err)
	}
	evs, _ := eventsAfter(t, s, 0)
	wantInventoryEvent(t, evs, outbox.EventInventorySyncFailed, src, ch, 1, "timeout")
}
