package apiv1_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

// Contract "Credentials" rules 1-3: partial PUT, in-use delete, secrets
// never echoed; PRODUCT.md §3: sealed at rest, null clears.

const (
	testPassword = "Pa55-word-never-shown"
	testEnable   = "En4ble-never-shown"
	testKey      = "-----BEGIN OPENSSH PRIVATE KEY-----never-shown"
)

func (e *env) storedCredential(id int64) db.Credential {
	e.t.Helper()
	c, err := e.store.GetCredential(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) open(sealed []byte, purpose string) string {
	e.t.Helper()
	if sealed == nil {
		return "<nil>"
	}
	v, err := e.sealer.Open(sealed, purpose)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func TestCredentialsSecretsSealedAndNeverReturned(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{
		"name": "lab", "username": "netops", "password": testPassword,
		"enable_password": testEnable, "private_key": testKey, "remarks": "core routers",
	})
	e.expect(r, 201, "")
	want := []string{"created_at", "id", "name", "remarks", "username"}
	if len(r.JSON) != len(want) {
		t.Errorf("credential fields %v, want exactly %v", r.JSON, want)
	}
	for _, k := range want {
		if _, ok := r.JSON[k]; !ok {
			t.Errorf("missing field %s", k)
		}
	}
	id := r.id()
	e.do(http.MethodGet, fmt.Sprintf("/api/v1/credentials/%d", id), e.adminKey, nil)
	e.do(http.MethodGet, "/api/v1/credentials", e.adminKey, nil)
	e.do(http.MethodPut, fmt.Sprintf("/api/v1/credentials/%d", id), e.adminKey, map[string]any{"password": testPassword + "2"})

	c := e.storedCredential(id)
	for _, sealed := range [][]byte{c.Password, c.EnablePassword, c.PrivateKey} {
		if bytes.Contains(sealed, []byte("never-shown")) {
			t.Fatal("secret stored in plain text")
		}
	}
	if got := e.open(c.Password, "credential.password"); got != testPassword+"2" {
		t.Errorf("password opens to %q", got)
	}
	if got := e.open(c.EnablePassword, "credential.enable_password"); got != testEnable {
		t.Errorf("enable password opens to %q", got)
	}
	// The raw database file holds no secret either.
	raw := dumpDatabase(t, e.store)
	if strings.Contains(raw, "never-shown") {
		t.Error("a secret is readable in the database file")
	}
	for where, text := range map[string]string{"responses": e.bodies.String(), "logs": e.logs.String()} {
		if strings.Contains(text, "never-shown") {
			t.Errorf("a secret appears in the %s", where)
		}
	}
}

func dumpDatabase(t *testing.T, store *db.Store) string {
	t.Helper()
	rows, err := dbtest.Peek(t, store).Query(`SELECT name, username, password, enable_password, private_key, remarks FROM credentials`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var n, u, p, en, k, rem []byte // NULL reads as empty
		if err := rows.Scan(&n, &u, &p, &en, &k, &rem); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s %s %s %s\n", n, u, p, en, k, rem)
	}
	return b.String()
}

func TestCredentialsPutKeepsOmittedAndNullClears(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{
		"name": "lab", "username": "netops", "password": testPassword, "enable_password": testEnable, "remarks": "keep me",
	})
	id := r.id()
	path := fmt.Sprintf("/api/v1/credentials/%d", id)

	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"username": "ops2"})
	e.expect(r, 200, "")
	if r.JSON["name"] != "lab" || r.JSON["username"] != "ops2" || r.JSON["remarks"] != "keep me" {
		t.Fatalf("omitted fields not kept: %s", r.Raw)
	}
	c := e.storedCredential(id)
	if e.open(c.Password, "credential.password") != testPassword || e.open(c.EnablePassword, "credential.enable_password") != testEnable {
		t.Fatal("omitted secrets not kept")
	}

	r = e.do(http.MethodPut, path, e.adminKey, `{"enable_password": null, "remarks": null}`)
	e.expect(r, 200, "")
	c = e.storedCredential(id)
	if c.EnablePassword != nil || c.Remarks != nil {
		t.Fatal("null did not clear enable_password / remarks")
	}
	if e.open(c.Password, "credential.password") != testPassword {
		t.Fatal("clearing one secret touched another")
	}

	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"enable_password": "new-enable"})
	e.expect(r, 200, "")
	if e.open(e.storedCredential(id).EnablePassword, "credential.enable_password") != "new-enable" {
		t.Fatal("enable_password not replaced")
	}
	e.expect(e.do(http.MethodPut, path, e.adminKey, map[string]any{"name": "  "}), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodPut, path, e.adminKey, map[string]any{"pasword": "typo"}), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodPut, "/api/v1/credentials/999", e.adminKey, map[string]any{"username": "x"}), 404, "RESOURCE_CREDENTIAL_NOT_FOUND")
}

func TestCredentialsNameUniqueAndNotFound(t *testing.T) {
	e := newEnv(t)
	e.expect(e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "lab", "username": "u"}), 201, "")
	e.expect(e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "LAB", "username": "v"}), 409, "RESOURCE_CREDENTIAL_NAME_EXISTS")
	second := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "other", "username": "v"})
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/credentials/%d", second.id()), e.adminKey, map[string]any{"name": "lab"}), 409, "RESOURCE_CREDENTIAL_NAME_EXISTS")
	e.expect(e.do(http.MethodGet, "/api/v1/credentials/999", e.adminKey, nil), 404, "RESOURCE_CREDENTIAL_NOT_FOUND")
	e.expect(e.do(http.MethodDelete, "/api/v1/credentials/999", e.adminKey, nil), 404, "RESOURCE_CREDENTIAL_NOT_FOUND")
}

func TestCredentialsInUseCannotBeDeleted(t *testing.T) {
	e := newEnv(t)
	used := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "used", "username": "u"}).id()
	free := e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "free", "username": "u"}).id()
	e.device("r1", nil, used, nil)
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/credentials/%d", used), e.adminKey, nil), 409, "RESOURCE_CREDENTIAL_IN_USE")
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/credentials/%d", free), e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/credentials/%d", used), e.adminKey, nil), 200, "")
}
