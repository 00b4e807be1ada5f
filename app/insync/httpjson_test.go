package insync

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A pasted Oxidized configuration reading NetBox through `source: http`
// (the most common Oxidized set-up; the block is as Oxidized's hooks
// document it) fetches through the fake NetBox with next-link pagination.
func TestOxidizedNetBoxThroughHTTP(t *testing.T) {
	f := &fakeNetBox{t: t, lists: map[string][]map[string]any{"dcim/devices/": loadList(t, "devices.json")}}
	url := f.start()
	conf := `
source:
  default: http
  http:
    url: ` + url + `/api/dcim/devices/?status=active&limit=4
    scheme: https
    delimiter: !ruby/regexp /:/
    headers:
      Authorization: Token ` + tokenV1 + `
    map:
      name: name
      model: platform.slug
      group: role.slug
      ip: primary_ip.address
      vendor: device_type.manufacturer.name
    vars_map:
      enable: custom_fields.enable
    hosts_location: results
    pagination: true
    pagination_key_name: next
`
	h, err := ParseOxidizedHTTP(conf)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := h.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 11 || f.devicePages() != 3 {
		t.Fatalf("%d records in %d pages, want 11 in 3", len(recs), f.devicePages())
	}
	m := byName(recs)
	edge := m["test1-edge1"]
	if edge.Host != "10.0.255.1" || edge.Platform != "juniper-junos" || !slices.Equal(edge.Group, []string{"router"}) ||
		edge.Key != "test1-edge1" || edge.Vars["vendor"] != "Juniper" || !edge.Problem.IsZero() {
		t.Errorf("edge1 = %+v", edge)
	}
	// Without an address, the name is the host, as in Oxidized.
	if leaf := m["test1-leaf1"]; leaf.Host != "test1-leaf1" || !leaf.Problem.IsZero() {
		t.Errorf("leaf1 = %+v", leaf)
	}
}

