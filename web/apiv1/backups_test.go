package apiv1_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/app/auth"
	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
)

// Contract "Backups" rules 1-6 and PRODUCT.md §3's time zone decision.

// backup records an attempt; text "" means no snapshot.
func (e *env) backup(deviceID int64, started time.Time, success bool, text, errMsg string) string {
	e.t.Helper()
	ctx := context.Background()
	b := db.Backup{ID: uuid.NewString(), DeviceID: deviceID, StartedAt: started, Success: success, Trigger: queue.TriggerSchedule}
	finished := started.Add(3 * time.Second)
	b.FinishedAt = &finished
	if text != "" {
		hash, err := e.store.PutSnapshot(ctx, text)
		if err != nil {
			e.t.Fatal(err)
		}
		b.SnapshotHash = &hash
	}
	if errMsg != "" {
		b.ErrorMessage = &errMsg
	}
	if err := e.store.InsertBackup(ctx, b); err != nil {
		e.t.Fatal(err)
	}
	return b.ID
}

func TestBackupsHistoryNewestFirstAndPaged(t *testing.T) {
	e := newEnv(t)
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios"}).id()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var want []string
	for i := 0; i < 25; i++ {
		want = append([]string{e.backup(d, base.Add(time.Duration(i)*time.Hour), true, fmt.Sprintf("hostname r1\n! v%d\n", i%3), "")}, want...)
	}
	path := fmt.Sprintf("/api/v1/devices/%d/backups", d)
	r := e.do(http.MethodGet, path, e.adminKey, nil)
	e.expect(r, 200, "")
	p := r.JSON["pagination"].(map[string]any)
	if p["limit"] != 10.0 || p["total"] != 25.0 || p["total_pages"] != 3.0 || p["has_next"] != true {
		t.Fatalf("default page: %v", p)
	}
	items := r.JSON["items"].([]any)
	for i, it := range items {
		if it.(map[string]any)["id"] != want[i] {
			t.Fatalf("item %d is %v, want %s (newest first)", i, it.(map[string]any)["id"], want[i])
		}
	}
	first := items[0].(map[string]any)
	if first["started_at"] != "2026-03-02T12:00:00" || first["finished_at"] != "2026-03-02T12:00:03" || first["success"] != true || first["error_message"] != nil {
		t.Errorf("record: %v", first)
	}
	if len(first) != 6 {
		t.Errorf("backup record has fields beyond the contract: %v", first)
	}
	r = e.do(http.MethodGet, path+"?page=3&limit=10", e.adminKey, nil)
	if len(r.JSON["items"].([]any)) != 5 {
		t.Errorf("last page: %s", r.Raw)
	}
	r = e.do(http.MethodGet, path+"?limit=200", e.adminKey, nil)
	if len(r.JSON["items"].([]any)) != 25 {
		t.Errorf("limit 200: %d items", len(r.JSON["items"].([]any)))
	}
	e.expect(e.do(http.MethodGet, path+"?limit=201", e.adminKey, nil), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodGet, path+"?page=0", e.adminKey, nil), 422, "VALIDATION_ERROR")
	other := e.newDevice(map[string]any{"name": "r2", "host": "10.0.0.2", "platform": "cisco_ios"}).id()
	r = e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d/backups", other), e.adminKey, nil)
	if total(r) != 0 || r.JSON["pagination"].(map[string]any)["total_pages"] != 1.0 {
		t.Errorf("empty history: %s", r.Raw)
	}
}

func TestBackupsTimeZone(t *testing.T) {
	e := newEnv(t)
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios"}).id()
	e.backup(d, time.Date(2026, 3, 1, 20, 30, 0, 0, time.UTC), true, "x", "")
	path := fmt.Sprintf("/api/v1/devices/%d/backups", d)
	started := func(r *response) any { return r.JSON["items"].([]any)[0].(map[string]any)["started_at"] }

	r := e.do(http.MethodGet, path, e.adminKey, nil)
	if started(r) != "2026-03-01T20:30:00" || r.Header.Get("X-Timezone") != "UTC" {
		t.Errorf("server zone (UTC here): %v, header %q", started(r), r.Header.Get("X-Timezone"))
	}
	r = e.do(http.MethodGet, path, e.adminKey, nil, "X-Timezone", "Asia/Shanghai")
	if started(r) != "2026-03-02T04:30:00" || r.Header.Get("X-Timezone") != "Asia/Shanghai" {
		t.Errorf("Asia/Shanghai: %v, header %q", started(r), r.Header.Get("X-Timezone"))
	}
	r = e.do(http.MethodGet, path, e.adminKey, nil, "X-Timezone", "America/New_York")
	if started(r) != "2026-03-01T15:30:00" {
		t.Errorf("America/New_York: %v", started(r))
	}
	for _, bad := range []string{"Mars/Olympus", "../../etc/passwd", "Local", strings.Repeat("x", 65)} {
		r := e.do(http.MethodGet, path, e.adminKey, nil, "X-Timezone", bad)
		e.expect(r, 422, "VALIDATION_ERROR")
		if !hasField(r.fieldErrors(), "header:X-Timezone") {
			t.Errorf("%q: %v", bad, r.fieldErrors())
		}
	}
}

