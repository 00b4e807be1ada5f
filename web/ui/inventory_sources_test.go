package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/insync"
	"backupd/db"
	"backupd/embed"
)

// insyncToken is the token the test's NetBox takes: a NetBox v1 token's
// shape (40 hex characters).
const insyncToken = "0123456789abcdef0123456789abcdef01234567"

// fakeNetBox serves NetBox's device list from pynetbox's fixture
// (app/insync/testdata/netbox/devices.json, see its README for where it
// comes from) with NetBox's limit/offset pagination and its token header
// checked; hits counts the requests that carried the token, fail makes
// every answer an HTTP 500, edit changes the devices it serves.
type fakeNetBox struct {
	mu      sync.Mutex
	devices []json.RawMessage
	hits    atomic.Int32
	fail    atomic.Bool
	srv     *httptest.Server
}

func newFakeNetBox(t *testing.T) *fakeNetBox {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "app", "insync", "testdata", "netbox", "devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Results) == 0 {
		t.Fatalf("devices.json: %v (%d devices)", err, len(page.Results))
	}
	nb := &fakeNetBox{devices: page.Results}
	nb.srv = httptest.NewServer(nb)
	t.Cleanup(nb.srv.Close)
	return nb
}

func (nb *fakeNetBox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Token "+insyncToken {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"detail": "Invalid token"}`)
		return
	}
	nb.hits.Add(1)
	if nb.fail.Load() {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"detail": "Server Error"}`)
		return
	}
	if r.URL.Path != "/api/dcim/devices/" {
		http.NotFound(w, r)
		return
	}
	nb.mu.Lock()
	defer nb.mu.Unlock()
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 {
		limit = 50
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	end := min(offset+limit, len(nb.devices))
	var next any
	if end < len(nb.devices) {
		nq := r.URL.Query()
		nq.Set("offset", strconv.Itoa(end))
		next = "http://" + r.Host + r.URL.Path + "?" + nq.Encode()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"count": len(nb.devices), "next": next, "previous": nil,
		"results": nb.devices[min(offset, len(nb.devices)):end]})
}

// edit changes the devices the fake serves: change gets each device as
// JSON and returns it changed, or nil to drop it.
func (nb *fakeNetBox) edit(t *testing.T, change func(d map[string]any) map[string]any) {
	t.Helper()
	nb.mu.Lock()
	defer nb.mu.Unlock()
	var out []json.RawMessage
	for _, raw := range nb.devices {
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		if d = change(d); d == nil {
			continue
		}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
	}
	nb.devices = out
}

// netboxForm is the add form of a NetBox source at base.
func netboxForm(name, base, token string) url.Values {
	return url.Values{"name": {name}, "kind": {"netbox"}, "nb_url": {base}, "nb_status": {"active"}, "token": {token},
		"interval": {"60"}, "enabled": {"1"}, "login_method": {"ssh"}, "mapping": {"acme-os = cisco_ios\n"}}
}

// sourceID finds a source's id by name.
func sourceID(t *testing.T, e *env, name string) int64 {
	t.Helper()
	srcs, err := e.store.InventorySources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range srcs {
		if s.Name == name {
			return s.ID
		}
	}
	t.Fatalf("no source %q", name)
	return 0
}

var reportLine = regexp.MustCompile(`data-action="([a-z]+)" data-name="([^"]*)"`)

// reportLines are a report page's lines as "action name".
func reportLines(body string) []string {
	var out []string
	for _, m := range reportLine.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// noTokenIn fails the test when the token shows in text.
func noTokenIn(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, insyncToken) || strings.Contains(text, insyncToken[:16]) {
		t.Fatalf("%s shows the token", what)
	}
}

