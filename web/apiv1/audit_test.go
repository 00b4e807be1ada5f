package apiv1_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Every change through the API is audited: who, which key, what, when,
// request id, source address; never a secret value.
func TestAuditRecordsEveryChange(t *testing.T) {
	e := newEnv(t)
	g := e.group("G", nil)
	e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", g), e.adminKey, map[string]any{"name": "G2"}, "X-Request-ID", "req-rename")
	c := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "c", "username": "u", "password": "audit-secret-1"}).id()
	e.do(http.MethodPut, fmt.Sprintf("/api/v1/credentials/%d", c), e.adminKey, map[string]any{"password": "audit-secret-2", "enable_password": "audit-secret-3"})
	tpl := e.do(http.MethodPost, "/api/v1/templates", e.adminKey, map[string]any{"name": "t", "platform": "cisco_ios"}).id()
	e.do(http.MethodPut, fmt.Sprintf("/api/v1/templates/%d", tpl), e.adminKey, map[string]any{"commands": "show run"})
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios", "credential_id": c}).id()
	e.do(http.MethodPut, fmt.Sprintf("/api/v1/devices/%d", d), e.adminKey, map[string]any{"remarks": "moved"})
	e.do(http.MethodDelete, fmt.Sprintf("/api/v1/devices/%d", d), e.adminKey, nil)
	e.do(http.MethodDelete, fmt.Sprintf("/api/v1/templates/%d", tpl), e.adminKey, nil)
	e.do(http.MethodDelete, fmt.Sprintf("/api/v1/credentials/%d", c), e.adminKey, nil)
	e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", g), e.adminKey, nil)
	// Refused and read-only requests leave no entry.
	e.do(http.MethodGet, "/api/v1/groups", e.adminKey, nil)
	e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": ""})

	entries, total, err := e.store.ListAudit(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for i := len(entries) - 1; i >= 0; i-- {
		actions = append(actions, entries[i].Action)
	}
	want := "group.create group.update credential.create credential.update template.create template.update device.create device.update device.delete template.delete credential.delete group.delete"
	if strings.Join(actions, " ") != want || total != 12 {
		t.Fatalf("audit actions:\n %s\nwant\n %s", strings.Join(actions, " "), want)
	}
	for _, en := range entries {
		if en.Username != "admin" || en.KeyID == nil || en.UserID == nil || en.Interface != "api" || en.RequestID == "" ||
			!strings.HasPrefix(en.RemoteAddr, "127.0.0.1:") || en.At == "" || en.TargetID == "" {
			t.Errorf("incomplete entry: %+v", en)
		}
		if strings.Contains(fmt.Sprint(en.Details), "audit-secret") {
			t.Errorf("secret in audit details: %+v", en.Details)
		}
	}
	rename := entries[len(entries)-2]
	if rename.RequestID != "req-rename" || fmt.Sprint(rename.Details["fields"]) != "[name]" {
		t.Errorf("rename entry: %+v", rename)
	}
	credUpdate := entries[len(entries)-4]
	if fmt.Sprint(credUpdate.Details["fields"]) != "[enable_password password]" {
		t.Errorf("credential update should name the fields only: %+v", credUpdate.Details)
	}
	if strings.Contains(e.logs.String(), "audit-secret") {
		t.Error("secret in the server log")
	}
}
