package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The events of an inventory source's syncs. A sync that failed
// (RecordInventorySyncFailure) and one that applied (ApplyInventorySync)
// hand the source and how the sync ended to the event policy in the
// transaction that records the sync on the source: the events commit
// with it. The source's failed syncs in a row (sync_failures) are the
// policy's hysteresis, as the git mirror's failed pushes are. They are
// system events (no device): only rules of scope "all" match them.

// TriggerInventorySync is the trigger of an inventory source's sync
// events.
const TriggerInventorySync = "inventory_sync"

// InventorySyncEnd is how one sync of an inventory source ended: OK
// when it applied, else Error, the sync's secret-free sentence (the
// fetchers scrub the token and header values out of it). Source names
// the source as it was (its ID, Name and Kind; never its token or
// configuration).
type InventorySyncEnd struct {
	OK     bool
	Error  string
	Source InventorySourceRef
}

// InventorySourceRef names an inventory source in its events.
type InventorySourceRef struct {
	ID   int64
	Name string
	Kind string
}

// recordInventorySyncEvents asks the policy which events the end of a
// sync of source src causes, its failed syncs in a row before it being
// failures, records them in tx and returns the failures in a row after
// it (for the source's sync_failures).
func (s *Store) recordInventorySyncEvents(ctx context.Context, tx *sql.Tx, src InventorySourceRef, failures int,
	ok bool, errText string, at time.Time) (int, error) {
	q := s.prepared(tx)
	f := deviceFacts{}
	if err := q.QueryRowContext(ctx, wantedEventsQuery(s.d)).Scan(&f.wanted); err != nil {
		return 0, fmt.Errorf("wanted events: %w", err)
	}
	dec, err := s.decide(EventInput{At: at, Trigger: TriggerInventorySync, Prev: EventState{ConsecutiveFailures: failures},
		InventorySync: &InventorySyncEnd{OK: ok, Error: errText, Source: src}})
	if err != nil {
		return 0, err
	}
	for _, e := range dec.Events {
		if _, err := recordEvent(ctx, q, s.d, &f, e); err != nil {
			return 0, err
		}
	}
	return dec.Next.ConsecutiveFailures, nil
}
