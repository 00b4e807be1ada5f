package ui_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
)

// TestDeviceFormTestInChromium fills in the new device form in Chinese,
// presses "Test connection", and finds the result, in Chinese, in view
// at the top of the form it filled in, its values kept.
func TestDeviceFormTestInChromium(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e, 60*time.Second, 1280, 900)
	f := seedFleet(t, e)
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "lab-sw", Username: "admin", Password: "sim-password-1", SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	cred, err := e.store.CreateCredential(context.Background(), db.Credential{Name: "lab", Username: "admin",
		Password: e.sealer.Seal("sim-password-1", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	e.createUser("op", "op-password-1", auth.RoleOperator, true)
	b.login("op", "op-password-1")
	b.setLang("zh")
	b.open("/devices/new")
	b.typeIn("#d-name", "lab-sw")
	b.typeIn("#d-host", "127.0.0.1")
	b.typeIn("#d-port", port)
	b.chooseValue("#d-platform", "cisco_ios")
	b.chooseValue("#d-group", strconv.FormatInt(f.core, 10))
	b.chooseValue("#d-credential", strconv.FormatInt(cred.ID, 10))
	b.submit("测试连接", "#device-test")
	b.waitFor("the result in view", `(function () {
		const r = document.getElementById("device-test-result");
		if (!r) return false;
		const box = r.getBoundingClientRect();
		return box.top > -2 && box.bottom <= window.innerHeight;
	})()`, 5*time.Second)
	if got := b.eval(`document.getElementById("device-test-result").className`); got != "alert alert-success" {
		t.Errorf("result %q: %s", got, b.eval(`document.getElementById("device-test-result").textContent`))
	}
	if got := b.eval(`document.getElementById("device-test-result").textContent`); !hasHan(got) {
		t.Errorf("the result reads %q, not Chinese", got)
	}
	if got := b.eval(`document.getElementById("d-name").value + " " + document.getElementById("d-port").value`); got != "lab-sw "+port {
		t.Errorf("the form kept %q", got)
	}
	if n := devicesCount(t, e); n != 5 {
		t.Errorf("%d devices after the test, want the fleet's 5", n)
	}
	b.checkConsole()
}