// The inventory sources page lists, adds, edits and removes sources; a
// refusal is a sentence on the form with what was typed kept; every POST
// needs the CSRF token and the edit rights; the token is never shown.
func TestInventorySourcesPage(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)

	p := b.get("/settings")
	expectBody(t, "settings", p, `href="/settings/inventory-sources"`)
	p = b.get("/settings/inventory-sources")
	expect(t, "list", p, http.StatusOK, "")
	expectBody(t, "empty list", p, "No inventory source yet.", `id="insync-add"`)

	// Refusals keep the input.
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{netboxForm("", nb.srv.URL, insyncToken), "Give the source a name."},
		{netboxForm("nb", nb.srv.URL, ""), "NetBox needs an API token"},
		{netboxForm("nb", "ftp://netbox.example.net", insyncToken), "The settings do not pass the check"},
		{func() url.Values { f := netboxForm("nb", nb.srv.URL, insyncToken); f.Set("interval", "-5"); return f }(), "whole number of minutes"},
		{func() url.Values {
			f := netboxForm("nb", nb.srv.URL, insyncToken)
			f.Set("mapping", "no equals sign")
			return f
		}(), "no equals sign"},
		{func() url.Values {
			f := netboxForm("nb", nb.srv.URL, insyncToken)
			f.Set("nb_host_from", "mgmt")
			return f
		}(), "host from"},
	} {
		b.get("/settings/inventory-sources/new")
		p := b.post("/settings/inventory-sources", c.form)
		expect(t, "refused "+c.want, p, http.StatusUnprocessableEntity, "")
		expectBody(t, "refused "+c.want, p, c.want, `value="`+c.form.Get("name")+`"`, c.form.Get("mapping"))
		noTokenIn(t, "a refused form", p.body)
	}
	if srcs, _ := e.store.InventorySources(context.Background()); len(srcs) != 0 {
		t.Fatalf("refusals recorded %d sources", len(srcs))
	}

	// Add.
	b.get("/settings/inventory-sources/new")
	p = b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken))
	expect(t, "add", p, http.StatusSeeOther, "/settings/inventory-sources?done=added")
	id := sourceID(t, e, "nb")
	src, _ := e.store.InventorySource(context.Background(), id)
	if len(src.Token) == 0 || strings.Contains(string(src.Config), insyncToken) {
		t.Fatalf("stored source: token %d bytes, config %s", len(src.Token), src.Config)
	}
	p = b.get("/settings/inventory-sources?done=added")
	expectBody(t, "list", p, "The inventory source was added.", ">nb</a>", "every 60 min", ">never<")
	noTokenIn(t, "the list", p.body)

	// The same name again is refused, input kept.
	b.get("/settings/inventory-sources/new")
	p = b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken))
	expect(t, "same name", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "same name", p, "An inventory source named “nb” exists already")

	// Edit: the form shows no token, only that one is stored.
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)
	p = b.get(path)
	expect(t, "edit form", p, http.StatusOK, "")
	expectBody(t, "edit form", p, "A token is stored: leave this empty to keep it.", `value="`+nb.srv.URL+`"`)
	noTokenIn(t, "the edit form", p.body)
	f := netboxForm("nb-par1", nb.srv.URL+"/", "")
	f.Set("interval", "0")
	f.Set("nb_site", "par1, fra1")
	p = b.post(path, f)
	expect(t, "edit", p, http.StatusSeeOther, "/settings/inventory-sources?done=saved")
	src, _ = e.store.InventorySource(context.Background(), id)
	if src.Name != "nb-par1" || src.IntervalMinutes != 0 || len(src.Token) == 0 || !strings.Contains(string(src.Config), `"site":["par1","fra1"]`) {
		t.Fatalf("edited source: %+v %s", src.Name, src.Config)
	}

	// CSRF on every POST.
	for _, pth := range []string{"/settings/inventory-sources", path, path + "/delete", path + "/dry-run", path + "/sync"} {
		form := netboxForm("x", nb.srv.URL, insyncToken)
		form.Set("csrf", "wrong")
		p := b.post(pth, form)
		expect(t, "no CSRF "+pth, p, http.StatusForbidden, "")
	}

	// A viewer of the settings sees the list and may change nothing.
	e.createUser("ops", "ops-password-1", auth.RoleOperator, true)
	v := e.browser()
	v.mustLogin("ops", "ops-password-1")
	p = v.get("/settings/inventory-sources")
	expect(t, "operator list", p, http.StatusOK, "")
	expectBody(t, "operator list", p, "nb-par1", "You can look but not change or run sources")
	if strings.Contains(p.body, path+"/sync") {
		t.Errorf("the operator is offered sync")
	}
	for _, pth := range []string{"/settings/inventory-sources", path, path + "/delete", path + "/dry-run", path + "/sync"} {
		p := v.post(pth, netboxForm("x", nb.srv.URL, insyncToken))
		expect(t, "operator POST "+pth, p, http.StatusForbidden, "")
	}
	expect(t, "operator edit form", v.get(path), http.StatusForbidden, "")
	// settings.update alone is not enough: a sync creates devices.
	ctx := context.Background()
	if _, err := e.store.CreateRole(ctx, "settings-only", "", []string{"settings.view", "settings.update"}); err != nil {
		t.Fatal(err)
	}
	e.createUser("cfg", "cfg-password-1", "settings-only", true)
	c := e.browser()
	c.mustLogin("cfg", "cfg-password-1")
	c.get("/settings/inventory-sources")
	expect(t, "settings-only sync", c.post(path+"/sync", nil), http.StatusForbidden, "")
	expect(t, "settings-only delete", c.post(path+"/delete", nil), http.StatusForbidden, "")
	if hits := nb.hits.Load(); hits != 0 {
		t.Fatalf("refused runs reached NetBox %d times", hits)
	}

	// Delete.
	b.get("/settings/inventory-sources")
	p = b.post(path+"/delete", nil)
	expect(t, "delete", p, http.StatusSeeOther, "/settings/inventory-sources?done=deleted")
	if srcs, _ := e.store.InventorySources(ctx); len(srcs) != 0 {
		t.Fatalf("%d sources after delete", len(srcs))
	}
	var actions []string
	for _, a := range e.auditEntries() {
		if strings.HasPrefix(a.Action, "inventory_source.") {
			actions = append(actions, a.Action)
			d, _ := json.Marshal(a.Details)
			noTokenIn(t, "audit "+a.Action, string(d))
		}
	}
	if strings.Join(actions, " ") != "inventory_source.create inventory_source.update inventory_source.delete" {
		t.Errorf("audit: %v", actions)
	}
	noTokenIn(t, "the server's log", e.logs.String())
}

