package apiv1_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/internal/dbtest"
)

// Contract "Templates" rules 1-4 and PRODUCT.md §3 (platform validation,
// delete while in use).

func TestTemplatesDefaultCommandsPerPlatform(t *testing.T) {
	e := newEnv(t)
	if n := len(driver.IDs()); n < 22 {
		t.Fatalf("only %d platforms registered", n)
	}
	for _, platform := range driver.IDs() {
		r := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": platform, "platform": platform})
		e.expect(r, 201, "")
		cmds, _ := r.JSON["commands"].(string)
		if strings.TrimSpace(cmds) == "" || cmds != driver.DefaultCommands(platform) {
			t.Errorf("%s: default commands %q", platform, cmds)
		}
	}
	asa := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "asa", "platform": "cisco_asa", "commands": "  \n "})
	if asa.JSON["commands"] != "more system:running-config" {
		t.Errorf("blank commands not defaulted: %s", asa.Raw)
	}
	custom := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "c", "platform": "cisco_ios", "commands": "show version\r\nshow running-config"})
	if custom.JSON["commands"] != "show version\nshow running-config" {
		t.Errorf("custom commands: %s", custom.Raw)
	}
}

func TestTemplatesUnknownPlatformListsAccepted(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "cisco_foo"})
	e.expect(r, 422, "VALIDATION_ERROR")
	if !strings.Contains(string(r.Raw), "juniper_junos") || !strings.Contains(string(r.Raw), "mikrotik_routeros") {
		t.Errorf("422 should list accepted platforms: %s", r.Raw)
	}
	id := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "vyos"}).id()
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/templates/%d", id), e.adminKey, map[string]any{"platform": "nope"}), 422, "VALIDATION_ERROR")
}

func TestTemplatesPutRules(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "cisco_ios", "commands": "show run"})
	path := fmt.Sprintf("/api/v1/templates/%d", r.id())

	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"name": "renamed"})
	e.expect(r, 200, "")
	if r.JSON["platform"] != "cisco_ios" || r.JSON["commands"] != "show run" {
		t.Fatalf("omitted fields not kept: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"platform": "huawei_vrp"})
	if r.JSON["commands"] != "show run" || r.JSON["platform"] != "huawei_vrp" {
		t.Fatalf("platform change without commands must keep commands: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"platform": "juniper_junos", "commands": ""})
	if r.JSON["commands"] != driver.DefaultCommands("juniper_junos") {
		t.Fatalf("empty commands must restore the new platform's defaults: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"commands": ""})
	if r.JSON["commands"] != driver.DefaultCommands("juniper_junos") {
		t.Fatalf("empty commands must restore defaults: %s", r.Raw)
	}
	e.expect(e.do(http.MethodPut, "/api/v1/templates/999", e.adminKey, map[string]any{"name": "x"}), 404, "RESOURCE_TEMPLATE_NOT_FOUND")
	e.expect(e.do(http.MethodGet, "/api/v1/templates/999", e.adminKey, nil), 404, "RESOURCE_TEMPLATE_NOT_FOUND")
	e.expect(e.do(http.MethodDelete, "/api/v1/templates/999", e.adminKey, nil), 404, "RESOURCE_TEMPLATE_NOT_FOUND")
}

func TestTemplatesDeleteWhileInUseFallsBackToDefaults(t *testing.T) {
	e := newEnv(t)
	id := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "cisco_ios"}).id()
	dev := e.device("r1", nil, nil, id)
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/templates/%d", id), e.adminKey, nil), 200, "")
	var tpl sql.NullInt64
	if err := dbtest.Peek(t, e.store).QueryRowContext(context.Background(), `SELECT template_id FROM devices WHERE id = ?`, dev).Scan(&tpl); err != nil {
		t.Fatal(err)
	}
	if tpl.Valid {
		t.Fatalf("device still references deleted template %d", tpl.Int64)
	}
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/templates/%d", id), e.adminKey, nil), 404, "RESOURCE_TEMPLATE_NOT_FOUND")
}
