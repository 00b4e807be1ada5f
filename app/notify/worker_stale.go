package notify

import (
	"context"
	"log/slog"
	"time"

	"backupd/db"
)

// Defaults of the stale check.
const (
	DefaultStaleAfter = 48 * time.Hour
	StaleCheckEvery   = 10 * time.Minute
)

// RunStaleCheck records backup.stale for devices without a good backup
// for longer than after (0: DefaultStaleAfter), every `every` (0:
// StaleCheckEvery) and once at start, until ctx ends. A device is told
// about once per stale period (db.RecordStaleEvents).
func RunStaleCheck(ctx context.Context, store *db.Store, after, every time.Duration, log *slog.Logger) {
	if after <= 0 {
		after = DefaultStaleAfter
	}
	if every <= 0 {
		every = StaleCheckEvery
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := store.RecordStaleEvents(ctx, time.Now(), after)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("checking for stale backups", "err", err)
		case n > 0:
			log.Info("devices without a recent good backup", "events", n, "threshold", after.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
