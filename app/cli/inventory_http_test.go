package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"backupd/db"
)

// librenmsToken is the token the test's LibreNMS takes (LibreNMS API
// tokens are 32 hex characters).
const librenmsToken = "f0e1d2c3b4a5968778695a4b3c2d1e0f"

// librenms serves LibreNMS's device list, GET /api/v0/devices, from
// app/insync/testdata/librenms/devices.json (the shape of LibreNMS's
// own API documentation, see its README), with the X-Auth-Token header
// checked and type=active leaving out ignored and disabled devices, as
// LibreNMS does. It records each request's token and type.
type librenms struct {
	devices []map[string]any
	mu      sync.Mutex
	seen    []string // "token type" per request
}

func newLibreNMS(t *testing.T) (*librenms, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "insync", "testdata", "librenms", "devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Devices []map[string]any `json:"devices"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || len(answer.Devices) == 0 {
		t.Fatalf("devices.json: %v (%d devices)", err, len(answer.Devices))
	}
	l := &librenms{devices: answer.Devices}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv.URL
}

func (l *librenms) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Header.Get("X-Auth-Token")+" "+r.URL.Query().Get("type"))
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-Auth-Token") != librenmsToken {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message": "Unauthenticated."}`)
		return
	}
	if r.URL.Path != "/api/v0/devices" {
		http.NotFound(w, r)
		return
	}
	var out []map[string]any
	for _, d := range l.devices {
		if r.URL.Query().Get("type") == "active" && (d["ignore"] == "1" || d["disabled"] == "1") {
			continue
		}
		out = append(out, d)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "count": len(out), "devices": out})
}

// storedDevice is a device as the tests compare it: platform, login
// method, host, port and group path.
func storedDevices(t *testing.T, data string) map[string]string {
	t.Helper()
	store := openStore(t, data)
	defer store.Close()
	ctx := context.Background()
	ds, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := store.GroupPaths(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range ds {
		group := ""
		if d.GroupID != nil {
			group = strings.Join(paths[*d.GroupID], "/")
		}
		out[d.Name] = fmt.Sprintf("%s %s://%s:%d group=%s", d.Platform, d.LoginMethod, d.Host, d.Port, group)
	}
	return out
}

// wantLines fails the test unless out holds each of want.
func wantLines(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r)
		}
	}
}

// TestInventorySyncFromLibreNMS adds a LibreNMS preset source with the
// token from BACKUPD_INVENTORY_TOKEN (said on stderr) and syncs it
// through the real command line against a server answering LibreNMS's
// device list: the dry run writes nothing, the real run creates the
// active devices with their os mapped to backupd platforms, the
// documentation's device without an os is skipped with its reason, and
// every request carried the token in X-Auth-Token.
func TestInventorySyncFromLibreNMS(t *testing.T) {
	lib, url := newLibreNMS(t)
	data := storeDir(t)
	r := mustRun(t, call{env: []string{"BACKUPD_INVENTORY_TOKEN=" + librenmsToken}}, "inventory", "source", "add", "libre", "--data", data,
		"--kind", "http", "--config-json", `{"http": {"preset": "librenms", "url": "`+url+`/"}}`)
	if !strings.Contains(r.stderr, "token: taken from BACKUPD_INVENTORY_TOKEN") || strings.Contains(r.stdout+r.stderr, librenmsToken) {
		t.Errorf("add does not say where the token came from, or prints it:\n%s", r)
	}
	devices0, audits0 := inventoryCounts(t, data)

	r = mustRun(t, call{}, "inventory", "sync", "--data", data, "--dry-run")
	wantLines(t, r, "inventory source libre (dry run: nothing written)", "create 10.20.0.5 (key 14)", "create core1.example.net (key 12)",
		"create edge1.example.net (key 13)", "create fw1.example.net (key 15)",
		"skip localhost (key 1): no platform in the source", "create 4, skip 1")
	if strings.Contains(r.stdout, "old-sw") {
		t.Errorf("the disabled LibreNMS device is in the report:\n%s", r)
	}
	if d, a := inventoryCounts(t, data); d != devices0 || a != audits0 {
		t.Fatalf("the dry run wrote: devices %d → %d, audit entries %d → %d", devices0, d, audits0, a)
	}

	r = mustRun(t, call{}, "inventory", "sync", "--data", data, "--source", "libre", "--json")
	var reports []struct {
		Source string         `json:"source"`
		DryRun bool           `json:"dry_run"`
		Counts map[string]int `json:"counts"`
		Lines  []struct {
			Action, Name, Key, Reason string
		} `json:"lines"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || len(reports) != 1 {
		t.Fatalf("sync --json: %v\n%s", err, r)
	}
	if rep := reports[0]; rep.Source != "libre" || rep.DryRun || rep.Counts["create"] != 4 || rep.Counts["skip"] != 1 || len(rep.Lines) != 5 {
		t.Errorf("sync --json: %+v", rep)
	}
	got := storedDevices(t, data)
	want := map[string]string{
		"core1.example.net": "cisco_ios ssh://192.0.2.11:22 group=",
		"edge1.example.net": "juniper_junos ssh://192.0.2.12:22 group=",
		"10.20.0.5":         "mikrotik_routeros ssh://10.20.0.5:22 group=",
		"fw1.example.net":   "fortinet ssh://fw1.example.net:22 group=",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("device %s: %q, want %q", name, got[name], w)
		}
	}
	if len(got) != devices0+4 {
		t.Errorf("devices after the sync: %v", got)
	}

	lib.mu.Lock()
	seen := slices.Clone(lib.seen)
	lib.mu.Unlock()
	if len(seen) != 2 {
		t.Errorf("%d requests to LibreNMS, want 2 (dry run and sync): %q", len(seen), seen)
	}
	for _, s := range seen {
		if s != librenmsToken+" active" {
			t.Errorf("a request carried %q, want the token in X-Auth-Token and type=active", s)
		}
	}
}

