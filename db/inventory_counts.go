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
	// Overdue counts the enabled scheduled sources whose last good sync
	// (a source with none: its creation) is older than
	// InventoryOverdueAfter of its interval at the time asked for.
	Overdue int
}

// InventoryOverdueSlack is what InventoryOverdueAfter grants a source
// beyond two intervals: the scheduler's tick (a minute), syncs of other
// sources before it in the tick, and the sync's own run.
const InventoryOverdueSlack = 15 * time.Minute

// InventoryOverdueAfter is how long after its last good sync (or, never
// synced, its creation) a scheduled source of interval minutes is
// overdue: 2 × interval + InventoryOverdueSlack. The scheduler
// (app/insync) syncs a source an interval after its last sync, failed
// or not, so a source one failed sync behind applies again after two
// intervals; past that, at least two syncs in a row have failed, or
// nothing ran them.
func InventoryOverdueAfter(intervalMinutes int) time.Duration {
	return 2*time.Duration(intervalMinutes)*time.Minute + InventoryOverdueSlack
}

const inventoryStateQuery = `SELECT CASE
		WHEN enabled = 0 THEN '` + InventorySourceDisabled + `'
		WHEN last_status = '` + InventorySyncOK + `' THEN '` + InventorySourceOK + `'
		WHEN last_status = '` + InventorySyncFailed + `' THEN '` + InventorySourceFailing + `'
		ELSE '` + InventorySourceNever + `' END AS state, COUNT(*)
	FROM inventory_sources GROUP BY state`

// inventoryScheduledQuery reads each scheduled source's interval and
// since when it is out of date: its last good sync, or its creation.
const inventoryScheduledQuery = `SELECT interval_minutes, COALESCE(last_good_sync_at, created_at)
	FROM inventory_sources WHERE enabled = 1 AND interval_minutes > 0`

// InventoryHealth reads the figures in one read transaction, so that
// they agree with each other; now is when Overdue is counted at.
func (s *Store) InventoryHealth(ctx context.Context, now time.Time) (InventoryHealth, error) {
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
	rows.Close()
	sched, err := tx.QueryContext(ctx, inventoryScheduledQuery)
	if err != nil {
		return h, fmt.Errorf("scheduled inventory sources: %w", err)
	}
	defer sched.Close()
	for sched.Next() {
		var interval int
		var since string
		if err := sched.Scan(&interval, &since); err != nil {
			return h, fmt.Errorf("scheduled inventory sources: %w", err)
		}
		t, err := ParseTime(since)
		if err != nil {
			return h, fmt.Errorf("scheduled inventory sources: %w", err)
		}
		if h.OldestGood == nil || t.Before(*h.OldestGood) {
			h.OldestGood = &t
		}
		if now.Sub(t) > InventoryOverdueAfter(interval) {
			h.Overdue++
		}
	}
	if err := sched.Err(); err != nil {
		return h, fmt.Errorf("scheduled inventory sources: %w", err)
	}
	return h, nil
}
