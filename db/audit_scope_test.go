package db_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"backupd/db"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// A user scoped to some device groups sees the audit entries about no
// device, and those whose devices all lie in its groups; not those of
// another group's device, of a deleted one, nor a selection that holds
// one outside. An unscoped user sees them all.
func TestAuditScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	east := createGroup(t, s, "East", nil)
	eastSub := createGroup(t, s, "East-1", &east.ID)
	west := createGroup(t, s, "West", nil)
	inside := insertDevice(t, s, "e1", &eastSub.ID, nil, nil)
	outside := insertDevice(t, s, "w1", &west.ID, nil, nil)
	gone := insertDevice(t, s, "e2", &east.ID, nil, nil)
	record := func(e db.AuditEntry) {
		t.Helper()
		e.Username, e.Interface = "admin", "web"
		if err := s.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	record(db.AuditEntry{Action: "user.create", TargetType: "user", TargetID: "7"})
	record(db.AuditEntry{Action: "device.update", TargetType: "device", TargetID: idStr(inside)})
	record(db.AuditEntry{Action: "device.update", TargetType: "device", TargetID: idStr(outside)})
	record(db.AuditEntry{Action: "job.cancel", TargetType: "job", TargetID: "3", Details: map[string]any{"device_id": outside}})
	record(db.AuditEntry{Action: "backup.run", TargetType: "device", Details: map[string]any{"device_ids": []int64{inside, outside}}})
	record(db.AuditEntry{Action: "backup.run", TargetType: "device", Details: map[string]any{"device_ids": []int64{inside}}})
	record(db.AuditEntry{Action: "device.delete", TargetType: "device", TargetID: idStr(gone)})
	if _, err := s.Exec(ctx, `DELETE FROM devices WHERE id = ?`, gone); err != nil {
		t.Fatal(err)
	}
	actions := func(scope *db.Scope) []string {
		t.Helper()
		recs, _, err := s.SearchAudit(ctx, db.AuditFilter{Scope: scope}, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := len(recs) - 1; i >= 0; i-- {
			out = append(out, recs[i].Action+":"+recs[i].TargetID)
		}
		return out
	}
	all := actions(nil)
	if len(all) != 7 || !slices.Equal(actions(&db.Scope{All: true}), all) {
		t.Fatalf("unscoped: %v", all)
	}
	want := []string{"user.create:7", "device.update:" + idStr(inside), "backup.run:"}
	if got := actions(&db.Scope{GroupIDs: []int64{east.ID}}); !slices.Equal(got, want) {
		t.Fatalf("scoped to East: %v, want %v", got, want)
	}
	if got := actions(&db.Scope{}); !slices.Equal(got, []string{"user.create:7"}) {
		t.Fatalf("scoped to no group: %v", got)
	}
	// The text filter and the scope together.
	recs, _, err := s.SearchAudit(ctx, db.AuditFilter{Text: idStr(outside), Scope: &db.Scope{GroupIDs: []int64{east.ID}}}, 100, 0)
	if err != nil || len(recs) != 0 {
		t.Fatalf("searching for the outside device's id: %d entries, %v", len(recs), err)
	}
}

// A channel's delivery log as a scoped user reads it: the events of its
// groups' devices only.
func TestDeliveryLogScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "changes", Events: []outbox.EventKind{outbox.EventConfigChanged}, ChannelIDs: []int64{ch}})
	east := createGroup(t, s, "East", nil)
	west := createGroup(t, s, "West", nil)
	e1 := insertDevice(t, s, "e1", &east.ID, nil, nil)
	w1 := insertDevice(t, s, "w1", &west.ID, nil, nil)
	recordEvents(t, s, e1, 2)
	recordEvents(t, s, w1, 3)
	devices := func(scope db.Scope) map[int64]int {
		t.Helper()
		log, err := s.DeliveryLogIn(ctx, ch, scope, 100)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]int{}
		for _, d := range log {
			out[d.Event.DeviceID]++
		}
		return out
	}
	if got := devices(db.Scope{All: true}); got[e1] != 2 || got[w1] != 3 {
		t.Fatalf("unscoped: %v", got)
	}
	if got := devices(db.Scope{GroupIDs: []int64{east.ID}}); got[e1] != 2 || got[w1] != 0 {
		t.Fatalf("scoped to East: %v", got)
	}
	if all, _ := s.DeliveryLog(ctx, ch, 100); len(all) != 5 {
		t.Fatalf("DeliveryLog = %d entries, want every one", len(all))
	}
	// The limit counts what the user sees.
	if log, _ := s.DeliveryLogIn(ctx, ch, db.Scope{GroupIDs: []int64{east.ID}}, 1); len(log) != 1 || log[0].Event.DeviceID != e1 {
		t.Fatalf("one entry scoped to East: %+v", log)
	}
}

