package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"backupd/db/engine"
	"backupd/db/queue"
)

// The events of a change set's moves. Every move of a change set to
// another state (changeset_moves.go) hands the set, as it now is, to the
// event policy in the transaction of the move, with where it came from
// and how its targets stand: the events commit with the move, and a move
// refused by its compare-and-set records none. Which moves are told is
// the policy's. They are system events (no device): only rules of scope
// "all" match them (see outbox.EventPushRequested).

// recordChangeSetEvents records, in tx, the events of change set c
// having just moved from from to c.State at at; rejected when it was
// cancelled with a decision.
func (s *Store) recordChangeSetEvents(ctx context.Context, tx *sql.Tx, c ChangeSet, from string, rejected bool, at time.Time) error {
	q := s.prepared(tx)
	f := deviceFacts{}
	if err := q.QueryRowContext(ctx, wantedEventsQuery(s.d)).Scan(&f.wanted); err != nil {
		return fmt.Errorf("wanted events: %w", err)
	}
	counts := map[string]int{}
	err := engine.EachRow(ctx, q, `SELECT state, COUNT(*) FROM change_set_targets WHERE change_set_id = ? GROUP BY state`,
		[]any{c.ID}, func(r engine.Scanner) error {
			var state string
			var n int
			if err := r.Scan(&state, &n); err != nil {
				return err
			}
			counts[state] = n
			return nil
		})
	if err != nil {
		return fmt.Errorf("change set %d counts: %w", c.ID, err)
	}
	dec, err := s.decide(EventInput{At: at, Trigger: queue.TriggerPush,
		ChangeSet: &ChangeSetMove{Set: c, From: from, Rejected: rejected, Counts: counts}})
	if err != nil {
		return err
	}
	for _, e := range dec.Events {
		if _, err := recordEvent(ctx, q, s.d, &f, e); err != nil {
			return err
		}
	}
	return nil
}