func TestBackupsContent(t *testing.T) {
	e := newEnv(t)
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios"}).id()
	text := "hostname r1\ninterface Gi0/1\n description uplink – 上联\n"
	ok := e.backup(d, time.Now().Add(-time.Hour), true, text, "")
	failed := e.backup(d, time.Now(), false, "", "login failed: authentication rejected")

	r := e.do(http.MethodGet, "/api/v1/backups/"+ok+"/content", e.adminKey, nil)
	e.expect(r, 200, "")
	if r.JSON["config_text"] != text || len(r.JSON) != 1 {
		t.Errorf("content: %s", r.Raw)
	}
	hist := e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d/backups", d), e.adminKey, nil).JSON["items"].([]any)
	if hist[1].(map[string]any)["config_snapshot_hash"] != snapstore.Hash(text) {
		t.Errorf("config_snapshot_hash is not the SHA-256 of the text: %v", hist[1])
	}
	if f := hist[0].(map[string]any); f["success"] != false || f["error_message"] != "login failed: authentication rejected" || f["config_snapshot_hash"] != nil {
		t.Errorf("failed record: %v", f)
	}
	r = e.do(http.MethodGet, "/api/v1/backups/"+failed+"/content", e.adminKey, nil)
	e.expect(r, 200, "")
	if v, present := r.JSON["config_text"]; !present || v != nil {
		t.Errorf("no text must be null: %s", r.Raw)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+uuid.NewString()+"/content", e.adminKey, nil), 404, "BACKUP_NOT_FOUND")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/not-a-uuid/content", e.adminKey, nil), 422, "VALIDATION_ERROR")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+ok+"'%20OR%20'1'='1/content", e.adminKey, nil), 422, "VALIDATION_ERROR")
}

func TestBackupsScopeAndPermission(t *testing.T) {
	e := newEnv(t)
	east := e.group("East", nil)
	west := e.group("West", nil)
	de := e.newDevice(map[string]any{"name": "e1", "host": "10.0.0.1", "platform": "cisco_ios", "group_id": east}).id()
	dw := e.newDevice(map[string]any{"name": "w1", "host": "10.0.1.1", "platform": "cisco_ios", "group_id": west}).id()
	be := e.backup(de, time.Now(), true, "east config", "")
	bw := e.backup(dw, time.Now(), true, "west config", "")

	reader := e.scopedUser("reader", auth.RoleBackupReader, false, east)
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d/backups", de), reader, nil), 200, "")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+be+"/content", reader, nil), 200, "")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d/backups", dw), reader, nil), 403, "BACKUP_DEVICE_FORBIDDEN")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+bw+"/content", reader, nil), 403, "BACKUP_DEVICE_FORBIDDEN")
	e.expect(e.do(http.MethodGet, "/api/v1/devices/9999/backups", reader, nil), 404, "BACKUP_DEVICE_NOT_FOUND")
	// A backups-only key reads nothing else.
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", de), reader, nil), 403, "PERMISSION_DENIED")
	// Keys without backups.view read no history.
	noBackups := e.keyFor("admin", "devices.view")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d/backups", de), noBackups, nil), 403, "PERMISSION_DENIED")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+be+"/content", noBackups, nil), 403, "PERMISSION_DENIED")
	// Content never reaches the server log.
	if strings.Contains(e.logs.String(), "east config") || strings.Contains(e.logs.String(), "west config") {
		t.Error("configuration text in the log")
	}
	// Deleting a device removes its history.
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/devices/%d", dw), e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, "/api/v1/backups/"+bw+"/content", e.adminKey, nil), 404, "BACKUP_NOT_FOUND")
}

