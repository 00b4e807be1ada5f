package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// CredentialScope is the credentials a caller may use (attach to a device,
// or send to a device's new address): every one (All) or the listed ones.
type CredentialScope struct {
	All bool
	IDs []int64
}

// Has reports whether the scope holds credential id.
func (s CredentialScope) Has(id int64) bool {
	if s.All {
		return true
	}
	for _, x := range s.IDs {
		if x == id {
			return true
		}
	}
	return false
}

// ErrAddressMoved is ConfirmAddress's answer when the device's address is
// no longer the one the operator was shown.
var ErrAddressMoved = errors.New("the device's address changed again since it was shown")

// ErrAddressConfirmed is ConfirmAddress's answer when there is nothing to
// confirm: the device's credential already goes to its address.
var ErrAddressConfirmed = errors.New("the device's address needs no confirmation")

// PinAddress records addr as where device id's credential went, when no
// address is pinned yet (the credential's first use at this device).
func (s *Store) PinAddress(ctx context.Context, id int64, addr string) error {
	if _, err := s.writer.ExecContext(ctx, `UPDATE devices SET address_pin = ? WHERE id = ? AND address_pin IS NULL`, addr, id); err != nil {
		return fmt.Errorf("pin address of device %d: %w", id, err)
	}
	return nil
}

// ConfirmAddress pins the device's current address as its credential's,
// provided it is still seen, the address the operator checked (as
// AcceptSeenHostKey does for keys). It returns the address pinned before.
func (s *Store) ConfirmAddress(ctx context.Context, id int64, seen string) (previous string, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		d, err := getDevice(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case d.Address() != seen:
			return ErrAddressMoved
		case d.AddressPin == nil || *d.AddressPin == seen:
			return ErrAddressConfirmed
		}
		previous = *d.AddressPin
		_, err = tx.ExecContext(ctx, `UPDATE devices SET address_pin = ?, updated_at = ? WHERE id = ?`, seen, Now(), id)
		return err
	})
	if err != nil && !errors.Is(err, ErrAddressMoved) && !errors.Is(err, ErrAddressConfirmed) && !errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("confirm address of device %d: %w", id, err)
	}
	return previous, err
}

// pinCurrentAddress pins device id's current address (in tx): accepting
// the key a device presented at its new address confirms the address.
func pinCurrentAddress(ctx context.Context, tx *sql.Tx, id int64) error {
	d, err := getDevice(ctx, tx, id)
	if err != nil {
		return err
	}
	if d.CredentialID == nil && d.AddressPin == nil {
		return nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE devices SET address_pin = ? WHERE id = ?`, d.Address(), id)
	return err
}

// SetRoleCredentials replaces the credentials a custom role may use one
// by one (beside credentials.use, which is all of them). Built-in roles
// are ErrBuiltinRole; a credential that does not exist is left out.
func (s *Store) SetRoleCredentials(ctx context.Context, roleID int64, ids []int64) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := customRole(ctx, tx, roleID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM role_credentials WHERE role_id = ?`, roleID); err != nil {
			return fmt.Errorf("reset role credentials: %w", err)
		}
		for _, id := range uniqueIDs(ids) {
			// A credential deleted meanwhile is left out.
			if _, err := tx.ExecContext(ctx, `INSERT INTO role_credentials (role_id, credential_id)
				SELECT ?, id FROM credentials WHERE id = ?`, roleID, id); err != nil {
				return fmt.Errorf("grant credential %d: %w", id, err)
			}
		}
		return nil
	})
}

// roleCredentials returns the credentials each role may use one by one.
func roleCredentials(ctx context.Context, q engine.Querier, roleID *int64) (map[int64][]int64, error) {
	query, args := `SELECT role_id, credential_id FROM role_credentials ORDER BY role_id, credential_id`, []any(nil)
	if roleID != nil {
		query, args = `SELECT role_id, credential_id FROM role_credentials WHERE role_id = ? ORDER BY credential_id`, []any{*roleID}
	}
	out := map[int64][]int64{}
	err := engine.EachRow(ctx, q, query, args, func(row engine.Scanner) error {
		var r, c int64
		if err := row.Scan(&r, &c); err != nil {
			return err
		}
		out[r] = append(out[r], c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("role credentials: %w", err)
	}
	return out, nil
}

// CredentialRoles returns the names of the custom roles that may use
// credential id one by one, by name.
func (s *Store) CredentialRoles(ctx context.Context, id int64) ([]string, error) {
	names, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (string, error) {
		var n string
		return n, row.Scan(&n)
	}, `SELECT r.name FROM role_credentials rc JOIN roles r ON r.id = rc.role_id WHERE rc.credential_id = ?
		ORDER BY `+s.d.FoldedOrder("r.name")+` LIMIT ?`, id, MaxRoles)
	if err != nil {
		return nil, fmt.Errorf("roles of credential %d: %w", id, err)
	}
	return names, nil
}
