package apiv1_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"backupd/app/auth"
	"backupd/internal/dbtest"
)

// PRODUCT.md §4: the device resource, its defaults, filters and scope.

func (e *env) newDevice(body map[string]any) *response {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/v1/devices", e.adminKey, body)
	e.expect(r, 201, "")
	return r
}

func (e *env) setStatus(id int64, status string) {
	e.t.Helper()
	if _, err := dbtest.Poke(e.t, e.store).ExecContext(context.Background(), `UPDATE devices SET status = ? WHERE id = ?`, status, id); err != nil {
		e.t.Fatal(err)
	}
}

func TestDevicesCreateDefaultsAndFields(t *testing.T) {
	e := newEnv(t)
	r := e.newDevice(map[string]any{"name": " core-1 ", "host": "10.0.0.1", "platform": "cisco_ios"})
	want := []string{"created_at", "credential_id", "enabled", "encoding", "group_id", "host", "id", "last_backup_at", "last_backup_success",
		"last_changed_at", "last_checked_at", "login_method", "name", "platform", "port", "remarks", "status", "template_id", "updated_at"}
	var got []string
	for k := range r.JSON {
		got = append(got, k)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("device fields %v, want %v", got, want)
	}
	for k, v := range map[string]any{"name": "core-1", "port": 22.0, "login_method": "ssh", "encoding": "utf-8", "enabled": true, "status": "unknown",
		"last_changed_at": nil} {
		if r.JSON[k] != v {
			t.Errorf("%s = %v, want %v", k, r.JSON[k], v)
		}
	}
	tel := e.newDevice(map[string]any{"name": "old-switch", "host": "sw1.example.net", "platform": "hp_procurve", "login_method": "telnet", "encoding": "gbk", "enabled": false})
	if tel.JSON["port"] != 23.0 || tel.JSON["encoding"] != "gbk" || tel.JSON["enabled"] != false {
		t.Errorf("telnet device: %s", tel.Raw)
	}
	custom := e.newDevice(map[string]any{"name": "fw", "host": "2001:db8::1", "platform": "fortinet", "port": 2222})
	if custom.JSON["port"] != 2222.0 {
		t.Errorf("explicit port: %s", custom.Raw)
	}
	got1 := e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", r.id()), e.adminKey, nil)
	if string(got1.Raw) != string(r.Raw) {
		t.Errorf("GET differs from POST:\n%s\n%s", got1.Raw, r.Raw)
	}
}

func TestDevicesValidation(t *testing.T) {
	e := newEnv(t)
	g := e.group("G", nil)
	cred := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "c", "username": "u"}).id()
	junos := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "j", "platform": "juniper_junos"}).id()
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"missing group", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "group_id": 999}, "body:group_id"},
		{"missing credential", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "credential_id": 999}, "body:credential_id"},
		{"missing template", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "template_id": 999}, "body:template_id"},
		{"template of another platform", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "template_id": junos}, "body:template_id"},
		{"bad host", map[string]any{"name": "d", "host": "http://x y", "platform": "cisco_ios"}, "body:host"},
		{"metadata host", map[string]any{"name": "d", "host": "169.254.169.254", "platform": "cisco_ios"}, "body:host"},
		{"metadata host, IPv6", map[string]any{"name": "d", "host": "fd00:ec2::254", "platform": "cisco_ios"}, "body:host"},
		{"bad port", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "port": 70000}, "body:port"},
		{"bad login method", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "login_method": "rsh"}, "body:login_method"},
		{"bad encoding", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "encoding": "ebcdic"}, "body:encoding"},
		{"bad platform", map[string]any{"name": "d", "host": "h", "platform": "ios"}, "body:platform"},
		{"missing host", map[string]any{"name": "d", "platform": "cisco_ios"}, "body:host"},
		{"unknown field", map[string]any{"name": "d", "host": "h", "platform": "cisco_ios", "groupid": g}, "body:groupid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(http.MethodPost, "/api/v1/devices", e.adminKey, c.body)
			e.expect(r, 422, "VALIDATION_ERROR")
			if !hasField(r.fieldErrors(), c.field) {
				t.Errorf("want %s, got %v", c.field, r.fieldErrors())
			}
		})
	}
	ok := e.newDevice(map[string]any{"name": "d", "host": "h", "platform": "juniper_junos", "group_id": g, "credential_id": cred, "template_id": junos})
	e.expect(e.do(http.MethodPost, "/api/v1/devices", e.adminKey, map[string]any{"name": "D", "host": "h2", "platform": "vyos"}), 409, "DEVICE_NAME_EXISTS")
	// A device cannot be moved to a metadata address either.
	if r := e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", ok.id()), e.adminKey, map[string]any{"host": "169.254.169.254"}); r.Status != 422 || !hasField(r.fieldErrors(), "body:host") {
		t.Errorf("PUT host 169.254.169.254: %d %s", r.Status, r.Raw)
	}
	// Changing the platform away from the template's is refused, too.
	r := e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", ok.id()), e.adminKey, map[string]any{"platform": "vyos"})
	e.expect(r, 422, "VALIDATION_ERROR")
	if !hasField(r.fieldErrors(), "body:template_id") {
		t.Errorf("got %v", r.fieldErrors())
	}
}