// Moving a source that has a token to another scheme, host or port is
// refused unless the token is typed again: whoever may edit the settings
// cannot have the stored token sent to a server of theirs. The token
// still goes to the old host only.
func TestInventorySourceTokenStaysWithItsHost(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	thief := newFakeNetBox(t)
	var stolen atomic.Int32
	thief.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			stolen.Add(1)
		}
		w.WriteHeader(http.StatusUnauthorized)
	})

	b.get("/settings/inventory-sources/new")
	expect(t, "add", b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken)), http.StatusSeeOther, "")
	id := sourceID(t, e, "nb")
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)
	before, _ := e.store.InventorySource(context.Background(), id)

	// Another port of the same host, another host name for it, another
	// scheme: each refused, with the input kept.
	u, _ := url.Parse(nb.srv.URL)
	for _, moved := range []string{thief.srv.URL, "http://localhost:" + u.Port(), "https://" + u.Host} {
		b.get(path)
		p := b.post(path, netboxForm("nb", moved, ""))
		expect(t, "moved to "+moved, p, http.StatusUnprocessableEntity, "")
		expectBody(t, "moved to "+moved, p, "The token would be sent to the new address: enter it again", `value="`+moved+`"`)
		noTokenIn(t, "the refusal", p.body)
	}
	after, _ := e.store.InventorySource(context.Background(), id)
	if string(after.Config) != string(before.Config) || string(after.Token) != string(before.Token) {
		t.Fatalf("a refused move changed the source: %s", after.Config)
	}
	// A path under the same origin keeps the token.
	b.get(path)
	expect(t, "same origin", b.post(path, netboxForm("nb", nb.srv.URL+"/", "")), http.StatusSeeOther, "")

	b.get("/settings/inventory-sources")
	p := b.post(path+"/dry-run", nil)
	expect(t, "dry run", p, http.StatusOK, "")
	if nb.hits.Load() == 0 || stolen.Load() != 0 {
		t.Fatalf("NetBox had %d requests with the token, the other server %d", nb.hits.Load(), stolen.Load())
	}

	// Typed again, the move is taken: it is the person's own token.
	b.get(path)
	expect(t, "moved with the token", b.post(path, netboxForm("nb", thief.srv.URL, insyncToken)), http.StatusSeeOther, "")
	// Removing the token is a move too: nothing is sent.
	b.get(path)
	f := netboxForm("nb", nb.srv.URL, "")
	f.Set("clear_token", "1")
	p = b.post(path, f)
	expect(t, "move and clear", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "move and clear", p, "NetBox needs an API token")
}

