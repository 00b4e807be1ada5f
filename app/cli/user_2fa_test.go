package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

// `user reset-2fa` clears a user's second factor on the data directory,
// ends its web sessions and leaves an audit entry; an unknown user is
// an error that says so.
func TestUserReset2FA(t *testing.T) {
	data := storeDir(t)
	mustRun(t, call{stdin: "alice-password-1\n"}, "user", "create", "--data", data, "alice", "--role", "Operator", "--password-stdin")
	s := openStore(t, data)
	ctx := context.Background()
	alice, err := s.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginTOTPEnrolment(ctx, alice.ID, []byte("sealed secret")); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfirmTOTP(ctx, alice.ID, 100, []string{"h1", "h2"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := s.CreateWebSession(ctx, db.WebSession{ID: "alice-browser", UserID: alice.ID, CSRFSecret: "c",
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	rows := userList(t, data)
	if rows["alice"].twoFA != "on" || rows["admin"].twoFA != "off" {
		t.Errorf("user list 2FA: alice %q, admin %q; want on, off", rows["alice"].twoFA, rows["admin"].twoFA)
	}

	r := mustRun(t, call{}, "user", "reset-2fa", "--data", data, "alice")
	if !strings.Contains(r.stderr, `second factor of "alice" reset`) {
		t.Errorf("reset-2fa says:\n%s", r.stderr)
	}
	st, err := s.TOTPState(ctx, alice.ID)
	if err != nil || st.Enabled() || st.Secret != nil || st.RecoveryCodesLeft != 0 {
		t.Errorf("second factor after reset-2fa: %+v, %v", st, err)
	}
	if _, err := s.WebSessionByID(ctx, "alice-browser"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("alice's web session after reset-2fa: %v, want it ended", err)
	}
	if got := userList(t, data)["alice"].twoFA; got != "off" {
		t.Errorf("user list 2FA after the reset: %q", got)
	}
	entries, _, err := s.ListAudit(ctx, 10, 0)
	if err != nil || len(entries) == 0 {
		t.Fatal(err)
	}
	e := entries[0]
	if e.Action != "user.2fa_reset" || e.Interface != "cli" || !strings.HasPrefix(e.Username, "os:") ||
		e.Details["username"] != "alice" || e.Details["was_enabled"] != true || e.Details["sessions_ended"] != true {
		t.Errorf("audit entry %+v", e)
	}

	mustFail(t, call{}, []string{`no user "nobody"`}, "user", "reset-2fa", "--data", data, "nobody")
	mustFail(t, call{}, []string{"accepts 1 arg"}, "user", "reset-2fa", "--data", data)
}
