package db_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"backupd/db"
)

// The open change sets are counted by state, every open state named, the
// ended ones left out.
func TestOpenChangeSetCounts(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	count := func() map[string]int {
		t.Helper()
		got, err := s.OpenChangeSetCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	zero := map[string]int{db.ChangeSetDraft: 0, db.ChangeSetReady: 0, db.ChangeSetApproved: 0, db.ChangeSetRunning: 0}
	if got := count(); !maps.Equal(got, zero) {
		t.Fatalf("no change sets: %v", got)
	}
	d := retDevice(t, s, "cs1")
	newChangeSet(t, s, d)
	newChangeSet(t, s, d)
	renderAll(t, s, newChangeSet(t, s, d))
	approve := func() db.ChangeSet {
		t.Helper()
		c, err := s.ApproveChangeSet(ctx, renderAll(t, s, newChangeSet(t, s, d)).ID, db.Decision{Name: "bob"}, time.Now().Add(time.Hour), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	approve()
	if _, err := s.StartChangeSet(ctx, approve().ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelChangeSet(ctx, approve().ID, nil, "not today", nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{db.ChangeSetDraft: 2, db.ChangeSetReady: 1, db.ChangeSetApproved: 1, db.ChangeSetRunning: 1}
	if got := count(); !maps.Equal(got, want) {
		t.Errorf("open change sets %v, want %v", got, want)
	}
}