// A dry run lists what the sync then does, line for line; the sync
// creates the devices; a failed fetch says why and changes nothing. Both
// are audited, never with the token.
func TestInventorySourceDryRunAndSync(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	ctx := context.Background()
	b.get("/settings/inventory-sources/new")
	expect(t, "add", b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken)), http.StatusSeeOther, "")
	id := sourceID(t, e, "nb")
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)

	b.get("/settings/inventory-sources")
	p := b.post(path+"/dry-run", nil)
	expect(t, "dry run", p, http.StatusOK, "")
	expectBody(t, "dry run", p, "Dry run of “nb”", "Dry run: nothing was written.", `id="insync-report-sync"`)
	dry := reportLines(p.body)
	if len(dry) == 0 || !strings.Contains(strings.Join(dry, "\n"), "create ") {
		t.Fatalf("dry run lines: %v\n%s", dry, p.body)
	}
	noTokenIn(t, "the dry run", p.body)
	if strings.Contains(p.body, "insync.") {
		t.Errorf("the report shows a message key instead of its text")
	}
	expectBody(t, "dry run keys", p, `<td class="bs-mono">2</td>`)
	if ds, _ := e.store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000); len(ds) != 0 {
		t.Fatalf("the dry run made %d devices", len(ds))
	}

	p = b.post(path+"/sync", nil)
	expect(t, "sync", p, http.StatusOK, "")
	expectBody(t, "sync", p, "Sync of “nb”", "The sync is done")
	real := reportLines(p.body)
	if strings.Join(real, "\n") != strings.Join(dry, "\n") {
		t.Fatalf("the sync's lines differ from the dry run's:\n%v\n%v", real, dry)
	}
	creates := 0
	for _, l := range real {
		if strings.HasPrefix(l, "create ") {
			creates++
		}
	}
	ds, _ := e.store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	if len(ds) != creates {
		t.Fatalf("%d devices after the sync, want %d", len(ds), creates)
	}
	p = b.get("/settings/inventory-sources")
	expectBody(t, "list after the sync", p, ">ok<", "created "+strconv.Itoa(creates))

	// A failed fetch: the sentence, nothing changed, the source's status.
	nb.fail.Store(true)
	p = b.post(path+"/sync", nil)
	expect(t, "failed sync", p, http.StatusOK, "")
	expectBody(t, "failed sync", p, "The sync failed and nothing changed:", "500")
	if strings.Contains(p.body, "data-action=") {
		t.Errorf("a failed sync lists lines")
	}
	if ds2, _ := e.store.DevicesAfter(ctx, db.Scope{All: true}, db.DeviceFilter{}, 0, 1000); len(ds2) != len(ds) {
		t.Fatalf("a failed sync changed the devices: %d, want %d", len(ds2), len(ds))
	}
	p = b.get("/settings/inventory-sources")
	expectBody(t, "list after the failure", p, ">failed<")

	// A disabled source is not synced, as on the command line.
	nb.fail.Store(false)
	b.get(path)
	f := netboxForm("nb", nb.srv.URL, "")
	f.Del("enabled")
	expect(t, "disable", b.post(path, f), http.StatusSeeOther, "")
	b.get("/settings/inventory-sources")
	hits := nb.hits.Load()
	p = b.post(path+"/sync", nil)
	expect(t, "sync of a disabled source", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "sync of a disabled source", p, "This source is disabled")
	if nb.hits.Load() != hits {
		t.Errorf("a disabled source was fetched")
	}

	var runs []string
	for _, a := range e.auditEntries() {
		d, _ := json.Marshal(a.Details)
		noTokenIn(t, "audit "+a.Action, string(d))
		if a.Action == "inventory_source.dry_run" || a.Action == "inventory_source.sync" {
			runs = append(runs, a.Action)
		}
	}
	if strings.Join(runs, " ") != "inventory_source.dry_run inventory_source.sync inventory_source.sync" {
		t.Errorf("audit of the runs: %v", runs)
	}
	noTokenIn(t, "the server's log", e.logs.String())
}

// A pasted Oxidized source: http becomes an HTTP JSON source whose user
// and pass are the sealed token, never a stored setting nor shown; the
// same move rule keeps that secret header with its host; a secret in a
// second header is refused with the input kept.
func TestInventorySourceOxidizedPaste(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	var auth atomic.Value
	inv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"hostname": "cmdb-sw1", "ip": "192.0.2.10", "model": "ios"}]`)
	}))
	t.Cleanup(inv.Close)
	yaml := "source:\n  default: http\n  http:\n    url: " + inv.URL + "/nodes\n    user: oxidized\n    pass: s3cret-pass\n" +
		"    map:\n      name: hostname\n      ip: ip\n      model: model\n"
	form := url.Values{"name": {"cmdb"}, "kind": {"oxidized"}, "oxidized": {yaml}, "interval": {"0"}, "enabled": {"1"}}

	two := cloneForm(form)
	two.Set("oxidized", yaml+"    headers:\n      X-Api-Key: other-secret\n")
	b.get("/settings/inventory-sources/new")
	p := b.post("/settings/inventory-sources", two)
	expect(t, "two secrets", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "two secrets", p, "both carry a secret", "X-Api-Key: other-secret")

	b.get("/settings/inventory-sources/new")
	expect(t, "add", b.post("/settings/inventory-sources", form), http.StatusSeeOther, "")
	id := sourceID(t, e, "cmdb")
	src, _ := e.store.InventorySource(context.Background(), id)
	if len(src.Token) == 0 || strings.Contains(string(src.Config), "s3cret") || strings.Contains(string(src.Config), "Basic") {
		t.Fatalf("stored: token %d bytes, config %s", len(src.Token), src.Config)
	}
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)
	p = b.get(path)
	expectBody(t, "edit form", p, `value="http" selected`, "A token is stored", "name = hostname")
	if strings.Contains(p.body, "s3cret") || strings.Contains(p.body, "b3hpZGl6ZWQ6czNjcmV0LXBhc3M") {
		t.Fatal("the edit form shows the secret")
	}

	b.get("/settings/inventory-sources")
	p = b.post(path+"/sync", nil)
	expectBody(t, "sync", p, "The sync is done", `data-action="create" data-name="cmdb-sw1"`)
	if got, _ := auth.Load().(string); got != "Basic b3hpZGl6ZWQ6czNjcmV0LXBhc3M=" {
		t.Fatalf("the source got Authorization %q", got)
	}

	// The secret header stays with its host.
	f := url.Values{"name": {"cmdb"}, "kind": {"http"}, "http_url": {"http://localhost:1/nodes"}, "http_map": {"name = hostname\nip = ip\nmodel = model"},
		"http_pagination": {"none"}, "http_token_header": {"Authorization"}, "interval": {"0"}, "enabled": {"1"}}
	b.get(path)
	p = b.post(path, f)
	expect(t, "moved", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "moved", p, "The token would be sent to the new address")
}

var kindPanel = regexp.MustCompile(`data-kind-panel="([a-z]+)"( hidden)?>\s*<h2[^>]*>[^<]*</h2>\s*<p class="hint">[^<]*</p>\s*<fieldset class="insync-fields"( disabled)?>`)

// shownKinds are the kinds whose section a form page shows, as a page
// without JavaScript has it; a section half shown (hidden but its fields
// sent, or the reverse) fails the test.
func shownKinds(t *testing.T, p page) []string {
	t.Helper()
	var shown []string
	all := kindPanel.FindAllStringSubmatch(p.body, -1)
	if len(all) != 4 {
		t.Fatalf("the form has %d kind sections, want 4:\n%s", len(all), p.body)
	}
	for _, m := range all {
		if (m[2] == "") != (m[3] == "") {
			t.Fatalf("the %s section is hidden %t but its fields disabled %t", m[1], m[2] != "", m[3] != "")
		}
		if m[2] == "" {
			shown = append(shown, m[1])
		}
	}
	return shown
}

// expectKind fails unless the form shows kind's section alone, with kind
// chosen in the list and marked among the kind links.
func expectKind(t *testing.T, what string, p page, kind string) {
	t.Helper()
	if got := shownKinds(t, p); len(got) != 1 || got[0] != kind {
		t.Fatalf("%s: the form shows the sections %v, want only %s", what, got, kind)
	}
	expectBody(t, what, p, `<option value="`+kind+`" selected>`, `id="insync-kind-link-`+kind+`" aria-current="page"`)
	if n := strings.Count(p.body, `id="insync-kind-link-`); n != 4 {
		t.Fatalf("%s: %d kind links, want 4", what, n)
	}
}

