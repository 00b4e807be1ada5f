package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// WebSession is a signed-in browser. ID is the SHA-256 (hex) of the token
// in the cookie; the token itself is never stored.
type WebSession struct {
	ID         string
	UserID     int64
	CSRFSecret string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	RemoteAddr string
	UserAgent  string
	// Method is how it was signed in: SessionPassword, SessionLDAP or
	// SessionOIDC.
	Method string
	// Pending is the step still owed before the session may do anything
	// (PendingTOTP, PendingEnroll); "" when none.
	Pending string
	// IDPToken is the provider's ID token, sealed, for ending the
	// provider's session at sign-out (OIDC sessions only).
	IDPToken []byte
}

// How a session was signed in.
const (
	SessionPassword = "password"
	SessionLDAP     = "ldap"
	SessionOIDC     = "oidc"
)

// Steps a session may still owe.
const (
	// PendingTOTP: the password was right, a second-factor code is due.
	PendingTOTP = "totp"
	// PendingEnroll: the user's roles require a second factor it has not
	// set up yet; it must before anything else.
	PendingEnroll = "enroll"
)

// SessionUser is a session with what a request needs to know of its user,
// read in one go: who, whether still active, must the password change,
// and the device-group scope.
type SessionUser struct {
	WebSession
	Username           string
	Active             bool
	MustChangePassword bool
	AllGroups          bool
	GroupIDs           []int64
	// Source is the user's (db.User.Source).
	Source string
}

func sessionTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// CreateWebSession stores a new session.
func (s *Store) CreateWebSession(ctx context.Context, ws WebSession) error {
	return insertWebSession(ctx, s.writer, ws)
}

func insertWebSession(ctx context.Context, q engine.Querier, ws WebSession) error {
	method := ws.Method
	if method == "" {
		method = SessionPassword
	}
	_, err := q.ExecContext(ctx, `INSERT INTO web_sessions (id, user_id, csrf_secret, created_at, last_seen_at,
		expires_at, remote_addr, user_agent, method, pending, idp_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ws.ID, ws.UserID, ws.CSRFSecret, sessionTime(ws.CreatedAt), sessionTime(ws.LastSeenAt),
		sessionTime(ws.ExpiresAt), ws.RemoteAddr, ws.UserAgent, method, ws.Pending, ws.IDPToken)
	if err != nil {
		return fmt.Errorf("create web session: %w", err)
	}
	return nil
}

// ReplaceWebSession stores next and deletes the session oldID in one
// transaction: the session id changes (after a password change, say)
// without a moment where the browser has none or two.
func (s *Store) ReplaceWebSession(ctx context.Context, oldID string, next WebSession) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ?`, oldID); err != nil {
			return fmt.Errorf("delete web session: %w", err)
		}
		return insertWebSession(ctx, tx, next)
	})
}

// WebSessionByID returns the session and its user, or ErrNotFound. It does
// not judge expiry: the caller knows the clock and the idle limit.
func (s *Store) WebSessionByID(ctx context.Context, id string) (SessionUser, error) {
	var su SessionUser
	var created, seen, expires string
	err := s.reader.QueryRowContext(ctx, `SELECT s.id, s.user_id, s.csrf_secret, s.created_at, s.last_seen_at,
		s.expires_at, s.remote_addr, s.user_agent, s.method, s.pending, s.idp_token,
		u.username, u.active, u.must_change_password, u.all_groups, u.source
		FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?`, id).Scan(
		&su.ID, &su.UserID, &su.CSRFSecret, &created, &seen, &expires, &su.RemoteAddr, &su.UserAgent,
		&su.Method, &su.Pending, &su.IDPToken,
		&su.Username, &su.Active, &su.MustChangePassword, &su.AllGroups, &su.Source)
	if errors.Is(err, sql.ErrNoRows) {
		return su, ErrNotFound
	}
	if err != nil {
		return su, fmt.Errorf("get web session: %w", err)
	}
	for _, f := range []struct {
		dst *time.Time
		src string
	}{{&su.CreatedAt, created}, {&su.LastSeenAt, seen}, {&su.ExpiresAt, expires}} {
		if *f.dst, err = ParseTime(f.src); err != nil {
			return su, fmt.Errorf("web session time: %w", err)
		}
	}
	if !su.AllGroups {
		if su.GroupIDs, err = s.userGroupIDs(ctx, su.UserID); err != nil {
			return su, err
		}
	}
	return su, nil
}

// TouchWebSession records activity on a session.
func (s *Store) TouchWebSession(ctx context.Context, id string, at time.Time) error {
	if _, err := s.writer.ExecContext(ctx, `UPDATE web_sessions SET last_seen_at = ? WHERE id = ?`, sessionTime(at), id); err != nil {
		return fmt.Errorf("touch web session: %w", err)
	}
	return nil
}

// DeleteWebSession ends one session; ending one that is gone is no error.
func (s *Store) DeleteWebSession(ctx context.Context, id string) error {
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete web session: %w", err)
	}
	return nil
}

// PruneWebSessions deletes sessions past their absolute expiry (now) or
// idle since before idleCutoff, and returns how many.
func (s *Store) PruneWebSessions(ctx context.Context, now, idleCutoff time.Time) (int, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= ? OR last_seen_at < ?`,
		sessionTime(now), sessionTime(idleCutoff))
	if err != nil {
		return 0, fmt.Errorf("prune web sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ResetPassword sets a user's password hash and must-change flag and ends
// every session of the user, in one transaction: whoever held the old
// password keeps no browser signed in. When next is given it is opened in
// their place (the user changing its own password stays signed in, under
// a new session id).
func (s *Store) ResetPassword(ctx context.Context, userID int64, hash string, mustChange bool, next *WebSession) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, must_change_password = ?, updated_at = ? WHERE id = ?`,
			hash, mustChange, Now(), userID)
		if err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ?`, userID); err != nil {
			return fmt.Errorf("end web sessions: %w", err)
		}
		if next == nil {
			return nil
		}
		return insertWebSession(ctx, tx, *next)
	})
}
