package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// Credential is a login for devices. The secret fields hold sealed bytes
// (app/secret), never plain text; nil means not set.
type Credential struct {
	ID             int64
	Name           string
	Username       string
	Password       []byte
	EnablePassword []byte
	PrivateKey     []byte
	Remarks        *string
	CreatedAt      string
	UpdatedAt      string
}

const credentialColumns = `id, name, username, password, enable_password, private_key, remarks, created_at, updated_at`

func scanCredential(row engine.Scanner) (Credential, error) {
	var c Credential
	var remarks sql.NullString
	err := row.Scan(&c.ID, &c.Name, &c.Username, &c.Password, &c.EnablePassword, &c.PrivateKey, &remarks, &c.CreatedAt, &c.UpdatedAt)
	if remarks.Valid {
		c.Remarks = &remarks.String
	}
	return c, err
}

// ListCredentials returns one page ordered by id and the total count.
func (s *Store) ListCredentials(ctx context.Context, limit, offset int) ([]Credential, int, error) {
	items, total, err := engine.Page(ctx, s.reader, scanCredential, `SELECT COUNT(*) FROM credentials`,
		`SELECT `+credentialColumns+` FROM credentials ORDER BY id`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list credentials: %w", err)
	}
	return items, total, nil
}

// GetCredential returns one credential or ErrNotFound.
func (s *Store) GetCredential(ctx context.Context, id int64) (Credential, error) {
	return getCredential(ctx, s.read(), id)
}

// getCredentialQuery is prepared when the store opens (readQueries).
const getCredentialQuery = `SELECT ` + credentialColumns + ` FROM credentials WHERE id = ?`

func getCredential(ctx context.Context, q engine.Querier, id int64) (Credential, error) {
	c, err := scanCredential(q.QueryRowContext(ctx, getCredentialQuery, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("get credential %d: %w", id, err)
	}
	return c, nil
}

// CredentialByName returns the credential of that name (ASCII case
// folded, as the name column compares), or ErrNotFound.
func (s *Store) CredentialByName(ctx context.Context, name string) (Credential, error) {
	c, err := scanCredential(s.reader.QueryRowContext(ctx, `SELECT `+credentialColumns+` FROM credentials WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("credential %q: %w", name, err)
	}
	return c, nil
}

// CreateCredential inserts c (its ID and timestamps are set by the store).
func (s *Store) CreateCredential(ctx context.Context, c Credential) (Credential, error) {
	var out Credential
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM credentials WHERE name = ?`, c.Name); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		now := Now()
		id, err := engine.InsertID(ctx, tx,
			`INSERT INTO credentials (name, username, password, enable_password, private_key, remarks, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Name, c.Username, c.Password, c.EnablePassword, c.PrivateKey, engine.NullString(c.Remarks), now, now)
		if err != nil {
			return fmt.Errorf("insert credential: %w", err)
		}
		out, err = getCredential(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateCredential reads the credential, lets patch change it, and writes it
// back, all in one transaction.
// patch runs again when the transaction does (inTx): it must set, not add to, what it records.
func (s *Store) UpdateCredential(ctx context.Context, id int64, patch func(*Credential) error) (Credential, error) {
	var out Credential
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		c, err := getCredential(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := patch(&c); err != nil {
			return err
		}
		if taken, err := engine.Exists(ctx, tx, `SELECT 1 FROM credentials WHERE name = ? AND id <> ?`, c.Name, id); err != nil {
			return err
		} else if taken {
			return ErrNameExists
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE credentials SET name = ?, username = ?, password = ?, enable_password = ?, private_key = ?, remarks = ?, updated_at = ? WHERE id = ?`,
			c.Name, c.Username, c.Password, c.EnablePassword, c.PrivateKey, engine.NullString(c.Remarks), Now(), id); err != nil {
			return fmt.Errorf("update credential: %w", err)
		}
		out, err = getCredential(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteCredential removes a credential no device uses.
func (s *Store) DeleteCredential(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := getCredential(ctx, tx, id); err != nil {
			return err
		}
		if used, err := engine.Exists(ctx, tx, `SELECT 1 FROM devices WHERE credential_id = ? LIMIT 1`, id); err != nil {
			return err
		} else if used {
			return ErrInUse
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM credentials WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete credential: %w", err)
		}
		return nil
	})
}

// DevicesUsingCredentials counts, for each of ids, the devices of scope
// that log in with that credential. Ids nobody uses are absent.
func (s *Store) DevicesUsingCredentials(ctx context.Context, scope Scope, ids []int64) (map[int64]int, error) {
	out, err := s.devicesUsing(ctx, "credential_id", scope, ids)
	if err != nil {
		return nil, fmt.Errorf("devices using credentials: %w", err)
	}
	return out, nil
}
