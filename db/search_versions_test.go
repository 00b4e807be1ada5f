package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/db"
	"backupd/db/queue"
)

// A configuration search walks every device's latest version in name
// order and reads each text while walking, on both engines (PostgreSQL
// runs one query at a time on a connection, so its walk fetches the list
// in batches); more devices than one batch holds. A version purged by
// retention during the walk stays readable to it: the walk sees the
// store as it was when it began.
func TestSearchVersionsReadsEveryTextWhileWalking(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	const n = 600 // over two of PostgreSQL's batches
	t0 := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	backupOf := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("sw-%03d", i)
		d, err := s.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		hash, err := s.PutSnapshot(ctx, "hostname "+name+"\nend\n")
		if err != nil {
			t.Fatal(err)
		}
		finished := t0.Add(time.Second)
		b := db.Backup{ID: uuid.NewString(), DeviceID: d.ID, StartedAt: t0, FinishedAt: &finished, Success: true,
			SnapshotHash: &hash, Trigger: queue.TriggerSchedule}
		if err := s.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		backupOf[name] = b.ID
	}
	db.ResetTextCache()

	seen := 0
	for v, err := range s.SearchVersions(ctx, db.Scope{All: true}, false) {
		if err != nil {
			t.Fatalf("after %d versions: %v", seen, err)
		}
		want := fmt.Sprintf("sw-%03d", seen)
		if v.DeviceName != want || v.BackupID != backupOf[want] {
			t.Fatalf("version %d is %s (backup %s), want %s", seen, v.DeviceName, v.BackupID, want)
		}
		if seen == 10 {
			// Retention removes the last device's only version, snapshot
			// and all, while the walk is under way.
			if _, err := s.DeleteBackups(ctx, []string{backupOf[fmt.Sprintf("sw-%03d", n-1)]}); err != nil {
				t.Fatal(err)
			}
		}
		text, err := v.Text()
		if err != nil {
			t.Fatalf("text of %s: %v", v.DeviceName, err)
		}
		if text != "hostname "+want+"\nend\n" {
			t.Fatalf("text of %s is %q", v.DeviceName, text)
		}
		seen++
	}
	if seen != n {
		t.Errorf("walked %d versions, want %d", seen, n)
	}

	// A walk stopped early ends its transaction: the store goes on.
	stopped := 0
	for _, err := range s.SearchVersions(ctx, db.Scope{All: true}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if stopped++; stopped == 300 {
			break
		}
	}
	seen = 0
	for _, err := range s.SearchVersions(ctx, db.Scope{All: true}, true) {
		if err != nil {
			t.Fatal(err)
		}
		seen++
	}
	if seen != n-1 {
		t.Errorf("after the purge a walk of all versions finds %d, want %d", seen, n-1)
	}
}