// Without JavaScript the form shows the section of one kind: the kind
// links are plain links that ask for the form of another (?kind=), an
// edit shows its source's kind, and a refused form comes back with the
// kind and everything typed but the token.
func TestInventorySourceFormKinds(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)

	p := b.get("/settings/inventory-sources/new")
	expect(t, "new", p, http.StatusOK, "")
	expectKind(t, "new", p, "netbox")
	for _, k := range []string{"netbox", "http", "librenms", "oxidized"} {
		expectBody(t, "kind links", p, `<a href="/settings/inventory-sources/new?kind=`+k+`" id="insync-kind-link-`+k+`"`)
		p := b.get("/settings/inventory-sources/new?kind=" + k)
		expect(t, "new "+k, p, http.StatusOK, "")
		expectKind(t, "new "+k, p, k)
	}
	expectKind(t, "an unknown kind", b.get("/settings/inventory-sources/new?kind=ftp"), "netbox")

	// A refused HTTP JSON source comes back as HTTP JSON, typed fields
	// kept, the token not.
	f := url.Values{"name": {"cmdb"}, "kind": {"http"}, "http_url": {"https://cmdb.example.net/api/devices"},
		"http_hosts_location": {"data.devices"}, "http_map": {"name = hostname\nno equals sign"}, "http_pagination": {"next"},
		"http_next_path": {"links.next"}, "token": {insyncToken}, "interval": {"15"}, "enabled": {"1"}}
	p = b.post("/settings/inventory-sources", f)
	expect(t, "refused http", p, http.StatusUnprocessableEntity, "")
	expectKind(t, "refused http", p, "http")
	expectBody(t, "refused http", p, "no equals sign", `value="cmdb"`, `value="https://cmdb.example.net/api/devices"`,
		`value="data.devices"`, `value="links.next"`, `<option value="next" selected>`, `value="15"`)
	noTokenIn(t, "the refused form", p.body)

	// LibreNMS has its own section, whose URL is sent alone.
	lf := url.Values{"name": {"lnms"}, "kind": {"librenms"}, "http_url": {"ftp://librenms.example.net"}, "token": {insyncToken},
		"interval": {"0"}, "enabled": {"1"}}
	p = b.post("/settings/inventory-sources", lf)
	expect(t, "refused librenms", p, http.StatusUnprocessableEntity, "")
	expectKind(t, "refused librenms", p, "librenms")
	expectBody(t, "refused librenms", p, `id="lnms-url" name="http_url" type="text" class="bs-mono" spellcheck="false" value="ftp://librenms.example.net"`)
	noTokenIn(t, "the refused form", p.body)
	lf.Set("http_url", nb.srv.URL)
	expect(t, "add librenms", b.post("/settings/inventory-sources", lf), http.StatusSeeOther, "/settings/inventory-sources?done=added")

	// A kind no form offers comes back with a kind's section to fill in.
	bad := cloneForm(lf)
	bad.Set("kind", "ftp")
	p = b.post("/settings/inventory-sources", bad)
	expect(t, "unknown kind", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "unknown kind", p, "Choose a kind")
	expectKind(t, "unknown kind", p, "netbox")

	// An edit shows its source's kind; its links stay on the source.
	id := sourceID(t, e, "lnms")
	path := "/settings/inventory-sources/" + strconv.FormatInt(id, 10)
	p = b.get(path)
	expectKind(t, "edit", p, "librenms")
	expectBody(t, "edit", p, `<a href="`+path+`?kind=http"`, `value="`+nb.srv.URL+`"`)
	expectKind(t, "edit as http", b.get(path+"?kind=http"), "http")
	// A refused edit too.
	lf.Set("interval", "-1")
	p = b.post(path, lf)
	expect(t, "refused edit", p, http.StatusUnprocessableEntity, "")
	expectKind(t, "refused edit", p, "librenms")
	noTokenIn(t, "the refused edit", p.body)
}

