package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// OIDCLogin is an OpenID Connect sign-in under way: between the browser
// leaving for the provider and coming back to the callback.
type OIDCLogin struct {
	// StateHash is the SHA-256 (hex) of the state; the state itself is
	// only in the browser's cookie and the provider's redirect.
	StateHash string
	// Nonce is what the ID token must carry; Verifier is the PKCE code
	// verifier the code is exchanged with.
	Nonce    string
	Verifier string
	// Next is the local page to land on once signed in ("" for /).
	Next      string
	CreatedAt time.Time
}

// ErrOIDCLoginExpired is a sign-in whose state is known but was started
// longer ago than the callback accepts; the row is gone all the same.
var ErrOIDCLoginExpired = errors.New("the sign-in was started too long ago")

// ErrTooManyOIDCLogins refuses a new sign-in while limit others are under
// way: the start page is public, and rows must not pile up.
var ErrTooManyOIDCLogins = errors.New("too many single sign-ons are under way")

// CreateOIDCLogin records a sign-in that has just begun, unless limit
// sign-ins younger than since are under way already (ErrTooManyOIDCLogins).
// Rows older than since are deleted first: nobody can finish them.
func (s *Store) CreateOIDCLogin(ctx context.Context, l OIDCLogin, since time.Time, limit int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM oidc_logins WHERE created_at < ?`, sessionTime(since)); err != nil {
			return fmt.Errorf("prune oidc logins: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM oidc_logins`).Scan(&n); err != nil {
			return fmt.Errorf("count oidc logins: %w", err)
		}
		if n >= limit {
			return ErrTooManyOIDCLogins
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO oidc_logins (state_hash, nonce, verifier, next, created_at)
			VALUES (?, ?, ?, ?, ?)`, l.StateHash, l.Nonce, l.Verifier, l.Next, sessionTime(l.CreatedAt)); err != nil {
			return fmt.Errorf("create oidc login: %w", err)
		}
		return nil
	})
}

// TakeOIDCLogin deletes the sign-in of stateHash and returns it: a state
// is good once. ErrNotFound when there is none (never made, or already
// taken); ErrOIDCLoginExpired when it was made before notBefore.
func (s *Store) TakeOIDCLogin(ctx context.Context, stateHash string, notBefore time.Time) (OIDCLogin, error) {
	l := OIDCLogin{StateHash: stateHash}
	var created string
	err := s.writer.QueryRowContext(ctx, `DELETE FROM oidc_logins WHERE state_hash = ?
		RETURNING nonce, verifier, next, created_at`, stateHash).Scan(&l.Nonce, &l.Verifier, &l.Next, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return OIDCLogin{}, ErrNotFound
	}
	if err != nil {
		return OIDCLogin{}, fmt.Errorf("take oidc login: %w", err)
	}
	if l.CreatedAt, err = ParseTime(created); err != nil {
		return OIDCLogin{}, fmt.Errorf("oidc login time: %w", err)
	}
	if l.CreatedAt.Before(notBefore.UTC().Truncate(time.Second)) {
		return OIDCLogin{}, ErrOIDCLoginExpired
	}
	return l, nil
}
