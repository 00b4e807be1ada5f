package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

func TestDashboardQueriesFollowScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	branch := createGroup(t, s, "Branch", nil)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

	n := 0
	attempt := func(dev int64, at time.Time, ok, changed bool, msg string) {
		t.Helper()
		n++
		fin := at.Add(time.Second)
		b := db.Backup{ID: fmt.Sprint("b", n), DeviceID: dev, StartedAt: at, FinishedAt: &fin, Success: ok, Changed: changed, Trigger: queue.TriggerSchedule}
		if msg != "" {
			b.ErrorMessage = &msg
		}
		if err := s.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Exec(ctx, `UPDATE devices SET last_backup_at = ?, last_backup_success = ? WHERE id = ?`,
			fin.Format(db.TimeFormat), ok, dev); err != nil {
			t.Fatal(err)
		}
	}
	r1 := insertDevice(t, s, "r1", &core.ID, nil, nil)
	a1 := insertDevice(t, s, "a1", &access.ID, nil, nil)
	b1 := insertDevice(t, s, "b1", &branch.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)
	if _, err := s.Exec(ctx, `UPDATE devices SET status = 'unreachable' WHERE id IN (?, ?)`, a1, b1); err != nil {
		t.Fatal(err)
	}
	attempt(r1, now.Add(-30*time.Hour), true, false, "")
	attempt(r1, now.Add(-2*time.Hour), true, true, "")
	attempt(a1, now.Add(-3*time.Hour), false, false, "old")
	attempt(a1, now.Add(-1*time.Hour), false, false, "timeout")
	attempt(b1, now.Add(-4*time.Hour), false, false, "refused")
	attempt(loose, now.Add(-5*time.Hour), true, true, "")
	// A running attempt counts nowhere.
	if err := s.InsertBackup(ctx, db.Backup{ID: "running", DeviceID: b1, StartedAt: now.Add(-time.Minute), Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}

	all, coreOnly, none := db.Scope{All: true}, db.Scope{GroupIDs: []int64{core.ID}}, db.Scope{}
	for _, c := range []struct {
		name  string
		scope db.Scope
		want  db.DeviceCounts
	}{
		{"all", all, db.DeviceCounts{Total: 4, Enabled: 4, Unreachable: 2, Unknown: 2, Failing: 2}},
		{"core and its subgroup", coreOnly, db.DeviceCounts{Total: 2, Enabled: 2, Unreachable: 1, Unknown: 1, Failing: 1}},
		{"none", none, db.DeviceCounts{}},
	} {
		got, err := s.DeviceCountsInScope(ctx, c.scope)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: counts %+v, want %+v", c.name, got, c.want)
		}
	}

	failing, err := s.FailingDevices(ctx, all, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(failing) != 2 || failing[0].Name != "a1" || failing[0].Error != "timeout" || failing[1].Name != "b1" ||
		!failing[0].At.Equal(now.Add(-time.Hour+time.Second).Truncate(time.Second)) {
		t.Errorf("failing devices %+v, want a1 (timeout, newest) then b1", failing)
	}
	if f, _ := s.FailingDevices(ctx, coreOnly, 10); len(f) != 1 || f[0].Name != "a1" {
		t.Errorf("failing in Core: %+v, want a1 only", f)
	}
	if f, _ := s.FailingDevices(ctx, all, 1); len(f) != 1 {
		t.Errorf("limit 1 gave %d", len(f))
	}
	if _, err := s.Exec(ctx, `UPDATE devices SET enabled = 0 WHERE id = ?`, b1); err != nil {
		t.Fatal(err)
	}
	if f, _ := s.FailingDevices(ctx, all, 10); len(f) != 1 {
		t.Errorf("a disabled device is listed as failing: %+v", f)
	}

	changed, total, err := s.ChangedConfigsSince(ctx, all, now.Add(-24*time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(changed) != 1 || changed[0].DeviceName != "r1" {
		t.Errorf("changed since 24 h: %d %+v, want 2, newest r1", total, changed)
	}
	if _, total, _ := s.ChangedConfigsSince(ctx, coreOnly, now.Add(-24*time.Hour), 10); total != 1 {
		t.Errorf("changed in Core: %d, want 1 (loose devices are outside every group)", total)
	}

	// Days: the 30 h old success falls on the previous day.
	day := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	bounds := []time.Time{day, day.Add(24 * time.Hour), day.Add(48 * time.Hour)}
	days, err := s.DailyBackupOutcomes(ctx, all, bounds)
	if err != nil {
		t.Fatal(err)
	}
	want := []db.DayOutcome{{Start: bounds[0], Succeeded: 1}, {Start: bounds[1], Succeeded: 2, Changed: 2, Failed: 3}}
	if fmt.Sprint(days) != fmt.Sprint(want) {
		t.Errorf("all days %+v, want %+v", days, want)
	}
	days, _ = s.DailyBackupOutcomes(ctx, coreOnly, bounds)
	want = []db.DayOutcome{{Start: bounds[0], Succeeded: 1}, {Start: bounds[1], Succeeded: 1, Changed: 1, Failed: 2}}
	if fmt.Sprint(days) != fmt.Sprint(want) {
		t.Errorf("Core days %+v, want %+v", days, want)
	}
	if _, err := s.DailyBackupOutcomes(ctx, all, bounds[:1]); err == nil {
		t.Error("one bound was accepted")
	}
	if _, err := s.DailyBackupOutcomes(ctx, all, []time.Time{bounds[1], bounds[0]}); err == nil {
		t.Error("decreasing bounds were accepted")
	}
}

// TestDashboardQueriesUseIndexes keeps the dashboard bounded however large
// the inventory: each query reads an index range, never the whole table.
func TestDashboardQueriesUseIndexes(t *testing.T) {
	s := openStore(t)
	plan := func(q string, args ...any) string {
		t.Helper()
		return strings.Join(dbtest.PlanSQLite(t, s, q, args...), "; ")
	}
	for _, c := range []struct{ query, want string }{
		{`SELECT d.id FROM devices d WHERE d.last_backup_success = 0 AND d.enabled = 1 ORDER BY d.last_backup_at DESC, d.id DESC LIMIT 10`,
			"devices_last_failed"},
		{`SELECT d.id, f.error_message, f.error_reason FROM devices d LEFT JOIN backups f ON f.id = (SELECT b.id FROM backups b
			WHERE b.device_id = d.id AND b.success = 0 AND b.finished_at IS NOT NULL ORDER BY b.started_at DESC LIMIT 1) WHERE d.id = 1`,
			"backups_device_success"},
		{`WITH periods(i, lo, hi) AS (VALUES (0, 'a', 'b')) SELECT p.i, ` + s.OutcomeSums("b.") + `
			FROM periods p JOIN backups b ON b.started_at >= p.lo AND b.started_at < p.hi GROUP BY p.i`,
			"COVERING INDEX backups_started_outcome"},
		{strings.Replace(s.Last24hQuery(), "?", "'a'", 1), "COVERING INDEX backups_started_outcome"},
		{`SELECT COUNT(*) FROM backups b JOIN devices d ON d.id = b.device_id WHERE b.started_at >= 'a' AND b.changed = 1`,
			"backups_started_outcome"},
	} {
		if s.Postgres() {
			want := strings.TrimPrefix(c.want, "COVERING INDEX ")
			p := dbtest.ExplainPG(t, s, c.query)
			if !p.Uses(want) || len(p.SeqScans) > 0 {
				t.Errorf("plan of %s\n%s\nwant it to use %s and read no table whole", c.query, p.Text, want)
			}
			// Covering there too: the index alone answers, no row is read.
			if strings.HasPrefix(c.want, "COVERING INDEX ") {
				if p := dbtest.ExplainPGCovering(t, s, c.query); !slices.Contains(p.IndexOnly, want) {
					t.Errorf("plan of %s\n%s\nwant an index-only scan of %s", c.query, p.Text, want)
				}
			}
			continue
		}
		if got := plan(c.query); !strings.Contains(got, c.want) {
			t.Errorf("plan of %s\n= %s\nwant it to use %s", c.query, got, c.want)
		}
	}
}
