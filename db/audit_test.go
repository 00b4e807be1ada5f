package db_test

import (
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

func TestSearchAudit(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	keyID, err := s.CreateAPIKey(ctx, db.APIKey{UserID: f.val, Name: "k", Prefix: "abcdef0123", Hash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	record := func(at time.Time, user string, iface, action, target, details string) {
		t.Helper()
		e := db.AuditEntry{Username: user, Interface: iface, Action: action, TargetType: target, TargetID: "7", RequestID: "req-" + action}
		if details != "" {
			e.Details = map[string]any{"name": details}
		}
		if iface == "api" {
			e.KeyID = &keyID
		}
		if err := s.RecordAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
		// RecordAudit stamps the wall clock; the test places entries in
		// time itself.
		if _, err := s.Exec(ctx, `UPDATE audit_log SET at = ? WHERE id = (SELECT MAX(id) FROM audit_log)`, at.Format(db.TimeFormat)); err != nil {
			t.Fatal(err)
		}
	}
	record(base, "root", "web", "device.create", "device", "edge-1")
	record(base.Add(1*time.Hour), "val", "api", "device.update", "device", "Edge-2")
	record(base.Add(2*time.Hour), "root", "cli", "user.create", "user", "")
	record(base.Add(24*time.Hour), "ROOT", "web", "devices.odd", "device", "")
	record(base.Add(25*time.Hour), "root", "web", "group.delete", "group", "")

	actions := func(f db.AuditFilter, limit, offset int) (string, bool) {
		t.Helper()
		rs, more, err := s.SearchAudit(ctx, f, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.Action)
		}
		return strings.Join(out, " "), more
	}
	for _, c := range []struct {
		name string
		f    db.AuditFilter
		want string
	}{
		{"all, newest first", db.AuditFilter{}, "group.delete devices.odd user.create device.update device.create"},
		{"action prefix with dot", db.AuditFilter{Action: "device."}, "device.update device.create"},
		{"action prefix without dot", db.AuditFilter{Action: "device"}, "device.update device.create"},
		{"exact action", db.AuditFilter{Action: "device.update"}, "device.update"},
		{"username any case", db.AuditFilter{Username: "Root"}, "group.delete devices.odd user.create device.create"},
		{"interface", db.AuditFilter{Interface: "cli"}, "user.create"},
		{"target type", db.AuditFilter{TargetType: "group"}, "group.delete"},
		{"from", db.AuditFilter{From: base.Add(24 * time.Hour)}, "group.delete devices.odd"},
		{"from to", db.AuditFilter{From: base.Add(time.Hour), To: base.Add(24 * time.Hour)}, "user.create device.update"},
		{"text in details, any case", db.AuditFilter{Text: "edge"}, "device.update device.create"},
		{"request id", db.AuditFilter{Text: "req-user.create"}, "user.create"},
		{"combined", db.AuditFilter{Username: "root", Action: "device", Interface: "web"}, "device.create"},
		{"nothing", db.AuditFilter{Action: "nothing"}, ""},
	} {
		if got, more := actions(c.f, 50, 0); got != c.want || more {
			t.Errorf("%s: %q (more %v), want %q", c.name, got, more, c.want)
		}
	}
	if got, more := actions(db.AuditFilter{}, 2, 0); got != "group.delete devices.odd" || !more {
		t.Errorf("page 1 of 2: %q more=%v", got, more)
	}
	if got, more := actions(db.AuditFilter{}, 2, 4); got != "device.create" || more {
		t.Errorf("last page: %q more=%v", got, more)
	}
	rs, _, err := s.SearchAudit(ctx, db.AuditFilter{Interface: "api"}, 50, 0)
	if err != nil || len(rs) != 1 || rs[0].KeyPrefix != "abcdef0123" || rs[0].Details["name"] != "Edge-2" {
		t.Errorf("api entry = %+v, %v", rs, err)
	}

	// The newest-first walk follows the time index (with the action
	// first when one action is asked for); no sort of the whole selection,
	// whatever the filters.
	for _, where := range []string{"1=1", "a.at >= ? AND a.action = ?", s.EqualFold("a.username") + " AND a.interface = ?"} {
		args := []any{}
		if where != "1=1" {
			args = []any{"2026", "x"}
		}
		q := `SELECT a.id FROM audit_log a LEFT JOIN api_keys k ON k.id = a.key_id
			WHERE ` + where + ` ORDER BY a.at DESC, a.id DESC LIMIT 51 OFFSET 0`
		if s.Postgres() {
			p := dbtest.ExplainPG(t, s, q, args...)
			if !p.Uses("audit_log_at") && !p.Uses("audit_log_action") || p.Sorts > 0 || len(p.SeqScans) > 0 {
				t.Errorf("WHERE %s: the query plan does not walk the time index:\n%s", where, p.Text)
			}
			continue
		}
		plan := ""
		for _, detail := range dbtest.PlanSQLite(t, s, q, args...) {
			plan += detail + "\n"
		}
		if !strings.Contains(plan, "audit_log_at") && !strings.Contains(plan, "audit_log_action (action=? AND at>?)") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("WHERE %s: the query plan does not walk the time index:\n%s", where, plan)
		}
	}
}
