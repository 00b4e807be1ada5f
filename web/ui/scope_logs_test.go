package ui_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

// scopeLogsFleet is two groups with a device each, and a role that reads
// the audit log and the settings (the notifications pages).
func scopeLogsFleet(t *testing.T, e *env) (east, west db.Group, eastDev, westDev db.Device) {
	t.Helper()
	ctx := context.Background()
	var err error
	if east, err = e.store.CreateGroup(ctx, "East", nil); err != nil {
		t.Fatal(err)
	}
	if west, err = e.store.CreateGroup(ctx, "West", nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		name  string
		group int64
		out   *db.Device
	}{{"east-visible-r1", east.ID, &eastDev}, {"west-hidden-r9", west.ID, &westDev}} {
		g := d.group
		if *d.out, err = e.store.CreateDevice(ctx, db.Device{Name: d.name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", GroupID: &g, Encoding: "utf-8", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.store.EnsureRole(ctx, db.Role{Name: "Auditor", Permissions: []string{"audit.view", "settings.view", "devices.view"}}); err != nil {
		t.Fatal(err)
	}
	return east, west, eastDev, westDev
}

// The audit log as a user scoped to East reads it: entries about East's
// device and about no device, none about West's (however they name it:
// as the target, or in the details of another target). An unscoped user
// reads them all.
func TestAuditLogScope(t *testing.T) {
	e := newEnv(t)
	east, _, eastDev, westDev := scopeLogsFleet(t, e)
	ctx := context.Background()
	for _, a := range []db.AuditEntry{
		{Action: "device.update", TargetType: "device", TargetID: idStr(eastDev.ID), Details: map[string]any{"name": eastDev.Name}},
		{Action: "device.update", TargetType: "device", TargetID: idStr(westDev.ID), Details: map[string]any{"name": westDev.Name}},
		{Action: "job.cancel", TargetType: "job", TargetID: "5", Details: map[string]any{"device_id": westDev.ID, "device_name": westDev.Name + "-job"}},
		{Action: "user.create", TargetType: "user", TargetID: "9", Details: map[string]any{"username": "someone-new"}},
	} {
		a.Username, a.Interface = "root", "web"
		if err := e.store.RecordAudit(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	e.createUser("scoped", "scoped-password-1", "Auditor", false, east.ID)
	e.createUser("everyone", "everyone-password-1", "Auditor", true)
	s := e.browser()
	s.mustLogin("scoped", "scoped-password-1")
	p := s.get("/audit")
	expect(t, "scoped audit", p, http.StatusOK, "")
	expectBody(t, "scoped audit", p, eastDev.Name, "someone-new")
	if strings.Contains(p.body, westDev.Name) {
		t.Errorf("the scoped user sees West's device in the audit log")
	}
	// Searching for it finds nothing either.
	if p = s.get("/audit?q=" + westDev.Name); strings.Contains(p.body, westDev.Name+"-job") || strings.Contains(p.body, `>`+westDev.Name+`<`) {
		t.Errorf("a search shows West's device")
	}
	a := e.browser()
	a.mustLogin("everyone", "everyone-password-1")
	expectBody(t, "unscoped audit", a.get("/audit"), eastDev.Name, westDev.Name, westDev.Name+"-job", "someone-new")
}

// A channel's delivery log as a scoped user reads it: the deliveries of
// events of its groups' devices, and of the server's own events.
func TestDeliveryLogScope(t *testing.T) {
	e := newEnv(t)
	east, _, eastDev, westDev := scopeLogsFleet(t, e)
	ctx := context.Background()
	root := adminBrowser(t, e)
	root.get("/notifications/channels/new")
	p := root.post("/notifications/channels", webhookForm("ops hook", "http://127.0.0.1:9/hook", "hmac-Secret-1"))
	expect(t, "create channel", p, http.StatusSeeOther, "")
	chans, err := e.store.NotificationChannels(ctx)
	if err != nil || len(chans) != 1 {
		t.Fatalf("channels: %d, %v", len(chans), err)
	}
	stamp := time.Now().UTC().Format(db.BackupTimeFormat)
	for _, ev := range []struct {
		device int64
		name   string
		kind   string
	}{{eastDev.ID, eastDev.Name, "config_changed"}, {westDev.ID, westDev.Name, "config_changed"}, {0, "git-remote-event", "git_push_failed"}} {
		payload := `{"kind":"` + ev.kind + `","device_id":` + idStr(ev.device) + `,"device_name":"` + ev.name + `","at":"2026-01-01T00:00:00Z","trigger":"manual"}`
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `INSERT INTO outbox (kind, device_id, created_at, payload) VALUES (?, ?, ?, ?)`, ev.kind, ev.device, stamp, payload); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := dbtest.Peek(t, e.store).QueryRowContext(ctx, `SELECT MAX(id) FROM outbox`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `INSERT INTO deliveries (outbox_id, channel_id, include_diff, state, next_attempt_at, created_at, updated_at)
			VALUES (?, ?, 0, 'sent', ?, ?, ?)`, id, chans[0].ID, stamp, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	path := "/notifications/channels/" + idStr(chans[0].ID)
	e.createUser("scoped", "scoped-password-1", "Auditor", false, east.ID)
	s := e.browser()
	s.mustLogin("scoped", "scoped-password-1")
	p = s.get(path)
	expect(t, "scoped channel page", p, http.StatusOK, "")
	expectBody(t, "scoped channel page", p, `id="delivery-log-table"`, "<td>"+eastDev.Name+"</td>", "<td>git-remote-event</td>")
	if strings.Contains(p.body, westDev.Name) {
		t.Error("the scoped user sees a delivery about West's device")
	}
	expectBody(t, "unscoped channel page", root.get(path), "<td>"+eastDev.Name+"</td>", "<td>"+westDev.Name+"</td>")
}

func idStr(id int64) string { return strconv.FormatInt(id, 10) }
