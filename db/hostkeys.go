package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrNoPendingHostKey is returned when accepting a host key for a device
// that has not presented a changed one.
var ErrNoPendingHostKey = errors.New("the device has not presented a changed host key")

// hostKeysQuery is prepared when the store opens (readQueries).
const hostKeysQuery = `SELECT host_key, pending_host_key FROM devices WHERE id = ?`

// HostKeys returns the key pinned for a device (nil before first use) and
// a changed key it presented since (nil when none).
func (s *Store) HostKeys(ctx context.Context, deviceID int64) (pinned, pending []byte, err error) {
	err = s.read().QueryRowContext(ctx, hostKeysQuery, deviceID).Scan(&pinned, &pending)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("host keys of device %d: %w", deviceID, err)
	}
	return pinned, pending, nil
}

// AcceptHostKey pins the changed key a device presented, so its backups
// work again, and confirms the device's address for its credential (the
// key was presented there). It returns the accepted key.
func (s *Store) AcceptHostKey(ctx context.Context, deviceID int64) ([]byte, error) {
	var key []byte
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var pending []byte
		err := tx.QueryRowContext(ctx, `SELECT pending_host_key FROM devices WHERE id = ?`, deviceID).Scan(&pending)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if pending == nil {
			return ErrNoPendingHostKey
		}
		key = pending
		if _, err = tx.ExecContext(ctx, `UPDATE devices SET host_key = pending_host_key, pending_host_key = NULL, updated_at = ? WHERE id = ?`,
			Now(), deviceID); err != nil {
			return err
		}
		return pinCurrentAddress(ctx, tx, deviceID)
	})
	return key, err
}

// ForgetHostKey removes a device's pinned key and pinned address; the
// next backup trusts whatever answers at the device's address, as on its
// first backup, and pins its key and address.
func (s *Store) ForgetHostKey(ctx context.Context, deviceID int64) error {
	res, err := s.writer.ExecContext(ctx, `UPDATE devices SET host_key = NULL, pending_host_key = NULL, address_pin = NULL, updated_at = ? WHERE id = ?`, Now(), deviceID)
	if err != nil {
		return fmt.Errorf("forget host key of device %d: %w", deviceID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetReachability records the result of a reachability check made now,
// with the events it causes (RecordReachability).
func (s *Store) SetReachability(ctx context.Context, deviceID int64, reachable bool) error {
	return s.RecordReachability(ctx, deviceID, reachable, time.Now())
}

// ErrPendingHostKeyChanged is returned when the changed key a device
// presented is no longer the one the operator was shown.
var ErrPendingHostKeyChanged = errors.New("the device presented another host key since this one was shown")

// AcceptSeenHostKey pins the changed key a device presented, provided it
// is still seen, the key the operator checked, and confirms the device's
// address as AcceptHostKey does. Unlike AcceptHostKey (the
// CLI's, which shows the key it accepted afterwards), a page shows the key
// first and accepts later: in between the device, or someone between it
// and us, may present yet another key, which must not be pinned unseen.
func (s *Store) AcceptSeenHostKey(ctx context.Context, deviceID int64, seen []byte) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var pending []byte
		err := tx.QueryRowContext(ctx, `SELECT pending_host_key FROM devices WHERE id = ?`, deviceID).Scan(&pending)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return fmt.Errorf("accept host key of device %d: %w", deviceID, err)
		case pending == nil:
			return ErrNoPendingHostKey
		case !bytes.Equal(pending, seen):
			return ErrPendingHostKeyChanged
		}
		if _, err = tx.ExecContext(ctx, `UPDATE devices SET host_key = pending_host_key, pending_host_key = NULL, updated_at = ? WHERE id = ?`,
			Now(), deviceID); err != nil {
			return err
		}
		return pinCurrentAddress(ctx, tx, deviceID)
	})
}