func TestDevicesPutSemantics(t *testing.T) {
	e := newEnv(t)
	cred := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "c", "username": "u"}).id()
	tpl := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "cisco_ios"}).id()
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios", "credential_id": cred, "template_id": tpl, "remarks": "rack 4"})
	path := fmt.Sprintf("/api/v1/devices/%d", d.id())

	r := e.do(http.MethodPut, path, e.adminKey, map[string]any{"host": "10.0.0.2"})
	e.expect(r, 200, "")
	if r.JSON["host"] != "10.0.0.2" || r.JSON["credential_id"] != float64(cred) || r.JSON["template_id"] != float64(tpl) || r.JSON["remarks"] != "rack 4" {
		t.Fatalf("omitted fields not kept: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"login_method": "telnet"})
	if r.JSON["port"] != 23.0 {
		t.Errorf("default port should follow the login method: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, `{"template_id": null, "remarks": null, "enabled": false}`)
	e.expect(r, 200, "")
	if r.JSON["template_id"] != nil || r.JSON["remarks"] != nil || r.JSON["enabled"] != false || r.JSON["credential_id"] != float64(cred) {
		t.Fatalf("null should clear only what was sent: %s", r.Raw)
	}
	other := e.newDevice(map[string]any{"name": "r2", "host": "10.0.0.3", "platform": "cisco_ios"})
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", other.id()), e.adminKey, map[string]any{"name": "R1"}), 409, "DEVICE_NAME_EXISTS")
	e.expect(e.do(http.MethodPut, "/api/v1/devices/999", e.adminKey, map[string]any{"name": "x"}), 404, "RESOURCE_NOT_FOUND")
	e.expect(e.do(http.MethodDelete, path, e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, path, e.adminKey, nil), 404, "RESOURCE_NOT_FOUND")
	e.expect(e.do(http.MethodDelete, path, e.adminKey, nil), 404, "RESOURCE_NOT_FOUND")
}

func ids(r *response) []int64 {
	var out []int64
	for _, it := range r.JSON["items"].([]any) {
		out = append(out, int64(it.(map[string]any)["id"].(float64)))
	}
	return out
}

func total(r *response) int {
	return int(r.JSON["pagination"].(map[string]any)["total"].(float64))
}

func TestDevicesListFilters(t *testing.T) {
	e := newEnv(t)
	a := e.group("A", nil)
	a1 := e.group("A1", a)
	b := e.group("B", nil)
	d1 := e.newDevice(map[string]any{"name": "core-sw-1", "host": "10.1.0.1", "platform": "cisco_ios", "group_id": a}).id()
	d2 := e.newDevice(map[string]any{"name": "edge-fw", "host": "fw.core.example", "platform": "fortinet", "group_id": a1, "enabled": false}).id()
	d3 := e.newDevice(map[string]any{"name": "dist_1%", "host": "10.2.0.1", "platform": "cisco_ios", "group_id": b}).id()
	e.setStatus(d2, "unreachable")
	e.setStatus(d3, "reachable")

	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{d1, d2, d3}},
		{"q=core", []int64{d1, d2}},
		{"q=CORE", []int64{d1, d2}},
		{"q=1%25", []int64{d3}},
		{"q=_", []int64{d3}},
		{fmt.Sprintf("group_id=%d", a), []int64{d1, d2}},
		{fmt.Sprintf("group_id=%d", a1), []int64{d2}},
		{"platform=cisco_ios", []int64{d1, d3}},
		{"status=unreachable", []int64{d2}},
		{"enabled=false", []int64{d2}},
		{"enabled=true&platform=cisco_ios&q=10.2", []int64{d3}},
		{"group_id=999", nil},
		{"q=%22core%22%20OR%20*", nil},
		{"q=NEAR(core%20edge)", nil},
		{"q=fw.core", []int64{d2}},
	} {
		r := e.do(http.MethodGet, "/api/v1/devices?"+c.query, e.adminKey, nil)
		e.expect(r, 200, "")
		if fmt.Sprint(ids(r)) != fmt.Sprint(c.want) || total(r) != len(c.want) {
			t.Errorf("%q: got %v (total %d), want %v", c.query, ids(r), total(r), c.want)
		}
	}
	r := e.do(http.MethodGet, "/api/v1/devices/unreachable", e.adminKey, nil)
	if fmt.Sprint(ids(r)) != fmt.Sprint([]int64{d2}) {
		t.Errorf("unreachable: %v", ids(r))
	}
	for _, q := range []string{"status=down", "enabled=yes", "group_id=0", "limit=101"} {
		e.expect(e.do(http.MethodGet, "/api/v1/devices?"+q, e.adminKey, nil), 422, "VALIDATION_ERROR")
	}
}

// Two scoped users and a narrowed key: every device route filters or
// checks by the caller's groups (with subgroups), totals included.
func TestDevicesScope(t *testing.T) {
	e := newEnv(t)
	east := e.group("East", nil)
	eastDC := e.group("East-DC", east)
	west := e.group("West", nil)
	e1 := e.newDevice(map[string]any{"name": "e1", "host": "10.0.0.1", "platform": "cisco_ios", "group_id": east}).id()
	e2 := e.newDevice(map[string]any{"name": "e2", "host": "10.0.0.2", "platform": "cisco_ios", "group_id": eastDC}).id()
	w1 := e.newDevice(map[string]any{"name": "w1", "host": "10.0.1.1", "platform": "cisco_ios", "group_id": west}).id()
	loose := e.newDevice(map[string]any{"name": "nogroup", "host": "10.0.2.1", "platform": "cisco_ios"}).id()
	e.setStatus(e2, "unreachable")
	e.setStatus(w1, "unreachable")

	alice := e.scopedUser("alice", auth.RoleOperator, false, east)
	bob := e.scopedUser("bob", auth.RoleOperator, false, west)
	nobody := e.scopedUser("nobody", auth.RoleOperator, false)
	e.scopedUser("carol", auth.RoleViewer, true)
	carolNarrow := e.keyFor("carol", "devices.view")

	list := func(key, path string) []int64 {
		r := e.do(http.MethodGet, path, key, nil)
		e.expect(r, 200, "")
		if total(r) != len(ids(r)) {
			t.Errorf("%s: total %d for %d items", path, total(r), len(ids(r)))
		}
		return ids(r)
	}
	for _, c := range []struct {
		who, key string
		all      []int64
		down     []int64
	}{
		{"alice", alice, []int64{e1, e2}, []int64{e2}},
		{"bob", bob, []int64{w1}, []int64{w1}},
		{"nobody", nobody, nil, nil},
		{"carol (narrowed, all groups)", carolNarrow, []int64{e1, e2, w1, loose}, []int64{e2, w1}},
	} {
		if got := list(c.key, "/api/v1/devices"); fmt.Sprint(got) != fmt.Sprint(c.all) {
			t.Errorf("%s sees %v, want %v", c.who, got, c.all)
		}
		if got := list(c.key, "/api/v1/devices/unreachable"); fmt.Sprint(got) != fmt.Sprint(c.down) {
			t.Errorf("%s sees unreachable %v, want %v", c.who, got, c.down)
		}
	}
	// A filter cannot widen the scope.
	if got := list(alice, fmt.Sprintf("/api/v1/devices?group_id=%d", west)); len(got) != 0 {
		t.Errorf("alice filtered to West sees %v", got)
	}

	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", e2), alice, nil), 200, "")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", w1), alice, nil), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", loose), alice, nil), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, "/api/v1/devices/9999", alice, nil), 404, "RESOURCE_NOT_FOUND")
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", w1), alice, map[string]any{"remarks": "x"}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/devices/%d", w1), alice, nil), 403, "PERMISSION_DENIED")
	// Moving a device: only into a group in scope.
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", e1), alice, map[string]any{"group_id": west}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", e1), alice, map[string]any{"group_id": nil}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", e1), alice, map[string]any{"group_id": eastDC}), 200, "")
	// POST checks only devices.create: any group, even one out of scope.
	r := e.do(http.MethodPost, "/api/v1/devices", alice, map[string]any{"name": "w2", "host": "10.0.1.2", "platform": "cisco_ios", "group_id": west})
	e.expect(r, 201, "")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", r.id()), alice, nil), 403, "PERMISSION_DENIED")
	// The narrowed key holds devices.view only.
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/devices/%d", e1), carolNarrow, nil), 403, "PERMISSION_DENIED")
	// Group, credential and template routes are permission-only.
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/groups/%d", west), alice, nil), 200, "")
}
