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
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"backupd/db"
)

// inventoryToken is the token the test's NetBox takes: the same shape
// as a NetBox v1 token (40 hex characters).
const inventoryToken = "0123456789abcdef0123456789abcdef01234567"

// netboxDevices serves NetBox's device list from pynetbox's fixture
// (app/insync/testdata/netbox/devices.json, see its README for where it
// comes from) with NetBox's limit/offset pagination (count, next,
// previous, results) and its token header checked; failPage, when set,
// makes that page (1-based) an HTTP 500.
type netboxDevices struct {
	t        *testing.T
	devices  []json.RawMessage
	failPage atomic.Int32
}

func newNetBoxDevices(t *testing.T) (*netboxDevices, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "insync", "testdata", "netbox", "devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Results) == 0 {
		t.Fatalf("devices.json: %v (%d devices)", err, len(page.Results))
	}
	nb := &netboxDevices{t: t, devices: page.Results}
	srv := httptest.NewServer(nb)
	t.Cleanup(srv.Close)
	return nb, srv.URL
}

func (nb *netboxDevices) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Token "+inventoryToken {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail": "Invalid token"}`)
		return
	}
	if r.URL.Path != "/api/dcim/devices/" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 50
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	if int(nb.failPage.Load()) == offset/limit+1 {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"detail": "Server Error"}`)
		return
	}
	end := min(offset+limit, len(nb.devices))
	link := func(off int) any {
		if off < 0 || off >= len(nb.devices) {
			return nil
		}
		nq := r.URL.Query()
		nq.Set("offset", strconv.Itoa(off))
		return "http://" + r.Host + r.URL.Path + "?" + nq.Encode()
	}
	var prev any
	if offset > 0 {
		prev = link(max(offset-limit, 0))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"count": len(nb.devices), "next": link(offset + limit),
		"previous": prev, "results": nb.devices[min(offset, len(nb.devices)):end]})
}

// noToken fails the test when the token shows in r's output.
func noToken(t *testing.T, r result) {
	t.Helper()
	if strings.Contains(r.stdout+r.stderr, inventoryToken) || strings.Contains(r.stdout+r.stderr, inventoryToken[:16]) {
		t.Fatalf("the token was printed:\n%s", r)
	}
}

