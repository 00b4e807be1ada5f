package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// States of an inventory source as the metrics count them: how its last
// sync ended when it is enabled, disabled whatever it did before.
const (
	InventorySourceOK       = "ok"       // enabled, last sync applied
	InventorySourceFailing  = "failing"  // enabled, last sync failed
	InventorySourceNever    = "never"    // enabled, never synced
	InventorySourceDisabled = "disabled" // synced neither on schedule nor for real on demand
)

// InventorySourceStates lists the states InventoryHealth counts, in the
// order the metrics publish them.
var InventorySourceStates = []string{InventorySourceOK, InventorySourceFailing, InventorySourceNever, InventorySourceDisabled}

// InventoryHealth is how the inventory sources stand: what the metrics
// read at each scrape.
type InventoryHealth struct {
	// Sources counts the sources by state: every state of
	// InventorySourceStates, 0 for one that has none.
	Sources map[string]int
	// OldestGood is, among the enabled sources the schedule syncs
	// (interval not 0), the oldest end of a source's last sync that
	// applied; a source with none counts from when it was added. Nil when
	// no source is scheduled.
	OldestGood *time.Time
}

const inventoryStateQuery = `SELECT CASE
		WHEN enabled = 0 THEN '` + InventorySourceDisabled + `'
		WHEN last_status = '` + InventorySyncOK + `' THEN '` + InventorySourceOK + `'
		WHEN last_status = '` + InventorySyncFailed + `' THEN '` + InventorySourceFailing + `'
		ELSE '` + InventorySourceNever + `' END AS state, COUNT(*)
	FROM inventory_sources GROUP BY state`

const inventoryOldestQuery = `SELECT
	(SELECT MIN(last_good_sync_at) FROM inventory_sources WHERE enabled = 1 AND interval_minutes > 0),
	(SELECT MIN(created_at) FROM inventory_sources WHERE enabled = 1 AND interval_minutes > 0 AND last_good_sync_at IS NULL)`

// InventoryHealth reads the figures in one read transaction, so that
// they agree with each other.
func (s *Store) InventoryHealth(ctx context.Context) (InventoryHealth, error) {
	h := InventoryHealth{Sources: make(map[string]int, len(InventorySourceStates))}
	for _, st := range InventorySourceStates {
		h.Sources[st] = 0
	}
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return h, fmt.Errorf("inventory health: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, inventoryStateQuery)
	if err != nil {
		return h, fmt.Errorf("count inventory sources: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return h, fmt.Errorf("count inventory sources: %w", err)
		}
		h.Sources[state] = n
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("count inventory sources: %w", err)
	}
	var good, added sql.NullString
	if err := tx.QueryRowContext(ctx, inventoryOldestQuery).Scan(&good, &added); err != nil {
		return h, fmt.Errorf("oldest good inventory sync: %w", err)
	}
	for _, v := range []sql.NullString{good, added} {
		t, err := parseNullTime(v)
		if err != nil {
			return h, fmt.Errorf("oldest good inventory sync: %w", err)
		}
		if t != nil && (h.OldestGood == nil || t.Before(*h.OldestGood)) {
			h.OldestGood = t
		}
	}
	return h, nil
}
