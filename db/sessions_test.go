package db_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"backupd/db"
)

func TestWebSessionLifecycle(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	g := createGroup(t, s, "Core", nil)
	uid, err := s.CreateUser(ctx, db.NewUser{Username: "alice", PasswordHash: "x", MustChangePassword: true, GroupIDs: []int64{g.ID}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ws := db.WebSession{ID: "aa", UserID: uid, CSRFSecret: "csrf", CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(7 * 24 * time.Hour), RemoteAddr: "192.0.2.1", UserAgent: "test",
		Method: db.SessionOIDC, Pending: db.PendingTOTP, IDPToken: []byte("sealed")}
	if err := s.CreateWebSession(ctx, ws); err != nil {
		t.Fatal(err)
	}
	got, err := s.WebSessionByID(ctx, "aa")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.WebSession, ws) || got.Username != "alice" || !got.Active || !got.MustChangePassword || got.AllGroups ||
		len(got.GroupIDs) != 1 || got.GroupIDs[0] != g.ID {
		t.Fatalf("WebSessionByID = %+v", got)
	}
	if _, err := s.WebSessionByID(ctx, "nope"); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown session: %v, want ErrNotFound", err)
	}

	later := now.Add(time.Hour)
	if err := s.TouchWebSession(ctx, "aa", later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.WebSessionByID(ctx, "aa"); !got.LastSeenAt.Equal(later) {
		t.Errorf("last seen %v after touch, want %v", got.LastSeenAt, later)
	}

	// Replacing swaps the id in one step.
	next := ws
	next.ID = "bb"
	if err := s.ReplaceWebSession(ctx, "aa", next); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionByID(ctx, "aa"); !errors.Is(err, db.ErrNotFound) {
		t.Error("the replaced session is still there")
	}
	// A password reset ends every session of the user; a change opens
	// the next one in their place.
	other := ws
	other.ID = "cc"
	if err := s.CreateWebSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetPassword(ctx, uid, "new-hash", false, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"bb", "cc"} {
		if _, err := s.WebSessionByID(ctx, id); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("session %s survived a password reset", id)
		}
	}
	if u, _ := s.UserByName(ctx, "alice"); u.PasswordHash != "new-hash" || u.MustChangePassword {
		t.Errorf("after reset: hash %q, must change %v", u.PasswordHash, u.MustChangePassword)
	}
	next.ID = "dd"
	if err := s.CreateWebSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetPassword(ctx, uid, "newer-hash", true, &next); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionByID(ctx, "cc"); !errors.Is(err, db.ErrNotFound) {
		t.Error("the other session survived a password change")
	}
	if got, err := s.WebSessionByID(ctx, "dd"); err != nil || !got.MustChangePassword {
		t.Errorf("the next session: %+v, %v", got, err)
	}
	if err := s.ResetPassword(ctx, 9999, "x", false, nil); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("reset of an unknown user: %v, want ErrNotFound", err)
	}

	// Pruning removes what has expired or idled out, nothing else.
	idle := ws
	idle.ID, idle.LastSeenAt = "idle", now.Add(-13*time.Hour)
	expired := ws
	expired.ID, expired.ExpiresAt = "expired", now
	for _, x := range []db.WebSession{idle, expired} {
		if err := s.CreateWebSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PruneWebSessions(ctx, now, now.Add(-12*time.Hour)); err != nil || n != 2 {
		t.Fatalf("PruneWebSessions = %d, %v; want 2", n, err)
	}
	if err := s.DeleteWebSession(ctx, "dd"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionByID(ctx, "dd"); !errors.Is(err, db.ErrNotFound) {
		t.Error("a deleted session is still there")
	}
	if err := s.DeleteWebSession(ctx, "dd"); err != nil {
		t.Errorf("deleting a gone session: %v", err)
	}

	// Deleting the user deletes its sessions.
	if err := s.CreateWebSession(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `DELETE FROM users WHERE id = ?`, uid); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSessionByID(ctx, "aa"); !errors.Is(err, db.ErrNotFound) {
		t.Error("a deleted user's session survives")
	}
}
