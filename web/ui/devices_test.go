package ui_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/db/seed"
	"backupd/internal/dbtest"
	"backupd/web"
	"backupd/web/ui"
)

// devicesRowRE finds the device links of the list, in order.
var devicesRowRE = regexp.MustCompile(`<th scope="row"><a href="/devices/(\d+)">([^<]+)</a></th>`)

// devicesListed returns the names the devices list shows.
func devicesListed(body string) []string {
	var out []string
	for _, m := range devicesRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[2])
	}
	return out
}

// devicesCount is how many devices the store holds.
func devicesCount(t *testing.T, e *env) int {
	t.Helper()
	_, n, err := e.store.ListDevices(context.Background(), db.Scope{All: true}, db.DeviceFilter{}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func devicesByName(t *testing.T, e *env, name string) db.Device {
	t.Helper()
	list, _, err := e.store.ListDevices(context.Background(), db.Scope{All: true}, db.DeviceFilter{Query: name}, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no device %q", name)
	return db.Device{}
}

// devicesJobs returns the jobs of a device.
func devicesJobs(t *testing.T, e *env, deviceID int64) []db.JobRow {
	t.Helper()
	jobs, _, err := e.store.ListJobs(context.Background(), db.Scope{All: true}, db.JobFilter{DeviceID: deviceID}, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// devicesClosedPort is a loopback port nothing listens on: a backup of a device
// there fails at once, and never leaves the machine.
func devicesClosedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// devicesLoopback adds a device on 127.0.0.1 at a closed port.
func devicesLoopback(t *testing.T, e *env, name string, group *int64, enabled bool) int64 {
	t.Helper()
	d, err := e.store.CreateDevice(context.Background(), db.Device{Name: name, Host: "127.0.0.1", Port: devicesClosedPort(t),
		Platform: "cisco_ios", LoginMethod: "ssh", GroupID: group, Encoding: "utf-8", Enabled: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func TestDevicesListFiltersAndPaging(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	ctx := context.Background()
	access, err := e.store.CreateGroup(ctx, "Access", &f.core)
	if err != nil {
		t.Fatal(err)
	}
	var bulk []db.Device
	for i := range 120 {
		bulk = append(bulk, db.Device{Name: fmt.Sprintf("acc-%03d", i), Host: "2001:db8::1", Port: 22, Platform: "huawei_vrp",
			LoginMethod: "ssh", GroupID: &access.ID, Encoding: "utf-8", Enabled: true})
	}
	if err := e.store.ImportDevices(ctx, bulk); err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get("/devices")
	expect(t, "list", p, http.StatusOK, "")
	expectBody(t, "list", p, `<a href="/devices" aria-current="page">Devices</a>`, "Devices 1–50 of 125", "Page 1 of 3",
		`href="/devices?page=2" rel="next"`, "[2001:db8::1]:22", "Huawei VRP", `title="Core / Access"`)
	if got := devicesListed(p.body); len(got) != 50 || got[0] != "core-1" || got[4] != "branch-2" {
		t.Errorf("first page lists %d devices starting %v", len(got), got[:min(len(got), 6)])
	}

	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"group Branch", "group_id=" + strconv.FormatInt(f.branch, 10), []string{"branch-1", "branch-2"}},
		{"status", "status=unreachable", []string{"core-2"}},
		{"disabled", "enabled=false", []string{"core-3"}},
		{"text", "q=ore-", []string{"core-1", "core-2", "core-3"}},
		{"platform and status", "platform=cisco_ios&status=reachable", []string{"core-1", "branch-1"}},
		{"nothing", "q=nothing-like-this", []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := b.get("/devices?" + c.query)
			expect(t, c.name, p, http.StatusOK, "")
			got := devicesListed(p.body)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%s lists %v, want %v", c.query, got, c.want)
			}
		})
	}
	// A group filter takes its subgroups along, and keeps to the pages.
	p = b.get("/devices?group_id=" + strconv.FormatInt(f.core, 10) + "&page=3")
	expect(t, "core page 3", p, http.StatusOK, "")
	expectBody(t, "core page 3", p, "Devices 101–123 of 123", "Page 3 of 3",
		fmt.Sprintf(`href="/devices?group_id=%d&amp;page=2" rel="prev"`, f.core),
		`id="device-group-backup"`, "Back up group Core")
	if got := devicesListed(p.body); len(got) != 23 || got[22] != "acc-119" {
		t.Errorf("core page 3 lists %d devices, last %v", len(got), got)
	}
	// Past the end: the last page.
	expectBody(t, "past the end", b.get("/devices?page=999"), "Devices 101–125 of 125")
	// Nonsense filters are dropped, not fatal.
	p = b.get("/devices?status=broken&platform=nope&enabled=maybe&page=-4&group_id=x")
	expect(t, "nonsense filters", p, http.StatusOK, "")
	expectBody(t, "nonsense filters", p, "Devices 1–50 of 125")
	if strings.Contains(p.body, "Clear filters") {
		t.Error("dropped filters still count as active")
	}
}

// devicesScopeEnv is two groups with loopback devices and a scoped
// operator of Branch.
type devicesScopeEnv struct {
	core, branch       int64
	coreDev, branchDev int64
}

func newDevicesScopeEnv(t *testing.T, e *env) devicesScopeEnv {
	t.Helper()
	ctx := context.Background()
	core, err := e.store.CreateGroup(ctx, "Core", nil)
	if err != nil {
		t.Fatal(err)
	}
	branch, err := e.store.CreateGroup(ctx, "Branch", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := devicesScopeEnv{core: core.ID, branch: branch.ID}
	s.coreDev = devicesLoopback(t, e, "core-rtr", &s.core, true)
	s.branchDev = devicesLoopback(t, e, "branch-rtr", &s.branch, true)
	return s
}

func TestDevicesScopedOperator(t *testing.T) {
	e := newEnv(t)
	s := newDevicesScopeEnv(t, e)
	e.createUser("op", "operator-password-1", auth.RoleOperator, false, s.branch)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")

	p := b.get("/devices")
	expect(t, "scoped list", p, http.StatusOK, "")
	if got := devicesListed(p.body); !slices.Equal(got, []string{"branch-rtr"}) {
		t.Errorf("scoped operator sees %v", got)
	}
	if strings.Contains(p.body, "Core") {
		t.Error("the group filter offers a group outside the scope")
	}
	p = b.get(fmt.Sprintf("/devices?group_id=%d", s.core))
	expect(t, "another group's devices, by a filter", p, http.StatusOK, "")
	if got := devicesListed(p.body); len(got) != 0 || strings.Contains(p.body, "device-group-backup") {
		t.Errorf("filtering by Core shows %v, or offers to back the group up", got)
	}

	coreEdit := fmt.Sprintf("/devices/%d/edit", s.coreDev)
	expect(t, "edit form of Core's device", b.get(coreEdit), http.StatusForbidden, "")
	b.get("/devices")
	before, _ := e.store.GetDevice(context.Background(), s.coreDev)
	expect(t, "edit Core's device", b.post(coreEdit, url.Values{"name": {"stolen"}, "host": {"127.0.0.1"}, "platform": {"cisco_ios"},
		"login_method": {"ssh"}, "group_id": {strconv.FormatInt(s.branch, 10)}, "encoding": {"utf-8"}}), http.StatusForbidden, "")
	expect(t, "delete Core's device", b.post(fmt.Sprintf("/devices/%d/delete", s.coreDev), nil), http.StatusForbidden, "")
	expect(t, "back up Core's device", b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(s.coreDev, 10)}}), http.StatusForbidden, "")
	expect(t, "back up Core's and own device", b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(s.branchDev, 10), strconv.FormatInt(s.coreDev, 10)}}), http.StatusForbidden, "")
	expect(t, "back up group Core", b.post("/devices/backup", url.Values{"group_id": {strconv.FormatInt(s.core, 10)}}), http.StatusForbidden, "")
	if after, err := e.store.GetDevice(context.Background(), s.coreDev); err != nil || after.Name != before.Name || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("Core's device changed: %+v, %v", after, err)
	}
	if j := devicesJobs(t, e, s.coreDev); len(j) != 0 {
		t.Errorf("refused backups queued %d jobs for Core's device", len(j))
	}
	if j := devicesJobs(t, e, s.branchDev); len(j) != 0 {
		t.Errorf("a refused selection queued part of it: %d jobs", len(j))
	}

	// Moving the own device to Core is refused too.
	ownEdit := fmt.Sprintf("/devices/%d/edit", s.branchDev)
	p = b.get(ownEdit)
	expect(t, "own edit form", p, http.StatusOK, "")
	if strings.Contains(p.body, ">Core<") || strings.Contains(p.body, "No group</option>") {
		t.Error("the group select offers Core or no group to a scoped user")
	}
	p = b.post(ownEdit, url.Values{"name": {"branch-rtr"}, "host": {"127.0.0.1"}, "platform": {"cisco_ios"},
		"login_method": {"ssh"}, "group_id": {strconv.FormatInt(s.core, 10)}, "encoding": {"utf-8"}})
	expect(t, "move to Core", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "move to Core", p, "Choose one of the listed groups.")
	if d, _ := e.store.GetDevice(context.Background(), s.branchDev); d.GroupID == nil || *d.GroupID != s.branch {
		t.Error("the device moved out of the scope")
	}
	// Creating: only in the own groups, and a group is required.
	for _, g := range []string{strconv.FormatInt(s.core, 10), ""} {
		p = b.post("/devices", url.Values{"name": {"new-" + g}, "host": {"192.0.2.9"}, "platform": {"cisco_ios"},
			"login_method": {"ssh"}, "group_id": {g}, "encoding": {"utf-8"}})
		expect(t, "create in group "+g, p, http.StatusUnprocessableEntity, "")
	}
	if n := devicesCount(t, e); n != 2 {
		t.Errorf("%d devices after refused creations", n)
	}
	p = b.post("/devices", url.Values{"name": {"branch-sw"}, "host": {"192.0.2.9"}, "platform": {"cisco_ios"},
		"login_method": {"ssh"}, "group_id": {strconv.FormatInt(s.branch, 10)}, "encoding": {"utf-8"}, "enabled": {"1"}})
	expect(t, "create in Branch", p, http.StatusSeeOther, "/devices?created=1&q=branch-sw")
	// The export holds the scope's devices only.
	p = b.get("/devices/export")
	if strings.Contains(p.body, "core-rtr") || !strings.Contains(p.body, "branch-rtr") {
		t.Errorf("scoped export:\n%s", p.body)
	}
}

