package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// historyFixture inserts n attempts of a device one minute apart, ids
// prefix000 (the oldest) and up; every seventh, from the fourth, fails.
func historyFixture(t *testing.T, s *db.Store, dev int64, prefix string, n int, start time.Time) []db.Backup {
	t.Helper()
	ctx := context.Background()
	var out []db.Backup
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		fin := at.Add(time.Second)
		b := db.Backup{ID: fmt.Sprintf("%s%03d", prefix, i), DeviceID: dev, StartedAt: at, FinishedAt: &fin, Success: i%7 != 3, Trigger: queue.TriggerSchedule}
		if b.Success {
			hash, err := s.PutSnapshot(ctx, fmt.Sprintf("hostname r\n! version %d\n", i))
			if err != nil {
				t.Fatal(err)
			}
			b.SnapshotHash = &hash
		} else {
			msg := "timeout"
			b.ErrorMessage = &msg
		}
		if err := s.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func ids(items []db.Backup) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(it.ID)
	}
	return b.String()
}

func TestDeviceHistoryPagesByKey(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	other := insertDevice(t, s, "r2", nil, nil, nil)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	all := historyFixture(t, s, dev, "b", 120, start)
	// Another device's attempts never show.
	historyFixture(t, s, other, "o", 3, start)
	// newest first: b119 … b000
	want := func(from, to int) string {
		var parts []string
		for i := from; i >= to; i-- {
			parts = append(parts, all[i].ID)
		}
		return strings.Join(parts, " ")
	}

	first, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if first.Total != 120 || first.Newer != 0 || ids(first.Items) != want(119, 70) {
		t.Fatalf("first page: total %d newer %d items %s", first.Total, first.Newer, ids(first.Items))
	}
	c := db.CursorOf(first.Items[len(first.Items)-1])
	second, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{Before: &c, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if second.Newer != 50 || ids(second.Items) != want(69, 20) {
		t.Fatalf("second page: newer %d items %s", second.Newer, ids(second.Items))
	}
	c = db.CursorOf(second.Items[len(second.Items)-1])
	third, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{Before: &c, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if third.Newer != 100 || ids(third.Items) != want(19, 0) {
		t.Fatalf("third page: newer %d items %s", third.Newer, ids(third.Items))
	}
	// Back from the third page: the second again.
	c = db.CursorOf(third.Items[0])
	back, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{After: &c, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if back.Newer != 50 || ids(back.Items) != ids(second.Items) {
		t.Fatalf("newer than the third page: newer %d items %s", back.Newer, ids(back.Items))
	}
	// The oldest page holds the remainder, like the third.
	last, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{Oldest: true, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if last.Newer != 100 || ids(last.Items) != ids(third.Items) {
		t.Fatalf("oldest page: newer %d items %s", last.Newer, ids(last.Items))
	}
	// The cursor survives a round trip through a link.
	parsed, err := db.ParseBackupCursor(c.String())
	if err != nil || parsed != c {
		t.Fatalf("cursor %q parsed as %+v, %v", c.String(), parsed, err)
	}
	for _, bad := range []string{"", "b001", "2026-01-02~b1", "2026-01-02T03:04:05.000~", "x~y"} {
		if _, err := db.ParseBackupCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
	// A device without attempts has an empty page.
	empty, err := s.DeviceHistory(ctx, insertDevice(t, s, "r3", nil, nil, nil), db.HistoryQuery{Oldest: true, Limit: 50})
	if err != nil || empty.Total != 0 || len(empty.Items) != 0 {
		t.Fatalf("empty history: %+v %v", empty, err)
	}
}

func TestDeviceHistoryOrdersTiesByID(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range []string{"c", "a", "d", "b"} {
		if err := s.InsertBackup(ctx, db.Backup{ID: id, DeviceID: dev, StartedAt: at, Trigger: queue.TriggerManual}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.DeviceHistory(ctx, dev, db.HistoryQuery{Limit: 2})
	if err != nil || ids(p.Items) != "d c" {
		t.Fatalf("first page %s, %v", ids(p.Items), err)
	}
	c := db.CursorOf(p.Items[1])
	p, err = s.DeviceHistory(ctx, dev, db.HistoryQuery{Before: &c, Limit: 2})
	if err != nil || ids(p.Items) != "b a" || p.Newer != 2 {
		t.Fatalf("second page %s newer %d, %v", ids(p.Items), p.Newer, err)
	}
}

// The history's queries must read a range of an index, never the whole
// backups table or every attempt of the device before the page.
func TestDeviceHistoryQueriesUseTheIndex(t *testing.T) {
	s := openStore(t)
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	historyFixture(t, s, dev, "b", 5, time.Now().UTC())
	at := "2026-01-02T03:04:05.000"
	for _, q := range []string{
		`SELECT b.id FROM backups b WHERE b.device_id = ? AND b.started_at <= ? AND (b.started_at < ? OR b.id < ?) ORDER BY b.started_at DESC, b.id DESC LIMIT 50`,
		`SELECT b.id FROM backups b WHERE b.device_id = ? AND b.started_at >= ? AND (b.started_at > ? OR b.id > ?) ORDER BY b.started_at, b.id LIMIT 50`,
		`SELECT b.id FROM backups b WHERE b.device_id = ? AND b.success = 1 AND b.snapshot_hash IS NOT NULL AND b.started_at <= ? AND (b.started_at < ? OR b.id < ?) ORDER BY b.started_at DESC, b.id DESC LIMIT 1`,
	} {
		if s.Postgres() {
			p := dbtest.ExplainPG(t, s, q, dev, at, at, "b")
			if !p.Uses("backups_device_started") && !p.Uses("backups_device_success") || p.Sorts > 0 || len(p.SeqScans) > 0 {
				t.Errorf("query does not use a range of a device index:\n%s\nplan:\n%s", q, p.Text)
			}
			continue
		}
		joined := strings.Join(dbtest.PlanSQLite(t, s, q, dev, at, at, "b"), "; ")
		if !strings.Contains(joined, "USING INDEX backups_device_") || !strings.Contains(joined, "started_at") {
			t.Errorf("query does not use a range of a device index:\n%s\nplan: %s", q, joined)
		}
	}
	// The changes only: the partial index of the changes (00026), for the
	// page and for its count, never every attempt of the device.
	for _, q := range []string{
		`SELECT b.id FROM backups b WHERE b.device_id = ? AND b.changed + b.first_backup > 0 AND b.started_at <= ? AND (b.started_at < ? OR b.id < ?) ORDER BY b.started_at DESC, b.id DESC LIMIT 50`,
		`SELECT COUNT(*) FROM backups b WHERE b.device_id = ? AND b.changed + b.first_backup > 0 AND b.started_at <= ? AND (b.started_at < ? OR b.id < ?)`,
	} {
		if s.Postgres() {
			if p := dbtest.ExplainPG(t, s, q, dev, at, at, "b"); !p.Uses("backups_device_changes") || len(p.SeqScans) > 0 {
				t.Errorf("changes-only query does not use backups_device_changes:\n%s\nplan:\n%s", q, p.Text)
			}
			continue
		}
		if joined := strings.Join(dbtest.PlanSQLite(t, s, q, dev, at, at, "b"), "; "); !strings.Contains(joined, "INDEX backups_device_changes") {
			t.Errorf("changes-only query does not use backups_device_changes:\n%s\nplan: %s", q, joined)
		}
	}
}

func TestNeighbourVersionsSkipFailures(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	all := historyFixture(t, s, dev, "b", 12, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	// b003 and b010 failed.
	prev, ok, err := s.PreviousVersion(ctx, dev, db.CursorOf(all[4]))
	if err != nil || !ok || prev.ID != "b002" {
		t.Fatalf("previous of b004: %v %v %v", prev.ID, ok, err)
	}
	next, ok, err := s.NextVersion(ctx, dev, db.CursorOf(all[9]))
	if err != nil || !ok || next.ID != "b011" {
		t.Fatalf("next of b009: %v %v %v", next.ID, ok, err)
	}
	if _, ok, err := s.PreviousVersion(ctx, dev, db.CursorOf(all[0])); ok || err != nil {
		t.Errorf("b000 has a previous version: %v %v", ok, err)
	}
	if _, ok, err := s.NextVersion(ctx, dev, db.CursorOf(all[11])); ok || err != nil {
		t.Errorf("b011 has a next version: %v %v", ok, err)
	}
}
