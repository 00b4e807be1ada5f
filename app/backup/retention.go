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

// RunRepack stores the older versions still whole as deltas (db.Repack):
// what a database from before deltas, or a pack that failed, leaves. It
// runs after retention and once soon after start.
func RunRepack(ctx context.Context, store *db.Store, log *slog.Logger) (db.RepackResult, error) {
	start := time.Now()
	res, err := store.Repack(ctx, nil)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("repack stopped", "err", err, "devices", res.Devices, "packed", res.Packed)
		}
		return res, err
	}
	if res.Packed > 0 {
		log.Info("repack done", "devices", res.Devices, "packed", res.Packed, "bytes_freed", res.Bytes,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	return res, nil
}
