package cli

import (
	"context"
	"log/slog"
	"time"

	"backupd/db"
)

// The leader's duties that run now and then (retention, repack, pruning)
// must not skip a day because the database was away when their hour
// came: a failed run is tried again as soon as the database answers
// again, and a run that fails while the database answers is tried again
// after a growing pause, so that a fault of its own is not retried in a
// busy loop. The loops that run every few seconds (the scheduler, the
// counter fold, the git mirror, notifications) simply try again at their
// next turn.

const (
	// dutyPing is how often a failed duty looks whether the database
	// answers again.
	dutyPing = 5 * time.Second
	// dutyPauseMin and dutyPauseMax bound the pause before a duty that
	// failed while the database answered is tried again.
	dutyPauseMin = time.Minute
	dutyPauseMax = time.Hour
)

// untilDone runs fn until it succeeds or ctx ends (see above).
func untilDone(ctx context.Context, store *db.Store, fn func(context.Context) error) {
	pause := dutyPauseMin
	for {
		if err := fn(ctx); err == nil || ctx.Err() != nil {
			return
		}
		wasDown, ok := waitForDatabase(ctx, store)
		if !ok {
			return
		}
		if wasDown {
			continue
		}
		if !sleepCtx(ctx, pause) {
			return
		}
		pause = min(2*pause, dutyPauseMax)
	}
}

// waitForDatabase returns once the database answers a ping (ok), or when
// ctx ends (not ok); wasDown reports whether it did not answer at first.
func waitForDatabase(ctx context.Context, store *db.Store) (wasDown, ok bool) {
	for {
		pctx, cancel := context.WithTimeout(ctx, dutyPing)
		err := store.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return wasDown, false
		}
		if err == nil {
			return wasDown, true
		}
		wasDown = true
		if !sleepCtx(ctx, dutyPing) {
			return wasDown, false
		}
	}
}

// sleepCtx waits d, or less when ctx ends; it reports whether it waited
// the whole time.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// keepRunning runs a loop that should last as long as ctx, starting it
// again after a pause (1 s doubling to 30 s) should it return before:
// what it returned is logged.
func keepRunning(ctx context.Context, log *slog.Logger, what string, run func(context.Context) error) {
	pause := time.Second
	for {
		started := time.Now()
		err := run(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			pause = time.Second
		}
		log.Error(what+" stopped; it starts again", "err", err, "retry_in", pause.String())
		if !sleepCtx(ctx, pause) {
			return
		}
		pause = min(2*pause, 30*time.Second)
	}
}
