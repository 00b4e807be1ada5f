package ui_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testkit"
)

const (
	credUser     = "backup"
	credPassword = "core-Secret-pw-71"
	credEnable   = "core-Enable-pw-71"
)

// credFleet is a telnet device logging in with credential "core", backed
// up once (so its address is pinned), another credential "edge", and a
// role that may edit devices and run backups but has no right on any
// credential: the attacker's.
type credFleet struct {
	core, edge db.Credential
	group      db.Group
	sim        *devsim.Device
	dev        db.Device
}

func newCredFleet(t *testing.T, e *env) *credFleet {
	t.Helper()
	ctx := context.Background()
	f := &credFleet{}
	var err error
	if f.group, err = e.store.CreateGroup(ctx, "Edge", nil); err != nil {
		t.Fatal(err)
	}
	if f.core, err = e.store.CreateCredential(ctx, db.Credential{Name: "core", Username: credUser,
		Password:       e.sealer.Seal(credPassword, secret.PurposePassword),
		EnablePassword: e.sealer.Seal(credEnable, secret.PurposeEnablePassword)}); err != nil {
		t.Fatal(err)
	}
	if f.edge, err = e.store.CreateCredential(ctx, db.Credential{Name: "edge", Username: "edge",
		Password: e.sealer.Seal("edge-Secret-pw-72", secret.PurposePassword)}); err != nil {
		t.Fatal(err)
	}
	f.sim, err = devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "edge-sw1", Username: credUser,
		Password: credPassword, EnablePassword: credEnable, TelnetAddr: "127.0.0.1:0", Seed: 31})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.sim.Close() })
	_, port, _ := net.SplitHostPort(f.sim.TelnetAddr())
	p, _ := strconv.Atoi(port)
	if f.dev, err = e.store.CreateDevice(ctx, db.Device{Name: "edge-sw1", Host: "127.0.0.1", Port: p, Platform: "cisco_ios",
		LoginMethod: "telnet", GroupID: &f.group.ID, CredentialID: &f.core.ID, Encoding: "utf-8", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.engine.Enqueue(ctx, []int64{f.dev.ID}, queue.TriggerManual); err != nil {
		t.Fatal(err)
	}
	if jobs := credWaitJobs(t, e, f.dev.ID, 1); jobs[0].State != queue.JobSucceeded {
		t.Fatalf("first backup: %s %v", jobs[0].State, jobs[0].Error)
	}
	if err := e.store.EnsureRole(ctx, db.Role{Name: "Device editor", Permissions: []string{
		"devices.view", "devices.create", "devices.update", "backups.view", "backups.create", "credentials.view"}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// credWaitJobs waits (30 s at most) until the device has n finished jobs
// and returns its jobs, newest first.
func credWaitJobs(t *testing.T, e *env, deviceID int64, n int) []db.JobRow {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		jobs := devicesJobs(t, e, deviceID)
		done := 0
		for _, j := range jobs {
			if j.FinishedAt != nil {
				done++
			}
		}
		if done >= n {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs finished after 30 s: %+v", done, n, jobs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// credDeviceForm is the edit form of d as a browser posts it, with
// changes applied.
func credDeviceForm(d db.Device, change func(url.Values)) url.Values {
	v := url.Values{"name": {d.Name}, "host": {d.Host}, "port": {strconv.Itoa(d.Port)}, "platform": {d.Platform},
		"login_method": {d.LoginMethod}, "encoding": {d.Encoding}, "enabled": {"1"}}
	if d.GroupID != nil {
		v.Set("group_id", strconv.FormatInt(*d.GroupID, 10))
	}
	if d.CredentialID != nil {
		v.Set("credential_id", strconv.FormatInt(*d.CredentialID, 10))
	}
	if change != nil {
		change(v)
	}
	return v
}

// The attack of issue 23: a user who may edit devices and run backups,
// with no right on any credential, re-points a device that logs in with
// "core" at a telnet listener of its own and queues a backup. The edit is
// refused; the backup goes to the real device; the listener receives
// nothing. Creating a device with the credential is refused too, and the
// form never offers it.
func TestCredentialTheftByRepointIsRefused(t *testing.T) {
	e := newEnv(t)
	f := newCredFleet(t, e)
	ctx := context.Background()
	trap := testkit.NewLoginTrap(t)
	e.createUser("mallory", "mallory-password-1", "Device editor", true)
	b := e.browser()
	b.mustLogin("mallory", "mallory-password-1")
	edit := fmt.Sprintf("/devices/%d/edit", f.dev.ID)

	p := b.get(edit)
	expect(t, "edit form", p, http.StatusOK, "")
	expectBody(t, "edit form", p, ">core</option>", "You may not use this device&#39;s credential")
	if strings.Contains(p.body, ">edge</option>") {
		t.Error("the form offers a credential the user may not use")
	}
	trapPort := strconv.Itoa(trap.Port())
	for what, change := range map[string]func(url.Values){
		"re-point the port": func(v url.Values) { v.Set("port", trapPort) },
		"re-point host":     func(v url.Values) { v.Set("host", "localhost") },
		"switch to ssh":     func(v url.Values) { v.Set("login_method", "ssh"); v.Set("port", trapPort) },
	} {
		p = b.post(edit, credDeviceForm(f.dev, change))
		expect(t, what, p, http.StatusForbidden, "")
		expectBody(t, what, p, "This device logs in with credential “core”, which you may not use")
	}
	p = b.post(edit, credDeviceForm(f.dev, func(v url.Values) { v.Set("credential_id", strconv.FormatInt(f.edge.ID, 10)) }))
	expect(t, "attach another credential", p, http.StatusForbidden, "")
	expectBody(t, "attach another credential", p, "You may not use credential “edge”")
	if d, _ := e.store.GetDevice(ctx, f.dev.ID); d.Port != f.dev.Port || d.Host != f.dev.Host || d.LoginMethod != "telnet" ||
		*d.CredentialID != f.core.ID {
		t.Fatalf("a refused edit changed the device: %+v", d)
	}
	// What does not touch the credential's way stays allowed.
	p = b.post(edit, credDeviceForm(f.dev, func(v url.Values) { v.Set("remarks", "rack 9") }))
	expect(t, "edit remarks", p, http.StatusSeeOther, "")

	// The backup mallory may queue goes where it always went.
	b.get("/devices")
	expect(t, "back up", b.post("/devices/backup", url.Values{"id": {strconv.FormatInt(f.dev.ID, 10)}}), http.StatusSeeOther, "")
	if jobs := credWaitJobs(t, e, f.dev.ID, 2); jobs[0].State != queue.JobSucceeded {
		t.Fatalf("backup after the refused edits: %s %v", jobs[0].State, jobs[0].Error)
	}

	// A new device with the credential: not offered, and refused.
	p = b.get("/devices/new")
	if strings.Contains(p.body, ">core</option>") || strings.Contains(p.body, ">edge</option>") {
		t.Error("the new-device form offers credentials the user may not use")
	}
	p = b.post("/devices", url.Values{"name": {"trap"}, "host": {"127.0.0.1"}, "port": {trapPort}, "platform": {"cisco_ios"},
		"login_method": {"telnet"}, "group_id": {strconv.FormatInt(f.group.ID, 10)}, "credential_id": {strconv.FormatInt(f.core.ID, 10)},
		"encoding": {"utf-8"}, "enabled": {"1"}})
	expect(t, "create with core", p, http.StatusForbidden, "")
	expectBody(t, "create with core", p, "You may not use credential “core”")
	if n := devicesCount(t, e); n != 1 {
		t.Fatalf("%d devices after the refused create", n)
	}
	if trap.Connections() != 0 || strings.Contains(trap.Received(), credPassword) {
		t.Fatalf("the listener got %d connections: %q", trap.Connections(), trap.Received())
	}
	for _, a := range e.auditEntries() {
		if a.Details["credential_id"] != nil {
			t.Errorf("an audit entry records a credential use that was refused: %+v", a)
		}
	}
}

// The second line of defence: once a device's address changed (here by
// an administrator, who may), its credential is not sent until someone
// who may use it confirms the new address. The device page says so in
// both languages; a user without the right sees no button and is refused.
func TestChangedAddressWaitsForConfirmation(t *testing.T) {
	e := newEnv(t)
	f := newCredFleet(t, e)
	ctx := context.Background()
	trap := testkit.NewLoginTrap(t)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	e.createUser("mallory", "mallory-password-1", "Device editor", true)
	root := e.browser()
	root.mustLogin("root", "root-password-1")
	root.get("/devices")
	p := root.post(fmt.Sprintf("/devices/%d/edit", f.dev.ID), credDeviceForm(f.dev, func(v url.Values) { v.Set("port", strconv.Itoa(trap.Port())) }))
	expect(t, "admin re-points", p, http.StatusSeeOther, "")
	var update db.AuditEntry
	for _, a := range e.auditEntries() {
		if a.Action == "device.update" {
			update = a
		}
	}
	if update.Details["credential"] != "core" || update.Details["credential_use"] != "address" {
		t.Fatalf("the re-point's audit entry does not name the credential: %+v", update.Details)
	}

	m := e.browser()
	m.mustLogin("mallory", "mallory-password-1")
	m.get("/devices")
	expect(t, "back up", m.post("/devices/backup", url.Values{"id": {strconv.FormatInt(f.dev.ID, 10)}}), http.StatusSeeOther, "")
	jobs := credWaitJobs(t, e, f.dev.ID, 2)
	if jobs[0].State != queue.JobFailed || jobs[0].Error == nil || !strings.Contains(*jobs[0].Error, "address changed") {
		t.Fatalf("backup at the new address: %s %v", jobs[0].State, jobs[0].Error)
	}
	if trap.Connections() != 0 {
		t.Fatalf("the listener was connected to: %q", trap.Received())
	}

	path := fmt.Sprintf("/devices/%d", f.dev.ID)
	p = m.get(path)
	was, now := fmt.Sprintf("telnet 127.0.0.1:%d", f.dev.Port), fmt.Sprintf("telnet 127.0.0.1:%d", trap.Port())
	expectBody(t, "page of the device", p, `id="address-changed"`, "The device&#39;s address changed since its credential was last sent.",
		`<dd class="device-mono" id="address-was">`+was+`</dd>`, `<dd class="device-mono" id="address-now">`+now+`</dd>`,
		"credentials.use) to confirm the new address")
	if strings.Contains(p.body, `id="address-confirm"`) {
		t.Error("a user who may not use the credential is offered to confirm")
	}
	seen := fmt.Sprintf("telnet|127.0.0.1|%d|1", trap.Port())
	p = m.post(path+"/address/confirm", url.Values{"address": {seen}})
	expect(t, "mallory confirms", p, http.StatusForbidden, "")
	m.header.Set("Accept-Language", "zh-CN")
	expectBody(t, "zh page", m.get(path), "地址未确认", "自上次发送凭据以来，设备地址已更改。", "确认新地址")
	m.header.Del("Accept-Language")

	p = root.get(path)
	expectBody(t, "root's page", p, `id="address-confirm"`, `name="address" value="`+seen+`"`)
	expect(t, "confirm an address it was not shown", root.post(path+"/address/confirm", url.Values{"address": {"telnet|127.0.0.1|1|1"}}),
		http.StatusConflict, "")
	p = root.post(path+"/address/confirm", url.Values{"address": {seen}})
	expect(t, "root confirms", p, http.StatusSeeOther, path+"?address=confirmed#address")
	expectBody(t, "after confirming", root.get(path+"?address=confirmed"), "The new address is confirmed.")
	var confirm db.AuditEntry
	for _, a := range e.auditEntries() {
		if a.Action == "device.confirm_address" {
			confirm = a
		}
	}
	if confirm.Username != "root" || confirm.Details["credential"] != "core" || confirm.Details["address"] != now || confirm.Details["previous"] != was {
		t.Fatalf("confirmation audit entry: %+v", confirm)
	}
	// From now on the credential goes there: the listener shows it would
	// have caught it.
	if _, err := e.engine.Enqueue(ctx, []int64{f.dev.ID}, queue.TriggerManual); err != nil {
		t.Fatal(err)
	}
	credWaitJobs(t, e, f.dev.ID, 3)
	if !strings.Contains(trap.Received(), credPassword) {
		t.Fatalf("after confirming, the listener got %q", trap.Received())
	}
}

// A changed SSH host key of a device with a credential lets that
// credential go to whoever holds the key: accepting it needs the right to
// use the credential.
func TestHostKeyAcceptNeedsCredentialUse(t *testing.T) {
	e := newEnv(t)
	f := newDetailFleet(t, e)
	detailSetHostKeys(t, e, f.coreDev.ID, detailKey(t), detailKey(t))
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	if err := e.store.EnsureRole(context.Background(), db.Role{Name: "Device editor", Permissions: []string{"devices.view", "devices.update"}}); err != nil {
		t.Fatal(err)
	}
	e.createUser("mallory", "mallory-password-1", "Device editor", true)
	path := devicePath(f.coreDev)
	m := e.browser()
	m.mustLogin("mallory", "mallory-password-1")
	p := m.get(path)
	expectBody(t, "mallory's page", p, `id="host-key-changed"`, "use this device&#39;s credential (credentials.use) to accept the new key")
	if strings.Contains(p.body, `id="host-key-accept"`) {
		t.Error("mallory is offered to accept the key")
	}
	_, pending := detailHostKeys(t, e, f.coreDev.ID)
	p = m.post(path+"/host-key/accept", url.Values{"fingerprint": {detailFP(t, []byte(pending))}})
	expect(t, "mallory accepts", p, http.StatusForbidden, "")
	if _, q := detailHostKeys(t, e, f.coreDev.ID); q != pending {
		t.Fatal("a refused accept changed the keys")
	}
	r := e.browser()
	r.mustLogin("root", "root-password-1")
	r.get(path)
	expect(t, "root accepts", r.post(path+"/host-key/accept", url.Values{"fingerprint": {detailFP(t, []byte(pending))}}), http.StatusSeeOther, "")
	for _, a := range e.auditEntries() {
		if a.Action == "device.accept_hostkey" && a.Details["credential"] != "lab login" {
			t.Errorf("the accept's audit entry does not name the credential: %+v", a.Details)
		}
	}
}

// A role may be let use some credentials only: its holders see those in
// the device form and may attach them, not the others; the audit log
// says which was attached. The CSV import holds them to the same.
func TestCredentialUsePerCredential(t *testing.T) {
	e := newEnv(t)
	f := newCredFleet(t, e)
	ctx := context.Background()
	role, err := e.store.CreateRole(ctx, "Edge techs", "", []string{"devices.view", "devices.create", "devices.update"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetRoleCredentials(ctx, role, []int64{f.edge.ID}); err != nil {
		t.Fatal(err)
	}
	e.createUser("tech", "tech-password-1", "Edge techs", true)
	b := e.browser()
	b.mustLogin("tech", "tech-password-1")
	p := b.get("/devices/new")
	expectBody(t, "new form", p, ">edge</option>")
	if strings.Contains(p.body, ">core</option>") {
		t.Error("the form offers core")
	}
	form := func(name string, cred int64) url.Values {
		return url.Values{"name": {name}, "host": {"192.0.2.77"}, "platform": {"cisco_ios"}, "login_method": {"ssh"},
			"group_id": {strconv.FormatInt(f.group.ID, 10)}, "credential_id": {strconv.FormatInt(cred, 10)}, "encoding": {"utf-8"}}
	}
	expect(t, "create with core", b.post("/devices", form("with-core", f.core.ID)), http.StatusForbidden, "")
	expect(t, "create with edge", b.post("/devices", form("with-edge", f.edge.ID)), http.StatusSeeOther, "")
	var created db.AuditEntry
	for _, a := range e.auditEntries() {
		if a.Action == "device.create" {
			created = a
		}
	}
	if created.Details["credential"] != "edge" || created.Details["credential_use"] != "attach" {
		t.Fatalf("create audit entry: %+v", created.Details)
	}

	b.get("/devices/import")
	p = b.uploadDevicesCSV("d.csv", "name,host,platform,group,credential\nimp-1,192.0.2.81,cisco_ios,Edge,edge\nimp-2,192.0.2.82,cisco_ios,Edge,core\n", "")
	expect(t, "import with core", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "import with core", p, "You may not use credential “core”")
	if n := devicesCount(t, e); n != 2 {
		t.Fatalf("%d devices after the refused import", n)
	}
	p = b.uploadDevicesCSV("d.csv", "name,host,platform,group,credential\nimp-1,192.0.2.81,cisco_ios,Edge,edge\n", "")
	expect(t, "import with edge", p, http.StatusSeeOther, "")
	for _, a := range e.auditEntries() {
		if a.Action == "device.import" && fmt.Sprint(a.Details["credential_ids"]) != fmt.Sprintf("[%d]", f.edge.ID) {
			t.Errorf("import audit entry: %+v", a.Details)
		}
	}
}

// The router.db import, as a user who may create devices and credentials
// but use no existing credential: a line whose login is core's becomes a
// credential of its own (the plan tells nothing about core's password),
// and a line that would move a device logging in with core is skipped.
func TestRouterDBImportCredentialUse(t *testing.T) {
	e := newEnv(t)
	newCredFleet(t, e)
	if err := e.store.EnsureRole(context.Background(), db.Role{Name: "Importer", Permissions: []string{
		"devices.view", "devices.create", "devices.update", "groups.create", "credentials.create"}}); err != nil {
		t.Fatal(err)
	}
	e.createUser("imp", "importer-password-1", "Importer", true)
	b := e.browser()
	b.mustLogin("imp", "importer-password-1")
	b.get("/devices/import")
	file := "new-sw:ios:Edge:" + credUser + ":" + credPassword + "\n" +
		"edge-sw1:ios:Edge\n"
	// The file has a group column: backupd's earlier default layout.
	form := map[string]string{"format": "oxidized", "map": "name=0,model=1,group=2,username=3,password=4", "dry_run": "1"}
	p := b.uploadRouterDB(form, map[string]string{"file": file}, "")
	expect(t, "dry run", p, http.StatusOK, "")
	// Had the login been matched with core, no credential would be new.
	expectBody(t, "dry run", p, "New credentials: <code>Imported oxidized 1</code>",
		"<td>edge-sw1</td><td>Skipped</td><td>You may not use credential “core”")
}

// The roles page grants the use of credentials one by one; nobody grants
// the use of a credential it may not use itself, and boxes it may not
// change keep their state.
func TestRoleCredentialGrants(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	core, err := e.store.CreateCredential(ctx, db.Credential{Name: "core", Username: "u"})
	if err != nil {
		t.Fatal(err)
	}
	edge, err := e.store.CreateCredential(ctx, db.Credential{Name: "edge", Username: "u"})
	if err != nil {
		t.Fatal(err)
	}
	root := adminBrowser(t, e)
	p := root.get("/roles/new")
	expectBody(t, "new role form", p, `id="role-credentials"`, `name="credential" value="`+idStr(core.ID)+`"`, "Credentials this role may use",
		`value="credentials.use"`, ">Use</th>")
	p = root.post("/roles", url.Values{"name": {"Edge techs"}, "perm": {"devices.view", "devices.update", "roles.view", "roles.create", "roles.update"},
		"credential": {idStr(edge.ID)}})
	expect(t, "create role", p, http.StatusSeeOther, "")
	role, err := e.store.RoleByName(ctx, "Edge techs")
	if err != nil || len(role.Credentials) != 1 || role.Credentials[0] != edge.ID {
		t.Fatalf("role credentials %v, %v", role.Credentials, err)
	}
	expect(t, "bad credential box", root.post("/roles", url.Values{"name": {"X"}, "credential": {"abc"}}), http.StatusUnprocessableEntity, "")
	expectBody(t, "roles list", root.get("/roles"), "Credentials it may use one by one: 1")

	// A holder of the role manages roles, and may use edge only.
	e.createUser("lead", "lead-password-1", "Edge techs", true)
	lead := e.browser()
	lead.mustLogin("lead", "lead-password-1")
	p = lead.get("/roles/new")
	if !strings.Contains(p.body, `value="`+idStr(core.ID)+`" disabled>`) {
		t.Error("the lead may tick core")
	}
	p = lead.post("/roles", url.Values{"name": {"Core techs"}, "perm": {"devices.view"}, "credential": {idStr(core.ID)}})
	expect(t, "grant core", p, http.StatusForbidden, "")
	expectBody(t, "grant core", p, "You may not use credential #"+idStr(core.ID)+" yourself")
	p = lead.post("/roles", url.Values{"name": {"Edge helpers"}, "perm": {"devices.view"}, "credential": {idStr(edge.ID)}})
	expect(t, "grant edge", p, http.StatusSeeOther, "")
	// An administrator adds core to the lead's role; the lead edits it
	// without the core box (disabled, not sent): core stays.
	if err := e.store.SetRoleCredentials(ctx, role.ID, []int64{core.ID, edge.ID}); err != nil {
		t.Fatal(err)
	}
	helpers, _ := e.store.RoleByName(ctx, "Edge helpers")
	if err := e.store.SetRoleCredentials(ctx, helpers.ID, []int64{core.ID, edge.ID}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetRoleCredentials(ctx, role.ID, []int64{edge.ID}); err != nil {
		t.Fatal(err)
	}
	p = lead.post("/roles/"+idStr(helpers.ID), url.Values{"name": {"Edge helpers"}, "perm": {"devices.view"}})
	expect(t, "edit without the boxes", p, http.StatusSeeOther, "")
	if r, _ := e.store.RoleByID(ctx, helpers.ID); len(r.Credentials) != 1 || r.Credentials[0] != core.ID {
		t.Fatalf("after the lead's edit: %v, want core kept and edge taken away", r.Credentials)
	}
	var updated db.AuditEntry
	for _, a := range e.auditEntries() {
		if a.Action == "role.update" {
			updated = a
		}
	}
	if fmt.Sprint(updated.Details["credentials_removed"]) != "["+idStr(edge.ID)+"]" {
		t.Fatalf("role.update audit entry: %+v", updated.Details)
	}
}
