package apiv1_test

import (
	"fmt"
	"net/http"
	"testing"
)

// An id an integrator stored never comes to mean another resource: after a
// DELETE, the next POST gets a new id, even when the deleted one was the
// highest.
func TestDeletedIDsAreNotReused(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		path string
		body func(n int) map[string]any
	}{
		{"/api/v1/credentials", func(n int) map[string]any { return map[string]any{"name": fmt.Sprint("lab-", n), "username": "netops"} }},
		{"/api/v1/templates", func(n int) map[string]any {
			return map[string]any{"name": fmt.Sprint("t-", n), "platform": "cisco_ios", "commands": "show running-config"}
		}},
		{"/api/v1/groups", func(n int) map[string]any { return map[string]any{"name": fmt.Sprint("g-", n)} }},
		{"/api/v1/devices", func(n int) map[string]any {
			return map[string]any{"name": fmt.Sprint("d-", n), "host": "192.0.2.1", "platform": "cisco_ios"}
		}},
	} {
		t.Run(c.path, func(t *testing.T) {
			first := e.do(http.MethodPost, c.path, e.adminKey, c.body(1))
			e.expect(first, 201, "")
			old := first.id()
			e.expect(e.do(http.MethodDelete, fmt.Sprintf("%s/%d", c.path, old), e.adminKey, nil), 200, "")
			second := e.do(http.MethodPost, c.path, e.adminKey, c.body(2))
			e.expect(second, 201, "")
			if second.id() == old {
				t.Fatalf("POST %s after deleting id %d gave the same id again", c.path, old)
			}
			if second.id() < old {
				t.Fatalf("POST %s after deleting id %d gave a lower id %d", c.path, old, second.id())
			}
		})
	}
}
