package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/devsim"
	"backupd/db"
	"backupd/internal/testkit"
)

func scrapeMetrics(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// The server's metrics read the fleet from the database: backups that
// `backupd backup run`, another process, recorded show up in the server's
// scrape. The exposition passes promtool, and no label carries a device
// name, a host, a key or a path.
func TestMetricsCountBackupsOfAnotherProcess(t *testing.T) {
	data := storeDir(t)
	store, ids := simFleet(t, data, 2, devsim.Options{}, devsim.FailWrongPassword)
	key, _ := createKey(t, data, "--name", "metrics")
	srv := startServe(t, data, "--metrics-listen", "127.0.0.1:0")
	m := metricsURL.FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("serve did not log the metrics address:\n%s", srv.stderr)
	}
	values := func(text string) map[string]string {
		samples, _ := testkit.Exposition(t, text)
		out := map[string]string{}
		for _, s := range samples {
			id := s.Name
			if r := s.Labels["result"]; r != "" {
				id += "/" + r
			}
			out[id] = s.Value
		}
		return out
	}
	before := values(scrapeMetrics(t, m[1]))
	for id, want := range map[string]string{
		"backupd_backups_total/success":      "0",
		"backupd_backups_total/failure":      "0",
		"backupd_config_changes_total":       "0",
		"backupd_devices_enabled":            "3",
		"backupd_devices_last_backup_failed": "0",
		"backupd_store_up":                   "1",
	} {
		if before[id] != want {
			t.Errorf("before any backup: %s = %q, want %s", id, before[id], want)
		}
	}

	// An inventory source added through another handle, on demand only
	// (no schedule of the server syncs it) and never synced.
	if _, err := store.CreateInventorySource(context.Background(), db.InventorySource{Name: "cmdb", Kind: db.InventoryHTTP,
		Config: json.RawMessage(`{}`), Enabled: true}, nil); err != nil {
		t.Fatal(err)
	}

	// Another process backs the devices up; the server only reads.
	if r := run(t, call{}, "backup", "run", "--all", "--data", data); r.code == 0 || !strings.Contains(r.stdout, "FAILED") {
		t.Fatalf("backup run with one failing device:\n%s", r)
	}
	if r := srv.do(t, http.MethodGet, "/api/v1/devices", key, ""); r.status != http.StatusOK {
		t.Fatalf("GET /api/v1/devices: %d %s", r.status, r.body)
	}
	text := scrapeMetrics(t, m[1])
	after := values(text)

	// What the database holds, read through a third handle.
	var succeeded, failed, changed int
	ctx := context.Background()
	for _, id := range ids {
		items, _, err := store.ListBackups(ctx, id, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range items {
			switch {
			case b.Success:
				succeeded++
			case b.FinishedAt != nil:
				failed++
			}
			if b.Changed {
				changed++
			}
		}
	}
	if changed != 0 {
		t.Errorf("the database holds %d changed versions; first backups are not changes", changed)
	}
	if succeeded != 2 || failed < 1 {
		t.Fatalf("the database holds %d good and %d failed attempts; want 2 and at least 1", succeeded, failed)
	}
	for id, want := range map[string]int{
		"backupd_backups_total/success":      succeeded,
		"backupd_backups_total/failure":      failed,
		"backupd_config_changes_total":       changed,
		"backupd_devices_enabled":            3,
		"backupd_devices_last_backup_failed": 1,
		// The one serve node leads; backup run is no node.
		"backupd_cluster_leader": 1,
		"backupd_cluster_nodes":  1,
	} {
		if after[id] != strconv.Itoa(want) {
			t.Errorf("after backup run: %s = %q, want %d", id, after[id], want)
		}
	}
	// The failing device was added moments ago and never backed up: the
	// stale-fleet age counts from then, so it is small but there.
	if age, err := strconv.ParseFloat(after["backupd_devices_oldest_good_backup_age_seconds"], 64); err != nil || age <= 0 || age > 3600 {
		t.Errorf("oldest good backup age %q", after["backupd_devices_oldest_good_backup_age_seconds"])
	}
	// The server itself ran no backup: what it shows came from the
	// database.
	if _, ran := after["backupd_backup_duration_seconds_count/success"]; ran {
		t.Error("the server reports backups of its own; it ran none")
	}
	if !strings.Contains(text, `backupd_http_request_duration_seconds_bucket{route="GET /api/v1/devices",le="+Inf"} 1`) {
		t.Error("no le buckets for the request just made")
	}
	// Restores: none open, read from the database; the restore methods'
	// ends published at 0 from the start. The inventory source, read from
	// the database too: never synced, and left out of the staleness and
	// the overdue.
	for _, want := range []string{`backupd_restores_open{state="pending"} 0`, `backupd_restores_open{state="running"} 0`,
		`backupd_restores_total{method="frr_vtysh",result="rollback_failed"} 0`,
		`backupd_inventory_sources{state="never"} 1`, `backupd_inventory_oldest_good_sync_age_seconds 0`,
		`backupd_inventory_sources_overdue 0`} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("the metrics lack %s", want)
		}
	}

	// Nothing that identifies a device, a key or the machine in a label.
	secrets := []string{key, key[:14], data, simPassword, simEnable}
	for _, id := range ids {
		d, err := store.GetDevice(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, d.Name, d.Host+":"+strconv.Itoa(d.Port))
	}
	samples, _ := testkit.Exposition(t, text)
	for _, s := range samples {
		for name, v := range s.Labels {
			for _, secret := range secrets {
				if strings.Contains(v, secret) {
					t.Errorf("%s label %s=%q holds %q", s.Name, name, v, secret)
				}
			}
		}
	}
	for _, secret := range []string{key, simPassword, simEnable} {
		if strings.Contains(text, secret) {
			t.Errorf("the metrics hold %q", secret)
		}
	}
	testkit.Promtool(t, text, "check", "metrics")
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.stderr)
	}
}
