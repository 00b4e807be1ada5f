package insync

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func byName(recs []Record) map[string]Record {
	m := map[string]Record{}
	for _, r := range recs {
		m[r.Name] = r
	}
	return m
}

// NetBox before 3.6 names the role device_role (pynetbox's fixture of
// 2017); the token is a v1 token, sent as "Token …".
func TestNetBoxFetch3x(t *testing.T) {
	f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": loadList(t, "devices_device_role.json")}}
	nb := NetBox{URL: f.start(), Token: tokenV1, HostFrom: "primary_ip4", GroupFrom: []string{"site", "role"}}
	recs, err := nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 11 {
		t.Fatalf("%d records, want the fixture's 11", len(recs))
	}
	m := byName(recs)
	edge := m["test1-edge1"]
	want := Record{Key: "1", Name: "test1-edge1", Host: "10.0.255.1", Platform: "juniper-junos", Group: []string{"TEST1", "Router"}}
	if fmt.Sprint(edge) != fmt.Sprint(want) {
		t.Errorf("edge1 = %+v\nwant %+v", edge, want)
	}
	if core := m["test1-core1"]; core.Host != "10.0.254.1" || !core.Problem.IsZero() {
		t.Errorf("core1 (10.0.254.1/24) = %+v, want host 10.0.254.1 without its prefix length", core)
	}
	// No primary address: kept, with a problem, not an error.
	leaf := m["test1-leaf1"]
	if leaf.Problem.IsZero() || !strings.Contains(leaf.Problem.String(), "no primary_ip4") || leaf.Key != "4" {
		t.Errorf("leaf1 without an address = %+v, want a problem", leaf)
	}
	if pdu := m["test1-pdu1"]; pdu.Platform != "" || fmt.Sprint(pdu.Group) != "[TEST1 PDU]" {
		t.Errorf("pdu1 (no platform) = %+v", pdu)
	}
	r := f.requests[0]
	if got := r.Header.Get("Authorization"); got != "Token "+tokenV1 {
		t.Errorf("Authorization %q", got)
	}
	q := r.URL.Query()
	if q.Get("status") != "active" || q.Get("exclude") != "config_context" || q.Get("limit") != "1000" {
		t.Errorf("query %s: want status=active, exclude=config_context, limit=1000", r.URL.RawQuery)
	}
}

// NetBox 3.6+ and 4.x: role (device_role gone in 4.0), the config context
// only when asked for (4.x), a v2 token sent as Bearer (4.5+). The device
// list is pynetbox's fixture after its NetBox 3.6 update; one device's
// custom fields and config context are set here (pynetbox's device.json
// holds the config context {"test_key": "test_val"}).
func TestNetBoxFetch4x(t *testing.T) {
	devices := loadList(t, "devices.json")
	one := loadList(t, "device.json")[0]
	edge := find(t, devices, "test1-edge1")
	edge["config_context"] = one["config_context"] // {"test_key": "test_val"}
	edge["config_context"].(map[string]any)["backup"] = map[string]any{"template": "junos-std"}
	edge["custom_fields"] = map[string]any{"backupd_platform": "junos", "login": map[string]any{"value": "core-login", "label": "Core login"}}
	f := &fakeNetBox{t: t, v4: true, lists: map[string][]map[string]any{"dcim/devices/": devices}}
	nb := NetBox{URL: f.start(), Token: tokenV2, HostFrom: "primary_ip", PlatformFrom: "cf:backupd_platform",
		CredentialFrom: "cf:login", TemplateFrom: "context:backup.template", Site: []string{"test1"}, Tag: []string{"backup"}}
	recs, err := nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(recs)
	got := m["test1-edge1"]
	if got.Platform != "junos" || got.Credential != "core-login" || got.Template != "junos-std" || got.Host != "10.0.255.1" {
		t.Errorf("edge1 = %+v: want platform from the custom field, credential from the selection's value, template from the config context", got)
	}
	if other := m["test1-edge2"]; other.Platform != "" || other.Template != "" {
		t.Errorf("edge2 has no custom field and no context: %+v", other)
	}
	r := f.requests[0]
	if got := r.Header.Get("Authorization"); got != "Bearer "+tokenV2 {
		t.Errorf("Authorization %q, want Bearer for an nbt_ token", got)
	}
	q := r.URL.Query()
	if q.Get("include") != "config_context" || q.Get("site") != "test1" || q.Get("tag") != "backup" {
		t.Errorf("query %s", r.URL.RawQuery)
	}

	// And the same from the context key alone: a context key as the
	// credential asks for the context too.
	nb.TemplateFrom, nb.CredentialFrom = "", "context:test_key"
	recs, err = nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := byName(recs)["test1-edge1"].Credential; c != "test_val" {
		t.Errorf("credential from context:test_key = %q", c)
	}
}