// addNetBoxSource adds a NetBox source at base through the form and
// returns its id.
func addNetBoxSource(t *testing.T, e *env, b *browser, name, base string) int64 {
	t.Helper()
	b.get("/settings/inventory-sources/new")
	expect(t, "add "+name, b.post("/settings/inventory-sources", netboxForm(name, base, insyncToken)), http.StatusSeeOther, "")
	return sourceID(t, e, name)
}

// The list shows a source's last sync as the interface shows stored
// times (in its zone, to the minute, with the exact time for a <time>),
// and when the scheduler syncs it next: an interval after the last sync,
// due when that has passed, on demand with no interval, not when
// disabled; in the page's language.
func TestInventorySourcesListTimes(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	ctx := context.Background()
	id := addNetBoxSource(t, e, b, "nb", nb.srv.URL)
	idS := strconv.FormatInt(id, 10)
	next := func(p page) string {
		t.Helper()
		m := regexp.MustCompile(`<td class="nowrap" id="insync-next-` + idS + `">(.*?)</td>`).FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no next sync in the list:\n%s", p.body)
		}
		return m[1]
	}

	if got := next(b.get("/settings/inventory-sources")); got != "due: within a minute" {
		t.Errorf("never synced: next sync %q", got)
	}
	at := e.clock.Now().UTC().Truncate(time.Second).Add(-20 * time.Minute)
	if err := e.store.RecordInventorySyncFailure(ctx, id, at, "fetch: 500"); err != nil {
		t.Fatal(err)
	}
	p := b.get("/settings/inventory-sources")
	// Each source leads to its devices in the device list.
	expectBody(t, "devices link", p, `<a href="/devices?source=`+idS+`" id="insync-devices-`+idS+`">Its devices</a>`)
	expectBody(t, "last sync", p, `<time datetime="`+at.Format(time.RFC3339)+`" id="insync-last-`+idS+`">`+at.Format("2006-01-02 15:04")+`</time>`)
	if raw := at.Format(db.TimeFormat); strings.Contains(p.body, ">"+raw) {
		t.Errorf("the list shows the stored time %s as it is stored", raw)
	}
	due := at.Add(60 * time.Minute)
	if got, want := next(p), `<time datetime="`+due.Format(time.RFC3339)+`">`+due.Format("2006-01-02 15:04")+`</time>`; got != want {
		t.Errorf("next sync %q, want %q", got, want)
	}
	e.clock.Advance(41 * time.Minute)
	if got := next(b.get("/settings/inventory-sources")); got != "due: within a minute" {
		t.Errorf("overdue: next sync %q", got)
	}

	path := "/settings/inventory-sources/" + idS
	f := netboxForm("nb", nb.srv.URL, "")
	f.Set("interval", "0")
	b.get(path)
	expect(t, "on demand", b.post(path, f), http.StatusSeeOther, "")
	if got := next(b.get("/settings/inventory-sources")); got != "on demand" {
		t.Errorf("interval 0: next sync %q", got)
	}
	f.Set("interval", "60")
	f.Del("enabled")
	b.get(path)
	expect(t, "disable", b.post(path, f), http.StatusSeeOther, "")
	if got := next(b.get("/settings/inventory-sources")); got != "disabled" {
		t.Errorf("disabled: next sync %q", got)
	}
	b.header.Set("Accept-Language", "zh-CN")
	defer b.header.Del("Accept-Language")
	if got := next(b.get("/settings/inventory-sources")); got != "已停用" {
		t.Errorf("disabled, in Chinese: next sync %q", got)
	}
}

