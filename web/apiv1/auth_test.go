package apiv1_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"backupd/app/auth"
	"backupd/db"
	"backupd/internal/dbtest"
)

// Authentication rules 1, 4, 5, 6, 7, 8 and the order of checks.

func TestAuthMissingKeyIs401(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/v1/groups", "/api/v1/credentials/1", "/api/v1/templates", "/api/v1/no-such-thing"} {
		e.expect(e.do(http.MethodGet, path, "", nil), 401, "UNAUTHORIZED")
	}
}

func TestAuthInvalidKeysAre401(t *testing.T) {
	e := newEnv(t)
	prefixOnly := e.adminKey[:len(auth.KeyScheme)+10]
	for name, key := range map[string]string{
		"garbage":           "not-a-key",
		"right prefix only": prefixOnly + "_" + strings.Repeat("A", 43),
		"truncated":         e.adminKey[:len(e.adminKey)-1],
		"extended":          e.adminKey + "x",
		"unknown prefix":    auth.KeyScheme + "0000000000_" + strings.Repeat("B", 43),
		"sql":               "' OR 1=1 --",
	} {
		t.Run(name, func(t *testing.T) {
			e.expect(e.do(http.MethodGet, "/api/v1/groups", key, nil), 401, "UNAUTHORIZED")
		})
	}
}

func TestAuthRevokedExpiredAndInactiveOwnerAre401(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	revoked := e.keyFor("admin")
	k, _ := auth.APIKeyPrefix(revoked)
	stored, err := e.store.APIKeyByPrefix(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups", revoked, nil), 200, "")
	if err := e.store.RevokeAPIKey(ctx, stored.ID); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups", revoked, nil), 401, "UNAUTHORIZED")

	expired := e.keyFor("admin")
	p, _ := auth.APIKeyPrefix(expired)
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE api_keys SET expires_at = '2001-01-01T00:00:00' WHERE prefix = ?`, p); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups", expired, nil), 401, "UNAUTHORIZED")

	deleted := e.keyFor("admin")
	p, _ = auth.APIKeyPrefix(deleted)
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `DELETE FROM api_keys WHERE prefix = ?`, p); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups", deleted, nil), 401, "UNAUTHORIZED")

	bob := e.user("bob", auth.RoleViewer)
	e.expect(e.do(http.MethodGet, "/api/v1/groups", bob, nil), 200, "")
	if err := e.store.SetUserActive(ctx, "bob", false); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups", bob, nil), 401, "UNAUTHORIZED")
}

func TestAuthKeyNeverReadFromQueryOrCookie(t *testing.T) {
	e := newEnv(t)
	e.expect(e.do(http.MethodGet, "/api/v1/groups?api_key="+e.adminKey, "", nil), 401, "UNAUTHORIZED")
	e.expect(e.do(http.MethodGet, "/api/v1/groups?X-API-Key="+e.adminKey, "", nil), 401, "UNAUTHORIZED")
	e.expect(e.do(http.MethodGet, "/api/v1/groups", "", nil, "Cookie", "X-API-Key="+e.adminKey+"; session="+e.adminKey), 401, "UNAUTHORIZED")
	e.expect(e.do(http.MethodGet, "/api/v1/groups", "", nil, "Authorization", "Bearer "+e.adminKey), 401, "UNAUTHORIZED")
}

func TestAuthMissingPermissionIs403(t *testing.T) {
	e := newEnv(t)
	viewOnly := e.keyFor("admin", "groups.view")
	e.expect(e.do(http.MethodGet, "/api/v1/groups", viewOnly, nil), 200, "")
	e.expect(e.do(http.MethodPost, "/api/v1/groups", viewOnly, map[string]any{"name": "x"}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, "/api/v1/credentials", viewOnly, nil), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, "/api/v1/templates", viewOnly, nil), 403, "PERMISSION_DENIED")

	// Built-in roles: a Backup reader reads no group, credential or template.
	reader := e.user("reader", auth.RoleBackupReader)
	for _, path := range []string{"/api/v1/groups", "/api/v1/groups/tree", "/api/v1/credentials", "/api/v1/templates"} {
		e.expect(e.do(http.MethodGet, path, reader, nil), 403, "PERMISSION_DENIED")
	}
	// A Viewer reads but never writes.
	viewer := e.user("viewer", auth.RoleViewer)
	e.expect(e.do(http.MethodGet, "/api/v1/credentials", viewer, nil), 200, "")
	e.expect(e.do(http.MethodPost, "/api/v1/credentials", viewer, map[string]any{"name": "c", "username": "u"}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodDelete, "/api/v1/templates/1", viewer, nil), 403, "PERMISSION_DENIED")
}

// A key is never worth more than its owner: narrowing to permissions the
// owner lacks grants nothing, and demoting the owner demotes the key at
// once.
func TestAuthEffectivePermissionsAreKeyAndOwner(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.user("carol", auth.RoleViewer)
	overreach := e.keyFor("carol", "groups.view", "groups.create")
	e.expect(e.do(http.MethodGet, "/api/v1/groups", overreach, nil), 200, "")
	e.expect(e.do(http.MethodPost, "/api/v1/groups", overreach, map[string]any{"name": "x"}), 403, "PERMISSION_DENIED")

	e.user("dave", auth.RoleOperator)
	dave := e.keyFor("dave")
	e.expect(e.do(http.MethodPost, "/api/v1/groups", dave, map[string]any{"name": "d"}), 201, "")
	reader, err := e.store.RoleByName(ctx, auth.RoleBackupReader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE user_roles SET role_id = ? WHERE user_id = (SELECT id FROM users WHERE username = 'dave')`, reader.ID); err != nil {
		t.Fatal(err)
	}
	e.expect(e.do(http.MethodPost, "/api/v1/groups", dave, map[string]any{"name": "d2"}), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, "/api/v1/groups", dave, nil), 403, "PERMISSION_DENIED")
}

// Key (401) → permission (403) → validation (422) → existence (404) →
// state (409).
func TestAuthOrderOfChecks(t *testing.T) {
	e := newEnv(t)
	viewOnly := e.keyFor("admin", "groups.view")
	bad := `{"name": 5, "bogus": true}`
	e.expect(e.do(http.MethodPut, "/api/v1/groups/999", "", bad), 401, "UNAUTHORIZED")
	e.expect(e.do(http.MethodPut, "/api/v1/groups/999", viewOnly, bad), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodPut, "/api/v1/groups/999", e.adminKey, bad), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodPut, "/api/v1/groups/999", e.adminKey, `{"name":"ok"}`), 404, "RESOURCE_GROUP_NOT_FOUND")
	e.expect(e.do(http.MethodPut, "/api/v1/groups/abc", e.adminKey, `{"name":"ok"}`), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodPost, "/api/v1/nothing", "", bad), 401, "UNAUTHORIZED")
}

func TestAuthKeyLastUsedIsRecorded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	keys := auth.NewKeyAuthenticator(e.store, nil)
	if _, err := keys.Authenticate(ctx, e.adminKey); err != nil {
		t.Fatal(err)
	}
	if err := keys.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p, _ := auth.APIKeyPrefix(e.adminKey)
	k, err := e.store.APIKeyByPrefix(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if k.LastUsedAt == nil {
		t.Fatal("last_used_at not recorded")
	}
	if _, err := db.ParseTime(*k.LastUsedAt); err != nil {
		t.Fatal(err)
	}
}
