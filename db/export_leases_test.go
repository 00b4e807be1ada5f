package db

import (
	"context"
	"time"
)

// ExpiredLeaseOwners and ExpireLease are ExpireLeases's two steps, for a
// test that renews a lease between them.
func (s *Store) ExpiredLeaseOwners(ctx context.Context, now time.Time) ([]string, error) {
	return s.expiredLeaseOwners(ctx, now)
}

func (s *Store) ExpireLease(ctx context.Context, owner string, now time.Time, maxInterruptions int) (Interrupted, error) {
	return s.expireLease(ctx, owner, now, maxInterruptions)
}
