package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/app/demo"
	"backupd/app/insync"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// `serve --demo` registers its fleet and backs it up at once: within a
// minute every healthy simulated device has a good backup, and the two
// devices that fail on purpose fail with their own reasons. A restart on
// the same directory reuses the fleet's records.
func TestServeDemo(t *testing.T) {
	t.Parallel() // see runTests
	data := storeDir(t)
	srv := startServe(t, data, "--demo")
	store := openStore(t, data)
	ctx := context.Background()
	type row struct {
		name    string
		success bool
		err     string
	}
	latest := func() map[string]row {
		rows, err := dbtest.Peek(t, store).QueryContext(ctx, `SELECT d.name, b.success, COALESCE(b.error_message, '')
			FROM devices d JOIN backups b ON b.device_id = d.id AND b.finished_at IS NOT NULL
			ORDER BY b.started_at`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]row{}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.name, &r.success, &r.err); err != nil {
				t.Fatal(err)
			}
			out[r.name] = r
		}
		return out
	}
	deadline := time.Now().Add(60 * time.Second)
	var got map[string]row
	want := demo.Size()
	for time.Now().Before(deadline) {
		if got = latest(); len(got) == want {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if want < 30 || len(got) != want {
		t.Fatalf("after 60 s, %d of %d demo devices have a finished backup: %v\n%s", len(got), want, got, srv.stderr)
	}
	for name, r := range got {
		switch name {
		case "branch-rtr-03":
			if r.success || !strings.Contains(r.err, "authentication failed") {
				t.Errorf("%s should fail its login: %+v", name, r)
			}
		case "branch-fw-01":
			if r.success || !strings.Contains(r.err, "connection refused") {
				t.Errorf("%s should be unreachable: %+v", name, r)
			}
		default:
			if !r.success {
				t.Errorf("demo device %s failed: %s", name, r.err)
			}
		}
	}
	var schedules int
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM schedules WHERE name IN ('Nightly', ?)`, demo.ScheduleName).Scan(&schedules)
	if schedules != 2 {
		t.Errorf("want the nightly default and the demo schedule, found %d", schedules)
	}
	// The demo's inventory source points at its inventory on 127.0.0.1,
	// which lists the devices a sync would create.
	firstInventory := demoInventory(t, store)
	// The demo's ready-made webhook channel and rule deliver the first
	// backups and the failures to the demo's receiver, which checks the
	// signature and logs what it got.
	var chID int64
	if err := dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT id FROM notification_channels WHERE name = ?`, demo.ChannelName).Scan(&chID); err != nil {
		t.Fatalf("no demo channel: %v", err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(srv.stderr.String(), `msg="demo webhook received a delivery"`) {
		time.Sleep(250 * time.Millisecond)
	}
	logged := srv.stderr.String()
	if !strings.Contains(logged, `msg="demo webhook received a delivery"`) || !strings.Contains(logged, "signature_ok=true") ||
		strings.Contains(logged, "signature_ok=false") {
		t.Fatalf("the demo receiver got no signed delivery within 60 s:\n%s", logged)
	}
	log, err := store.DeliveryLog(ctx, chID, 100)
	if err != nil || len(log) == 0 || log[len(log)-1].State != outbox.DeliverySent {
		t.Fatalf("demo delivery log: %d entries, %v", len(log), err)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve --demo exited %d:\n%s", code, srv.stderr)
	}
	if strings.Contains(srv.stderr.String(), "hostname ") {
		t.Fatal("the server log holds configuration text")
	}

	// A second start reuses the group, credential and devices.
	srv = startServe(t, data, "--demo")
	var devices, groups, creds int
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM devices`).Scan(&devices)
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM device_groups`).Scan(&groups)
	dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM credentials`).Scan(&creds)
	// The lab and its five groups: Core, Campus, Branch, Firewalls,
	// Console and power.
	if devices != want || groups != 6 || creds != 1 {
		t.Errorf("after a restart: %d devices, %d groups, %d credentials; want %d, 6, 1", devices, groups, creds, want)
	}
	// One demo source still, pointed at the new run's inventory.
	if again := demoInventory(t, store); again == firstInventory {
		t.Errorf("after a restart the demo source still points at %s", again)
	}
	// The simulated devices keep their host keys, so the pinned keys
	// still match: every device but the two failing on purpose gets its
	// second good backup.
	healthy := want - 2
	deadline = time.Now().Add(60 * time.Second)
	var twice int
	for time.Now().Before(deadline) {
		dbtest.Peek(t, store).QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT device_id FROM backups WHERE success = 1
			GROUP BY device_id HAVING COUNT(*) >= 2) AS again`).Scan(&twice)
		if twice == healthy {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if twice != healthy {
		t.Errorf("after a restart, %d of %d healthy demo devices were backed up again", twice, healthy)
	}
	srv.stop(t)
}

// demoInventory checks that the store holds one inventory source, the
// demo's, on demand only, and that its URL answers with the devices of
// the demo inventory; it returns the URL.
func demoInventory(t *testing.T, store *db.Store) string {
	t.Helper()
	srcs, err := store.InventorySources(context.Background())
	if err != nil || len(srcs) != 1 || srcs[0].Name != demo.InventorySourceName || srcs[0].IntervalMinutes != 0 {
		t.Fatalf("inventory sources %+v, %v", srcs, err)
	}
	cfg, err := insync.ParseConfig(srcs[0].Config)
	if err != nil || cfg.HTTP == nil {
		t.Fatalf("demo source settings %s: %v", srcs[0].Config, err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(cfg.HTTP.URL)
	if err != nil {
		t.Fatalf("the demo inventory does not answer: %v", err)
	}
	defer resp.Body.Close()
	var nodes []struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&nodes); err != nil {
		t.Fatalf("the demo inventory's answer: %v", err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, demo.InventoryNames()) {
		t.Fatalf("the demo inventory lists %v, want %v", names, demo.InventoryNames())
	}
	return cfg.HTTP.URL
}