// Several pages: every page read, every device once, in order.
func TestNetBoxPagination(t *testing.T) {
	f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": loadList(t, "devices.json")}}
	nb := NetBox{URL: f.start(), Token: tokenV1, PageSize: 2, HostFrom: "name"}
	recs, err := nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 11 || f.devicePages() != 6 {
		t.Fatalf("%d records in %d pages, want 11 in 6", len(recs), f.devicePages())
	}
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
		if !r.Problem.IsZero() || r.Host != r.Name {
			t.Errorf("host from name: %+v", r)
		}
	}
	if strings.Join(keys, ",") != "2,8,1,7,4,5,9,11,12,3,6" {
		t.Errorf("keys %v: want the source's order", keys)
	}
}

// A fetch that fails anywhere returns an error and no records, and the
// error says what to do without the token in it.
func TestNetBoxFetchFails(t *testing.T) {
	devices := loadList(t, "devices.json") // 11 devices: with 2 a page, 6 pages
	big := strings.Repeat("x", 8<<10)
	cases := []struct {
		name  string
		token string
		setup func(f *fakeNetBox)
		opts  Options
		want  string
	}{
		{"page 3 fails", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){3: func(w http.ResponseWriter) { w.WriteHeader(500) }}
		}, Options{}, "(page 3): HTTP 500"},
		{"page 3 is missing", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){3: func(w http.ResponseWriter) { w.WriteHeader(404) }}
		}, Options{}, "(page 3): HTTP 404"},
		{"HTML login page", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){2: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<!DOCTYPE html><html><body>Log in</body></html>")
			}}
		}, Options{}, "HTML page, not JSON"},
		{"HTML without a content type", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){1: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "application/octet-stream")
				fmt.Fprint(w, "\n  <html>proxy error</html>")
			}}
		}, Options{}, "HTML page, not JSON"},
		{"over the size limit", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){4: func(w http.ResponseWriter) {
				fmt.Fprintf(w, `{"count": 11, "next": null, "results": [{"id": 99, "name": %q}]}`, big)
			}}
		}, Options{MaxBody: 4 << 10}, "larger than 4096 bytes"},
		{"invalid JSON", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){2: func(w http.ResponseWriter) { fmt.Fprint(w, `{"count": 11, "results": [`) }}
		}, Options{}, "not valid JSON"},
		{"not NetBox's shape", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){1: func(w http.ResponseWriter) { fmt.Fprint(w, `[{"id": 1}]`) }}
		}, Options{}, "unexpected shape"},
		{"no count", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){1: func(w http.ResponseWriter) { fmt.Fprint(w, `{"results": []}`) }}
		}, Options{}, "no count"},
		{"timeout", tokenV1, func(f *fakeNetBox) {
			f.failAt = map[int]func(http.ResponseWriter){2: slow(time.Second)}
		}, Options{Timeout: 200 * time.Millisecond}, "no complete answer within 200ms"},
		{"count says more than were sent", tokenV1, func(f *fakeNetBox) { f.lieBy = 1 }, Options{}, "11 devices received but NetBox counted 12"},
		{"count says fewer", tokenV1, func(f *fakeNetBox) { f.lieBy = -2 }, Options{}, "received but NetBox counted 9"},
		{"count changes during the fetch", tokenV1, func(f *fakeNetBox) { f.driftAt = 4 }, Options{}, "changed from 11 to 12"},
		{"too many pages", tokenV1, nil, Options{MaxPages: 5}, "more than 5 pages"},
		{"no token", "", nil, Options{}, "needs an API token"},
		{"wrong token", "0000000000000000000000000000000000000000", nil, Options{}, "HTTP 401: the token was refused"},
		{"wrong v2 token", "nbt_shortkey1234567.wrong", nil, Options{}, "HTTP 401"},
		{"token without rights", tokenNoRights, nil, Options{}, "HTTP 403: the token is valid but has no right"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": devices}}
			if tc.setup != nil {
				tc.setup(f)
			}
			nb := NetBox{URL: f.start(), Token: tc.token, PageSize: 2}
			recs, err := nb.Fetch(context.Background(), tc.opts)
			if err == nil || recs != nil {
				t.Fatalf("records %d, error %v: want an error and no records", len(recs), err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if tc.token != "" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the token is in the error: %q", err)
			}
			t.Logf("%s", err)
		})
	}
}

