package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

func TestOIDCLoginIsTakenOnce(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	l := db.OIDCLogin{StateHash: "aa11", Nonce: "n-1", Verifier: "v-1", Next: "/devices?q=x", CreatedAt: now}
	if err := s.CreateOIDCLogin(ctx, l, now.Add(-10*time.Minute), 100); err != nil {
		t.Fatal(err)
	}
	got, err := s.TakeOIDCLogin(ctx, "aa11", now.Add(-10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got != l {
		t.Fatalf("TakeOIDCLogin = %+v, want %+v", got, l)
	}
	if _, err := s.TakeOIDCLogin(ctx, "aa11", now.Add(-10*time.Minute)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("second take: %v, want ErrNotFound", err)
	}
	if _, err := s.TakeOIDCLogin(ctx, "never", now.Add(-10*time.Minute)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("unknown state: %v, want ErrNotFound", err)
	}
}

func TestOIDCLoginExpiredIsRefusedAndGone(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	made := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	if err := s.CreateOIDCLogin(ctx, db.OIDCLogin{StateHash: "old", Nonce: "n", Verifier: "v", CreatedAt: made},
		made.Add(-10*time.Minute), 100); err != nil {
		t.Fatal(err)
	}
	// Eleven minutes later a ten-minute sign-in is over.
	later := made.Add(11 * time.Minute)
	if _, err := s.TakeOIDCLogin(ctx, "old", later.Add(-10*time.Minute)); !errors.Is(err, db.ErrOIDCLoginExpired) {
		t.Fatalf("expired take: %v, want ErrOIDCLoginExpired", err)
	}
	if n := oidcLoginRows(t, s); n != 0 {
		t.Fatalf("%d rows left after an expired take, want 0", n)
	}
}

func TestOIDCLoginCreatePrunesAndIsBounded(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	for i := range 3 {
		l := db.OIDCLogin{StateHash: fmt.Sprintf("h%d", i), Nonce: "n", Verifier: "v", CreatedAt: base.Add(time.Duration(i) * 5 * time.Minute)}
		if err := s.CreateOIDCLogin(ctx, l, base.Add(-time.Hour), 100); err != nil {
			t.Fatal(err)
		}
	}
	// A sign-in begun at +16 min prunes what began before +6: the rows
	// of +0 and +5 go, the one of +10 stays.
	now := base.Add(16 * time.Minute)
	if err := s.CreateOIDCLogin(ctx, db.OIDCLogin{StateHash: "a", Nonce: "n", Verifier: "v", CreatedAt: now}, now.Add(-10*time.Minute), 3); err != nil {
		t.Fatalf("create after old rows: %v", err)
	}
	if n := oidcLoginRows(t, s); n != 2 {
		t.Fatalf("%d rows after creating, want 2 (the old ones pruned)", n)
	}
	if _, err := s.TakeOIDCLogin(ctx, "h0", base.Add(-time.Hour)); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("a pruned row: %v, want ErrNotFound", err)
	}
	// Three under way is the limit given: a fourth is refused, and
	// nothing is stored.
	if err := s.CreateOIDCLogin(ctx, db.OIDCLogin{StateHash: "b", Nonce: "n", Verifier: "v", CreatedAt: now}, now.Add(-10*time.Minute), 3); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateOIDCLogin(ctx, db.OIDCLogin{StateHash: "c", Nonce: "n", Verifier: "v", CreatedAt: now}, now.Add(-10*time.Minute), 3); !errors.Is(err, db.ErrTooManyOIDCLogins) {
		t.Fatalf("fourth of a limit of 3: %v, want ErrTooManyOIDCLogins", err)
	}
	if _, err := s.TakeOIDCLogin(ctx, "c", base); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("the refused row: %v, want ErrNotFound", err)
	}
	if _, err := s.TakeOIDCLogin(ctx, "h2", base); err != nil {
		t.Fatalf("the young row: %v", err)
	}
}

func oidcLoginRows(t *testing.T, s *db.Store) int {
	t.Helper()
	var n int
	if err := dbtest.Peek(t, s).QueryRow(`SELECT COUNT(*) FROM oidc_logins`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
