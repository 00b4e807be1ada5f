package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"backupd/db"
	"backupd/db/queue"
	"backupd/embed"
	"backupd/internal/dbtest"
)

// changeFigures are the places a configuration change is counted.
type changeFigures struct {
	Stats24h, Dashboard24h, Counter int
	LastChangedAt                   *string
}

func changesOf(t *testing.T, s *db.Store, device int64) changeFigures {
	t.Helper()
	ctx := context.Background()
	var f changeFigures
	st, err := s.Stats(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.Stats24h = st.Last24hChanged
	if _, f.Dashboard24h, err = s.ChangedConfigsSince(ctx, db.Scope{All: true}, time.Now().Add(-24*time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	f.Counter = int(fleetHealth(t, s).ConfigChanges)
	d, err := s.GetDevice(ctx, device)
	if err != nil {
		t.Fatal(err)
	}
	f.LastChangedAt = d.LastChangedAt
	return f
}

func newestBackup(t *testing.T, s *db.Store, device int64) db.Backup {
	t.Helper()
	p, err := s.DeviceHistory(context.Background(), device, db.HistoryQuery{Limit: 1})
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("history of device %d: %v %v", device, p.Items, err)
	}
	return p.Items[0]
}

// A device's first backup is its first version, not a change: the
// dashboard's and /stats' "changed in 24 h", the config-changes counter and
// the device's last-changed time ignore it, and count the next version
// that differs (and only that one).
func TestFirstBackupIsNotAChange(t *testing.T) {
	s := openStore(t)
	dev := retDevice(t, s, "r1")

	attempt(t, s, dev, queue.Outcome{Success: true, Text: "hostname r1\n", First: true})
	if b := newestBackup(t, s, dev); !b.First || b.Changed {
		t.Errorf("first backup: first=%v changed=%v, want first and not changed", b.First, b.Changed)
	}
	if f := changesOf(t, s, dev); f.Stats24h != 0 || f.Dashboard24h != 0 || f.Counter != 0 || f.LastChangedAt != nil {
		t.Errorf("after the first backup: %+v; want no change anywhere", f)
	}

	// Even told "changed" (there was nothing to compare with), a first
	// backup is stored as the first, not as a change.
	other := retDevice(t, s, "r2")
	attempt(t, s, other, queue.Outcome{Success: true, Text: "hostname r2\n", First: true, Changed: true})
	if b := newestBackup(t, s, other); !b.First || b.Changed {
		t.Errorf("first backup said changed: first=%v changed=%v", b.First, b.Changed)
	}

	// Noise only (the engine found no change): nothing counted.
	attempt(t, s, dev, queue.Outcome{Success: true, Text: "! Last configuration change at 10:00\nhostname r1\n"})
	if f := changesOf(t, s, dev); f.Stats24h != 0 || f.Dashboard24h != 0 || f.Counter != 0 || f.LastChangedAt != nil {
		t.Errorf("after a noise-only difference: %+v; want no change anywhere", f)
	}

	// A real change counts once everywhere, and dates the device's last
	// change.
	attempt(t, s, dev, queue.Outcome{Success: true, Text: "hostname r1-new\n", Changed: true})
	b := newestBackup(t, s, dev)
	if b.First || !b.Changed {
		t.Errorf("second version: first=%v changed=%v", b.First, b.Changed)
	}
	f := changesOf(t, s, dev)
	if f.Stats24h != 1 || f.Dashboard24h != 1 || f.Counter != 1 {
		t.Errorf("after one real change: %+v; want 1 in 24 h, on the dashboard and on the counter", f)
	}
	if want := b.StartedAt.UTC().Format(db.TimeFormat); f.LastChangedAt == nil || *f.LastChangedAt != want {
		t.Errorf("last changed at %v, want %s (the changed backup's start)", f.LastChangedAt, want)
	}
	days, err := s.DailyBackupOutcomes(context.Background(), db.Scope{All: true},
		[]time.Time{time.Now().Add(-time.Hour), time.Now().Add(time.Hour)})
	if err != nil || len(days) != 1 || days[0].Changed != 1 || days[0].Succeeded != 4 {
		t.Errorf("the dashboard chart's day: %+v %v; want 4 succeeded of which 1 changed", days, err)
	}

	// A failure afterwards does not move the last change.
	attempt(t, s, dev, queue.Outcome{Error: "connect: timeout"})
	if g := changesOf(t, s, dev); g.LastChangedAt == nil || *g.LastChangedAt != *f.LastChangedAt {
		t.Errorf("a failed attempt moved the last change: %v, was %v", g.LastChangedAt, *f.LastChangedAt)
	}
}

// The devices list filters by "changed since" and sorts by the last
// change, newest or oldest first, devices that never changed last.
func TestDevicesByLastChange(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	old, recent, never := retDevice(t, s, "old"), retDevice(t, s, "recent"), retDevice(t, s, "never")
	retVersion(t, s, old, 40, "a\n")
	retVersion(t, s, recent, 40, "b\n")
	retVersion(t, s, never, 40, "c\n")
	change := func(device int64, daysAgo int, text string) {
		hash, err := s.PutSnapshot(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		started := retNow.AddDate(0, 0, -daysAgo)
		finished := started.Add(time.Second)
		if err := s.InsertBackup(ctx, db.Backup{ID: text, DeviceID: device, StartedAt: started, FinishedAt: &finished,
			Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule, Changed: true}); err != nil {
			t.Fatal(err)
		}
	}
	change(old, 30, "a2\n")
	change(recent, 30, "b2\n")
	change(recent, 2, "b3\n")

	names := func(f db.DeviceFilter) []string {
		t.Helper()
		list, total, err := s.ListDevices(ctx, db.Scope{All: true}, f, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, d := range list {
			out = append(out, d.Name)
		}
		if total != len(out) {
			t.Errorf("%+v: total %d for %d devices", f, total, len(out))
		}
		return out
	}
	for _, c := range []struct {
		f    db.DeviceFilter
		want string
	}{
		{db.DeviceFilter{}, "[old recent never]"},
		{db.DeviceFilter{Sort: db.DeviceSortLastChanged}, "[recent old never]"},
		{db.DeviceFilter{Sort: db.DeviceSortLastChangedAsc}, "[old recent never]"},
		{db.DeviceFilter{ChangedSince: ptr(retNow.AddDate(0, 0, -7))}, "[recent]"},
		{db.DeviceFilter{ChangedSince: ptr(retNow.AddDate(0, 0, -31)), Sort: db.DeviceSortLastChanged}, "[recent old]"},
		{db.DeviceFilter{ChangedSince: ptr(retNow.AddDate(0, 0, -1))}, "[]"},
	} {
		if got := fmtList(names(c.f)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	if _, _, err := s.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{Sort: "name; DROP TABLE devices"}, 10, 0); err == nil {
		t.Error("an unknown order was accepted")
	}
}

func fmtList(s []string) string {
	out := "["
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out + "]"
}

// A database written before first backups were told apart: migrating
// marks each device's oldest version as its first backup instead of a
// change, keeps real changes, and dates each device's last change.
func TestMigrationMarksFirstBackups(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, db.FileName)
	conn, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fsys, err := fs.Sub(embed.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, conn, fsys)
	if err != nil {
		t.Fatal(err)
	}
	// Every migration before this change (00011, and 00012 when present).
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	at := func(ago time.Duration) string { return now.Add(-ago).Format(db.BackupTimeFormat) }
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, name := range []string{"fresh", "changed", "pruned", "failing"} {
		exec(`INSERT INTO devices (id, name, host, port, platform, login_method, created_at, updated_at)
			VALUES (?, ?, '192.0.2.1', 22, 'cisco_ios', 'ssh', '2025-01-01T00:00:00', '2025-01-01T00:00:00')`, i+1, name)
	}
	for _, h := range []string{"h1", "h2", "h3"} {
		exec(`INSERT INTO snapshots (hash, size, stored_size, data, created_at) VALUES (?, 1, 1, x'00', '2025-01-01T00:00:00')`, h)
	}
	backup := func(id string, device int, ago time.Duration, success bool, hash any, changed bool) {
		exec(`INSERT INTO backups (id, device_id, started_at, finished_at, success, snapshot_hash, trigger, changed)
			VALUES (?, ?, ?, ?, ?, ?, 'schedule', ?)`, id, device, at(ago), at(ago-time.Second), success, hash, changed)
	}
	// "fresh": its first backup an hour ago, recorded as changed, then
	// nothing new.
	backup("fresh-1", 1, time.Hour, true, "h1", true)
	backup("fresh-2", 1, time.Minute, true, "h1", false)
	// "changed": a failure, its first version two days ago, a real change
	// an hour ago.
	backup("changed-0", 2, 72*time.Hour, false, nil, false)
	backup("changed-1", 2, 48*time.Hour, true, "h1", true)
	backup("changed-2", 2, time.Hour, true, "h2", true)
	// "pruned": retention removed its first version; the oldest kept one
	// was not a change and stays so.
	backup("pruned-1", 3, 10*time.Hour, true, "h1", false)
	backup("pruned-2", 3, 5*time.Hour, true, "h3", true)
	// "failing": no version at all.
	backup("failing-1", 4, time.Hour, false, nil, false)
	var counterBefore int
	if err := conn.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = 'backups_changed_ever'`).Scan(&counterBefore); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	s, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Reader().QueryContext(ctx, `SELECT id, changed, first_backup FROM backups ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]bool{}
	for rows.Next() {
		var id string
		var changed, first bool
		if err := rows.Scan(&id, &changed, &first); err != nil {
			t.Fatal(err)
		}
		got[id] = [2]bool{changed, first}
	}
	rows.Close()
	want := map[string][2]bool{ // changed, first
		"fresh-1": {false, true}, "fresh-2": {false, false},
		"changed-0": {false, false}, "changed-1": {false, true}, "changed-2": {true, false},
		"pruned-1": {false, false}, "pruned-2": {true, false},
		"failing-1": {false, false},
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s after the migration: changed, first = %v, want %v", id, got[id], w)
		}
	}
	st, err := s.Stats(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if st.Last24hChanged != 2 {
		t.Errorf("changed in 24 h after the migration: %d, want 2 (changed-2 and pruned-2; the first backup an hour ago is not a change)", st.Last24hChanged)
	}
	for id, want := range map[int64]string{1: "", 2: at(time.Hour)[:19], 3: at(5 * time.Hour)[:19], 4: ""} {
		d, err := s.GetDevice(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := derefString(d.LastChangedAt); got != want {
			t.Errorf("device %s: last changed at %q, want %q", d.Name, got, want)
		}
	}
	// The counter is a Prometheus counter: it does not go down.
	if c := fleetHealth(t, s).ConfigChanges; c != int64(counterBefore) {
		t.Errorf("config changes counter %d after the migration, was %d", c, counterBefore)
	}
}

func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// The devices list by last change reads each order off its index, so a
// page of 20,000 devices never sorts them all (only the page's own rows
// are put in order); "changed since" reads a range of devices_last_changed.
func TestDevicesByLastChangeUsesIndexes(t *testing.T) {
	s := openStore(t)
	since := time.Now()
	for _, c := range []struct {
		f          db.DeviceFilter
		countIndex string
		listIndex  string
	}{
		{db.DeviceFilter{Sort: db.DeviceSortLastChanged}, "", "devices_last_changed_newest"},
		{db.DeviceFilter{Sort: db.DeviceSortLastChangedAsc}, "", "devices_last_changed_oldest"},
		{db.DeviceFilter{ChangedSince: &since}, "devices_last_changed", ""},
		{db.DeviceFilter{ChangedSince: &since, Sort: db.DeviceSortLastChanged}, "devices_last_changed", "devices_last_changed_newest"},
	} {
		count, list, args, err := db.ListDevicesQueriesOf(s, db.Scope{All: true}, c.f)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []struct{ sql, index string }{{count, c.countIndex}, {list, c.listIndex}} {
			if s.Postgres() {
				p := dbtest.ExplainPG(t, s, q.sql, append(args, 50, 0)[:strings.Count(q.sql, "?")]...)
				if p.Sorts > 0 || len(p.SeqScans) > 0 || q.index != "" && !p.Uses(q.index) {
					t.Errorf("%+v: %s\nsorts or reads devices whole, or does not use %q:\n%s", c.f, q.sql, q.index, p.Text)
				}
				continue
			}
			plan := queryPlan(t, s, q.sql, append(args, 50, 0)[:strings.Count(q.sql, "?")]...)
			if strings.Count(plan, "TEMP B-TREE") > strings.Count(plan, "LIST SUBQUERY") {
				t.Errorf("%+v: %s\nsorts more than the page's rows in a temporary b-tree:\n%s", c.f, q.sql, plan)
			}
			if q.index != "" && !strings.Contains(plan, q.index) {
				t.Errorf("%+v: %s\ndoes not use %s:\n%s", c.f, q.sql, q.index, plan)
			}
		}
	}
}

func queryPlan(t *testing.T, s *db.Store, q string, args ...any) string {
	t.Helper()
	return strings.Join(dbtest.PlanSQLite(t, s, q, args...), "\n")
}

// Changes pages through a range newest first, [Since, Until), and the
// failing filter keeps the enabled devices whose last backup failed.
func TestChangesPagesAndFailingFilter(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	a := insertDevice(t, s, "a", nil, nil, nil)
	b := insertDevice(t, s, "b", nil, nil, nil)
	off := insertDevice(t, s, "off", nil, nil, nil)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 7 {
		started := base.Add(time.Duration(i) * time.Hour)
		fin := started.Add(time.Second)
		if err := s.InsertBackup(ctx, db.Backup{ID: fmt.Sprintf("c%d", i), DeviceID: []int64{a, b}[i%2], StartedAt: started,
			FinishedAt: &fin, Success: true, Changed: i != 3, Trigger: queue.TriggerSchedule}); err != nil {
			t.Fatal(err)
		}
	}
	q := db.ChangesQuery{Since: base.Add(time.Hour), Until: base.Add(6 * time.Hour)} // c1..c5, c3 unchanged
	var got []string
	for offset := 0; offset < 10; offset += 2 {
		page, total, err := s.Changes(ctx, db.Scope{All: true}, q, 2, offset)
		if err != nil || total != 4 {
			t.Fatalf("Changes at %d = %d total, %v; want 4", offset, total, err)
		}
		for _, c := range page {
			got = append(got, c.BackupID)
		}
	}
	if want := "c5 c4 c2 c1"; strings.Join(got, " ") != want {
		t.Fatalf("pages %v, want %s", got, want)
	}

	p := dbtest.Poke(t, s)
	if _, err := p.ExecContext(ctx, `UPDATE devices SET last_backup_success = 0 WHERE id IN (?, ?)`, b, off); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ExecContext(ctx, `UPDATE devices SET enabled = 0 WHERE id = ?`, off); err != nil {
		t.Fatal(err)
	}
	list, total, err := s.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{Failing: true}, 10, 0)
	if err != nil || total != 1 || len(list) != 1 || list[0].ID != b {
		t.Fatalf("failing devices = %+v (%d), %v; want b only", list, total, err)
	}
}