// The group path: the site's region with its parents, the site, the
// tenant. pynetbox's sites.json and regions.json hold a site and a
// region without relations; here the site is put in a child region of
// TEST, and the tenant (pynetbox's tenant.json) on one device.
func TestNetBoxGroupPath(t *testing.T) {
	devices := loadList(t, "devices.json")
	tenant := loadList(t, "tenant.json")[0]
	find(t, devices, "test1-edge1")["tenant"] = map[string]any{"id": tenant["id"], "name": tenant["name"], "slug": tenant["slug"]}
	sites := loadList(t, "sites.json")
	sites[0]["region"] = map[string]any{"id": 2, "name": "TEST-North", "slug": "test-north"}
	regions := loadList(t, "regions.json")
	regions = append(regions, map[string]any{"id": 2, "name": "TEST-North", "slug": "test-north", "parent": map[string]any{"id": 1, "name": "TEST", "slug": "test"}})
	f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": devices, "dcim/sites/": sites, "dcim/regions/": regions}}
	nb := NetBox{URL: f.start(), Token: tokenV1, GroupFrom: []string{"region", "site", "tenant"}}
	recs, err := nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(recs)
	if g := m["test1-edge1"].Group; !slices.Equal(g, []string{"TEST", "TEST-North", "TEST1", "TEST Tenant 1"}) {
		t.Errorf("edge1 group %q", g)
	}
	if g := m["test1-edge2"].Group; !slices.Equal(g, []string{"TEST", "TEST-North", "TEST1"}) {
		t.Errorf("edge2 (no tenant) group %q", g)
	}

	// The sites list failing fails the fetch: a group path cannot be
	// half known.
	f.lists["dcim/sites/"] = nil
	delete(f.lists, "dcim/sites/")
	if recs, err := nb.Fetch(context.Background(), Options{}); err == nil || recs != nil || !strings.Contains(err.Error(), "sites") {
		t.Errorf("sites missing: %d records, %v", len(recs), err)
	}
}

// Bad devices are kept with their problem; the fetch goes on.
func TestNetBoxBadRecords(t *testing.T) {
	devices := loadList(t, "devices.json")
	find(t, devices, "test1-edge2")["primary_ip"] = map[string]any{"id": 3, "address": "not-an-address"}
	find(t, devices, "test1-core2")["name"] = nil // NetBox allows unnamed devices
	f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": devices}}
	nb := NetBox{URL: f.start(), Token: tokenV1}
	recs, err := nb.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, r := range recs {
		problems[r.Key] = r.Problem.String()
	}
	if len(recs) != 11 {
		t.Fatalf("%d records, want all 11", len(recs))
	}
	for key, want := range map[string]string{"7": "is not an IP address", "8": "no name", "1": "", "4": "no primary_ip"} {
		if got := problems[key]; want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("device %s: problem %q, want %q", key, got, want)
		}
	}
}

func TestNetBoxValidate(t *testing.T) {
	ok := NetBox{URL: "https://netbox.example.com", Token: tokenV1}
	for _, tc := range []struct {
		edit func(*NetBox)
		want string
	}{
		{func(n *NetBox) { n.Query = "limit=5" }, "limit is set by backupd"},
		{func(n *NetBox) { n.Query = "platform=ios&include=x" }, "include is set by backupd"},
		{func(n *NetBox) { n.Query = "a=%zz" }, "not a query string"},
		{func(n *NetBox) { n.HostFrom = "oob_ip" }, "host from"},
		{func(n *NetBox) { n.GroupFrom = []string{"site", "rack"} }, "group from"},
		{func(n *NetBox) { n.GroupFrom = []string{"site", "site"} }, "twice"},
		{func(n *NetBox) { n.CredentialFrom = "custom:x" }, "credential from"},
		{func(n *NetBox) { n.PlatformFrom = "cf:" }, "platform from"},
		{func(n *NetBox) { n.Token = "Token " + tokenV1 }, "no spaces"},
		{func(n *NetBox) { n.URL = "ftp://netbox" }, "not an http"},
		{func(n *NetBox) { n.URL = "https://admin:pw@netbox" }, "no user or password"},
		{func(n *NetBox) { n.URL = "http://169.254.169.254/" }, "cloud metadata"},
		{func(n *NetBox) { n.PageSize = -1 }, "page size"},
	} {
		n := ok
		tc.edit(&n)
		err := n.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", n, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), tokenV1) {
			t.Errorf("token in %q", err)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}
