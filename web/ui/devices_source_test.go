package ui_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
)

// deviceRowRe finds the devices a list page shows.
var deviceRowRe = regexp.MustCompile(`<tr id="device-row-(\d+)"`)

// listedDevices are the ids of the devices p lists, in order.
func listedDevices(t *testing.T, p page) []int64 {
	t.Helper()
	var ids []int64
	for _, m := range deviceRowRe.FindAllStringSubmatch(p.body, -1) {
		id, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// The device list filters by source: ?source=hand shows only the devices
// made by hand, ?source=<id> only that inventory source's (a page of
// them at a time, the filter kept in the pager and export links),
// ?sync=disabled only those a sync disabled (not one a person disabled),
// each within the user's scope. The form offers one option per source by
// name, in English and Chinese; a value that matches nothing is ignored
// (or, an id of no source, lists nothing) as the other filters do, never
// an error page.
func TestDevicesListFilterBySource(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	newSource := func(name string) db.InventorySource {
		src, err := e.store.CreateInventorySource(ctx, db.InventorySource{Name: name, Kind: db.InventoryNetBox,
			Config: []byte(`{"url":"https://netbox.example.net"}`), Enabled: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	sync := func(src int64, changes ...db.InventoryChange) []int64 {
		res, err := e.store.ApplyInventorySync(ctx, src, db.InventorySync{Changes: changes, At: time.Now().UTC(),
			By: db.AuditEntry{Username: "inventory", Interface: "cli"}})
		if err != nil || len(res.Skipped) != 0 {
			t.Fatalf("sync: %+v, %v", res, err)
		}
		return res.CreatedIDs
	}
	create := func(key, name, host string, group ...string) db.InventoryChange {
		return db.InventoryChange{Kind: db.InventoryCreate, Key: key, Device: db.InventoryDevice{Name: name, Host: host, Port: 22,
			Platform: "cisco_ios", LoginMethod: "ssh", GroupPath: group}}
	}
	eu, us := newSource("NetBox EU"), newSource("CMDB <US>")
	euIDs := sync(eu.ID, create("1", "eu-up", "192.0.2.1", "Paris"), create("2", "eu-gone", "192.0.2.2"),
		create("3", "eu-off", "192.0.2.3"))
	euUp, euGone, euOff := euIDs[0], euIDs[1], euIDs[2]
	sync(eu.ID, db.InventoryChange{Kind: db.InventoryDisable, Key: "2", DeviceID: euGone})
	if _, err := e.store.UpdateDevice(ctx, euOff, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	var usCreates []db.InventoryChange
	for i := range 51 {
		usCreates = append(usCreates, create(strconv.Itoa(i), fmt.Sprintf("us-%02d", i), fmt.Sprintf("198.51.100.%d", i+1)))
	}
	usIDs := sync(us.ID, usCreates...)
	hand, err := e.store.CreateDevice(ctx, db.Device{Name: "by-hand", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	b := adminBrowser(t, e)
	euParam, usParam := strconv.FormatInt(eu.ID, 10), strconv.FormatInt(us.ID, 10)

	for _, tc := range []struct {
		name, query string
		want        []int64
		// selected is the option the form shows chosen (or what the page
		// shows of the filter); "" for a value ignored.
		selected string
	}{
		{"made by hand", "source=hand", []int64{hand.ID}, `<option value="hand" selected>`},
		{"one source", "source=" + euParam, []int64{euUp, euGone, euOff}, `<option value="` + euParam + `" selected>NetBox EU</option>`},
		{"one source, first page", "source=" + usParam, usIDs[:50], `<option value="` + usParam + `" selected>CMDB &lt;US&gt;</option>`},
		{"one source, second page", "source=" + usParam + "&page=2", usIDs[50:], `<option value="` + usParam + `" selected>`},
		{"disabled by a sync", "sync=disabled", []int64{euGone}, `<option value="disabled" selected>`},
		{"disabled by a sync of the other source", "sync=disabled&source=" + usParam, nil, `<option value="disabled" selected>`},
		{"hand-made, disabled", "source=hand&enabled=false", nil, `<option value="hand" selected>`},
		{"no such source", "source=999999", nil, `id="devices-empty"`},
		{"malformed source", "source=netbox", nil, ""},
		{"negative source", "source=-1", nil, ""},
		{"malformed sync", "sync=%00yes", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.get("/devices?" + tc.query)
			expect(t, tc.query, p, http.StatusOK, "")
			got := listedDevices(t, p)
			want := tc.want
			if tc.selected == "" {
				// Ignored: the whole list's first page.
				want = append(append([]int64{}, euIDs...), usIDs...)[:50]
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s lists %v, want %v", tc.query, got, want)
			}
			if tc.selected != "" {
				expectBody(t, tc.query, p, tc.selected, `id="devices-filter-clear"`)
			} else if strings.Contains(p.body, `id="devices-filter-clear"`) {
				t.Errorf("%s: an ignored value shows as a filter", tc.query)
			}
		})
	}

	// The filter is kept in the pager's and the export's links.
	p := b.get("/devices?source=" + usParam)
	expectBody(t, "pager", p, html.EscapeString("/devices?page=2&source="+usParam),
		html.EscapeString("/devices/export?source="+usParam))
	p = b.get("/devices?sync=disabled")
	expectBody(t, "export", p, html.EscapeString("/devices/export?sync=disabled"))

	// The form's labels, in English and Chinese.
	for accept, want := range map[string][]string{
		"":      {">Inventory source</label>", ">Made by hand</option>", ">Sync</label>", ">Disabled by a sync</option>"},
		"zh-CN": {">清单来源</label>", ">手动创建</option>", ">同步</label>", ">已被同步停用</option>"},
	} {
		b.header.Set("Accept-Language", accept)
		expectBody(t, "labels "+accept, b.get("/devices"), want...)
	}
	b.header.Del("Accept-Language")

	// A user of the group Paris sees, of the source's devices, only the one
	// in Paris.
	up, err := e.store.GetDevice(ctx, euUp)
	if err != nil || up.GroupID == nil {
		t.Fatalf("synced into Paris: %+v, %v", up, err)
	}
	e.createUser("paris", "paris-password-1", auth.RoleViewer, false, *up.GroupID)
	vb := e.browser()
	vb.mustLogin("paris", "paris-password-1")
	p = vb.get("/devices?source=" + euParam)
	expect(t, "scoped", p, http.StatusOK, "")
	if got := listedDevices(t, p); !slices.Equal(got, []int64{euUp}) {
		t.Errorf("a user of Paris filtering by source sees %v, want only %d", got, euUp)
	}
}