// pagedSource serves an in-house inventory: devices under data.hosts,
// page numbers in ?page=, an empty page at the end, a key header.
func pagedSource(t *testing.T, pages [][]any, key string) (string, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.RawQuery)
		if r.Header.Get("X-Api-Key") != key {
			// A source that echoes the key it was given: the error shows
			// its detail, never the key.
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"detail": "key %s has no access"}`, r.Header.Get("X-Api-Key"))
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("p"))
		var hosts []any
		if n >= 1 && n <= len(pages) {
			hosts = pages[n-1]
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, mustJSON(t, map[string]any{"data": map[string]any{"hosts": hosts}}))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &seen
}

func TestHTTPJSONPageNumbers(t *testing.T) {
	pages := [][]any{
		{
			map[string]any{"id": 10, "hostname": "sw1", "mgmt": map[string]any{"ips": []any{"192.0.2.10"}}, "os": "ios", "site": "lon", "login": "lab", "enable": "s3cret"},
			map[string]any{"id": 11, "hostname": "sw2", "mgmt": map[string]any{"ips": []any{"2001:db8::11"}}, "os": "eos", "site": "par"},
		},
		{
			map[string]any{"id": 12, "hostname": "fw1", "os": "fortios"}, // no address: the name
			map[string]any{"id": 13, "hostname": "", "mgmt": map[string]any{"ips": []any{"192.0.2.13"}}},
			"not an object",
			map[string]any{"id": 14, "hostname": "bad", "mgmt": map[string]any{"ips": []any{"192.0.2.300"}}},
			map[string]any{"id": 15, "hostname": "obj", "os": map[string]any{"name": "ios"}},
		},
	}
	url, seen := pagedSource(t, pages, "k-123456")
	h := HTTPJSON{
		URL:           url + "/inventory?view=all",
		Headers:       map[string]string{"X-Api-Key": "k-123456"},
		HostsLocation: "data.hosts",
		Map:           map[string]string{"name": "hostname", "ip": "mgmt.ips[0]", "model": "os", "group": "site", "key": "id", "credential": "login"},
		VarsMap:       map[string]string{"enable": "enable"},
		Pagination:    Pagination{Kind: PageNumber, PageParam: "p"},
	}
	recs, err := h.Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 || len(*seen) != 3 {
		t.Fatalf("%d records after %d requests (%v), want 7 after 3 (the third page empty)", len(recs), len(*seen), *seen)
	}
	if !strings.Contains((*seen)[0], "view=all") || !strings.Contains((*seen)[0], "p=1") {
		t.Errorf("first query %q: want the URL's own query kept and p=1", (*seen)[0])
	}
	want := []string{
		"{10 sw1 192.0.2.10 ios [lon] lab  map[enable:s3cret] }",
		"{11 sw2 2001:db8::11 eos [par]   map[] }",
		"{12 fw1 fw1 fortios []   map[] }",
		`{13  192.0.2.13  []   map[] entry 4 has no name at "hostname"}`,
		"{    []   map[] entry 5 is not an object}",
		`{14 bad 192.0.2.300  []   map[] host "192.0.2.300" is neither an IP address nor a DNS name}`,
		`{15 obj obj  []   map[] model at "os" is not a single value}`,
	}
	for i, r := range recs {
		if got := fmt.Sprint(r); got != want[i] {
			t.Errorf("record %d = %s\n want %s", i+1, got, want[i])
		}
	}
}

// Errors of the generic source: no records, and no header value in them
// even when the source echoes it.
func TestHTTPJSONFails(t *testing.T) {
	url, _ := pagedSource(t, [][]any{{map[string]any{"hostname": "a"}}}, "right-key")
	base := HTTPJSON{URL: url, Headers: map[string]string{"X-Api-Key": "wrong-key-987"}, HostsLocation: "data.hosts",
		Map: map[string]string{"name": "hostname"}, Pagination: Pagination{Kind: PageNumber, PageParam: "p"}}
	recs, err := base.Fetch(context.Background(), Options{})
	if err == nil || recs != nil || !strings.Contains(err.Error(), `HTTP 403`) ||
		!strings.Contains(err.Error(), "key [hidden] has no access") || strings.Contains(err.Error(), "wrong-key-987") {
		t.Errorf("wrong key: %d records, %v: want 403 with the source's detail, without the key", len(recs), err)
	}

	base.Headers["X-Api-Key"] = "right-key"
	base.HostsLocation = "data"
	if recs, err := base.Fetch(context.Background(), Options{}); err == nil || recs != nil || !strings.Contains(err.Error(), "not an array") {
		t.Errorf("hosts location at an object: %d, %v", len(recs), err)
	}
	base.HostsLocation = "data.devices"
	if recs, err := base.Fetch(context.Background(), Options{}); err == nil || recs != nil || !strings.Contains(err.Error(), "nothing at") {
		t.Errorf("hosts location missing: %d, %v", len(recs), err)
	}

	// A next link that never ends is cut at the page bound.
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		fmt.Fprintf(w, `{"hosts": [{"name": "d%d"}], "links": {"next": "/list?n=%d"}}`, n, n+1)
	}))
	t.Cleanup(loop.Close)
	h := HTTPJSON{URL: loop.URL + "/list?n=1", HostsLocation: "hosts", Map: map[string]string{"name": "name"},
		Pagination: Pagination{Kind: PageNext, NextPath: "links.next"}}
	if recs, err := h.Fetch(context.Background(), Options{MaxPages: 50}); err == nil || recs != nil || !strings.Contains(err.Error(), "more than 50 pages") {
		t.Errorf("endless next links: %d, %v", len(recs), err)
	}
	// … and one pointing back is caught at once.
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"hosts": [{"name": "d"}], "links": {"next": "/list?n=1"}}`)
	}))
	t.Cleanup(back.Close)
	h.URL = back.URL + "/list?n=1"
	if recs, err := h.Fetch(context.Background(), Options{}); err == nil || recs != nil || !strings.Contains(err.Error(), "points back") {
		t.Errorf("next link loop: %d, %v", len(recs), err)
	}
}