// A failing source says under its last error since when it has not
// synced: its last sync that applied, shown as the last sync column
// shows times, or never; a source whose last sync applied says nothing
// more. In English and Chinese.
func TestInventorySourcesListLastGoodSync(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	ctx := context.Background()
	was := addNetBoxSource(t, e, b, "was good", nb.srv.URL)
	never := addNetBoxSource(t, e, b, "never good", nb.srv.URL+"/other")
	good := addNetBoxSource(t, e, b, "good", nb.srv.URL+"/third")
	now := e.clock.Now().UTC().Truncate(time.Second)
	goodAt := now.Add(-26 * time.Hour)
	for _, id := range []int64{was, good} {
		if _, err := e.store.ApplyInventorySync(ctx, id, db.InventorySync{At: goodAt}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int64{was, never} {
		if err := e.store.RecordInventorySyncFailure(ctx, id, now.Add(-time.Hour), "fetch: 503"); err != nil {
			t.Fatal(err)
		}
	}
	lastGood := func(p page, id int64) (string, bool) {
		t.Helper()
		m := regexp.MustCompile(`<div class="muted nowrap" id="insync-last-good-` + strconv.FormatInt(id, 10) + `">(.*?)</div>`).
			FindStringSubmatch(p.body)
		if m == nil {
			return "", false
		}
		return m[1], true
	}
	goodTime := `<time datetime="` + goodAt.Format(time.RFC3339) + `">` + goodAt.Format("2006-01-02 15:04") + `</time>`

	p := b.get("/settings/inventory-sources")
	expect(t, "list", p, http.StatusOK, "")
	if got, want := p.body, `<span class="bs-field-error">fetch: 503</span>`; strings.Count(got, want) != 2 {
		t.Errorf("the failing sources' last errors: %d shown, want 2", strings.Count(got, want))
	}
	if got, ok := lastGood(p, was); got != "Last good sync: "+goodTime {
		t.Errorf("failing since a good sync: %q (shown %v), want its time", got, ok)
	}
	if got, ok := lastGood(p, never); got != "Last good sync: never" {
		t.Errorf("failing, never good: %q (shown %v)", got, ok)
	}
	if got, ok := lastGood(p, good); ok {
		t.Errorf("a source whose last sync applied shows a last good sync: %q", got)
	}

	b.header.Set("Accept-Language", "zh-CN")
	defer b.header.Del("Accept-Language")
	p = b.get("/settings/inventory-sources")
	if got := p.body; !strings.Contains(got, `lang="zh`) {
		t.Errorf("the page is not in Chinese")
	}
	if got, ok := lastGood(p, was); got != "上次成功同步："+goodTime {
		t.Errorf("in Chinese, failing since a good sync: %q (shown %v)", got, ok)
	}
	if got, ok := lastGood(p, never); got != "上次成功同步：从未" {
		t.Errorf("in Chinese, failing, never good: %q (shown %v)", got, ok)
	}
}

// reportRow is a report page's line: its action, its name, the device
// page its name links to ("" for none) and its detail cell as HTML.
type reportRow struct {
	Action, Name, Link, Detail string
}

var (
	reportRowHTML = regexp.MustCompile(`(?s)<tr class="insync-line[^"]*" data-action="([a-z]+)" data-name="([^"]*)">(.*?)</tr>`)
	reportCell    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	reportLink    = regexp.MustCompile(`^<a href="(/devices/\d+)">`)
)

// reportRows are a report page's lines, by name.
func reportRows(t *testing.T, body string) map[string]reportRow {
	t.Helper()
	rows := map[string]reportRow{}
	for _, m := range reportRowHTML.FindAllStringSubmatch(body, -1) {
		cells := reportCell.FindAllStringSubmatch(m[3], -1)
		if len(cells) != 4 {
			t.Fatalf("line %s has %d cells, want 4: %s", m[2], len(cells), m[3])
		}
		r := reportRow{Action: m[1], Name: m[2], Detail: cells[3][1]}
		if l := reportLink.FindStringSubmatch(cells[1][1]); l != nil {
			r.Link = l[1]
		}
		rows[r.Name] = r
	}
	return rows
}

// setDevice gives device name, in the fake NetBox, an address and the
// platform slug ("": none).
func setDevice(name, address, slug string) func(map[string]any) map[string]any {
	return func(d map[string]any) map[string]any {
		if d["name"] != name {
			return d
		}
		d["primary_ip"] = map[string]any{"id": 99, "family": 4, "address": address}
		d["platform"] = nil
		if slug != "" {
			d["platform"] = map[string]any{"id": 99, "name": slug, "slug": slug}
		}
		return d
	}
}

// dropDevice takes device name out of the fake NetBox.
func dropDevice(name string) func(map[string]any) map[string]any {
	return func(d map[string]any) map[string]any {
		if d["name"] == name {
			return nil
		}
		return d
	}
}

// englishPieces are the fixed words of every reason the English report
// may give (its texts cut where a value goes), as a page shows them.
func englishPieces(t *testing.T) []string {
	t.Helper()
	raw, err := fs.ReadFile(embed.I18n, "i18n/ui/insync.en.json")
	if err != nil {
		t.Fatal(err)
	}
	var en map[string]string
	if err := json.Unmarshal(raw, &en); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, code := range insync.WhyCodes() {
		text, ok := en["insync.why."+code]
		if !ok {
			t.Fatalf("no English text for %s", code)
		}
		for _, p := range regexp.MustCompile(`%\[\d+\]s`).Split(text, -1) {
			// A sentence's words, or a text that is one word.
			if p = strings.TrimSpace(strings.Trim(p, `"():`)); len(p) >= 8 && (strings.Contains(p, " ") || p == text) {
				out = append(out, template.HTMLEscapeString(p))
			}
		}
	}
	return out
}

// A report in Chinese says every reason in Chinese, with the values
// (slugs, names) as the source gives them: the unknown platform's slug
// and the mapping to add, "unchanged", "gone from the source" (once
// disabled already, once to disable now), and no English sentence. The
// same report in English says what the command line says.
func TestInventorySourceReportInChinese(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	nb.edit(t, setDevice("test1-spine2", "10.0.253.6/32", "acme-unknown"))
	nb.edit(t, setDevice("test1-pdu1", "10.0.252.11/32", ""))
	b.get("/settings/inventory-sources/new")
	expect(t, "add", b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken)), http.StatusSeeOther, "")
	path := "/settings/inventory-sources/" + strconv.FormatInt(sourceID(t, e, "nb"), 10)
	b.get("/settings/inventory-sources")
	expect(t, "first sync", b.post(path+"/sync", nil), http.StatusOK, "")
	nb.edit(t, dropDevice("test1-core2"))
	expect(t, "second sync", b.post(path+"/sync", nil), http.StatusOK, "")
	nb.edit(t, dropDevice("test1-edge2"))

	b.header.Set("Accept-Language", "zh-CN")
	zh := b.post(path+"/dry-run", nil)
	b.header.Del("Accept-Language")
	expect(t, "dry run in Chinese", zh, http.StatusOK, "")
	rows := reportRows(t, zh.body)
	for name, want := range map[string]string{
		"test1-spine2": "未知的平台 slug acme-unknown：请添加映射 acme-unknown → &lt;平台&gt;",
		"test1-core1":  "无变化",
		"test1-core2":  "已从来源中消失，且已停用",
		"test1-edge2":  "已从来源中消失",
		"test1-pdu1":   "来源中没有平台：请在来源中设置设备的平台，或为此清单来源设置默认平台",
	} {
		if got := rows[name].Detail; got != want {
			t.Errorf("%s in Chinese: %q, want %q", name, got, want)
		}
	}
	for _, piece := range englishPieces(t) {
		if strings.Contains(zh.body, piece) {
			t.Errorf("the Chinese report says %q in English", piece)
		}
	}

	en := b.post(path+"/dry-run", nil)
	expect(t, "dry run in English", en, http.StatusOK, "")
	rows = reportRows(t, en.body)
	for name, want := range map[string]string{
		"test1-spine2": "unknown platform slug acme-unknown: add a mapping acme-unknown → &lt;platform&gt;",
		"test1-core1":  "unchanged",
		"test1-core2":  "gone from the source, disabled already",
		"test1-edge2":  "gone from the source",
		"test1-pdu1":   "no platform in the source: set the device&#39;s platform there, or a default platform for the source",
	} {
		if got := rows[name].Detail; got != want {
			t.Errorf("%s in English: %q, want %q", name, got, want)
		}
	}
}

