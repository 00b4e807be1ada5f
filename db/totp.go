package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// A local user's second factor (TOTP): the sealed secret, whether it is
// confirmed, the last time step a code was accepted for (a code is good
// once), the count of wrong codes and the lock they set, and the
// one-time recovery codes, hashed. What a code is and when to lock are
// app/auth's rules; the store keeps the state and changes it atomically.

// TOTPState is a user's second factor as sign-in and the account page
// need it.
type TOTPState struct {
	// Secret is the sealed secret: the confirmed one, or the one of an
	// enrolment under way; nil when there is none.
	Secret []byte
	// EnabledAt is when the second factor was confirmed; nil while not.
	EnabledAt *time.Time
	// LastStep is the last time step a code was accepted for.
	LastStep int64
	// Failures counts wrong codes since the last right one or lock.
	Failures int
	// LockedUntil refuses codes unchecked until then (zero: no lock set).
	LockedUntil time.Time
	// RecoveryCodesLeft is how many recovery codes are still unused.
	RecoveryCodesLeft int
}

// Enabled reports whether the user has a confirmed second factor.
func (t TOTPState) Enabled() bool { return t.EnabledAt != nil }

// Locked reports whether codes are refused at now.
func (t TOTPState) Locked(now time.Time) bool { return now.Before(t.LockedUntil) }

// ErrTOTPEnabled is an enrolment begun or confirmed for a user whose
// second factor is already set up.
var ErrTOTPEnabled = errors.New("the second factor is already set up")

// ErrNoTOTP is a change that needs a second factor (an enrolment under
// way, or a confirmed one) the user does not have.
var ErrNoTOTP = errors.New("no second factor is set up")

func totpTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// TOTPState returns the user's second factor; ErrNotFound for no user.
func (s *Store) TOTPState(ctx context.Context, userID int64) (TOTPState, error) {
	var st TOTPState
	var enabled, locked sql.NullString
	err := s.reader.QueryRowContext(ctx, `SELECT totp_secret, totp_enabled_at, totp_last_step, totp_failures, totp_locked_until,
		(SELECT COUNT(*) FROM user_recovery_codes c WHERE c.user_id = u.id AND c.used_at IS NULL)
		FROM users u WHERE u.id = ?`, userID).Scan(&st.Secret, &enabled, &st.LastStep, &st.Failures, &locked, &st.RecoveryCodesLeft)
	if errors.Is(err, sql.ErrNoRows) {
		return st, ErrNotFound
	}
	if err != nil {
		return st, fmt.Errorf("get second factor: %w", err)
	}
	if enabled.Valid {
		t, err := ParseTime(enabled.String)
		if err != nil {
			return st, fmt.Errorf("second factor enabled at: %w", err)
		}
		st.EnabledAt = &t
	}
	if locked.Valid {
		if st.LockedUntil, err = ParseTime(locked.String); err != nil {
			return st, fmt.Errorf("second factor locked until: %w", err)
		}
	}
	return st, nil
}

// BeginTOTPEnrolment stores a new sealed secret for the user, not yet
// confirmed (an earlier unconfirmed one is replaced). A user whose
// second factor is set up is ErrTOTPEnabled; an unknown one ErrNotFound.
func (s *Store) BeginTOTPEnrolment(ctx context.Context, userID int64, sealed []byte) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var enabled sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT totp_enabled_at FROM users WHERE id = ?`, userID).Scan(&enabled)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("get second factor: %w", err)
		}
		if enabled.Valid {
			return ErrTOTPEnabled
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET totp_secret = ?, totp_last_step = 0, totp_failures = 0,
			totp_locked_until = NULL, updated_at = ? WHERE id = ?`, sealed, Now(), userID); err != nil {
			return fmt.Errorf("begin second factor: %w", err)
		}
		return nil
	})
}

// ConfirmTOTP turns the enrolment under way on, in one transaction: the
// second factor is enabled at at, step (the one the confirming code
// matched) is its last used step, and codeHashes are its recovery codes.
// No enrolment under way is ErrNoTOTP; one already confirmed
// ErrTOTPEnabled.
func (s *Store) ConfirmTOTP(ctx context.Context, userID, step int64, codeHashes []string, at time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var secret []byte
		var enabled sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT totp_secret, totp_enabled_at FROM users WHERE id = ?`, userID).Scan(&secret, &enabled)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return fmt.Errorf("get second factor: %w", err)
		case enabled.Valid:
			return ErrTOTPEnabled
		case secret == nil:
			return ErrNoTOTP
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET totp_enabled_at = ?, totp_last_step = ?, totp_failures = 0,
			totp_locked_until = NULL, updated_at = ? WHERE id = ?`, totpTime(at), step, Now(), userID); err != nil {
			return fmt.Errorf("confirm second factor: %w", err)
		}
		return replaceRecoveryCodes(ctx, tx, userID, codeHashes)
	})
}

func replaceRecoveryCodes(ctx context.Context, tx *sql.Tx, userID int64, hashes []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ?`, userID); err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	for _, h := range hashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_recovery_codes (user_id, code_hash) VALUES (?, ?)`, userID, h); err != nil {
			return fmt.Errorf("store recovery code: %w", err)
		}
	}
	return nil
}