// LibreNMS's device list, as its API documentation (doc/API/Devices.md,
// list_devices) shows it: {"status": "ok", "count": N, "devices": […]}
// with device_id and hostname; ip and os are LibreNMS's column names
// (the documentation elides them as "…").
func TestLibreNMSPreset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Auth-Token") != "librenms-token-1" || r.URL.Path != "/api/v0/devices" || r.URL.Query().Get("type") != "active" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"status": "error", "message": "Unauthenticated."}`)
			return
		}
		fmt.Fprint(w, `{"status": "ok", "count": 2, "devices": [
			{"device_id": "1", "hostname": "localhost", "sysName": "localhost", "ip": "", "os": "linux", "serial": null, "icon": null},
			{"device_id": "354", "hostname": "core-sw1.example.net", "ip": "192.168.10.4", "os": "ios", "serial": null, "icon": null}]}`)
	}))
	t.Cleanup(srv.Close)
	recs, err := LibreNMS(srv.URL+"/", "librenms-token-1").Fetch(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(recs)
	want := "[{1 localhost localhost linux []   map[] } {354 core-sw1.example.net 192.168.10.4 ios []   map[] }]"
	if got != want {
		t.Errorf("records %s\nwant    %s", got, want)
	}
}

func TestParseOxidizedHTTP(t *testing.T) {
	// Oxidized's documentation (docs/Sources.md, "Source: HTTP").
	h, err := ParseOxidizedHTTP(`
source:
  default: http
  http:
    url: https://url/api
    scheme: https
    delimiter: !ruby/regexp /:/
    user: username
    pass: password
    map:
      name: hostname
      model: os
      username: username
      password: password
    vars_map:
      enable: enable
    headers:
      X-Auth-Token: 'somerandomstring'
`)
	if err != nil {
		t.Fatal(err)
	}
	if h.URL != "https://url/api" || h.Map["name"] != "hostname" || h.Map["model"] != "os" || h.VarsMap["enable"] != "enable" ||
		h.Headers["X-Auth-Token"] != "somerandomstring" || h.Pagination.Kind != "" {
		t.Errorf("parsed %+v", h)
	}
	if got := h.Headers["Authorization"]; got != "Basic "+base64.StdEncoding.EncodeToString([]byte("username:password")) {
		t.Errorf("user/pass → %q, want basic authentication", got)
	}
	// The http block alone, pasted.
	if h, err := ParseOxidizedHTTP("url: https://inv.example/api\nmap:\n  name: n\nhosts_location: data\n"); err != nil || h.HostsLocation != "data" {
		t.Errorf("block alone: %+v, %v", h, err)
	}
	for conf, want := range map[string]string{
		"url: https://x/\nmap: {name: n}\nsecure: false\n":              "never does",
		"url: https://x/\nmap: {name: n}\nproxy: http://p\n":            "unknown keys in the http source: proxy",
		"url: https://x/\nmap: {model: os}\n":                           "name is required",
		"source:\n  default: csv\n  csv: {file: router.db}\n":           "only Oxidized's http source",
		"url: https://x/\nmap: {name: n}\npagination: true\n":           "next page's link is required",
		"url: https://x/\nmap: {name: 'a[x]'}\n":                        "array index",
		"url: [1, 2]\n":                                                 "url: a single value",
		"url: https://x/\nmap: {name: n}\nheaders: {'Bad Header': v}\n": "not a header name",
		"\tnot yaml: [": "not YAML",
	} {
		if _, err := ParseOxidizedHTTP(conf); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", conf, err, want)
		}
	}
}

func TestParsePath(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b": []any{"x", map[string]any{"c": "y"}}}, "list": []any{[]any{"z"}}}
	for path, want := range map[string]any{"a.b[0]": "x", "a.b[1].c": "y", "list[0][0]": "z", "a.b[2]": nil, "a.q": nil, "a.b.c": nil} {
		got, _ := lookPath(doc, path)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	for _, bad := range []string{"a..b", "a[", "a[x]", "a[-1]", ".a"} {
		if _, err := parsePath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
