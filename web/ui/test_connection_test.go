package ui_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/internal/dbtest"
)

// "Test connection" on the device form logs in to the simulator over SSH
// with the form's values and the chosen credential, unsaved, and says how
// it went at the top of the form: nothing is stored, no host key pinned,
// the test is audited. A wrong password says why it failed; an edited
// device whose address did not change must present its pinned key. A
// user who may not use the credential, or may not back up, sends it
// nowhere.
func TestDeviceFormTestsTheConnection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	f := seedFleet(t, e)
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "lab-sw", Username: "admin", Password: "sim-password-1", SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	cred := func(name, pw string) int64 {
		c, err := e.store.CreateCredential(ctx, db.Credential{Name: name, Username: "admin", Password: e.sealer.Seal(pw, secret.PurposePassword)})
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	good, bad := cred("lab", "sim-password-1"), cred("stale", "not-the-password")
	form := func(name string, credID int64) url.Values {
		return url.Values{"action": {"test"}, "name": {name}, "host": {"127.0.0.1"}, "port": {port}, "platform": {"cisco_ios"},
			"login_method": {"ssh"}, "group_id": {strconv.FormatInt(f.core, 10)}, "credential_id": {strconv.FormatInt(credID, 10)},
			"encoding": {"utf-8"}, "enabled": {"on"}}
	}
	devices := func() int { return devicesCount(t, e) }
	before := devices()

	e.createUser("op", "op-password-1", auth.RoleOperator, true)
	b := e.browser()
	b.mustLogin("op", "op-password-1")
	b.get("/devices/new")
	p := b.post("/devices", form("lab-sw", good))
	expect(t, "test a new device", p, http.StatusOK, "")
	expectBody(t, "test a new device", p, `id="device-test-result"`, "Logged in to ssh 127.0.0.1:"+port+" and read the configuration:",
		"Nothing was saved", `value="lab-sw"`)
	if got := sim.Stats().Logins; got != 1 {
		t.Errorf("the simulator saw %d logins, want 1", got)
	}
	if n := devices(); n != before {
		t.Errorf("%d devices after a test, %d before", n, before)
	}
	var audited bool
	for _, a := range e.auditEntries() {
		if a.Action == "device.test_connection" && a.Details["ok"] == true && a.Details["host"] == "127.0.0.1" {
			audited = true
		}
	}
	if !audited {
		t.Error("the test is not in the audit log")
	}

	p = b.post("/devices", form("lab-sw", bad))
	expect(t, "test with a wrong password", p, http.StatusOK, "")
	expectBody(t, "test with a wrong password", p, "The test did not get the configuration.", `id="device-test-error"`)
	if strings.Contains(p.body, "not-the-password") || strings.Contains(p.body, "sim-password-1") {
		t.Error("the page shows a password")
	}

	// An edited device at the same address: its pinned key must match.
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "pinned-sw", Host: "127.0.0.1", Port: mustAtoi(t, port), Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, CredentialID: &good, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	other := detailKey(t)
	detailSetHostKeys(t, e, dev.ID, other, nil)
	p = b.post("/devices/"+strconv.FormatInt(dev.ID, 10)+"/edit", form("pinned-sw", good))
	expect(t, "test an edited device", p, http.StatusOK, "")
	expectBody(t, "test an edited device", p, "The test did not get the configuration.", "host key")
	var pinned []byte
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT host_key FROM devices WHERE id = ?`, dev.ID).Scan(&pinned); err != nil || string(pinned) != string(other) {
		t.Errorf("the pinned key changed after a test: %v", err)
	}

	// A narrow role: no backups.create, or not this credential.
	if _, err := e.store.CreateRole(ctx, "Adders", "", []string{"devices.view", "devices.create"}); err != nil {
		t.Fatal(err)
	}
	e.createUser("adder", "adder-password-1", "Adders", true)
	narrow := e.browser()
	narrow.mustLogin("adder", "adder-password-1")
	if strings.Contains(narrow.get("/devices/new").body, `id="device-test"`) {
		t.Error("the form offers the test to a user who may not back up")
	}
	logins := sim.Stats().Logins + sim.Stats().FailedLogins
	narrow.get("/devices/new")
	p = narrow.post("/devices", form("lab-sw", good))
	expectBody(t, "test without backups.create", p, "it needs the backups.create permission")
	role2, err := e.store.CreateRole(ctx, "Testers", "", []string{"devices.view", "devices.create", "backups.create"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetRoleCredentials(ctx, role2, []int64{bad}); err != nil {
		t.Fatal(err)
	}
	e.createUser("tester", "tester-password-1", "Testers", true)
	tester := e.browser()
	tester.mustLogin("tester", "tester-password-1")
	tester.get("/devices/new")
	p = tester.post("/devices", form("lab-sw", good))
	expect(t, "test with a credential not one's own", p, http.StatusForbidden, "")
	expectBody(t, "test with a credential not one's own", p, "You may not use credential “lab”")
	if got := sim.Stats().Logins + sim.Stats().FailedLogins; got != logins {
		t.Errorf("the refused tests reached the device: %d login attempts, %d before", got, logins)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
