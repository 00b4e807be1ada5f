package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
)

// APIKey is a stored key: never the key itself, only its prefix and hash.
type APIKey struct {
	ID         int64
	UserID     int64
	Username   string
	UserActive bool
	// UserAllGroups and UserGroupIDs are the owner's device-group scope.
	UserAllGroups bool
	UserGroupIDs  []int64
	Name          string
	Prefix        string
	Hash          []byte
	Narrowed      bool
	Permissions   []string
	ExpiresAt     *string
	RevokedAt     *string
	LastUsedAt    *string
	CreatedAt     string
}

// CreateAPIKey stores a key's prefix and hash, and its narrowed permissions.
func (s *Store) CreateAPIKey(ctx context.Context, k APIKey) (int64, error) {
	var id int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = engine.InsertID(ctx, tx,
			`INSERT INTO api_keys (user_id, name, prefix, hash, narrowed, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			k.UserID, k.Name, k.Prefix, k.Hash, k.Narrowed, engine.NullString(k.ExpiresAt), Now())
		if err != nil {
			return fmt.Errorf("insert api key: %w", err)
		}
		for _, p := range k.Permissions {
			if _, err := tx.ExecContext(ctx, s.d.InsertOrIgnore(`api_key_permissions (key_id, permission)`, `VALUES (?, ?)`), id, p); err != nil {
				return fmt.Errorf("narrow api key: %w", err)
			}
		}
		return nil
	})
	return id, err
}

const apiKeySelect = `SELECT k.id, k.user_id, u.username, u.active, u.all_groups, k.name, k.prefix, k.hash, k.narrowed,
	k.expires_at, k.revoked_at, k.last_used_at, k.created_at
	FROM api_keys k JOIN users u ON u.id = k.user_id`

func scanAPIKey(row interface{ Scan(...any) error }) (APIKey, error) {
	var k APIKey
	var exp, rev, used sql.NullString
	err := row.Scan(&k.ID, &k.UserID, &k.Username, &k.UserActive, &k.UserAllGroups, &k.Name, &k.Prefix, &k.Hash, &k.Narrowed,
		&exp, &rev, &used, &k.CreatedAt)
	if exp.Valid {
		k.ExpiresAt = &exp.String
	}
	if rev.Valid {
		k.RevokedAt = &rev.String
	}
	if used.Valid {
		k.LastUsedAt = &used.String
	}
	return k, err
}

// APIKeyByPrefix returns the key whose visible prefix is prefix, with its
// narrowed permissions and its owner's group scope, or ErrNotFound.
func (s *Store) APIKeyByPrefix(ctx context.Context, prefix string) (APIKey, error) {
	k, err := scanAPIKey(s.reader.QueryRowContext(ctx, apiKeySelect+` WHERE k.prefix = ?`, prefix))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("get api key: %w", err)
	}
	if !k.UserAllGroups {
		if k.UserGroupIDs, err = s.userGroupIDs(ctx, k.UserID); err != nil {
			return k, err
		}
	}
	if k.Narrowed {
		rows, err := s.reader.QueryContext(ctx, `SELECT permission FROM api_key_permissions WHERE key_id = ?`, k.ID)
		if err != nil {
			return k, fmt.Errorf("api key permissions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return k, err
			}
			k.Permissions = append(k.Permissions, p)
		}
		return k, rows.Err()
	}
	return k, nil
}

// ListAPIKeys returns every key, newest last.
func (s *Store) ListAPIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := s.reader.QueryContext(ctx, apiKeySelect+` ORDER BY k.id`)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var keys []APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// RevokeAPIKey marks a key revoked; it is refused from then on.
func (s *Store) RevokeAPIKey(ctx context.Context, id int64) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, Now(), id)
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// TouchAPIKeys records last-use times in one transaction.
func (s *Store) TouchAPIKeys(ctx context.Context, used map[int64]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for id, t := range used {
			if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ? WHERE id = ?`, t.UTC().Format(TimeFormat), id); err != nil {
				return fmt.Errorf("touch api key: %w", err)
			}
		}
		return nil
	})
}

// APIKeyPage returns one page of API keys, newest first: the keys of
// userID, or everyone's when userID is 0; each with its narrowed
// permissions. The total comes with it.
func (s *Store) APIKeyPage(ctx context.Context, userID int64, limit, offset int) ([]APIKey, int, error) {
	where, args := "1=1", []any{}
	if userID != 0 {
		where, args = "k.user_id = ?", []any{userID}
	}
	keys, total, err := engine.Page(ctx, s.reader, func(row engine.Scanner) (APIKey, error) { return scanAPIKey(row) },
		`SELECT COUNT(*) FROM api_keys k WHERE `+where, apiKeySelect+` WHERE `+where+` ORDER BY k.id DESC`,
		limit, offset, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	var narrowed []any
	byID := map[int64]*APIKey{}
	for i := range keys {
		if keys[i].Narrowed {
			narrowed = append(narrowed, keys[i].ID)
			byID[keys[i].ID] = &keys[i]
		}
	}
	if len(narrowed) == 0 {
		return keys, total, nil
	}
	err = engine.EachRow(ctx, s.reader, `SELECT key_id, permission FROM api_key_permissions WHERE key_id IN (`+
		engine.Placeholders(len(narrowed))+`) ORDER BY permission`, narrowed, func(row engine.Scanner) error {
		var id int64
		var p string
		if err := row.Scan(&id, &p); err != nil {
			return err
		}
		byID[id].Permissions = append(byID[id].Permissions, p)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("api key permissions: %w", err)
	}
	return keys, total, nil
}

// APIKeyByID returns a key (without its narrowed permissions) or
// ErrNotFound.
func (s *Store) APIKeyByID(ctx context.Context, id int64) (APIKey, error) {
	k, err := scanAPIKey(s.reader.QueryRowContext(ctx, apiKeySelect+` WHERE k.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("get api key: %w", err)
	}
	return k, nil
}
