package insync

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"backupd/app/collect/driver"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

var syncBy = db.AuditEntry{Username: "inventory", Interface: "cli"}

// syncEnv is a store, a sealer and a fake NetBox serving pynetbox's
// devices.json (3.6+/4.x shape).
type syncEnv struct {
	t      *testing.T
	store  *db.Store
	sealer *secret.Sealer
	nb     *fakeNetBox
	url    string
	clock  time.Time
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	sealer, err := secret.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	nb := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": loadList(t, "devices.json")}}
	return &syncEnv{t: t, store: dbtest.Open(t), sealer: sealer, nb: nb, url: nb.start(),
		clock: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

// source makes a NetBox source of the fake, its settings cfg with the
// fake's URL put in.
func (e *syncEnv) source(name, token string, cfg SourceConfig) db.InventorySource {
	e.t.Helper()
	if cfg.NetBox == nil {
		cfg.NetBox = &NetBoxConfig{}
	}
	cfg.NetBox.URL = e.url
	raw, err := json.Marshal(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	src, err := e.store.CreateInventorySource(context.Background(), db.InventorySource{Name: name, Kind: db.InventoryNetBox,
		Config: raw, Token: e.sealer.Seal(token, secret.PurposeInventoryToken), Enabled: true}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return src
}

// sync runs a sync, each a minute after the last.
func (e *syncEnv) sync(id int64, dry bool) (Report, error) {
	e.clock = e.clock.Add(time.Minute)
	at := e.clock
	return Syncer{Store: e.store, Sealer: e.sealer, Now: func() time.Time { return at }}.Sync(context.Background(), id, dry, syncBy)
}

func (e *syncEnv) mustSync(id int64, dry bool) Report {
	e.t.Helper()
	rep, err := e.sync(id, dry)
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return rep
}

// devices are the store's devices by name.
func (e *syncEnv) devices() map[string]db.Device {
	e.t.Helper()
	list, _, err := e.store.ListDevices(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 100000, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	m := map[string]db.Device{}
	for _, d := range list {
		m[d.Name] = d
	}
	return m
}

func (e *syncEnv) auditCount() int {
	e.t.Helper()
	_, n, err := e.store.ListAudit(context.Background(), 1, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// lines are a report's lines as text, by name.
func lines(r Report) map[string]string {
	m := map[string]string{}
	for _, l := range r.Lines {
		m[l.Name] += l.String() + "\n"
	}
	return m
}

func devicesList(e *syncEnv) []map[string]any { return e.nb.lists["dcim/devices/"] }

func without(list []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, o := range list {
		if o["name"] != name {
			out = append(out, o)
		}
	}
	return out
}

// Three syncs of pynetbox's devices.json: the first creates the four
// devices that have a primary address (the rest are skipped, each with
// its line); the second follows a changed address and platform and
// disables a device gone from NetBox; the third enables it when it
// comes back. Every change is audited.
func TestSyncCreateUpdateDisableEnable(t *testing.T) {
	e := newSyncEnv(t)
	src := e.source("NetBox EU", tokenV1, SourceConfig{NetBox: &NetBoxConfig{GroupFrom: []string{"site", "role"}}})
	all := devicesList(e)

	rep := e.mustSync(src.ID, false)
	got := lines(rep)
	if c := rep.Counts(); c["create"] != 4 || c["skip"] != 7 {
		t.Fatalf("first sync counts %v:\n%v", c, got)
	}
	if !strings.Contains(got["test1-leaf1"], "skip test1-leaf1 (key 4): no primary") {
		t.Errorf("leaf1 (no address): %q", got["test1-leaf1"])
	}
	devs := e.devices()
	edge := devs["test1-edge1"]
	if len(devs) != 4 || edge.Host != "10.0.255.1" || edge.Platform != "juniper_junos" || edge.Port != 22 ||
		edge.LoginMethod != "ssh" || edge.InventoryKey == nil || *edge.InventoryKey != "1" {
		t.Fatalf("after the first sync: %d devices, edge1 %+v", len(devs), edge)
	}
	audits := e.auditCount()
	if audits != 4 {
		t.Errorf("%d audit entries, want one per create", audits)
	}

	// NetBox: edge1 moves to another address and becomes an IOS box;
	// core2 is deleted.
	find(t, all, "test1-edge1")["primary_ip"] = map[string]any{"id": 99, "family": 4, "address": "192.0.2.11/32"}
	find(t, all, "test1-edge1")["platform"] = map[string]any{"id": 9, "name": "Cisco IOS", "slug": "cisco-ios"}
	core2 := find(t, all, "test1-core2")
	e.nb.lists["dcim/devices/"] = without(all, "test1-core2")
	rep = e.mustSync(src.ID, false)
	got = lines(rep)
	if got["test1-edge1"] != "update test1-edge1 (key 1): host, platform\n" {
		t.Errorf("edge1: %q", got["test1-edge1"])
	}
	if got["test1-core2"] != "disable test1-core2 (key 8): gone from the source\n" {
		t.Errorf("core2: %q", got["test1-core2"])
	}
	if got["test1-core1"] != "leave test1-core1 (key 2): unchanged\n" {
		t.Errorf("core1: %q", got["test1-core1"])
	}
	devs = e.devices()
	if d := devs["test1-edge1"]; d.Host != "192.0.2.11" || d.Platform != "cisco_ios" {
		t.Errorf("edge1 after the update: %+v", d)
	}
	if d := devs["test1-core2"]; d.Enabled || !d.DisabledBySync || len(devs) != 4 {
		t.Errorf("core2 gone from NetBox: %+v (%d devices): want disabled by the sync, kept", d, len(devs))
	}
	if n := e.auditCount(); n != audits+2 {
		t.Errorf("%d audit entries, want %d", n, audits+2)
	}

	e.nb.lists["dcim/devices/"] = append(e.nb.lists["dcim/devices/"], core2)
	rep = e.mustSync(src.ID, false)
	if got := lines(rep)["test1-core2"]; got != "enable test1-core2 (key 8): back in the source\n" {
		t.Errorf("core2 back: %q", got)
	}
	if d := e.devices()["test1-core2"]; !d.Enabled || d.DisabledBySync {
		t.Errorf("core2 back: %+v", d)
	}
}

// A device a person disabled is never enabled by a sync, whether it
// vanishes and comes back or stays.
func TestSyncKeepsPersonsDisable(t *testing.T) {
	e := newSyncEnv(t)
	src := e.source("NetBox", tokenV1, SourceConfig{})
	e.mustSync(src.ID, false)
	id := e.devices()["test1-edge2"].ID
	if _, err := e.store.UpdateDevice(context.Background(), id, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	all := devicesList(e)
	e.nb.lists["dcim/devices/"] = without(all, "test1-edge2")
	if got := lines(e.mustSync(src.ID, false))["test1-edge2"]; got != "leave test1-edge2 (key 7): gone from the source, disabled by a person\n" {
		t.Errorf("gone: %q", got)
	}
	e.nb.lists["dcim/devices/"] = all
	if got := lines(e.mustSync(src.ID, false))["test1-edge2"]; got != "leave test1-edge2 (key 7): disabled by a person\n" {
		t.Errorf("back: %q", got)
	}
	if d := e.devices()["test1-edge2"]; d.Enabled || d.DisabledBySync {
		t.Errorf("a person's disable undone: %+v", d)
	}
}

// A device made by hand with a record's name is left alone unless the
// source claims devices; claimed, the source owns it.
func TestSyncHandMadeDeviceClaim(t *testing.T) {
	e := newSyncEnv(t)
	ctx := context.Background()
	hand, err := e.store.CreateDevice(ctx, db.Device{Name: "TEST1-EDGE1", Host: "198.51.100.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	src := e.source("NetBox", tokenV1, SourceConfig{})
	rep := e.mustSync(src.ID, false)
	if got := lines(rep)["test1-edge1"]; !strings.HasPrefix(got, "leave test1-edge1 (key 1): a device made by hand has this name") {
		t.Errorf("hand-made, not claimed: %q", got)
	}
	d, _ := e.store.GetDevice(ctx, hand.ID)
	if d.InventorySourceID != nil || d.Host != "198.51.100.1" || d.UpdatedAt != hand.UpdatedAt {
		t.Errorf("hand-made device touched: %+v", d)
	}
	if _, err := e.store.UpdateInventorySource(ctx, src.ID, func(s *db.InventorySource) error {
		s.Config = json.RawMessage(strings.Replace(string(s.Config), `"defaults"`, `"claim":true,"defaults"`, 1))
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	rep = e.mustSync(src.ID, false)
	if got := lines(rep)["test1-edge1"]; !strings.HasPrefix(got, "claim test1-edge1 (key 1)") {
		t.Errorf("claimed: %q", got)
	}
	rep = e.mustSync(src.ID, false)
	if got := lines(rep)["test1-edge1"]; got != "update test1-edge1 (key 1): name, host, platform\n" {
		t.Errorf("after the claim: %q", got)
	}
	d, _ = e.store.GetDevice(ctx, hand.ID)
	if d.InventorySourceID == nil || *d.InventorySourceID != src.ID || d.Host != "10.0.255.1" || d.Name != "test1-edge1" {
		t.Errorf("claimed device: %+v", d)
	}
}

// A fetch that fails on page 3 of 5 changes nothing: no device, no
// audit entry, no updated_at; the source records the failure.
func TestSyncFailedPageChangesNothing(t *testing.T) {
	e := newSyncEnv(t)
	all := without(devicesList(e), "test1-pdu2") // 10 devices: 5 pages of 2
	e.nb.lists["dcim/devices/"] = all
	src := e.source("NetBox", tokenV1, SourceConfig{NetBox: &NetBoxConfig{HostFrom: "name", PageSize: 2}})
	e.mustSync(src.ID, false)
	before, audits := e.devices(), e.auditCount()
	if len(before) != 9 { // the PDU has no platform
		t.Fatalf("%d devices after the first sync", len(before))
	}

	e.nb.lists["dcim/devices/"] = without(all, "test1-core1") // would disable core1
	find(t, all, "test1-edge1")["name"] = "test1-edge1-new"   // would rename edge1
	e.nb.failAt = map[int]func(http.ResponseWriter){3: func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadGateway)
	}}
	rep, err := e.sync(src.ID, false)
	if err == nil || !strings.Contains(err.Error(), "page 3") || rep.Error != err.Error() {
		t.Fatalf("a failed page 3: %v, report error %q", err, rep.Error)
	}
	if after := e.devices(); !reflect.DeepEqual(before, after) {
		t.Errorf("the devices changed on a failed fetch")
	}
	if n := e.auditCount(); n != audits {
		t.Errorf("%d audit entries, was %d", n, audits)
	}
	got, _ := e.store.InventorySource(context.Background(), src.ID)
	if got.LastStatus != db.InventorySyncFailed || !strings.Contains(got.LastError, "HTTP 502") {
		t.Errorf("source after the failure: %q %q", got.LastStatus, got.LastError)
	}
}

// The dry run's report is what the real run then does, and the dry run
// writes nothing.
func TestSyncDryRunEqualsRealRun(t *testing.T) {
	e := newSyncEnv(t)
	src := e.source("NetBox", tokenV1, SourceConfig{NetBox: &NetBoxConfig{HostFrom: "name"},
		Defaults: Defaults{Port: map[string]int{"ssh": 2222}}})
	for round := range 2 {
		dry := e.mustSync(src.ID, true)
		before, audits := e.devices(), e.auditCount()
		if !dry.DryRun || len(dry.Lines) != 11 {
			t.Fatalf("round %d dry run: %+v", round, dry)
		}
		if after := e.devices(); !reflect.DeepEqual(before, after) || e.auditCount() != audits {
			t.Fatalf("round %d: the dry run wrote", round)
		}
		real := e.mustSync(src.ID, false)
		// But that a sync's create names the device it made.
		made, after := 0, e.devices()
		for i, l := range real.Lines {
			if l.Action != ActCreate || i >= len(dry.Lines) {
				continue
			}
			if d, ok := after[l.Name]; !ok || l.DeviceID != d.ID || dry.Lines[i].DeviceID != 0 {
				t.Errorf("round %d: create %s has device id %d, dry run %d; the store made %d", round, l.Name, l.DeviceID, dry.Lines[i].DeviceID, d.ID)
			}
			real.Lines[i].DeviceID = 0
			made++
		}
		if round == 0 && made == 0 {
			t.Fatalf("round 0 made no device: %v", real.Lines)
		}
		if !reflect.DeepEqual(dry.Lines, real.Lines) {
			t.Errorf("round %d: dry run\n%v\nreal run\n%v", round, dry.Lines, real.Lines)
		}
		if round == 0 && e.devices()["test1-spine1"].Port != 2222 {
			t.Errorf("default port not used")
		}
		if round == 0 { // round 2 sees a change in the source
			all := devicesList(e)
			e.nb.lists["dcim/devices/"] = without(all, "test1-spine2")
			find(t, all, "test1-leaf1")["name"] = "test1-leaf1a"
		}
	}
}

// An unknown platform slug is skipped with the mapping to add; the
// source's mapping then places it. A device without a platform is
// skipped too, and the default platform places it.
func TestSyncUnknownPlatform(t *testing.T) {
	e := newSyncEnv(t)
	find(t, devicesList(e), "test1-oob1")["platform"] = map[string]any{"id": 7, "name": "Acme OS", "slug": "acme-os"}
	src := e.source("NetBox", tokenV1, SourceConfig{NetBox: &NetBoxConfig{HostFrom: "name"}})
	got := lines(e.mustSync(src.ID, false))
	if want := "skip test1-oob1 (key 9): unknown platform slug acme-os: add a mapping acme-os → <platform>\n"; got["test1-oob1"] != want {
		t.Errorf("oob1: %q, want %q", got["test1-oob1"], want)
	}
	if !strings.Contains(got["test1-pdu1"], "skip test1-pdu1 (key 11): no platform in the source") {
		t.Errorf("pdu1: %q", got["test1-pdu1"])
	}
	if _, err := e.store.UpdateInventorySource(context.Background(), src.ID, func(s *db.InventorySource) error {
		cfg := SourceConfig{NetBox: &NetBoxConfig{URL: e.url, HostFrom: "name"}, Mapping: map[string]string{"Acme-OS": "linux"},
			Defaults: Defaults{Platform: "apc"}}
		s.Config, _ = json.Marshal(cfg)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	got = lines(e.mustSync(src.ID, false))
	devs := e.devices()
	if devs["test1-oob1"].Platform != "linux" || devs["test1-pdu1"].Platform != "apc_aos" {
		t.Errorf("after the mapping: %q %q; %v", devs["test1-oob1"].Platform, devs["test1-pdu1"].Platform, got)
	}
}

// A name given twice within a source skips both records (and disables
// neither device); a name another source has is skipped in the second.
func TestSyncDuplicateNames(t *testing.T) {
	e := newSyncEnv(t)
	src := e.source("NetBox A", tokenV1, SourceConfig{NetBox: &NetBoxConfig{HostFrom: "name"}})
	e.mustSync(src.ID, false)
	find(t, devicesList(e), "test1-spine2")["name"] = "TEST1-spine1"
	got := lines(e.mustSync(src.ID, false))
	for _, n := range []string{"test1-spine1", "TEST1-spine1"} {
		if !strings.Contains(got[n], "duplicate name within the source (keys 3, 6); the device is left as it is") {
			t.Errorf("%s: %q", n, got[n])
		}
	}
	if d := e.devices()["test1-spine2"]; !d.Enabled {
		t.Errorf("spine2, whose record is bad, was disabled: %+v", d)
	}

	other := e.source("NetBox B", tokenV1, SourceConfig{NetBox: &NetBoxConfig{HostFrom: "name"}})
	rep := e.mustSync(other.ID, false)
	if got := lines(rep)["test1-edge1"]; got != "skip test1-edge1 (key 1): name taken by a device of another source (NetBox A)\n" {
		t.Errorf("across sources: %q", got)
	}
	if c := rep.Counts(); c["create"] != 0 {
		t.Errorf("second source created %d", c["create"])
	}
}

// An HTML answer and a token without rights are each a clear error,
// recorded on the source, nothing written.
func TestSyncHTMLAndForbidden(t *testing.T) {
	e := newSyncEnv(t)
	src := e.source("NetBox", tokenV1, SourceConfig{})
	e.nb.failAt = map[int]func(http.ResponseWriter){1: func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>Log in</body></html>")
	}}
	if _, err := e.sync(src.ID, false); err == nil || !strings.Contains(err.Error(), "HTML page, not JSON") {
		t.Errorf("HTML: %v", err)
	}
	e.nb.failAt = nil
	weak := e.source("NetBox weak", tokenNoRights, SourceConfig{})
	rep, err := e.sync(weak.ID, false)
	if err == nil || !strings.Contains(rep.Error, "HTTP 403: the token is valid but has no right") || strings.Contains(rep.Error, tokenNoRights) {
		t.Errorf("403: %q", rep.Error)
	}
	got, _ := e.store.InventorySource(context.Background(), weak.ID)
	if got.LastStatus != db.InventorySyncFailed || len(e.devices()) != 0 {
		t.Errorf("source %q, %d devices", got.LastStatus, len(e.devices()))
	}
}

// Every default mapping names a registered platform.
func TestDefaultPlatformsRegistered(t *testing.T) {
	for slug, id := range DefaultPlatforms {
		if _, ok := driver.Lookup(id); !ok {
			t.Errorf("%s → %s: no such platform", slug, id)
		}
		if got, problem := PlatformFor(slug, nil); got != id {
			t.Errorf("PlatformFor(%s) = %q %q", slug, got, problem)
		}
	}
	for _, slug := range []string{"cisco-ios", "ios", "cisco-ios-xe", "iosxe", "cisco-nx-os", "nxos", "cisco-ios-xr", "iosxr",
		"junos", "juniper-junos", "eos", "arista-eos", "routeros", "mikrotik-routeros", "vyos", "fortios", "panos", "asa",
		"procurve", "aoscx", "comware", "vrp", "frr"} {
		if _, ok := DefaultPlatforms[slug]; !ok {
			t.Errorf("%s has no default mapping", slug)
		}
	}
	// An alias of the registry (Oxidized's model name) without a
	// default entry; the source's mapping winning over a default.
	if id, _ := PlatformFor("Netscaler", nil); id != "citrix_netscaler" {
		t.Errorf("alias netscaler → %q", id)
	}
	if id, _ := PlatformFor("ios", map[string]string{"ios": "cisco_xe"}); id != "cisco_xe" {
		t.Errorf("mapping over default: %q", id)
	}
}