// After a real sync (not a dry run), the line of each device the sync
// created links to that device's page, as every line of a device does.
func TestInventorySourceSyncLinksCreatedDevices(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	nb := newFakeNetBox(t)
	b.get("/settings/inventory-sources/new")
	expect(t, "add", b.post("/settings/inventory-sources", netboxForm("nb", nb.srv.URL, insyncToken)), http.StatusSeeOther, "")
	path := "/settings/inventory-sources/" + strconv.FormatInt(sourceID(t, e, "nb"), 10)
	b.get("/settings/inventory-sources")
	dry := b.post(path+"/dry-run", nil)
	expect(t, "dry run", dry, http.StatusOK, "")
	for name, r := range reportRows(t, dry.body) {
		if r.Action == "create" && r.Link != "" {
			t.Errorf("the dry run links %s, a device not made yet, to %s", name, r.Link)
		}
	}
	p := b.post(path+"/sync", nil)
	expect(t, "sync", p, http.StatusOK, "")
	ds, _ := e.store.DevicesAfter(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 0, 1000)
	ids := map[string]int64{}
	for _, d := range ds {
		ids[d.Name] = d.ID
	}
	created := 0
	for name, r := range reportRows(t, p.body) {
		if r.Action != "create" {
			continue
		}
		created++
		if want := "/devices/" + strconv.FormatInt(ids[name], 10); ids[name] == 0 || r.Link != want {
			t.Errorf("created %s links to %q, want %q", name, r.Link, want)
		}
	}
	if created == 0 || created != len(ds) {
		t.Fatalf("%d create lines, %d devices", created, len(ds))
	}
	r := reportRows(t, p.body)["test1-edge1"]
	expectBody(t, "a created device's page", b.get(r.Link), "test1-edge1")
}
