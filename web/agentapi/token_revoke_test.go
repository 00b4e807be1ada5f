package agentapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"backupd/app/agent"
	"backupd/db"
	"backupd/web/agentapi"
)

// An enrolment token revoked before use enrols nothing through the
// protocol; another of the same zone still does, and a used one cannot
// be revoked (its collector is).
func TestRevokedEnrolmentTokenCannotEnrol(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	enrol := func(token string) int {
		t.Helper()
		key, err := agent.NewKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(agent.EnrolRequest{Token: token, Name: "edge", PublicKey: agent.EncodeKey(key.Public), Version: "t"})
		return call(t, e, "enrol", "", string(body), nil)
	}
	leaked, leakedID, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	good, goodID, err := agentapi.NewEnrolmentToken(ctx, e.store, e.zone.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	usable, err := e.store.ListEnrolmentTokens(ctx, &now)
	if err != nil || len(usable) != 2 || usable[0].ID != goodID || usable[1].ID != leakedID {
		t.Fatalf("usable tokens before the revocation: %+v, %v", usable, err)
	}

	tok, err := e.store.RevokeEnrolmentToken(ctx, leakedID)
	if err != nil || tok.RevokedAt == nil || tok.Usable(time.Now()) {
		t.Fatalf("revoke: %+v, %v", tok, err)
	}
	if _, err := e.store.RevokeEnrolmentToken(ctx, leakedID); err != nil {
		t.Errorf("revoking again: %v, want no error", err)
	}
	if status := enrol(leaked); status != http.StatusForbidden {
		t.Fatalf("enrolment with a revoked token: %d, want 403", status)
	}
	if status := enrol(good); status != http.StatusOK {
		t.Fatalf("enrolment with an unrevoked token of the zone: %d, want 200", status)
	}
	if _, err := e.store.RevokeEnrolmentToken(ctx, goodID); !errors.Is(err, db.ErrTokenUsed) {
		t.Errorf("revoking a used token: %v, want ErrTokenUsed", err)
	}
	if _, err := e.store.RevokeEnrolmentToken(ctx, 999999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("revoking an unknown token: %v, want ErrNotFound", err)
	}
	if usable, _ := e.store.ListEnrolmentTokens(ctx, &now); len(usable) != 0 {
		t.Errorf("usable tokens after one was revoked and one used: %+v", usable)
	}
	all, err := e.store.ListEnrolmentTokens(ctx, nil)
	if err != nil || len(all) != 2 || all[0].CollectorID == nil || all[0].CollectorName != "edge" || all[1].RevokedAt == nil {
		t.Fatalf("all tokens: %+v, %v", all, err)
	}
}
