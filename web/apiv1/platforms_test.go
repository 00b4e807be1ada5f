package apiv1_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
)

// A platform an administrator defined is a platform value like any other:
// devices and templates take it, and every exchange (the request with the
// custom value, the device read back) matches the published document,
// whose platform schema does not change when platforms are defined.
func TestCustomPlatformThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() { driver.SetCustom(nil) })
	def := platforms.Definition{Schema: platforms.Schema, ID: "custom_acme_os", Name: "Acme OS",
		Prompt: `^[\w.-]+[>#]$`, DefaultCommands: []string{"show configuration"}, Transports: []string{"ssh"}}
	if _, err := platforms.Save(context.Background(), e.store, def, true); err != nil {
		t.Fatal(err)
	}

	dev := e.newDevice(map[string]any{"name": "acme-1", "host": "10.0.0.9", "platform": "custom_acme_os"})
	got := e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", dev.id()), e.adminKey, nil)
	e.expect(got, 200, "")
	if got.JSON["platform"] != "custom_acme_os" {
		t.Fatalf("device read back: %s", got.Raw)
	}
	list := e.do(http.MethodGet, "/api/v1/devices?platform=custom_acme_os", e.adminKey, nil)
	e.expect(list, 200, "")
	if !strings.Contains(string(list.Raw), `"acme-1"`) {
		t.Fatalf("filter by custom platform: %s", list.Raw)
	}
	// The platform's own rules hold: it offers no telnet.
	r := e.do(http.MethodPost, "/api/v1/devices", e.adminKey, map[string]any{"name": "acme-2", "host": "10.0.0.10", "platform": "custom_acme_os", "login_method": "telnet"})
	e.expect(r, 422, "VALIDATION_ERROR")

	tpl := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "acme", "platform": "custom_acme_os"})
	e.expect(tpl, 201, "")
	if tpl.JSON["commands"] != "show configuration" {
		t.Fatalf("template defaults: %s", tpl.Raw)
	}
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", dev.id()), e.adminKey, map[string]any{"template_id": tpl.id()}), 200, "")

	// A value of the custom form that no platform has is refused, naming
	// the accepted values, custom ones included.
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{http.MethodPost, "/api/v1/devices", map[string]any{"name": "x", "host": "h", "platform": "custom_nothing"}},
		{http.MethodPost, "/api/v1/templates", map[string]any{"name": "x", "platform": "custom_nothing"}},
		{http.MethodPut, fmt.Sprintf("/api/v1/templates/%d", tpl.id()), map[string]any{"platform": "custom_nothing"}},
	} {
		r := e.do(c.method, c.path, e.adminKey, c.body)
		e.expect(r, 422, "VALIDATION_ERROR")
		if !hasField(r.fieldErrors(), "body:platform") || !strings.Contains(string(r.Raw), "custom_acme_os") {
			t.Errorf("%s %s: %s", c.method, c.path, r.Raw)
		}
	}
	// Neither form: still a clear list rather than "matched no schema".
	r = e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "y", "platform": "ios"})
	e.expect(r, 422, "VALIDATION_ERROR")
	if !strings.Contains(string(r.Raw), "cisco_ios") || !strings.Contains(string(r.Raw), "custom_acme_os") {
		t.Errorf("bad platform message: %s", r.Raw)
	}
}