// inventoryHTTP serves a generic HTTP JSON inventory at /inv: the
// devices at "data", three pages linked by "links.next" (an absolute
// link, then a relative one), the token checked as a bearer token.
type inventoryHTTP struct {
	mu    sync.Mutex
	pages [][]map[string]any
	reqs  int
}

func (h *inventoryHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs++
	if r.Header.Get("Authorization") != "Bearer "+inventoryToken {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	page := 0
	fmt.Sscan(r.URL.Query().Get("page"), &page)
	if r.URL.Path != "/inv" || page < 1 || page > len(h.pages) {
		http.NotFound(w, r)
		return
	}
	var next any
	switch {
	case page == 1:
		next = "http://" + r.Host + "/inv?page=2"
	case page < len(h.pages):
		next = fmt.Sprintf("/inv?page=%d", page+1)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": h.pages[page-1], "links": map[string]any{"next": next}})
}

// TestInventorySyncFromHTTPJSON syncs a generic HTTP JSON source over
// three pages whose devices carry Oxidized's input (mapped from
// "proto"), ssh_port and telnet_port: each device gets its own login
// method and port, a device asking for scp or for port 99999 is skipped
// alone with its sentence, and a change of port or method in the source
// is an update naming the field.
func TestInventorySyncFromHTTPJSON(t *testing.T) {
	dev := func(name, ip, model, site string, kv ...any) map[string]any {
		d := map[string]any{"hostname": name, "ip": ip, "model": model, "site": site}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i].(string)] = kv[i+1]
		}
		return d
	}
	inv := &inventoryHTTP{pages: [][]map[string]any{
		{dev("sw1", "192.0.2.21", "eos", "par1", "proto", "ssh", "ssh_port", "2222"),
			dev("sw2", "192.0.2.22", "ios", "par1", "proto", "telnet, ssh", "telnet_port", 2323)},
		{dev("sw3", "192.0.2.23", "junos", "lyo1"),
			dev("sw4", "192.0.2.24", "ios", "lyo1", "proto", "scp")},
		{dev("sw5", "192.0.2.25", "ios", "lyo1", "proto", "ssh", "ssh_port", "99999")},
	}}
	srv := httptest.NewServer(inv)
	t.Cleanup(srv.Close)
	data := storeDir(t)
	settings := `{"http": {"url": "` + srv.URL + `/inv?page=1", "token_header": "Authorization", "token_prefix": "Bearer ",
		"hosts_location": "data", "map": {"name": "hostname", "ip": "ip", "model": "model", "group": "site", "input": "proto"},
		"vars_map": {"ssh_port": "ssh_port", "telnet_port": "telnet_port"},
		"pagination": {"kind": "next", "next_path": "links.next"}},
		"defaults": {"port": {"ssh": 22, "telnet": 23}}}`
	r := mustRun(t, call{stdin: inventoryToken + "\n"}, "inventory", "source", "add", "cmdb", "--data", data, "--kind", "http",
		"--config-json", settings, "--token-stdin")
	noToken(t, r)
	if !strings.Contains(r.stderr, "token: read from standard input") {
		t.Errorf("add does not say where the token came from:\n%s", r)
	}

	r = mustRun(t, call{}, "inventory", "sync", "--data", data, "--dry-run")
	noToken(t, r)
	wantLines(t, r, "create sw1 (key sw1)", "create sw2 (key sw2)", "create sw3 (key sw3)",
		`skip sw4 (key sw4): login method "scp" (input "scp"): backupd logs in with ssh or telnet`,
		`skip sw5 (key sw5): ssh_port "99999" is not a port`, "create 3, skip 2")
	inv.mu.Lock()
	reqs := inv.reqs
	inv.mu.Unlock()
	if reqs != 3 {
		t.Errorf("the dry run made %d requests, want 3 (one per page)", reqs)
	}

	mustRun(t, call{}, "inventory", "sync", "--data", data)
	got := storedDevices(t, data)
	want := map[string]string{
		"sw1": "arista_eos ssh://192.0.2.21:2222 group=par1",
		"sw2": "cisco_ios telnet://192.0.2.22:2323 group=par1",
		"sw3": "juniper_junos ssh://192.0.2.23:22 group=lyo1",
	}
	if len(got) != len(want) {
		t.Errorf("devices %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("device %s: %q, want %q", name, got[name], w)
		}
	}

	// The source moves sw1 to port 2200 and sw3 to telnet.
	inv.mu.Lock()
	inv.pages[0][0]["ssh_port"] = "2200"
	inv.pages[1][0]["proto"] = "telnet"
	inv.mu.Unlock()
	r = mustRun(t, call{}, "inventory", "sync", "--data", data)
	wantLines(t, r, "update sw1 (key sw1): port", "update sw3 (key sw3): port, login_method", "leave sw2 (key sw2): unchanged")
	got = storedDevices(t, data)
	if got["sw1"] != "arista_eos ssh://192.0.2.21:2200 group=par1" || got["sw3"] != "juniper_junos telnet://192.0.2.23:23 group=lyo1" {
		t.Errorf("after the update: %v", got)
	}
}
