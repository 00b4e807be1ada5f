package backup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"backupd/db"
)

// JobHistoryDays is how long finished jobs stay listed; their outcome
// lives on in the backups table.
const JobHistoryDays = 30

// RunRetention applies the stored retention policy (db.DefaultRetention
// until one is saved) and prunes the job history. It is meant to run once
// a day; it works in small batches, so backups keep running meanwhile.
func RunRetention(ctx context.Context, store *db.Store, log *slog.Logger) (db.RetentionResult, error) {
	start := time.Now()
	policy, err := store.RetentionPolicy(ctx)
	if err != nil {
		return db.RetentionResult{}, fmt.Errorf("retention: %w", err)
	}
	res, err := store.ApplyRetention(ctx, policy, start)
	if err != nil {
		log.Error("retention stopped", "err", err, "backups_deleted", res.BackupsDeleted, "snapshots_purged", res.SnapshotsPurged)
		return res, err
	}
	jobs, err := store.PruneJobs(ctx, start.AddDate(0, 0, -JobHistoryDays))
	if err != nil {
		log.Error("pruning the job history failed", "err", err)
		return res, err
	}
	log.Info("retention done", "keep_last", policy.KeepLast, "keep_days", policy.KeepDays,
		"backups_deleted", res.BackupsDeleted, "snapshots_purged", res.SnapshotsPurged,
		"jobs_pruned", jobs, "duration", time.Since(start).Round(time.Millisecond))
	return res, nil
}
