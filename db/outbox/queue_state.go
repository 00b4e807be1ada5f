package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/engine"
)

// DeliveryQueue is what waits to be delivered, for the delivery worker
// (when to claim) and the metrics (how far behind it is).
type DeliveryQueue struct {
	// Waiting counts the deliveries not settled yet: pending, failing
	// and leased.
	Waiting int
	// OldestPending is when the oldest delivery never tried became due
	// (its event was recorded); nil when none.
	OldestPending *time.Time
	// NewestPending is when the newest delivery never tried became due;
	// nil when none.
	NewestPending *time.Time
	// NextRetry is the earliest retry of a failing delivery; nil when none.
	NextRetry *time.Time
	// LeaseEnds is when the first lease of a worker runs out; nil when
	// none is leased.
	LeaseEnds *time.Time
	// OldestWaiting is when the oldest unsettled delivery was created.
	OldestWaiting *time.Time
}

// DeliveryQueueState reads the queue of deliveries off the partial
// indexes of the unsettled ones.
func (ob *Outbox) DeliveryQueueState(ctx context.Context) (DeliveryQueue, error) {
	var q DeliveryQueue
	var pending, newest, retry, lease, oldest sql.NullString
	err := ob.e.Reader.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM deliveries WHERE state IN ('pending', 'failed')) +
				(SELECT COUNT(*) FROM deliveries WHERE state = 'sending'),
			(SELECT MIN(next_attempt_at) FROM deliveries WHERE state IN ('pending', 'failed') AND state = 'pending'),
			(SELECT MAX(next_attempt_at) FROM deliveries WHERE state IN ('pending', 'failed') AND state = 'pending'),
			(SELECT MIN(next_attempt_at) FROM deliveries WHERE state IN ('pending', 'failed') AND state = 'failed'),
			(SELECT MIN(lease_until) FROM deliveries WHERE state = 'sending'),
			NULLIF(`+ob.d.Lesser(`COALESCE((SELECT MIN(created_at) FROM deliveries WHERE state IN ('pending', 'failed')), '9')`,
		`COALESCE((SELECT MIN(created_at) FROM deliveries WHERE state = 'sending'), '9')`)+`, '9')`).
		Scan(&q.Waiting, &pending, &newest, &retry, &lease, &oldest)
	if err != nil {
		return q, fmt.Errorf("delivery queue: %w", err)
	}
	for _, v := range []struct {
		s   sql.NullString
		dst **time.Time
	}{{pending, &q.OldestPending}, {newest, &q.NewestPending}, {retry, &q.NextRetry}, {lease, &q.LeaseEnds}, {oldest, &q.OldestWaiting}} {
		if !v.s.Valid {
			continue
		}
		if t, err := time.ParseInLocation(engine.BackupTimeFormat, v.s.String, time.UTC); err == nil {
			*v.dst = &t
		}
	}
	return q, nil
}