func idStr(id int64) string { return strconv.FormatInt(id, 10) }

// Upgrading keeps every device that has a credential logging in where it
// does (its address pinned), and files the devices the existing audit
// entries name, so that scoped users stop seeing other groups' entries
// from the first page on. Rolling back restores the schema.
func TestCredentialUseMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, db.FileName)
	if err := db.MigrateTo(ctx, path, 22); err != nil {
		t.Fatal(err)
	}
	conn := rawDB(t, path)
	before := schemaOf(t, conn)
	now := db.Now()
	for _, q := range []string{
		`INSERT INTO credentials (id, name, username, created_at, updated_at) VALUES (1, 'lab', 'u', '` + now + `', '` + now + `')`,
		`INSERT INTO devices (id, name, host, port, platform, login_method, credential_id, created_at, updated_at)
			VALUES (1, 'with', '192.0.2.1', 23, 'cisco_ios', 'telnet', 1, '` + now + `', '` + now + `')`,
		`INSERT INTO devices (id, name, host, port, platform, login_method, created_at, updated_at)
			VALUES (2, 'without', '192.0.2.2', 22, 'cisco_ios', 'ssh', '` + now + `', '` + now + `')`,
		`INSERT INTO audit_log (id, at, username, interface, action, target_type, target_id, details) VALUES
			(1, '` + now + `', 'a', 'web', 'device.update', 'device', '1', NULL),
			(2, '` + now + `', 'a', 'web', 'job.cancel', 'job', '9', '{"device_id":2,"state":"queued"}'),
			(3, '` + now + `', 'a', 'web', 'backup.run', 'device', '', '{"device_ids":[1,2],"count":2}'),
			(4, '` + now + `', 'a', 'web', 'user.create', 'user', '5', '{"name":"x"}'),
			(5, '` + now + `', 'a', 'web', 'device.import', 'device', '', 'not json')`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	if err := db.MigrateTo(ctx, path, 23); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	var pin1, pin2 *string
	conn.QueryRow(`SELECT address_pin FROM devices WHERE id = 1`).Scan(&pin1)
	conn.QueryRow(`SELECT address_pin FROM devices WHERE id = 2`).Scan(&pin2)
	if pin1 == nil || *pin1 != "telnet|192.0.2.1|23|1" || pin2 != nil {
		t.Fatalf("pins after the upgrade: %v %v", pin1, pin2)
	}
	rows, err := conn.Query(`SELECT audit_id, device_id FROM audit_devices ORDER BY audit_id, device_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int64
	for rows.Next() {
		var a, d int64
		rows.Scan(&a, &d)
		got = append(got, [2]int64{a, d})
	}
	rows.Close()
	want := [][2]int64{{1, 1}, {2, 2}, {3, 1}, {3, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("audit devices = %v, want %v", got, want)
	}
	conn.Close()
	if err := db.MigrateDownTo(ctx, path, 22); err != nil {
		t.Fatal(err)
	}
	conn = rawDB(t, path)
	diffSchema(t, "after rolling 00023 back", schemaOf(t, conn), before)
	conn.Close()
	if err := db.MigrateTo(ctx, path, 23); err != nil {
		t.Fatalf("up again after down: %v", err)
	}
}
