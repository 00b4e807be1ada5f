package db_test

import (
	"context"
	"errors"
	"testing"

	"backupd/db"
)

func TestAcceptSeenHostKey(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	id := insertDevice(t, s, "r1", nil, nil, nil)
	if err := s.AcceptSeenHostKey(ctx, id, []byte("new")); !errors.Is(err, db.ErrNoPendingHostKey) {
		t.Fatalf("nothing pending: %v", err)
	}
	if _, err := s.Exec(ctx, `UPDATE devices SET host_key = ?, pending_host_key = ? WHERE id = ?`, []byte("old"), []byte("new"), id); err != nil {
		t.Fatal(err)
	}
	if err := s.AcceptSeenHostKey(ctx, id, []byte("other")); !errors.Is(err, db.ErrPendingHostKeyChanged) {
		t.Fatalf("another key seen: %v", err)
	}
	if pinned, pending, _ := s.HostKeys(ctx, id); string(pinned) != "old" || string(pending) != "new" {
		t.Fatalf("a refused accept changed the keys: %q %q", pinned, pending)
	}
	if err := s.AcceptSeenHostKey(ctx, id, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if pinned, pending, _ := s.HostKeys(ctx, id); string(pinned) != "new" || pending != nil {
		t.Fatalf("after accepting: %q %q", pinned, pending)
	}
	if err := s.AcceptSeenHostKey(ctx, 9999, []byte("new")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("missing device: %v", err)
	}
}
