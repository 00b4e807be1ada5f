package apiv1_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"backupd/db"
)

// Through the public API, as through the web interface: a key whose owner
// may edit and create devices but use no credential cannot attach one,
// nor send a device's credential to a new address (403
// PERMISSION_DENIED, the contract's code for a missing permission); a
// role's one-by-one grant lets its holders use that credential only; the
// audit log names the credential used; a narrowed key needs
// credentials.use in its list.
func TestDevicesCredentialUse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	core := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "core", "username": "u", "password": "core-pw-1"})
	edge := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "edge", "username": "u", "password": "edge-pw-1"})
	e.expect(core, http.StatusCreated, "")
	e.expect(edge, http.StatusCreated, "")
	dev := e.do(http.MethodPost, "/api/v1/devices", e.adminKey, map[string]any{"name": "r1", "host": "192.0.2.1", "platform": "cisco_ios",
		"login_method": "telnet", "credential_id": core.id()})
	e.expect(dev, http.StatusCreated, "")
	devPath := fmt.Sprintf("/api/v1/devices/%d", dev.id())

	if err := e.store.EnsureRole(ctx, db.Role{Name: "Device editor", Permissions: []string{"devices.view", "devices.create", "devices.update"}}); err != nil {
		t.Fatal(err)
	}
	mallory := e.scopedUser("mallory", "Device editor", true)
	for what, body := range map[string]map[string]any{
		"new host":         {"host": "127.0.0.1"},
		"new port":         {"port": 2323},
		"new login method": {"login_method": "ssh"},
		"other credential": {"credential_id": edge.id()},
	} {
		r := e.do(http.MethodPut, devPath, mallory, body)
		e.expect(r, http.StatusForbidden, "PERMISSION_DENIED")
		errObj, _ := r.JSON["error"].(map[string]any)
		if msg, _ := errObj["message"].(string); !strings.Contains(msg, "credentials.use") {
			t.Errorf("%s: message %q does not name the permission", what, msg)
		}
	}
	if d, _ := e.store.GetDevice(ctx, dev.id()); d.Host != "192.0.2.1" || d.Port != 23 || d.LoginMethod != "telnet" || *d.CredentialID != core.id() {
		t.Fatalf("a refused update changed the device: %+v", d)
	}
	e.expect(e.do(http.MethodPut, devPath, mallory, map[string]any{"name": "r1-renamed", "remarks": "ok"}), http.StatusOK, "")
	e.expect(e.do(http.MethodPut, devPath, mallory, map[string]any{"credential_id": nil}), http.StatusOK, "")
	r := e.do(http.MethodPost, "/api/v1/devices", mallory, map[string]any{"name": "trap", "host": "127.0.0.1", "platform": "cisco_ios",
		"credential_id": core.id()})
	e.expect(r, http.StatusForbidden, "PERMISSION_DENIED")
	// An id no credential has is no different for a caller who may use
	// none: it learns nothing of which exist.
	e.expect(e.do(http.MethodPost, "/api/v1/devices", mallory, map[string]any{"name": "trap", "host": "127.0.0.1", "platform": "cisco_ios",
		"credential_id": 9999}), http.StatusForbidden, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodPost, "/api/v1/devices", mallory, map[string]any{"name": "plain", "host": "127.0.0.1", "platform": "cisco_ios"}),
		http.StatusCreated, "")

	// One credential granted to the role.
	role, _ := e.store.RoleByName(ctx, "Device editor")
	if err := e.store.SetRoleCredentials(ctx, role.ID, []int64{edge.id()}); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodPut, devPath, mallory, map[string]any{"credential_id": core.id()}), http.StatusForbidden, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodPut, devPath, mallory, map[string]any{"credential_id": edge.id(), "host": "192.0.2.9"}), http.StatusOK, "")
	e.expect(e.do(http.MethodPut, devPath, mallory, map[string]any{"port": 2323}), http.StatusOK, "")
	narrowed := e.keyFor("mallory", "devices.update", "devices.view")
	e.expect(e.do(http.MethodPut, devPath, narrowed, map[string]any{"port": 2424}), http.StatusForbidden, "PERMISSION_DENIED")

	entries, _, err := e.store.ListAudit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	for i := len(entries) - 1; i >= 0; i-- {
		a := entries[i]
		if a.Username == "mallory" && a.Details["credential_id"] != nil {
			uses = append(uses, fmt.Sprintf("%s %v %v", a.Action, a.Details["credential"], a.Details["credential_use"]))
		}
	}
	if want := []string{"device.update edge attach", "device.update edge address"}; fmt.Sprint(uses) != fmt.Sprint(want) {
		t.Fatalf("audited credential uses %v, want %v", uses, want)
	}
}