// AcceptTOTPStep records that a code of step was accepted, when step is
// after the last one accepted (compare-and-set: of two requests with one
// code, one wins), and clears the failures. ok is false when the step
// was used already or the user has no confirmed second factor.
func (s *Store) AcceptTOTPStep(ctx context.Context, userID, step int64) (ok bool, err error) {
	res, err := s.writer.ExecContext(ctx, `UPDATE users SET totp_last_step = ?, totp_failures = 0, totp_locked_until = NULL
		WHERE id = ? AND totp_last_step < ? AND totp_enabled_at IS NOT NULL`, step, userID, step)
	if err != nil {
		return false, fmt.Errorf("accept second-factor code: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RecordTOTPFailure counts a wrong code. The limit-th in a row locks the
// second factor until now+lock and starts the count again, so that the
// lock ends: the real user waits, an attacker gets limit guesses per
// lock. It returns the lock's end when this failure set one (zero
// otherwise).
func (s *Store) RecordTOTPFailure(ctx context.Context, userID int64, now time.Time, limit int, lock time.Duration) (time.Time, error) {
	var until time.Time
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		until = time.Time{}
		end := totpTime(now.Add(lock))
		// Every SET reads the row as it was: both CASEs see the old count.
		res, err := tx.ExecContext(ctx, `UPDATE users SET
			totp_locked_until = CASE WHEN totp_failures + 1 >= ? THEN ? ELSE totp_locked_until END,
			totp_failures = CASE WHEN totp_failures + 1 >= ? THEN 0 ELSE totp_failures + 1 END
			WHERE id = ?`, limit, end, limit, userID)
		if err != nil {
			return fmt.Errorf("count second-factor failure: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		var failures int
		var locked sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT totp_failures, totp_locked_until FROM users WHERE id = ?`, userID).
			Scan(&failures, &locked); err != nil {
			return fmt.Errorf("read second-factor failures: %w", err)
		}
		if failures == 0 && locked.Valid && locked.String == end {
			if until, err = ParseTime(locked.String); err != nil {
				return fmt.Errorf("second factor locked until: %w", err)
			}
		}
		return nil
	})
	return until, err
}

// UseRecoveryCode spends the user's unused recovery code hash at at and
// clears the failures; ok is false when the user has no such unused
// code (or no confirmed second factor).
func (s *Store) UseRecoveryCode(ctx context.Context, userID int64, hash string, at time.Time) (ok bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		ok = false
		res, err := tx.ExecContext(ctx, `UPDATE user_recovery_codes SET used_at = ?
			WHERE user_id = ? AND code_hash = ? AND used_at IS NULL
			AND EXISTS (SELECT 1 FROM users u WHERE u.id = user_recovery_codes.user_id AND u.totp_enabled_at IS NOT NULL)`,
			totpTime(at), userID, hash)
		if err != nil {
			return fmt.Errorf("use recovery code: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET totp_failures = 0, totp_locked_until = NULL WHERE id = ?`, userID); err != nil {
			return fmt.Errorf("clear second-factor failures: %w", err)
		}
		ok = true
		return nil
	})
	return ok, err
}

// ReplaceRecoveryCodes makes hashes the user's recovery codes, the old
// ones void. A user without a confirmed second factor is ErrNoTOTP.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, userID int64, hashes []string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if on, err := engine.Exists(ctx, tx, `SELECT 1 FROM users WHERE id = ? AND totp_enabled_at IS NOT NULL`, userID); err != nil {
			return err
		} else if !on {
			return ErrNoTOTP
		}
		return replaceRecoveryCodes(ctx, tx, userID, hashes)
	})
}

// DisableTOTP clears the user's second factor (secret, counters,
// recovery codes): the user turning it off itself, with a code.
func (s *Store) DisableTOTP(ctx context.Context, userID int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return clearTOTP(ctx, tx, userID) })
}

// ResetTOTP clears the user's second factor and ends every web session
// of the user, in one transaction: an administrator's reset after a lost
// phone, after which the user signs in with the password and sets it up
// again (at once, when a role requires it).
func (s *Store) ResetTOTP(ctx context.Context, userID int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := clearTOTP(ctx, tx, userID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("end web sessions: %w", err)
		}
		return nil
	})
}

func clearTOTP(ctx context.Context, tx *sql.Tx, userID int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = 0,
		totp_failures = 0, totp_locked_until = NULL, updated_at = ? WHERE id = ?`, Now(), userID)
	if err != nil {
		return fmt.Errorf("clear second factor: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ?`, userID); err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	return nil
}

// UserRequires2FA reports whether the user holds a role whose members
// must use a second factor.
func (s *Store) UserRequires2FA(ctx context.Context, userID int64) (bool, error) {
	on, err := engine.Exists(ctx, s.reader, `SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		WHERE ur.user_id = ? AND r.require_2fa = 1`, userID)
	if err != nil {
		return false, fmt.Errorf("roles requiring a second factor: %w", err)
	}
	return on, nil
}

// TwoFactorSummary is a user's second factor as the users list shows it.
type TwoFactorSummary struct {
	// Local: the user signs in with a password kept here (the local
	// second factor is for those only).
	Local bool
	// Enabled: a second factor is set up.
	Enabled bool
	// Required: a local user holding a role that requires one.
	Required bool
}

// TwoFactorSummaries returns the second-factor summary of each of the
// users ids (for one page of the users list).
func (s *Store) TwoFactorSummaries(ctx context.Context, ids []int64) (map[int64]TwoFactorSummary, error) {
	out := map[int64]TwoFactorSummary{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	err := engine.EachRow(ctx, s.reader, `SELECT u.id, u.source, u.totp_enabled_at IS NOT NULL,
		EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id AND r.require_2fa = 1)
		FROM users u WHERE u.id IN (`+engine.Placeholders(len(ids))+`)`, args, func(row engine.Scanner) error {
		var id int64
		var source string
		var t TwoFactorSummary
		if err := row.Scan(&id, &source, &t.Enabled, &t.Required); err != nil {
			return err
		}
		t.Local = source == UserLocal
		t.Required = t.Required && t.Local
		out[id] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("second factors of users: %w", err)
	}
	return out, nil
}
