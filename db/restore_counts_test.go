package db_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

// The open restores are counted by state, every open state named, the
// ended ones left out.
func TestOpenRestoreCounts(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	count := func() map[string]int {
		t.Helper()
		got, err := s.OpenRestoreCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	zero := map[string]int{db.RestorePreviewing: 0, db.RestorePending: 0, db.RestoreApproved: 0, db.RestoreQueued: 0, db.RestoreRunning: 0}
	if got := count(); !maps.Equal(got, zero) {
		t.Fatalf("no restores: %v", got)
	}
	d1, v1 := restoreDevice(t, s, "oc1")
	d2, v2 := restoreDevice(t, s, "oc2")
	d3, v3 := restoreDevice(t, s, "oc3")
	newRestore(t, s, d1, v1, nil)
	approvedRestore(t, s, d2, v2, time.Now().Add(time.Hour))
	ended := newRestore(t, s, d3, v3, nil)
	if _, err := s.CancelRestore(ctx, ended.ID, nil); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(zero)
	want[db.RestorePreviewing], want[db.RestoreApproved] = 1, 1
	if got := count(); !maps.Equal(got, want) {
		t.Errorf("open restores %v, want %v", got, want)
	}
}
