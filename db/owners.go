package db

import (
	"context"
	"database/sql"
	"fmt"
)

// OwnerLockName is the PostgreSQL advisory lock a running engine holds
// while it lives (on a lock session, app/cluster/lock), named after the
// owner id on its jobs. InterruptDeadOwner takes it to learn the engine
// is gone.
func OwnerLockName(owner string) string { return "backupd-owner:" + owner }

// InterruptDeadOwner ends the running attempts of engine owner when it is
// dead, as InterruptJobs does; dead reports whether it was. On PostgreSQL
// the engine is dead when its liveness lock (OwnerLockName) can be taken,
// here in the transaction that requeues its jobs, so that nodes checking
// the same owner at once requeue its jobs once. On SQLite the caller
// decides (the engine's lock file) and this is InterruptJobs.
func (s *Store) InterruptDeadOwner(ctx context.Context, owner string, maxInterruptions int) (out Interrupted, dead bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		out, dead = Interrupted{}, true
		if s.pg {
			if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`,
				OwnerLockName(owner)).Scan(&dead); err != nil || !dead {
				return err
			}
		}
		return s.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, false, fmt.Errorf("interrupt jobs of %s: %w", owner, err)
	}
	return out, dead, nil
}
