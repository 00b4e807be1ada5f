package cli_test

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

// pgPassword is put into test URLs: the development server trusts
// 127.0.0.1 and never asks for it, so it must only never show up.
const pgPassword = "hunter2-not-for-logs"

// pgLocation is a fresh, migrated PostgreSQL database for t, its URL
// carrying pgPassword; the test is skipped without BACKUPD_TEST_POSTGRES.
func pgLocation(t *testing.T) string {
	t.Helper()
	if !dbtest.Postgres() {
		t.Skipf("PostgreSQL only: set %s", dbtest.Env)
	}
	u, err := url.Parse(dbtest.Location(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	return u.String()
}

func TestDBFlagRefusesWhatIsNotPostgreSQL(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"other scheme", []string{"--db", "mysql://u:" + pgPassword + "@127.0.0.1/x"}, nil, `it names "mysql://"`},
		{"a path", []string{"--db", "/var/lib/" + pgPassword}, nil, "it is not a URL"},
		{"no database", []string{"--db", "postgres://u:" + pgPassword + "@127.0.0.1:1/"}, nil, "names no database"},
		{"from the environment", nil, []string{"BACKUPD_DB=sqlite://" + pgPassword}, "--db (BACKUPD_DB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			r := mustFail(t, call{env: tc.env}, []string{tc.want, "PostgreSQL URL"}, append([]string{"key", "list", "--data", data}, tc.args...)...)
			if strings.Contains(r.stderr+r.stdout, pgPassword) {
				t.Errorf("the refused --db value was repeated, password and all:\n%s", r)
			}
			if _, err := os.Stat(filepath.Join(data, db.FileName)); err == nil {
				t.Errorf("a bad --db fell back to SQLite in %s", data)
			}
		})
	}
	// serve checks it the same way.
	mustFail(t, call{}, []string{"PostgreSQL URL"}, "serve", "--data", t.TempDir(), "--db", "mariadb://x/y", "--listen", "127.0.0.1:0")
	// An unreachable server is named without its password.
	r := mustFail(t, call{}, []string{"postgres://u:xxxxx@127.0.0.1:1/backupd"}, "key", "list", "--data", t.TempDir(), "--db", "postgres://u:"+pgPassword+"@127.0.0.1:1/backupd?connect_timeout=2")
	if strings.Contains(r.stderr, pgPassword) {
		t.Errorf("the connection error shows the password:\n%s", r.stderr)
	}
}

func TestPostgresStoreFromTheCommandLine(t *testing.T) {
	loc := pgLocation(t)
	data := t.TempDir()

	r := mustRun(t, call{}, "migrate", "status", "--db", loc, "--data", data)
	if !strings.Contains(r.stdout, "00017") || !strings.Contains(r.stdout, "applied") {
		t.Errorf("migrate status on PostgreSQL:\n%s", r)
	}
	mustRun(t, call{}, "migrate", "--db", loc, "--data", data)

	// BACKUPD_DB works as --db does.
	r = mustRun(t, call{env: []string{"BACKUPD_DB=" + loc}}, "key", "create", "--data", data, "--name", "ci")
	if !keyLine.MatchString(r.stdout) || !strings.Contains(r.stderr, adminNotice) {
		t.Fatalf("key create on PostgreSQL:\n%s", r)
	}
	key := strings.TrimSpace(r.stdout)
	if _, err := os.Stat(filepath.Join(data, db.FileName)); err == nil {
		t.Errorf("a SQLite database was created in %s while --db names PostgreSQL", data)
	}
	if _, err := os.Stat(filepath.Join(data, "secret.key")); err != nil {
		t.Errorf("secret.key is not kept in the data directory: %v", err)
	}

	srv := startServe(t, data, "--db", loc)
	if cr := srv.do(t, http.MethodPost, "/api/v1/groups", key, `{"name":"Core"}`); cr.status/100 != 2 {
		t.Fatalf("POST /api/v1/groups: %d %s", cr.status, cr.body)
	}
	p := expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""))
	if p.Pagination.Total != 1 || p.Items[0].Name != "Core" {
		t.Errorf("groups on PostgreSQL: %+v", p)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
	logged := srv.stderr.String()
	if !strings.Contains(logged, `database="`+db.RedactURL(loc)+`"`) {
		t.Errorf("serve does not log the database it runs on:\n%s", logged)
	}
	if strings.Contains(logged, pgPassword) {
		t.Errorf("serve logged the database password:\n%s", logged)
	}

	// The group the server created is what another command reads, also
	// on the read-only path.
	r = mustRun(t, call{}, "user", "list", "--db", loc, "--data", data)
	if !strings.Contains(r.stdout, "admin") {
		t.Errorf("user list on PostgreSQL:\n%s", r)
	}
	if r := run(t, call{}, "config", "search", "hostname", "--db", loc, "--data", data); r.code != 1 || r.stderr != "" {
		t.Errorf("config search on an empty PostgreSQL store: want exit 1 (no match) and nothing on stderr:\n%s", r)
	}
}

func TestPostgresNodeWithAnotherKeyRefusesToStart(t *testing.T) {
	loc := pgLocation(t)
	first, second := t.TempDir(), t.TempDir()
	mustRun(t, call{}, "key", "create", "--db", loc, "--data", first, "--name", "first")

	r := mustFail(t, call{}, []string{"secret key is not the one", "copy DATA/secret.key from the first node"},
		"key", "list", "--db", loc, "--data", second)
	if strings.Contains(r.stderr, pgPassword) {
		t.Errorf("the refusal shows the database password:\n%s", r.stderr)
	}
	mustFail(t, call{}, []string{"secret key is not the one"}, "serve", "--db", loc, "--data", second, "--listen", "127.0.0.1:0")
	mustFail(t, call{env: []string{"BACKUPD_SECRET_KEY=" + strings.Repeat("ab", 32)}}, []string{"secret key is not the one"},
		"key", "list", "--db", loc, "--data", first)

	// Neither key nor its fingerprint's full text is shown, and the key
	// never leaves the data directory: what is stored is an HMAC of it.
	k, err := os.ReadFile(filepath.Join(first, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(first, "secret.key"), filepath.Join(second, "secret.key"))
	r = mustRun(t, call{}, "key", "list", "--db", loc, "--data", second)
	if !strings.Contains(r.stdout, "first") {
		t.Errorf("key list with the first node's key:\n%s", r)
	}
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if _, err := s.GetSetting(t.Context(), "secret_key_fingerprint", &stored); err != nil || len(stored) != 64 {
		t.Fatalf("secret_key_fingerprint = %q, %v; want 64 hex digits", stored, err)
	}
	if strings.Contains(stored, string(k)) || strings.Contains(stored, hex.EncodeToString(k)) {
		t.Error("the stored fingerprint holds the key")
	}
}
