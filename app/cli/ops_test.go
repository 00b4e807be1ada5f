package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

var metricsURL = regexp.MustCompile(`msg="metrics listening" url=(http://127\.0\.0\.1:\d+/metrics)`)

// TestOperationsWhileServing is the appliance's day two: probes without a
// key, metrics on their own listener, a copy of the database taken while
// the server runs, restored into another directory with its secret.key,
// checked, and served again with the same API key.
func TestOperationsWhileServing(t *testing.T) {
	data := t.TempDir()
	key, _ := createKey(t, data, "--name", "ops")
	srv := startServe(t, data, "--metrics-listen", "127.0.0.1:0")

	for _, path := range []string{"/healthz", "/readyz"} {
		if r := srv.do(t, http.MethodGet, path, "", ""); r.status != http.StatusOK {
			t.Errorf("GET %s without a key: %d %s", path, r.status, r.body)
		}
	}
	if cr := srv.do(t, http.MethodPost, "/api/v1/groups", key, `{"name":"Kept"}`); cr.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/groups: %d %s", cr.status, cr.body)
	}
	expectGroupPage(t, srv.do(t, http.MethodGet, "/api/v1/groups", key, ""))

	// Metrics.
	m := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("serve did not log the metrics address:\n%s", srv.stderr)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`backupd_http_requests_total{route="GET /api/v1/groups",status="200"} 1`,
		`backupd_http_requests_total{route="POST /api/v1/groups",status="201"} 1`,
		`backupd_http_request_duration_seconds_bucket{route="GET /readyz"`,
		`backupd_jobs{state="queued"} 0`,
		`backupd_jobs{state="running"} 0`,
		`backupd_devices{status="unreachable"} 0`,
		`backupd_database_size_bytes `,
		`backupd_store_up 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if pub := srv.do(t, http.MethodGet, "/metrics", "", ""); strings.Contains(string(pub.body), "backupd_jobs") {
		t.Error("the public listener serves the metrics; they belong on --metrics-listen only")
	}

	// A copy while the server runs, never over an existing file.
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	r := mustRun(t, call{}, "db", "backup", "--data", data, "--out", copyPath)
	if !strings.Contains(r.stdout, "wrote "+copyPath) || !strings.Contains(r.stderr, "secret.key") {
		t.Errorf("db backup output:\n%s", r)
	}
	mustFail(t, call{}, []string{"already exists"}, "db", "backup", "--data", data, "--out", copyPath)
	mustFail(t, call{}, []string{"--out FILE is required"}, "db", "backup", "--data", data)
	mustFail(t, call{}, []string{"no database in"}, "db", "check", "--data", filepath.Join(t.TempDir(), "nothing"))
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}

	// Restore elsewhere: the copy as the database, beside the same key.
	restored := t.TempDir()
	copyFile(t, copyPath, filepath.Join(restored, db.FileName))
	copyFile(t, filepath.Join(data, "secret.key"), filepath.Join(restored, "secret.key"))
	if r := mustRun(t, call{}, "db", "check", "--data", restored); strings.TrimSpace(r.stdout) != "ok" {
		t.Errorf("db check on the restored copy: %s", r)
	}
	again := startServe(t, restored)
	p := expectGroupPage(t, again.do(t, http.MethodGet, "/api/v1/groups", key, ""))
	if len(p.Items) != 1 || p.Items[0].Name != "Kept" {
		t.Errorf("restored groups: %+v", p.Items)
	}
	if code := again.stop(t); code != 0 {
		t.Fatalf("restored serve exited %d", code)
	}

	// A database from a newer release is refused with what to do.
	s := openStore(t, restored)
	if _, err := dbtest.Poke(t, s).ExecContext(t.Context(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	mustFail(t, call{}, []string{"newer than this binary", "run a newer backupd"}, "serve", "--data", restored, "--listen", "127.0.0.1:0")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRepackAndCheck converts a database written before deltas: db repack
// stores the older versions as deltas, db check decodes every one against
// its hash, and finds the one damaged afterwards.
func TestRepackAndCheck(t *testing.T) {
	data := t.TempDir()
	ctx := t.Context()
	store, err := db.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := store.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("interface GigabitEthernet0/1\n description uplink\n!\n", 300)
	start := time.Now().Add(-time.Hour)
	for i := range 10 {
		hash, err := store.PutSnapshot(ctx, fmt.Sprintf("hostname r1\n! revision %d\n%s", i, body))
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(time.Duration(i) * time.Minute)
		if err := store.InsertBackup(ctx, db.Backup{ID: fmt.Sprintf("b%d", i), DeviceID: dev.ID, StartedAt: at, FinishedAt: &at,
			Success: true, SnapshotHash: &hash, Trigger: queue.TriggerCLI}); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	r := mustRun(t, call{}, "db", "repack", "--data", data, "--vacuum")
	if !strings.Contains(r.stdout, "packed 9 versions of 1 devices") || !strings.Contains(r.stdout, "vacuumed: ") {
		t.Errorf("db repack output:\n%s", r)
	}
	if r := mustRun(t, call{}, "db", "check", "--data", data); strings.TrimSpace(r.stdout) != "ok" {
		t.Errorf("db check after repack:\n%s", r)
	}
	if r := mustRun(t, call{}, "db", "repack", "--data", data); !strings.Contains(r.stdout, "packed 0 versions") {
		t.Errorf("second db repack:\n%s", r)
	}

	// A flipped byte in one delta.
	store, err = db.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := dbtest.Peek(t, store).QueryRow(`SELECT hash FROM snapshots WHERE base_id IS NOT NULL ORDER BY id LIMIT 1`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.Poke(t, store).ExecContext(ctx, `UPDATE snapshots SET data = substr(data, 1, 12) || x'5a5a' || substr(data, 15) WHERE hash = ?`, hash); err != nil {
		t.Fatal(err)
	}
	store.Close()
	r = mustFail(t, call{}, []string{"the database has 1 problems"}, "db", "check", "--data", data)
	if !strings.Contains(r.stdout, "snapshot "+hash) {
		t.Errorf("db check does not name the damaged snapshot:\n%s", r)
	}
}
