package db_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"backupd/db"
)

// hashes are stand-ins for recovery-code hashes: the store keeps what it
// is given.
func hashes(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

func TestTOTPEnrolAndConfirm(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	st, err := s.TOTPState(ctx, f.root)
	if err != nil || st.Secret != nil || st.Enabled() || st.RecoveryCodesLeft != 0 {
		t.Fatalf("a new user's second factor: %+v, %v", st, err)
	}
	if _, err := s.TOTPState(ctx, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown user: %v", err)
	}
	if err := s.ConfirmTOTP(ctx, f.root, 5, nil, time.Now()); !errors.Is(err, db.ErrNoTOTP) {
		t.Errorf("confirm with no enrolment: %v, want ErrNoTOTP", err)
	}
	if err := s.BeginTOTPEnrolment(ctx, f.root, []byte("sealed-1")); err != nil {
		t.Fatal(err)
	}
	// A second start replaces the unconfirmed secret.
	if err := s.BeginTOTPEnrolment(ctx, f.root, []byte("sealed-2")); err != nil {
		t.Fatal(err)
	}
	st, _ = s.TOTPState(ctx, f.root)
	if !bytes.Equal(st.Secret, []byte("sealed-2")) || st.Enabled() {
		t.Fatalf("after the enrolment began: %+v", st)
	}
	if u, _ := s.UserByID(ctx, f.root); u.TOTPEnabled {
		t.Error("an unconfirmed second factor counts as enabled")
	}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := s.ConfirmTOTP(ctx, f.root, 1000, hashes("a", 10), at); err != nil {
		t.Fatal(err)
	}
	st, _ = s.TOTPState(ctx, f.root)
	if !st.Enabled() || !st.EnabledAt.Equal(at) || st.LastStep != 1000 || st.RecoveryCodesLeft != 10 || !bytes.Equal(st.Secret, []byte("sealed-2")) {
		t.Fatalf("after confirming: %+v", st)
	}
	if u, _ := s.UserByID(ctx, f.root); !u.TOTPEnabled {
		t.Error("User.TOTPEnabled is false after confirming")
	}
	if err := s.BeginTOTPEnrolment(ctx, f.root, []byte("sealed-3")); !errors.Is(err, db.ErrTOTPEnabled) {
		t.Errorf("begin over an enabled second factor: %v", err)
	}
	if err := s.ConfirmTOTP(ctx, f.root, 1001, nil, at); !errors.Is(err, db.ErrTOTPEnabled) {
		t.Errorf("confirm twice: %v", err)
	}
	if st, _ := s.TOTPState(ctx, f.root); !bytes.Equal(st.Secret, []byte("sealed-2")) || st.RecoveryCodesLeft != 10 {
		t.Errorf("refused changes changed the second factor: %+v", st)
	}
	sum, err := s.TwoFactorSummaries(ctx, []int64{f.root, f.val})
	if err != nil || !sum[f.root].Enabled || !sum[f.root].Local || sum[f.val].Enabled || len(sum) != 2 {
		t.Errorf("TwoFactorSummaries = %+v, %v", sum, err)
	}
}

func enabledFixture(t *testing.T) adminFixture {
	t.Helper()
	f := newAdminFixture(t)
	if err := f.s.BeginTOTPEnrolment(f.ctx, f.root, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ConfirmTOTP(f.ctx, f.root, 1000, hashes("r", 10), time.Now()); err != nil {
		t.Fatal(err)
	}
	return f
}

// A step is accepted once, and of many requests racing with one code
// exactly one wins.
func TestTOTPAcceptStepOnce(t *testing.T) {
	f := enabledFixture(t)
	s, ctx := f.s, f.ctx
	for _, step := range []int64{999, 1000} {
		if ok, err := s.AcceptTOTPStep(ctx, f.root, step); ok || err != nil {
			t.Errorf("step %d at last step 1000: ok=%v, %v", step, ok, err)
		}
	}
	if ok, err := s.AcceptTOTPStep(ctx, f.root, 1001); !ok || err != nil {
		t.Fatalf("step 1001: ok=%v, %v", ok, err)
	}
	if ok, _ := s.AcceptTOTPStep(ctx, f.root, 1001); ok {
		t.Error("step 1001 accepted twice")
	}
	if ok, _ := s.AcceptTOTPStep(ctx, f.val, 5); ok {
		t.Error("a step accepted for a user without a second factor")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.AcceptTOTPStep(ctx, f.root, 1002)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of 8 racing requests accepted one step, want 1", won)
	}
	if st, _ := s.TOTPState(ctx, f.root); st.LastStep != 1002 {
		t.Errorf("last step %d, want 1002", st.LastStep)
	}
}

// Ten wrong codes lock the second factor for five minutes and start the
// count again; the lock ends by itself, and a right code clears the
// count.
func TestTOTPFailuresLock(t *testing.T) {
	f := enabledFixture(t)
	s, ctx := f.s, f.ctx
	const limit, lock = 10, 5 * time.Minute
	now := time.Now().UTC().Truncate(time.Second)
	for i := 1; i < limit; i++ {
		until, err := s.RecordTOTPFailure(ctx, f.root, now, limit, lock)
		if err != nil || !until.IsZero() {
			t.Fatalf("failure %d: locked until %v, %v", i, until, err)
		}
	}
	if st, _ := s.TOTPState(ctx, f.root); st.Failures != limit-1 || st.Locked(now) {
		t.Fatalf("after %d failures: %+v", limit-1, st)
	}
	until, err := s.RecordTOTPFailure(ctx, f.root, now, limit, lock)
	if err != nil || !until.Equal(now.Add(lock)) {
		t.Fatalf("failure %d: locked until %v, %v; want %v", limit, until, err, now.Add(lock))
	}
	st, _ := s.TOTPState(ctx, f.root)
	if st.Failures != 0 || !st.Locked(now) || !st.Locked(now.Add(lock-time.Second)) || st.Locked(now.Add(lock)) {
		t.Fatalf("after the locking failure: %+v", st)
	}
	// After the lock, the count starts from nothing: one more failure
	// locks nothing.
	later := now.Add(lock + time.Second)
	if until, _ := s.RecordTOTPFailure(ctx, f.root, later, limit, lock); !until.IsZero() {
		t.Errorf("the first failure after a lock locked again until %v", until)
	}
	if st, _ := s.TOTPState(ctx, f.root); st.Failures != 1 {
		t.Errorf("failures after the lock: %d, want 1", st.Failures)
	}
	if ok, _ := s.AcceptTOTPStep(ctx, f.root, 1001); !ok {
		t.Fatal("a right code after the lock was refused")
	}
	if st, _ := s.TOTPState(ctx, f.root); st.Failures != 0 || !st.LockedUntil.IsZero() {
		t.Errorf("a right code left failures %d, lock %v", st.Failures, st.LockedUntil)
	}
	if _, err := s.RecordTOTPFailure(ctx, 9999, now, limit, lock); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("failure of an unknown user: %v", err)
	}
}

func TestRecoveryCodesOnce(t *testing.T) {
	f := enabledFixture(t)
	s, ctx := f.s, f.ctx
	now := time.Now()
	if _, err := s.RecordTOTPFailure(ctx, f.root, now, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.UseRecoveryCode(ctx, f.root, "r-03", now); !ok || err != nil {
		t.Fatalf("use r-03: %v, %v", ok, err)
	}
	st, _ := s.TOTPState(ctx, f.root)
	if st.RecoveryCodesLeft != 9 || st.Failures != 0 {
		t.Errorf("after using a code: %d left, %d failures", st.RecoveryCodesLeft, st.Failures)
	}
	for _, h := range []string{"r-03", "nope"} {
		if ok, err := s.UseRecoveryCode(ctx, f.root, h, now); ok || err != nil {
			t.Errorf("use %s: %v, %v; want refused", h, ok, err)
		}
	}
	if ok, _ := s.UseRecoveryCode(ctx, f.val, "r-04", now); ok {
		t.Error("another user's recovery code was accepted")
	}
	// New codes void the old ones, used or not.
	if err := s.ReplaceRecoveryCodes(ctx, f.root, hashes("n", 10)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.UseRecoveryCode(ctx, f.root, "r-04", now); ok {
		t.Error("an old recovery code works after new ones were made")
	}
	if ok, _ := s.UseRecoveryCode(ctx, f.root, "n-04", now); !ok {
		t.Error("a new recovery code was refused")
	}
	if st, _ := s.TOTPState(ctx, f.root); st.RecoveryCodesLeft != 9 {
		t.Errorf("%d codes left, want 9", st.RecoveryCodesLeft)
	}
	if err := s.ReplaceRecoveryCodes(ctx, f.val, hashes("x", 10)); !errors.Is(err, db.ErrNoTOTP) {
		t.Errorf("recovery codes for a user without a second factor: %v", err)
	}
}

// A reset clears every part of the second factor and ends the user's
// sessions, no one else's; turning it off oneself keeps the sessions.
func TestTOTPResetEndsSessions(t *testing.T) {
	f := enabledFixture(t)
	s, ctx := f.s, f.ctx
	f.session(t, f.root, "s-root-1")
	f.session(t, f.root, "s-root-2")
	f.session(t, f.val, "s-val")
	if _, err := s.RecordTOTPFailure(ctx, f.root, time.Now(), 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetTOTP(ctx, f.root); err != nil {
		t.Fatal(err)
	}
	st, _ := s.TOTPState(ctx, f.root)
	if st.Secret != nil || st.Enabled() || st.LastStep != 0 || st.Failures != 0 || !st.LockedUntil.IsZero() || st.RecoveryCodesLeft != 0 {
		t.Errorf("after a reset: %+v", st)
	}
	var codes int
	if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM user_recovery_codes WHERE user_id = ?`, f.root).Scan(&codes); err != nil || codes != 0 {
		t.Errorf("%d recovery codes (used ones too) left after a reset, %v", codes, err)
	}
	if n := f.sessionsOf(f.root); n != 0 {
		t.Errorf("%d sessions of the user left after a reset", n)
	}
	if n := f.sessionsOf(f.val); n != 1 {
		t.Errorf("another user's sessions: %d, want 1", n)
	}
	if err := s.ResetTOTP(ctx, 9999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("reset of an unknown user: %v", err)
	}

	// The user enrols again; turning it off keeps its sessions.
	if err := s.BeginTOTPEnrolment(ctx, f.root, []byte("again")); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfirmTOTP(ctx, f.root, 7, hashes("z", 10), time.Now()); err != nil {
		t.Fatal(err)
	}
	f.session(t, f.root, "s-root-3")
	if err := s.DisableTOTP(ctx, f.root); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.TOTPState(ctx, f.root); st.Enabled() || st.Secret != nil || st.RecoveryCodesLeft != 0 {
		t.Errorf("after turning it off: %+v", st)
	}
	if n := f.sessionsOf(f.root); n != 1 {
		t.Errorf("turning the second factor off ended sessions: %d left", n)
	}
}

func TestRoleRequire2FA(t *testing.T) {
	f := newAdminFixture(t)
	s, ctx := f.s, f.ctx
	if r, _ := s.RoleByID(ctx, f.viewer); r.Require2FA {
		t.Fatal("a role requires a second factor from the start")
	}
	if on, err := s.UserRequires2FA(ctx, f.val); on || err != nil {
		t.Fatalf("UserRequires2FA before: %v, %v", on, err)
	}
	if err := s.SetRoleRequire2FA(ctx, f.viewer, true); err != nil {
		t.Fatal(err)
	}
	byID, _ := s.RoleByID(ctx, f.viewer)
	byName, _ := s.RoleByName(ctx, "Viewer")
	list, _ := s.ListRoles(ctx)
	i := slices.IndexFunc(list, func(r db.RoleSummary) bool { return r.ID == f.viewer })
	if !byID.Require2FA || !byName.Require2FA || i < 0 || !list[i].Require2FA {
		t.Errorf("Require2FA not read back: by id %v, by name %v, listed %+v", byID.Require2FA, byName.Require2FA, list)
	}
	if admin, _ := s.RoleByID(ctx, f.admin); admin.Require2FA {
		t.Error("another role requires it too")
	}
	if on, _ := s.UserRequires2FA(ctx, f.val); !on {
		t.Error("the holder of a role requiring a second factor is not required to use one")
	}
	if on, _ := s.UserRequires2FA(ctx, f.root); on {
		t.Error("a user without such a role is required to use a second factor")
	}
	sum, err := s.TwoFactorSummaries(ctx, []int64{f.root, f.val})
	if err != nil || !sum[f.val].Required || sum[f.root].Required {
		t.Errorf("TwoFactorSummaries = %+v, %v", sum, err)
	}
	// A directory user holding the role uses its directory's second
	// factor: the local one is not required of it.
	if _, err := s.Exec(ctx, `UPDATE users SET source = 'ldap' WHERE id = ?`, f.val); err != nil {
		t.Fatal(err)
	}
	if sum, _ := s.TwoFactorSummaries(ctx, []int64{f.val}); sum[f.val].Required || sum[f.val].Local {
		t.Errorf("a directory user's summary: %+v", sum[f.val])
	}
	if _, err := s.Exec(ctx, `UPDATE users SET source = 'local' WHERE id = ?`, f.val); err != nil {
		t.Fatal(err)
	}
	// The built-in roles are brought in step at every start: the rule
	// stays.
	if err := s.EnsureRole(ctx, db.Role{Name: "Viewer", Builtin: true, Permissions: []string{"groups.view"}}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.RoleByID(ctx, f.viewer); !r.Require2FA {
		t.Error("EnsureRole dropped the second-factor rule")
	}
	if err := s.SetRoleRequire2FA(ctx, f.viewer, false); err != nil {
		t.Fatal(err)
	}
	if on, _ := s.UserRequires2FA(ctx, f.val); on {
		t.Error("still required after the rule was turned off")
	}
	if err := s.SetRoleRequire2FA(ctx, 9999, true); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("unknown role: %v", err)
	}
}