func TestDevicesViewerSeesNoActions(t *testing.T) {
	e := newEnv(t)
	s := newDevicesScopeEnv(t, e)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	b := e.browser()
	b.mustLogin("viewer", "viewer-password-1")
	p := b.get("/devices")
	expect(t, "viewer list", p, http.StatusOK, "")
	if got := devicesListed(p.body); len(got) != 2 {
		t.Errorf("viewer sees %v", got)
	}
	for _, hidden := range []string{`href="/devices/new"`, `href="/devices/import"`, `action="/devices/backup"`, `/edit"`, "Back up", `type="checkbox"`} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the viewer's list shows %s", hidden)
		}
	}
	expectBody(t, "viewer list", p, `id="device-export"`)
	expect(t, "new form", b.get("/devices/new"), http.StatusForbidden, "")
	expect(t, "import form", b.get("/devices/import"), http.StatusForbidden, "")
	expect(t, "edit form", b.get(fmt.Sprintf("/devices/%d/edit", s.coreDev)), http.StatusForbidden, "")
	b.get("/devices")
	form := url.Values{"name": {"x"}, "host": {"192.0.2.9"}, "platform": {"cisco_ios"}, "login_method": {"ssh"}, "encoding": {"utf-8"}}
	expect(t, "create", b.post("/devices", form), http.StatusForbidden, "")
	expect(t, "update", b.post(fmt.Sprintf("/devices/%d/edit", s.coreDev), form), http.StatusForbidden, "")
	expect(t, "delete", b.post(fmt.Sprintf("/devices/%d/delete", s.coreDev), nil), http.StatusForbidden, "")
	expect(t, "back up", b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(s.coreDev, 10)}}), http.StatusForbidden, "")
	expect(t, "import", b.uploadDevicesCSV("x.csv", "name,host,platform\nx,192.0.2.1,cisco_ios\n", ""), http.StatusForbidden, "")
	if n := devicesCount(t, e); n != 2 || len(devicesJobs(t, e, s.coreDev)) != 0 {
		t.Errorf("a viewer changed something: %d devices", n)
	}
}

func TestDevicesCreateEditDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	g, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "lab login", Username: "backup", Password: e.sealer.Seal("s3cret-pw", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	junos, err := e.store.CreateTemplate(ctx, db.Template{Name: "junos full", Platform: "juniper_junos", Commands: "show configuration"})
	if err != nil {
		t.Fatal(err)
	}
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get("/devices/new")
	expect(t, "new form", p, http.StatusOK, "")
	expectBody(t, "new form", p, `<option value="juniper_junos">Juniper Junos</option>`, ">lab login</option>",
		`<optgroup label="Juniper Junos" data-platform="juniper_junos">`, `data-port="23"`, ` checked`)
	gid := strconv.FormatInt(g.ID, 10)
	bad := url.Values{"name": {"  "}, "host": {"http://x y"}, "port": {"70000"}, "platform": {"cisco_ios"}, "login_method": {"ssh"},
		"group_id": {gid}, "credential_id": {strconv.FormatInt(cred.ID, 10)}, "template_id": {strconv.FormatInt(junos.ID, 10)},
		"encoding": {"ebcdic"}, "remarks": {"kept <remark>"}}
	p = b.post("/devices", bad)
	expect(t, "bad form", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad form", p, "Fields to correct: 5", "Enter a name.", "This is not an IP address or a DNS name",
		"Enter a port from 1 to 65535", "Template “junos full” is for platform juniper_junos, but the device is cisco_ios",
		"Choose one of the listed encodings.", `value="http://x y"`, `value="70000"`, "kept &lt;remark&gt;</textarea>",
		`id="d-host" name="host"`, `aria-invalid="true"`)
	if n := devicesCount(t, e); n != 0 {
		t.Fatalf("a refused form created %d devices", n)
	}

	good := url.Values{"name": {" edge-1 "}, "host": {" 192.0.2.44 "}, "port": {""}, "platform": {"juniper_junos"},
		"login_method": {"ssh"}, "group_id": {gid}, "credential_id": {strconv.FormatInt(cred.ID, 10)},
		"template_id": {strconv.FormatInt(junos.ID, 10)}, "encoding": {"gbk"}, "enabled": {"1"}, "remarks": {"rack 4"}}
	p = b.post("/devices", good)
	expect(t, "create", p, http.StatusSeeOther, "/devices?created=1&q=edge-1")
	d := devicesByName(t, e, "edge-1")
	if d.Host != "192.0.2.44" || d.Port != 22 || d.Platform != "juniper_junos" || d.Encoding != "gbk" || !d.Enabled ||
		d.GroupID == nil || *d.GroupID != g.ID || d.TemplateID == nil || *d.TemplateID != junos.ID || d.Remarks == nil || *d.Remarks != "rack 4" {
		t.Errorf("created %+v", d)
	}
	expectBody(t, "after create", b.get(p.header.Get("Location")), "The device was created.", ">edge-1</a>")
	p = b.post("/devices", good)
	expect(t, "same name again", p, http.StatusConflict, "")
	expectBody(t, "same name again", p, "A device named “edge-1” already exists.")

	edit := fmt.Sprintf("/devices/%d/edit", d.ID)
	p = b.get(edit + "?next=/devices/" + strconv.FormatInt(d.ID, 10))
	expect(t, "edit form", p, http.StatusOK, "")
	expectBody(t, "edit form", p, `value="edge-1"`, `name="port" value=""`, `<option value="gbk" selected>`,
		fmt.Sprintf(`name="next" value="/devices/%d"`, d.ID), `data-confirm="Delete edge-1 and all its backups?`)
	// Telnet with the port left empty: the port follows; disabled.
	changed := url.Values{"name": {"edge-1"}, "host": {"edge-1.example.net"}, "port": {""}, "platform": {"juniper_junos"},
		"login_method": {"telnet"}, "group_id": {""}, "credential_id": {""}, "template_id": {""}, "encoding": {"utf-8"},
		"remarks": {""}, "next": {fmt.Sprintf("/devices/%d", d.ID)}}
	p = b.post(edit, changed)
	expect(t, "edit", p, http.StatusSeeOther, fmt.Sprintf("/devices/%d", d.ID))
	d2, _ := e.store.GetDevice(ctx, d.ID)
	if d2.LoginMethod != "telnet" || d2.Port != 23 || d2.Enabled || d2.GroupID != nil || d2.CredentialID != nil || d2.TemplateID != nil ||
		d2.Remarks != nil || d2.Host != "edge-1.example.net" || d2.CreatedAt != d.CreatedAt {
		t.Errorf("edited %+v", d2)
	}
	// A validation error on edit keeps the device as it was.
	changed.Set("host", "not a host")
	expect(t, "bad edit", b.post(edit, changed), http.StatusUnprocessableEntity, "")
	if d3, _ := e.store.GetDevice(ctx, d.ID); d3.Host != "edge-1.example.net" {
		t.Errorf("a refused edit changed the host to %q", d3.Host)
	}
	expect(t, "edit of a missing device", b.get("/devices/9999/edit"), http.StatusNotFound, "")
	expect(t, "edit of a bad id", b.get("/devices/x/edit"), http.StatusNotFound, "")

	p = b.post(fmt.Sprintf("/devices/%d/delete", d.ID), nil)
	expect(t, "delete", p, http.StatusSeeOther, "/devices?deleted=1")
	if _, err := e.store.GetDevice(ctx, d.ID); err == nil {
		t.Error("the device is still there")
	}
	expect(t, "delete again", b.post(fmt.Sprintf("/devices/%d/delete", d.ID), nil), http.StatusNotFound, "")

	entries := e.auditEntries()
	var got []string
	for _, a := range entries {
		if strings.HasPrefix(a.Action, "device.") {
			got = append(got, a.Action)
			if a.Username != "root" || a.SessionID == nil || a.TargetID != strconv.FormatInt(d.ID, 10) {
				t.Errorf("audit entry %+v", a)
			}
		}
		if a.Action == "device.update" && fmt.Sprint(a.Details["fields"]) != "[host port login_method group_id credential_id template_id encoding enabled remarks]" {
			t.Errorf("update audited fields %v", a.Details["fields"])
		}
	}
	if !slices.Equal(got, []string{"device.create", "device.update", "device.delete"}) {
		t.Errorf("audit %v", got)
	}
}