// inventoryCounts are the store's devices and audit entries.
func inventoryCounts(t *testing.T, data string) (devices, audits int) {
	t.Helper()
	store := openStore(t, data)
	ctx := context.Background()
	ds, err := store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	_, n, err := store.ListAudit(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	return len(ds), n
}

// TestInventorySourceCommands adds, lists, shows, edits and removes a
// NetBox source, and has every bad input refused with its sentence and
// nothing recorded.
func TestInventorySourceCommands(t *testing.T) {
	data := storeDir(t)
	cfgJSON := `{"netbox": {"url": "https://netbox.example.net", "page_size": 3}}`
	withToken := call{stdin: inventoryToken + "\n"}

	// Refusals: nothing is recorded by any of them.
	for _, tc := range []struct {
		name string
		c    call
		args []string
		want string
	}{
		{"bad kind", withToken, []string{"--kind", "librenms", "--config-json", cfgJSON, "--token-stdin"}, `--kind "librenms": netbox or http`},
		{"bad JSON", withToken, []string{"--kind", "netbox", "--config-json", `{"netbox": {`, "--token-stdin"}, "settings: not JSON"},
		{"unknown field", withToken, []string{"--kind", "netbox", "--config-json", `{"netbox": {"url": "https://nb.example.net", "sites": ["a"]}}`, "--token-stdin"}, `unknown field "sites"`},
		{"fetcher's field", withToken, []string{"--kind", "netbox", "--config-json", `{"netbox": {"url": "https://nb.example.net", "host_from": "mgmt"}}`, "--token-stdin"}, `host from "mgmt"`},
		{"no token", call{}, []string{"--kind", "netbox", "--config-json", cfgJSON}, "NetBox needs an API token"},
		{"token on argv", call{}, []string{"--kind", "netbox", "--config-json", cfgJSON, "--token", inventoryToken}, "never taken on the command line"},
		{"secret header", withToken, []string{"--kind", "http", "--config-json", `{"http": {"url": "https://inv.example.net", "map": {"name": "n"}, "headers": {"X-Auth-Token": "abc"}}}`}, "header X-Auth-Token carries a secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustFail(t, tc.c, []string{tc.want}, append([]string{"inventory", "source", "add", "par1", "--data", data}, tc.args...)...)
			noToken(t, r)
		})
	}
	if r := mustRun(t, call{}, "inventory", "source", "list", "--data", data, "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("a refused add recorded a source:\n%s", r)
	}

	r := mustRun(t, withToken, "inventory", "source", "add", "par1", "--data", data, "--kind", "netbox", "--config-json", cfgJSON, "--token-stdin", "--interval", "30m")
	noToken(t, r)
	if !strings.Contains(r.stdout, `added inventory source "par1" (netbox, every 30m, enabled, token set)`) {
		t.Errorf("add says:\n%s", r)
	}
	mustFail(t, withToken, []string{`an inventory source named "par1" exists already`},
		"inventory", "source", "add", "par1", "--data", data, "--kind", "netbox", "--config-json", cfgJSON, "--token-stdin")

	// The token from the environment; an Oxidized paste's user and pass
	// become the token, not a stored header.
	ox := filepath.Join(t.TempDir(), "oxidized.yml")
	if err := os.WriteFile(ox, []byte("source:\n  default: http\n  http:\n    url: https://inv.example.net/nodes\n    user: oxi\n    pass: s3cretpass\n    map:\n      name: hostname\n      model: os\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, call{}, "inventory", "source", "add", "oxi", "--data", data, "--oxidized", ox, "--interval", "0")
	if !strings.Contains(r.stdout, "(http, on demand, enabled, token set)") {
		t.Errorf("oxidized add says:\n%s", r)
	}
	r = mustRun(t, call{}, "inventory", "source", "show", "oxi", "--data", data)
	if strings.Contains(r.stdout, "Basic") || strings.Contains(r.stdout, "s3cretpass") || !strings.Contains(r.stdout, `"token_header": "Authorization"`) ||
		!strings.Contains(r.stdout, "token:      set") {
		t.Errorf("show of the Oxidized source keeps its credentials in the settings, or hides the token header:\n%s", r)
	}
	r = mustRun(t, call{env: []string{"BACKUPD_INVENTORY_TOKEN=" + inventoryToken}}, "inventory", "source", "add", "fra1", "--data", data,
		"--kind", "netbox", "--config-json", cfgJSON, "--disabled")
	noToken(t, r)

	r = mustRun(t, call{}, "inventory", "source", "list", "--data", data, "--json")
	noToken(t, r)
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r)
	}
	var names []string
	for _, s := range list {
		names = append(names, fmt.Sprintf("%s/%s/%v/%v/%s/%s", s["name"], s["kind"], s["interval_minutes"], s["enabled"], s["token"], s["last_status"]))
	}
	want := []string{"fra1/netbox/60/false/set/never", "oxi/http/0/true/set/never", "par1/netbox/30/true/set/never"}
	if !slices.Equal(names, want) {
		t.Errorf("list --json: %v, want %v", names, want)
	}

	// Edit: new settings checked with the stored token; a bad one refused
	// and the old one kept.
	mustFail(t, call{}, []string{`host from "x"`}, "inventory", "source", "edit", "par1", "--data", data,
		"--config-json", `{"netbox": {"url": "https://netbox.example.net", "host_from": "x"}}`)
	mustFail(t, call{}, []string{"nothing to change"}, "inventory", "source", "edit", "par1", "--data", data)
	mustFail(t, call{}, []string{"NetBox needs an API token"}, "inventory", "source", "edit", "par1", "--data", data, "--clear-token")
	r = mustRun(t, call{}, "inventory", "source", "edit", "par1", "--data", data, "--config-json",
		`{"netbox": {"url": "https://netbox2.example.net", "page_size": 3}}`, "--interval", "2h", "--disable")
	if !strings.Contains(r.stdout, "(settings, interval, enabled): netbox, every 2h, disabled, token set") {
		t.Errorf("edit says:\n%s", r)
	}
	r = mustRun(t, call{}, "inventory", "source", "show", "par1", "--data", data)
	noToken(t, r)
	if !strings.Contains(r.stdout, "netbox2.example.net") || !strings.Contains(r.stdout, "enabled:    no") {
		t.Errorf("show after edit:\n%s", r)
	}

	r = mustRun(t, call{}, "inventory", "source", "remove", "fra1", "--data", data)
	if !strings.Contains(r.stdout, "its 0 devices stay") {
		t.Errorf("remove says:\n%s", r)
	}
	mustFail(t, call{}, []string{`no inventory source is named "fra1"`}, "inventory", "source", "show", "fra1", "--data", data)
}

