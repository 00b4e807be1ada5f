package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"backupd/db/queue"
)

// The events of a restore's moves. Every move of a restore to another
// state (restore_moves.go, and the queue's end of its job in work.go)
// hands the restore, as it now is, to the event policy in the
// transaction of the move: the events commit with the move, and a move
// refused by its compare-and-set records none. Which moves are told is
// the policy's; the store asks about each.

// recordRestoreEvents records, in tx, the events of restore r having
// just moved to r.State at at. A restore whose device is gone causes
// none.
func (s *Store) recordRestoreEvents(ctx context.Context, tx *sql.Tx, r Restore, at time.Time) error {
	q := s.prepared(tx)
	f, err := loadDeviceFacts(ctx, q, s.d, r.DeviceID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.recordDecision(ctx, q, &f, EventInput{At: at, Trigger: queue.TriggerRestore, Restore: &r})
	return err
}
