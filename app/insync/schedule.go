package insync

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"backupd/db"
)

// DefaultPerTick bounds the sources one Tick syncs, when the Scheduler
// leaves PerTick zero: the rest are due still and run at the next tick.
const DefaultPerTick = 10

// Scheduler syncs the inventory sources on their schedule: every enabled
// source whose interval is not 0 (0: on demand only) and that is due,
// never synced or last synced an interval ago or more. A sync that
// failed is recorded on the source with its time (Sync's part), so it is
// tried again an interval later, not in a tight loop; a Sync that
// returned an error without recording anything is held back for an
// interval too, by the scheduler's own memory of its tries. So a source
// one failed sync behind applies again two intervals after its last good
// sync: the metrics count it overdue past that (db.InventoryOverdueAfter).
//
// Only one node of a cluster runs it: serve starts it among the leader's
// loops (app/cli's leaderCollection), under the context that ends when
// the node stops leading. One goroutine calls Tick (Run does): it is not
// safe for concurrent use.
type Scheduler struct {
	Store *db.Store
	// Sync syncs one source and records how it went (the source's last
	// sync, its failure and events). Its error is logged.
	Sync func(ctx context.Context, sourceID int64) error
	Log  *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PerTick bounds the sources synced by one Tick (0: DefaultPerTick).
	PerTick int

	// tried is when each source was last handed to Sync by this
	// scheduler.
	tried map[int64]time.Time
}

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Scheduler) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Due returns the sources due at now, the longest waiting first (never
// synced before all).
func (s *Scheduler) Due(ctx context.Context, now time.Time) ([]db.InventorySource, error) {
	all, err := s.Store.InventorySources(ctx)
	if err != nil {
		return nil, fmt.Errorf("inventory sources due: %w", err)
	}
	type due struct {
		src  db.InventorySource
		last time.Time // zero: never synced
	}
	var out []due
	for _, src := range all {
		if !Scheduled(src) {
			continue
		}
		every := time.Duration(src.IntervalMinutes) * time.Minute
		last, err := lastSync(src)
		if err != nil {
			return nil, err
		}
		if t, ok := s.tried[src.ID]; ok && t.After(last) {
			last = t
		}
		if !last.IsZero() && now.Before(last.Add(every)) {
			continue
		}
		out = append(out, due{src, last})
	}
	slices.SortStableFunc(out, func(a, b due) int {
		if c := a.last.Compare(b.last); c != 0 {
			return c
		}
		return cmp.Compare(a.src.ID, b.src.ID)
	})
	srcs := make([]db.InventorySource, len(out))
	for i, d := range out {
		srcs[i] = d.src
	}
	return srcs, nil
}

// Scheduled reports whether the scheduler syncs src at all: it is
// enabled and its interval is not 0 (0: on demand only).
func Scheduled(src db.InventorySource) bool {
	return src.Enabled && src.IntervalMinutes > 0
}

// NextSync is when the scheduler is due to sync src, a Scheduled source,
// as Due reads it: an interval after its last sync; the zero time when
// it never synced (due at once). It knows nothing of a try this node's
// scheduler holds back after a Sync that recorded nothing.
func NextSync(src db.InventorySource) (time.Time, error) {
	last, err := lastSync(src)
	if err != nil || last.IsZero() {
		return time.Time{}, err
	}
	return last.Add(time.Duration(src.IntervalMinutes) * time.Minute), nil
}

// lastSync is when src's last sync ended; the zero time when it never
// synced.
func lastSync(src db.InventorySource) (time.Time, error) {
	if src.LastSyncAt == nil {
		return time.Time{}, nil
	}
	t, err := db.ParseTime(*src.LastSyncAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("inventory source %d: last sync %q: %w", src.ID, *src.LastSyncAt, err)
	}
	return t, nil
}

// Tick syncs the sources due now, one at a time, at most PerTick of
// them, and returns how many it synced (their errors are logged, not
// returned: one source failing does not hold the others up). It stops
// when ctx ends.
func (s *Scheduler) Tick(ctx context.Context) (int, error) {
	now := s.now()
	due, err := s.Due(ctx, now)
	if err != nil {
		return 0, err
	}
	if s.tried == nil {
		s.tried = map[int64]time.Time{}
	}
	limit := s.PerTick
	if limit <= 0 {
		limit = DefaultPerTick
	}
	n := 0
	for _, src := range due {
		if n >= limit || ctx.Err() != nil {
			break
		}
		s.tried[src.ID] = now
		n++
		if err := s.syncOne(ctx, src.ID); err != nil && ctx.Err() == nil {
			// The error is the sync's own sentence (scrubbed of the
			// token by the fetchers), never configuration text.
			s.log().Warn("inventory sync failed", "source_id", src.ID, "source", src.Name, "err", err)
		}
	}
	return n, nil
}

// syncOne runs Sync, a panic in it an error.
func (s *Scheduler) syncOne(ctx context.Context, id int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("inventory sync panicked: %v", r)
		}
	}()
	return s.Sync(ctx, id)
}

// Run ticks at once and then every every (at least a second) until ctx
// ends.
func (s *Scheduler) Run(ctx context.Context, every time.Duration) {
	every = max(every, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log().Warn("inventory sync schedule: cannot read the sources; trying again at the next tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