func TestDevicesBackupNow(t *testing.T) {
	e := newEnv(t)
	s := newDevicesScopeEnv(t, e)
	disabled := devicesLoopback(t, e, "core-spare", &s.core, false)
	ctx := context.Background()
	access, err := e.store.CreateGroup(ctx, "Access", &s.core)
	if err != nil {
		t.Fatal(err)
	}
	accessDev := devicesLoopback(t, e, "access-sw", &access.ID, true)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	p := b.get("/devices")
	expectBody(t, "list", p, `id="device-bulk-backup"`, `form="device-backup-one" name="id"`)

	// One device, as the detail page sends it: back there with the count.
	one := strconv.FormatInt(s.coreDev, 10)
	p = b.post("/devices/backup", url.Values{"id": {one}, "next": {"/devices/" + one}})
	expect(t, "one device", p, http.StatusSeeOther, "/devices/"+one+"?queued=1")
	if j := devicesJobs(t, e, s.coreDev); len(j) != 1 || j[0].Trigger != queue.TriggerManual {
		t.Errorf("jobs of the device: %+v", j)
	}
	// A selection (a disabled device too: it was asked for), to the jobs.
	p = b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(s.branchDev, 10), strconv.FormatInt(disabled, 10), strconv.FormatInt(s.branchDev, 10)}, "next": {"//evil.example/"}})
	bj, dj := devicesJobs(t, e, s.branchDev), devicesJobs(t, e, disabled)
	if len(bj) != 1 || len(dj) != 1 {
		t.Fatal("the selection was not queued")
	}
	// The jobs page's progress follows the batch from its first job.
	since := strconv.FormatInt(min(bj[0].ID, dj[0].ID), 10)
	expect(t, "selection", p, http.StatusSeeOther, "/jobs?queued=2&since="+since+"&state=active")
	// A group: its enabled devices, subgroups included.
	p = b.post("/devices/backup", url.Values{"group_id": {strconv.FormatInt(s.core, 10)}, "next": {"/devices?group_id=1"}})
	expect(t, "group", p, http.StatusSeeOther, "/devices?group_id=1&queued=2")
	if len(devicesJobs(t, e, accessDev)) != 1 || len(devicesJobs(t, e, disabled)) != 1 {
		t.Error("the group backup missed a subgroup's device or took the disabled one")
	}
	expectBody(t, "notice", b.get("/devices?queued=2"), "2 backups were queued.", `href="/jobs?state=active"`)

	expect(t, "nothing selected", b.post("/devices/backup", nil), http.StatusUnprocessableEntity, "")
	expect(t, "unknown device", b.post("/devices/backup", url.Values{"id": {"99999"}}), http.StatusNotFound, "")
	expect(t, "unknown group", b.post("/devices/backup", url.Values{"group_id": {"99999"}}), http.StatusNotFound, "")
	many := url.Values{}
	for i := range 1001 {
		many.Add("id", strconv.Itoa(i+1))
	}
	expect(t, "too many", b.post("/devices/backup", many), http.StatusRequestEntityTooLarge, "")

	var runs []db.AuditEntry
	for _, a := range e.auditEntries() {
		if a.Action == "backup.run" {
			runs = append(runs, a)
		}
	}
	if len(runs) != 3 || runs[0].TargetID != one || runs[2].TargetType != "group" || fmt.Sprint(runs[2].Details["count"]) != "2" {
		t.Errorf("backup.run audit entries: %+v", runs)
	}

	// A process without the engine says so, and queues nothing.
	noEngine := e.devicesWithoutEngine(t)
	nb := noEngine.browser()
	nb.mustLogin("op", "operator-password-1")
	nb.get("/devices")
	p = nb.post("/devices/backup", url.Values{"id": {strconv.FormatInt(s.branchDev, 10)}})
	expect(t, "no engine", p, http.StatusServiceUnavailable, "")
	expectBody(t, "no engine", p, "Backups do not run in this process")
}