// TestInventorySyncFromNetBox syncs a NetBox source served from
// pynetbox's fixture: a dry run writes nothing, the real run creates the
// devices and audits them with the source's name, and a source failing on
// page 2 changes nothing, exits 1 and shows as failed.
func TestInventorySyncFromNetBox(t *testing.T) {
	nb, url := newNetBoxDevices(t)
	data := storeDir(t)
	mustRun(t, call{stdin: inventoryToken}, "inventory", "source", "add", "nb", "--data", data, "--kind", "netbox",
		"--config-json", `{"netbox": {"url": "`+url+`", "page_size": 3}}`, "--token-stdin")
	devices0, audits0 := inventoryCounts(t, data)

	r := mustRun(t, call{}, "inventory", "sync", "--data", data, "--dry-run")
	noToken(t, r)
	for _, w := range []string{"inventory source nb (dry run: nothing written)", "create test1-core1 (key 2)", "create test1-edge2 (key 7)",
		"skip test1-leaf1 (key 4)", "create 4"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("dry run lacks %q:\n%s", w, r)
		}
	}
	if d, a := inventoryCounts(t, data); d != devices0 || a != audits0 {
		t.Fatalf("the dry run wrote: devices %d → %d, audit entries %d → %d", devices0, d, audits0, a)
	}

	r = mustRun(t, call{}, "inventory", "sync", "--data", data, "--source", "nb", "--json")
	noToken(t, r)
	var reports []struct {
		Source string         `json:"source"`
		DryRun bool           `json:"dry_run"`
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reports); err != nil || len(reports) != 1 {
		t.Fatalf("sync --json: %v\n%s", err, r)
	}
	if reports[0].DryRun || reports[0].Counts["create"] != 4 {
		t.Errorf("sync --json: %+v", reports[0])
	}
	devices1, audits1 := inventoryCounts(t, data)
	if devices1 != devices0+4 {
		t.Errorf("devices %d after the sync, want %d", devices1, devices0+4)
	}
	store := openStore(t, data)
	entries, _, err := store.ListAudit(context.Background(), 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, e := range entries {
		if e.Action == "inventory.sync.create" {
			creates++
			if e.Details["source"] != "nb" || e.Interface != "cli" || !strings.HasPrefix(e.Username, "os:") {
				t.Errorf("audit entry %+v does not name the source and the command line", e)
			}
		}
	}
	store.Close()
	if creates != 4 {
		t.Errorf("%d inventory.sync.create audit entries, want 4", creates)
	}

	// Page 2 of 4 fails: exit 1, the error printed, nothing changed,
	// and the source shows as failed with the error.
	nb.failPage.Store(2)
	r = run(t, call{}, "inventory", "sync", "--data", data)
	noToken(t, r)
	if r.code != 1 || !strings.Contains(r.stdout, "failed, nothing changed: NetBox") || !strings.Contains(r.stdout, "(page 2): HTTP 500") {
		t.Fatalf("a sync failing on page 2:\n%s", r)
	}
	if d, a := inventoryCounts(t, data); d != devices1 || a != audits1 {
		t.Errorf("the failed sync wrote: devices %d → %d, audit entries %d → %d", devices1, d, audits1, a)
	}
	r = mustRun(t, call{}, "inventory", "source", "list", "--data", data)
	if !strings.Contains(r.stdout, "failed") || !strings.Contains(r.stdout, "HTTP 500") {
		t.Errorf("list after the failed sync:\n%s", r)
	}

	// Usage errors are 2.
	if r := run(t, call{}, "inventory", "sync", "--data", data, "--bogus"); r.code != 2 {
		t.Errorf("an unknown flag: exit %d, want 2\n%s", r.code, r)
	}
	if r := run(t, call{}, "inventory", "sync", "--data", data, "--source", "nope"); r.code != 2 {
		t.Errorf("an unknown source: exit %d, want 2\n%s", r.code, r)
	}
}

// show and list --json say since when a failing source has not synced:
// its last sync that applied, apart from its last try; never before one
// applied.
func TestInventorySourceShowLastGoodSync(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{}, "inventory", "source", "add", "cmdb", "--data", data, "--kind", "http",
		"--config-json", `{"http": {"url": "https://cmdb.example.net/devices", "map": {"name": "hostname"}}}`)
	r := mustRun(t, call{}, "inventory", "source", "show", "cmdb", "--data", data)
	if !strings.Contains(r.stdout, "\nstatus:     never\nlast good:  never\n") {
		t.Errorf("show before any sync lacks its last good sync, never:\n%s", r)
	}

	// Syncs recorded as the scheduler's Syncer records them: one that
	// applied, then one that failed three hours later.
	good := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	failed := good.Add(3 * time.Hour)
	store := openStore(t, data)
	srcs, err := store.InventorySources(context.Background())
	if err != nil || len(srcs) != 1 {
		t.Fatalf("the sources: %v, %v", srcs, err)
	}
	if _, err := store.ApplyInventorySync(context.Background(), srcs[0].ID, db.InventorySync{At: good}); err != nil {
		t.Fatal(err)
	}
	if err := store.RecordInventorySyncFailure(context.Background(), srcs[0].ID, failed, "the inventory answered 503"); err != nil {
		t.Fatal(err)
	}
	store.Close()

	r = mustRun(t, call{}, "inventory", "source", "show", "cmdb", "--data", data)
	if want := "last sync:  2026-03-04T08:06:07\nstatus:     failed\nlast good:  2026-03-04T05:06:07\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("show of the failing source lacks %q:\n%s", want, r)
	}
	r = mustRun(t, call{}, "inventory", "source", "list", "--data", data, "--json")
	var rows []struct {
		LastSyncAt     *string `json:"last_sync_at"`
		LastGoodSyncAt *string `json:"last_good_sync_at"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].LastGoodSyncAt == nil ||
		*rows[0].LastGoodSyncAt != "2026-03-04T05:06:07" || rows[0].LastSyncAt == nil || *rows[0].LastSyncAt != "2026-03-04T08:06:07" {
		t.Errorf("list --json of the failing source (want last good sync 05:06:07, last sync 08:06:07): %v\n%s", err, r)
	}
}
