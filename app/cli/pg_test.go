package cli_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/lib/pq"

	"backupd/db"
	"backupd/db/engine"
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
	if !strings.Contains(logged, `database="`+engine.RedactURL(loc)+`"`) {
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

// emptyPostgresDatabase creates an empty database (no schema) on the test
// server, dropped when t ends, and returns its URL with pgPassword.
func emptyPostgresDatabase(t *testing.T) string {
	t.Helper()
	admin, err := sql.Open("postgres", os.Getenv(dbtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "backupd_restore_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(`CREATE DATABASE ` + name + ` TEMPLATE template0 ENCODING 'UTF8'`); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(os.Getenv(dbtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	return u.String()
}

func TestDBBackupOnPostgresIsAPgDumpThatRestores(t *testing.T) {
	loc := pgLocation(t)
	if _, err := exec.LookPath("pg_dump"); err != nil {
		t.Skip("pg_dump is not installed (Debian: postgresql-client)")
	}
	data := t.TempDir()
	mustRun(t, call{stdin: "a-long-enough-password\n"}, "user", "create", "--db", loc, "--data", data, "alice", "--all-groups", "--password-stdin")
	out := filepath.Join(t.TempDir(), "store.pgdump")
	r := mustRun(t, call{}, "db", "backup", "--db", loc, "--data", data, "--out", out)
	if !strings.Contains(r.stdout, "wrote "+out) || !strings.Contains(r.stderr, "secret.key") {
		t.Errorf("db backup on PostgreSQL:\n%s", r)
	}
	if strings.Contains(r.stdout+r.stderr, pgPassword) {
		t.Errorf("db backup shows the database password:\n%s", r)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the dump is mode %o, want 600", st.Mode().Perm())
	}
	head := make([]byte, 5)
	if f, err := os.Open(out); err == nil {
		_, _ = f.Read(head)
		f.Close()
	}
	if string(head) != "PGDMP" {
		t.Fatalf("the dump does not start with pg_dump's custom-format magic: %q", head)
	}
	mustFail(t, call{}, []string{"already exists"}, "db", "backup", "--db", loc, "--data", data, "--out", out)

	// Restored into an empty database, as the help says, it is the store.
	restored := emptyPostgresDatabase(t)
	restore := exec.Command("pg_restore", "--no-owner", "--exit-on-error", "--dbname="+restored, out)
	if b, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, b)
	}
	r = mustRun(t, call{}, "user", "list", "--db", restored, "--data", data)
	if !strings.Contains(r.stdout, "alice") {
		t.Errorf("the restored store lacks the user created before the dump:\n%s", r)
	}
}

func TestDBBackupOnPostgresWithoutPgDump(t *testing.T) {
	loc := pgLocation(t)
	r := mustFail(t, call{env: []string{"PATH=" + t.TempDir()}}, []string{"pg_dump was not found", "postgresql-client"},
		"db", "backup", "--db", loc, "--data", t.TempDir(), "--out", filepath.Join(t.TempDir(), "x"))
	if strings.Contains(r.stderr, pgPassword) {
		t.Errorf("the error shows the password:\n%s", r.stderr)
	}
}

// TestDBBackupHandsPgDumpThePasswordInItsEnvironment runs db backup with a
// pg_dump of our own in PATH that records what it was given: the password
// must be in its environment, not on its command line (which ps shows
// every local user).
func TestDBBackupHandsPgDumpThePasswordInItsEnvironment(t *testing.T) {
	loc := pgLocation(t)
	bin := t.TempDir()
	record := filepath.Join(t.TempDir(), "record")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + record + "\nprintf 'PGPASSWORD=%s\\n' \"$PGPASSWORD\" >> " + record + "\nprintf PGDMP > \"${3#--file=}\"\n"
	if err := os.WriteFile(filepath.Join(bin, "pg_dump"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dump")
	mustRun(t, call{env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}, "db", "backup", "--db", loc, "--data", t.TempDir(), "--out", out)
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	args, env, _ := strings.Cut(string(got), "PGPASSWORD=")
	if strings.Contains(args, pgPassword) {
		t.Errorf("pg_dump's command line holds the password:\n%s", args)
	}
	if strings.TrimSpace(env) != pgPassword {
		t.Errorf("pg_dump's PGPASSWORD = %q, want the URL's password", strings.TrimSpace(env))
	}
	if !strings.Contains(args, "--format=custom") || !strings.Contains(args, "--dbname=postgres://") {
		t.Errorf("pg_dump arguments:\n%s", args)
	}
}

func TestDBRepackOnPostgres(t *testing.T) {
	loc := pgLocation(t)
	data := t.TempDir()
	r := mustRun(t, call{}, "db", "repack", "--vacuum", "--db", loc, "--data", data)
	if !strings.Contains(r.stdout, "packed ") || !strings.Contains(r.stdout, "vacuumed: ") || strings.Contains(r.stdout, "vacuumed: 0 ->") {
		t.Errorf("db repack --vacuum on PostgreSQL:\n%s", r)
	}
}

// TestDBCheckOnPostgres: db check decodes every stored configuration on
// PostgreSQL too, and names the one damaged.
func TestDBCheckOnPostgres(t *testing.T) {
	loc := pgLocation(t)
	data := t.TempDir()
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dev, err := s.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("interface GigabitEthernet0/1\n description uplink\n!\n", 300)
	for i := range 4 {
		addBackup(t, s, dev.ID, day(10+i), fmt.Sprintf("hostname r1\n! revision %d\n%s", i, body), "")
	}
	if r := mustRun(t, call{}, "db", "repack", "--db", loc, "--data", data); !strings.Contains(r.stdout, "packed 3 versions of 1 devices") {
		t.Errorf("db repack on PostgreSQL:\n%s", r)
	}
	if r := mustRun(t, call{}, "db", "check", "--db", loc, "--data", data); strings.TrimSpace(r.stdout) != "ok" {
		t.Errorf("db check on PostgreSQL:\n%s", r)
	}
	var hash string
	if err := dbtest.Peek(t, s).QueryRow(`SELECT hash FROM snapshots WHERE base_id IS NOT NULL ORDER BY id LIMIT 1`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, s).ExecContext(ctx, `UPDATE snapshots SET data = substring(data from 1 for 12) || '\x5a5a'::bytea || substring(data from 15) WHERE hash = ?`, hash); err != nil {
		t.Fatal(err)
	}
	r := mustFail(t, call{}, []string{"the database has 1 problems"}, "db", "check", "--db", loc, "--data", data)
	if !strings.Contains(r.stdout, hash) {
		t.Errorf("db check does not name the damaged snapshot:\n%s", r)
	}
}