func TestStats(t *testing.T) {
	e := newEnv(t)
	g := e.group("G", nil)
	e.do(http.MethodPost, "/api/v1/credentials", e.adminKey, map[string]any{"name": "c", "username": "u"})
	d1 := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios", "group_id": g}).id()
	d2 := e.newDevice(map[string]any{"name": "r2", "host": "10.0.0.2", "platform": "cisco_ios", "enabled": false}).id()
	e.setStatus(d1, "reachable")
	e.setStatus(d2, "unreachable")
	old := time.Now().Add(-72 * time.Hour)
	e.backup(d1, old, true, "config one", "")
	e.backup(d1, time.Now().Add(-time.Hour), true, "config one", "")
	e.backup(d2, time.Now().Add(-30*time.Minute), false, "", "timeout")
	newest := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	e.backup(d1, newest, true, "config two", "")
	if _, err := dbtest.Poke(t, e.store).ExecContext(context.Background(), `UPDATE backups SET changed = 1 WHERE started_at >= ?`, newest.Format(db.BackupTimeFormat)); err != nil {
		t.Fatal(err)
	}

	scoped := e.scopedUser("viewer", auth.RoleViewer, false) // sees no group; stats are not scoped
	r := e.do(http.MethodGet, "/api/v1/stats", scoped, nil, "X-Timezone", "Asia/Shanghai")
	e.expect(r, 200, "")
	s := r.JSON
	devices := s["devices"].(map[string]any)
	backups := s["backups"].(map[string]any)
	recent := backups["last_24h"].(map[string]any)
	storage := s["storage"].(map[string]any)
	for name, c := range map[string][2]any{
		"devices.total": {devices["total"], 2.0}, "devices.enabled": {devices["enabled"], 1.0}, "devices.disabled": {devices["disabled"], 1.0},
		"devices.reachable": {devices["reachable"], 1.0}, "devices.unreachable": {devices["unreachable"], 1.0}, "devices.unknown": {devices["unknown"], 0.0},
		"groups": {s["groups"], 1.0}, "credentials": {s["credentials"], 1.0}, "templates": {s["templates"], 0.0},
		"backups.total": {backups["total"], 4.0}, "backups.succeeded": {backups["succeeded"], 3.0}, "backups.failed": {backups["failed"], 1.0},
		"last_24h.total": {recent["total"], 3.0}, "last_24h.succeeded": {recent["succeeded"], 2.0}, "last_24h.failed": {recent["failed"], 1.0}, "last_24h.changed": {recent["changed"], 1.0},
		"storage.snapshots": {storage["snapshots"], 2.0}, "storage.raw_bytes": {storage["raw_bytes"], float64(len("config one") + len("config two"))},
		"backups.last_backup_at": {backups["last_backup_at"], newest.In(time.FixedZone("CST", 8*3600)).Format(db.TimeFormat)},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	if storage["stored_bytes"].(float64) <= 0 {
		t.Error("stored_bytes not counted")
	}
	// The device resource says when the configuration last changed (UTC,
	// whatever X-Timezone says); null when it never has.
	for id, want := range map[int64]any{d1: newest.Format(db.TimeFormat), d2: nil} {
		r := e.do(http.MethodGet, fmt.Sprintf("/api/v1/devices/%d", id), e.adminKey, nil, "X-Timezone", "Asia/Shanghai")
		e.expect(r, 200, "")
		if got := r.JSON["last_changed_at"]; got != want {
			t.Errorf("device %d: last_changed_at %v, want %v", id, got, want)
		}
	}
	e.expect(e.do(http.MethodGet, "/api/v1/stats", e.keyFor("admin", "devices.view"), nil), 403, "PERMISSION_DENIED")
	// Counters follow deletes.
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/devices/%d", d2), e.adminKey, nil), 200, "")
	r = e.do(http.MethodGet, "/api/v1/stats", e.adminKey, nil)
	if b := r.JSON["backups"].(map[string]any); b["total"] != 3.0 || b["failed"] != 0.0 {
		t.Errorf("after delete: %v", b)
	}
}

// The content is the stored text, secrets included, as the contract
// says, until an administrator turns masking on for the API: then a key
// without configs.reveal_secrets gets the secrets masked, and a read in
// clear text by one with it is audited.
func TestBackupsContentSecrets(t *testing.T) {
	e := newEnv(t)
	d := e.newDevice(map[string]any{"name": "r1", "host": "10.0.0.1", "platform": "cisco_ios"}).id()
	text := "hostname r1\nsnmp-server community ApiC0mmunity RO\nend\n"
	id := e.backup(d, time.Now().Add(-time.Hour), true, text, "")
	path := "/api/v1/backups/" + id + "/content"
	narrow := e.keyFor("admin", "backups.view")
	for _, key := range []string{e.adminKey, narrow} {
		if r := e.do(http.MethodGet, path, key, nil); r.JSON["config_text"] != text {
			t.Fatalf("masking off: %s", r.Raw)
		}
	}
	if err := e.store.PutSetting(context.Background(), db.SettingSecretMasking, db.SecretMasking{API: true}); err != nil {
		t.Fatal(err)
	}
	r := e.do(http.MethodGet, path, narrow, nil)
	got, _ := r.JSON["config_text"].(string)
	if strings.Contains(got, "ApiC0mmunity") || !strings.Contains(got, "snmp-server community <secret:") || strings.Count(got, "\n") != 3 {
		t.Errorf("masked for a key without the permission: %q", got)
	}
	if reveals := countAPIReveals(t, e); reveals != 0 {
		t.Errorf("%d reveals audited for a masked read", reveals)
	}
	if r := e.do(http.MethodGet, path, e.adminKey, nil); r.JSON["config_text"] != text {
		t.Errorf("a key that may reveal: %s", r.Raw)
	}
	if reveals := countAPIReveals(t, e); reveals != 1 {
		t.Errorf("%d reveals audited, want 1", reveals)
	}
}

func countAPIReveals(t *testing.T, e *env) int {
	t.Helper()
	entries, _, err := e.store.ListAudit(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range entries {
		if a.Action == "config.reveal" && a.Interface == "api" {
			n++
		}
	}
	return n
}