// devicesWithoutEngine serves the same store through a web interface that runs
// no backups, as a process without the engine would.
func (e *env) devicesWithoutEngine(t *testing.T) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	ui.Mount(mux, ui.Deps{Store: e.store, Sealer: e.sealer, Log: log, Location: time.UTC, Version: "test", Now: e.clock.Now})
	srv := httptest.NewServer(web.Wrap(mux, log))
	t.Cleanup(srv.Close)
	other := *e
	other.srv = srv
	return &other
}

// TestDevicesBackupNowWithSimulator backs a simulated device up through
// the button and waits for the engine to store the configuration.
func TestDevicesBackupNowWithSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real backup")
	}
	e := newEnv(t)
	ctx := context.Background()
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "sim-rtr", Username: "backup",
		Password: "sim-password", EnablePassword: "sim-enable", SSHAddr: "127.0.0.1:0", ConfigSize: 8 << 10, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "sim", Username: "backup",
		Password:       e.sealer.Seal("sim-password", secret.PurposePassword),
		EnablePassword: e.sealer.Seal("sim-enable", secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	b.get("/devices/new")
	p := b.post("/devices", url.Values{"name": {"sim-rtr"}, "host": {"127.0.0.1"}, "port": {port}, "platform": {"cisco_ios"},
		"login_method": {"ssh"}, "credential_id": {strconv.FormatInt(cred.ID, 10)}, "encoding": {"utf-8"}, "enabled": {"1"}})
	expect(t, "create", p, http.StatusSeeOther, "")
	d := devicesByName(t, e, "sim-rtr")
	b.get("/devices")
	p = b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(d.ID, 10)}})
	expect(t, "back up", p, http.StatusSeeOther, "")
	if loc := p.header.Get("Location"); !strings.HasPrefix(loc, "/jobs?queued=1&since=") {
		t.Errorf("back up: Location %q, want the jobs page following the batch", loc)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		jobs := devicesJobs(t, e, d.ID)
		if len(jobs) == 1 && jobs[0].FinishedAt != nil {
			if jobs[0].State != queue.JobSucceeded || jobs[0].BackupID == nil {
				t.Fatalf("job %+v: %v", jobs[0].Job, jobs[0].Error)
			}
			bk, err := e.store.GetBackup(ctx, *jobs[0].BackupID)
			if err != nil || !bk.Success {
				t.Fatalf("backup %+v, %v", bk, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no finished job after 30 s: %+v", jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	expectBody(t, "list after the backup", b.get("/devices"), `<span class="devices-result devices-result-ok">OK</span>`)
}

// uploadDevicesCSV posts a CSV file to the import form as a browser does,
// with the last page's CSRF token (or csrf when set).
func (b *browser) uploadDevicesCSV(filename, content, csrf string) page {
	b.e.t.Helper()
	return b.uploadDevicesCSVWith(filename, content, map[string]string{"csrf": csrf})
}

// uploadDevicesCSVWith sends the CSV import form with fields besides the
// file ("csrf" the last page's token when unset or "").
func (b *browser) uploadDevicesCSVWith(filename, content string, fields map[string]string) page {
	b.e.t.Helper()
	if fields["csrf"] == "" {
		fields["csrf"] = b.csrf
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		b.e.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+"/devices/import", &body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

func TestDevicesImport(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lab, err := e.store.CreateGroup(ctx, "Lab", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateCredential(ctx, db.Credential{Name: "Lab Login", Username: "u"}); err != nil {
		t.Fatal(err)
	}
	tpl, err := e.store.CreateTemplate(ctx, db.Template{Name: "full", Platform: "huawei_vrp", Commands: "display current-configuration"})
	if err != nil {
		t.Fatal(err)
	}
	devicesLoopback(t, e, "existing", &lab.ID, true)
	e.createUser("op", "operator-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "operator-password-1")
	p := b.get("/devices/import")
	expect(t, "import form", p, http.StatusOK, "")
	expectBody(t, "import form", p, `enctype="multipart/form-data"`, `href="/devices/sample.csv"`, "<code>cisco_ios</code>", "core-rtr-01,192.0.2.10")
	sample := b.get("/devices/sample.csv")
	if sample.status != http.StatusOK || !strings.HasPrefix(sample.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("sample: %d %v", sample.status, sample.header)
	}

	t.Run("one bad row in three imports nothing", func(t *testing.T) {
		csv := "name,host,platform\nok-1,192.0.2.1,cisco_ios\nok-2,192.0.2.2,cisco_ios\nbad-3,http://nope,cisco_ios\n"
		p := b.uploadDevicesCSV("three.csv", csv, "")
		expect(t, "bad import", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "bad import", p, "Nothing was imported. Problems found in the file: 1.",
			`<tr><td class="num">4</td><td><code>host</code></td><td>This is not an IP address`)
		if n := devicesCount(t, e); n != 1 {
			t.Errorf("%d devices after a refused import, want the 1 there was", n)
		}
	})

	t.Run("every problem is reported", func(t *testing.T) {
		csv := "Name,Host,Platform,Login Method,Group,Credential,Template,Enabled,Port\n" +
			"dup,192.0.2.1,cisco_ios,ssh,Lab,,,,\n" +
			"DUP,192.0.2.2,cisco_ios,ssh,Nowhere,Nobody,full,perhaps,99999\n" +
			"Existing,192.0.2.3,vyos,rsh,,,,,\n" +
			"short,row\n"
		p := b.uploadDevicesCSV("many.csv", csv, "")
		expect(t, "problems", p, http.StatusUnprocessableEntity, "")
		expectBody(t, "problems", p, "Problems found in the file: 8.",
			"The name “DUP” is already on row 2 of this file.", "There is no group named “Nowhere”",
			"There is no credential named “Nobody”.", "There is no template named “full” for platform cisco_ios.",
			"Write true or false", "Enter a port from 1 to 65535", "Unknown login method “rsh”.",
			"This row has 2 fields, the header 9.")
		if n := devicesCount(t, e); n != 1 {
			t.Errorf("%d devices after a refused import", n)
		}
		// A name the database holds is reported once the rows are right.
		p = b.uploadDevicesCSV("taken.csv", "name,host,platform\nEXISTING,192.0.2.3,vyos\n", "")
		expectBody(t, "taken", p, `<td class="num">2</td><td><code>name</code></td><td>A device named “EXISTING” already exists.`)
	})

	t.Run("whole-file problems", func(t *testing.T) {
		for _, c := range []struct{ name, csv, want string }{
			{"unknown column", "name,host,platform,grp\n", "The header row has an unknown column “grp”."},
			{"missing column", "name,host\nx,192.0.2.1\n", "The header row lacks the required column platform."},
			{"empty", "\xef\xbb\xbf  \n", "The file is empty."},
			{"no rows", "name,host,platform\r\n,,\r\n", "The file has a header row but no device rows."},
			{"not utf-8", "name,host,platform\n\xff\xfe,192.0.2.1,cisco_ios\n", "The file is not UTF-8 text."},
			{"broken quotes", "name,host,platform\n\"a,192.0.2.1,cisco_ios\nb\"x,1,2\n", "The file is not valid CSV at line"},
		} {
			p := b.uploadDevicesCSV(c.name+".csv", c.csv, "")
			expect(t, c.name, p, http.StatusUnprocessableEntity, "")
			expectBody(t, c.name, p, c.want, "Nothing was imported.")
		}
		var big strings.Builder
		big.WriteString("name,host,platform,remarks\n")
		for i := 0; big.Len() <= 5<<20; i++ {
			fmt.Fprintf(&big, "d%d,192.0.2.1,cisco_ios,%s\n", i, strings.Repeat("x", 1000))
		}
		p := b.uploadDevicesCSV("big.csv", big.String(), "")
		expect(t, "too large", p, http.StatusRequestEntityTooLarge, "")
		expectBody(t, "too large", p, "The file is too large: at most 5 MiB")
		if n := devicesCount(t, e); n != 1 {
			t.Errorf("%d devices after refused files", n)
		}
	})

	t.Run("happy path", func(t *testing.T) {
		csv := "\xef\xbb\xbfname;host;port;platform;login_method;group;credential;template;encoding;enabled;remarks\r\n" +
			"sw-1;192.0.2.11;;huawei_vrp;telnet;lab;lab login;FULL;gbk;no;\"rack 1; \"\"top\"\"\r\nsecond line\"\r\n" +
			"sw-2;2001:db8::2;2222;cisco_ios;;;;;;;'=1+1\r\n"
		p := b.uploadDevicesCSV("sw.csv", csv, "")
		expect(t, "import", p, http.StatusSeeOther, "/devices?imported=2")
		sw1, sw2 := devicesByName(t, e, "sw-1"), devicesByName(t, e, "sw-2")
		if sw1.Port != 23 || sw1.LoginMethod != "telnet" || sw1.GroupID == nil || *sw1.GroupID != lab.ID || sw1.CredentialID == nil ||
			sw1.TemplateID == nil || *sw1.TemplateID != tpl.ID || sw1.Encoding != "gbk" || sw1.Enabled ||
			sw1.Remarks == nil || *sw1.Remarks != "rack 1; \"top\"\nsecond line" {
			t.Errorf("sw-1 = %+v (remarks %q)", sw1, devicesDeref(sw1.Remarks))
		}
		if sw2.Port != 2222 || sw2.LoginMethod != "ssh" || sw2.GroupID != nil || !sw2.Enabled || sw2.Encoding != "utf-8" || devicesDeref(sw2.Remarks) != "=1+1" {
			t.Errorf("sw-2 = %+v", sw2)
		}
		expectBody(t, "notice", b.get("/devices?imported=2"), "Devices imported: 2.")
		var imports []db.AuditEntry
		for _, a := range e.auditEntries() {
			if a.Action == "device.import" {
				imports = append(imports, a)
			}
		}
		if len(imports) != 1 || fmt.Sprint(imports[0].Details["count"]) != "2" {
			t.Errorf("import audit entries %+v", imports)
		}
	})

	t.Run("export re-imports", func(t *testing.T) {
		p := b.get("/devices/export")
		if p.status != http.StatusOK || p.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			!strings.HasPrefix(p.header.Get("Content-Disposition"), `attachment; filename="backupd-devices-`) {
			t.Fatalf("export: %d %v", p.status, p.header)
		}
		if !strings.HasPrefix(p.body, "\xef\xbb\xbfname,host,port,platform,login_method,group,credential,template,encoding,enabled,remarks,zone\r\n") {
			t.Errorf("export header:\n%q", p.body[:min(len(p.body), 200)])
		}
		expectBody(t, "export", p, "sw-1,192.0.2.11,23,huawei_vrp,telnet,Lab,Lab Login,full,gbk,false,", "'=1+1")
		filtered := b.get("/devices/export?platform=cisco_ios&q=sw")
		if strings.Contains(filtered.body, "sw-1") || !strings.Contains(filtered.body, "sw-2") {
			t.Errorf("filtered export:\n%s", filtered.body)
		}

		before := map[string]db.Device{}
		for _, n := range []string{"existing", "sw-1", "sw-2"} {
			before[n] = devicesByName(t, e, n)
			if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, before[n].ID); err != nil {
				t.Fatal(err)
			}
		}
		b.get("/devices/import")
		expect(t, "re-import", b.uploadDevicesCSV("export.csv", p.body, ""), http.StatusSeeOther, "/devices?imported=3")
		for n, old := range before {
			got := devicesByName(t, e, n)
			got.ID, got.CreatedAt, got.UpdatedAt = old.ID, old.CreatedAt, old.UpdatedAt
			if fmt.Sprint(devicesComparable(got)) != fmt.Sprint(devicesComparable(old)) {
				t.Errorf("%s after the round trip:\n got %v\nwant %v", n, devicesComparable(got), devicesComparable(old))
			}
		}
	})
}

// devicesComparable is a device's imported fields, pointers resolved.
func devicesComparable(d db.Device) []any {
	id := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return []any{d.Name, d.Host, d.Port, d.Platform, d.LoginMethod, id(d.GroupID), id(d.CredentialID), id(d.TemplateID),
		d.Encoding, d.Enabled, devicesDeref(d.Remarks), d.ZoneID}
}

func devicesDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Zones on the devices page: the Zone column and filter appear once there
// is a zone besides the local one; the CSV import places devices by the
// zone column (an unknown zone is a problem of its row, and nothing is
// imported), the same address in two zones is two devices, and the
// export, filtered by zone or not, names each device's zone and imports
// back into the same zones.
func TestDevicesZones(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	devicesLoopback(t, e, "home-1", nil, true)

	p := b.get("/devices")
	expect(t, "list with the local zone only", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="f-zone"`) || strings.Contains(p.body, "devices-zone") {
		t.Errorf("a zone filter or column with only the local zone:\n%s", p.body)
	}
	siteA, err := e.store.CreateZone(ctx, "Site-A")
	if err != nil {
		t.Fatal(err)
	}
	siteB, err := e.store.CreateZone(ctx, "site-b")
	if err != nil {
		t.Fatal(err)
	}

	b.get("/devices/import")
	p = b.uploadDevicesCSV("zones.csv", "name,host,platform,zone\n"+
		"a-1,10.0.0.1,cisco_ios,site-a\n"+
		"b-1,10.0.0.1,cisco_ios,Nowhere\n", "")
	expect(t, "unknown zone", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "unknown zone", p, "Problems found in the file: 1.",
		`<tr><td class="num">3</td><td><code>zone</code></td><td>There is no zone named “Nowhere”.`)
	if n := devicesCount(t, e); n != 1 {
		t.Fatalf("%d devices after a refused import, want 1", n)
	}
	p = b.uploadDevicesCSV("zones.csv", "name,host,platform,zone\n"+
		"a-1,10.0.0.1,cisco_ios,site-a\n"+
		"b-1,10.0.0.1,cisco_ios,SITE-B\n"+
		"l-1,10.0.0.1,cisco_ios,\n", "")
	expect(t, "import with zones", p, http.StatusSeeOther, "/devices?imported=3")
	for name, zone := range map[string]int64{"a-1": siteA.ID, "b-1": siteB.ID, "l-1": db.LocalZone, "home-1": db.LocalZone} {
		if got := devicesByName(t, e, name).ZoneID; got != zone {
			t.Errorf("%s is in zone %d, want %d", name, got, zone)
		}
	}

	p = b.get("/devices")
	expectBody(t, "list with zones", p, `<label for="f-zone">Zone</label>`, `<option value="`+strconv.FormatInt(siteA.ID, 10)+`">Site-A</option>`,
		`<th scope="col">Zone</th>`, `<td class="devices-zone">site-b</td>`, `<td class="devices-zone">local</td>`)
	p = b.get("/devices?zone_id=" + strconv.FormatInt(siteB.ID, 10))
	if got := devicesListed(p.body); fmt.Sprint(got) != "[b-1]" {
		t.Errorf("zone filter lists %v, want [b-1]", got)
	}
	expectBody(t, "zone filter", p, `<option value="`+strconv.FormatInt(siteB.ID, 10)+`" selected>site-b</option>`,
		`href="/devices/export?zone_id=`+strconv.FormatInt(siteB.ID, 10)+`"`, `id="devices-filter-clear"`)
	b.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "list in Chinese", b.get("/devices"), `<th scope="col">区域</th>`)
	b.header.Del("Accept-Language")

	p = b.get("/devices/export?zone_id=" + strconv.FormatInt(siteA.ID, 10))
	if !strings.HasSuffix(p.body, "\r\na-1,10.0.0.1,22,cisco_ios,ssh,,,,utf-8,true,,Site-A\r\n") {
		t.Errorf("export of Site-A:\n%q", p.body)
	}
	p = b.get("/devices/export")
	before := map[string]db.Device{}
	for _, n := range []string{"a-1", "b-1", "l-1"} {
		before[n] = devicesByName(t, e, n)
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, before[n].ID); err != nil {
			t.Fatal(err)
		}
	}
	export := strings.Replace(p.body, "home-1,", "home-2,", 1)
	b.get("/devices/import")
	expect(t, "re-import", b.uploadDevicesCSV("export.csv", export, ""), http.StatusSeeOther, "/devices?imported=4")
	for n, old := range before {
		got := devicesByName(t, e, n)
		got.ID, got.CreatedAt, got.UpdatedAt = old.ID, old.CreatedAt, old.UpdatedAt
		if fmt.Sprint(devicesComparable(got)) != fmt.Sprint(devicesComparable(old)) {
			t.Errorf("%s after the round trip:\n got %v\nwant %v", n, devicesComparable(got), devicesComparable(old))
		}
	}
}

func TestDevicesRefuseCrossSiteForms(t *testing.T) {
	e := newEnv(t)
	s := newDevicesScopeEnv(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	b.get("/devices")
	id := strconv.FormatInt(s.coreDev, 10)
	form := url.Values{"csrf": {"wrong"}, "name": {"x"}, "host": {"192.0.2.9"}, "platform": {"cisco_ios"}, "login_method": {"ssh"}, "encoding": {"utf-8"}}
	expect(t, "create without the token", b.post("/devices", form), http.StatusForbidden, "")
	expect(t, "delete without the token", b.post("/devices/"+id+"/delete", url.Values{"csrf": {""}}), http.StatusForbidden, "")
	expect(t, "backup without the token", b.post("/devices/backup", url.Values{"csrf": {"wrong"}, "id": {id}}), http.StatusForbidden, "")
	expect(t, "import without the token", b.uploadDevicesCSV("x.csv", "name,host,platform\nx,192.0.2.1,cisco_ios\n", "wrong"), http.StatusForbidden, "")

	// A page of another site posting with a stolen token is refused too.
	b.get("/devices")
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/devices/backup", strings.NewReader(url.Values{"csrf": {b.csrf}, "id": {id}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	expect(t, "cross-site backup", b.do(req), http.StatusForbidden, "")
	if n := devicesCount(t, e); n != 2 || len(devicesJobs(t, e, s.coreDev)) != 0 {
		t.Errorf("a refused form changed something: %d devices", n)
	}
	if _, err := e.store.GetDevice(context.Background(), s.coreDev); err != nil {
		t.Error("the device was deleted")
	}
}

// BenchmarkDevicesPage renders GET /devices through the real server
// (middleware, session, store) over 20,000 devices with ten backups each
// (about a quarter of them changed since their first backup):
//
//	go test ./web/ui -run '^$' -bench DevicesPage -benchtime 200x
//
// (on PostgreSQL with BACKUPD_TEST_POSTGRES set).
// It reports the size of each page (bytes/page) besides ns/op. The
// orders by last change and the "changed in the last N days" filter are
// measured beside the list by id.
func BenchmarkDevicesPage(b *testing.B) {
	ctx := context.Background()
	store := dbtest.Open(b) // SQLite, or PostgreSQL with BACKUPD_TEST_POSTGRES set
	if _, err := auth.Bootstrap(ctx, store); err != nil {
		b.Fatal(err)
	}
	if err := store.Seed(ctx, seed.Options{Devices: 20_000, BackupsPerDevice: 10, Snapshots: 5, RandomSeed: 1}); err != nil {
		b.Fatal(err)
	}
	role, err := store.RoleByName(ctx, auth.RoleAdministrator)
	if err != nil {
		b.Fatal(err)
	}
	hash, err := auth.HashPassword("bench-password-1")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.CreateUser(ctx, db.NewUser{Username: "bench", PasswordHash: hash, RoleIDs: []int64{role.ID}, AllGroups: true}); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	ui.Mount(mux, ui.Deps{Store: store, Log: log, Location: time.UTC, Version: "bench"})
	srv := httptest.NewServer(web.Wrap(mux, log))
	defer srv.Close()

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, []byte) {
		res, err := client.Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, body
	}
	_, login := get("/login")
	m := csrfInput.FindSubmatch(login)
	if m == nil {
		b.Fatal("no CSRF token on the sign-in page")
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/login", strings.NewReader(url.Values{"csrf": {string(m[1])},
		"username": {"bench"}, "password": {"bench-password-1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	res, err := client.Do(req)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		b.Fatalf("sign-in: %v %v", res, err)
	}
	res.Body.Close()

	for _, c := range []struct{ name, path string }{
		{"first", "/devices"},
		{"middle", "/devices?page=200"},
		{"filtered", "/devices?status=reachable&platform=cisco_ios&q=sw"},
		{"changed_first", "/devices?sort=last_changed"},
		{"changed_middle", "/devices?sort=last_changed&page=200"},
		{"changed_oldest_first", "/devices?sort=last_changed_asc"},
		{"changed_30d", "/devices?changed_days=30&sort=last_changed"},
		{"changed_30d_filtered", "/devices?changed_days=30&status=reachable&platform=cisco_ios&q=sw"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				status, body := get(c.path)
				if status != http.StatusOK {
					b.Fatalf("GET %s: %d", c.path, status)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}
