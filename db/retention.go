package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// RetentionResult counts what one retention run removed.
type RetentionResult struct {
	BackupsDeleted  int
	SnapshotsPurged int
}

const (
	// retentionBatch bounds the rows one write transaction deletes, so the
	// single writer is never held for long: other writes (finishing jobs)
	// slip in between batches.
	retentionBatch = 2000
	// SnapshotGrace protects snapshots that no backup names yet: a backup
	// stores its snapshot first and names it when it finishes. Only a
	// snapshot older than this is purged for being unreferenced (those that
	// a run's own deletions free are purged at once).
	SnapshotGrace = 24 * time.Hour
)

// versionCond and attemptCond split a device's history in two lists that
// retention bounds separately. A version is a successful backup with its
// configuration; an attempt is any other finished backup (a failure). A
// backup still running belongs to neither and is never removed.
const (
	versionCond = `success = 1 AND snapshot_hash IS NOT NULL AND finished_at IS NOT NULL`
	attemptCond = `NOT (success = 1 AND snapshot_hash IS NOT NULL) AND finished_at IS NOT NULL`
)

// workKept is the condition, on a backups row b, of the backups an open
// restore needs (the version it puts back, the preview it was approved
// on, the backups taken before and after the change) or a change set
// target still at work took: retention leaves them, and the snapshots they
// name, however old, until the work ends.
var workKept = `EXISTS (SELECT 1 FROM restores r WHERE r.device_id = b.device_id AND r.` + openRestores + `
		AND b.id IN (r.target_backup_id, r.preview_backup_id, r.pre_backup_id, r.post_backup_id, r.rollback_backup_id))
	OR EXISTS (SELECT 1 FROM change_set_targets t WHERE t.device_id = b.device_id AND t.state IN ('queued', 'running')
		AND b.id IN (t.pre_backup_id, t.post_backup_id))`

// snapshotKept is the condition, on a snapshots row s, of a text an open
// restore puts back: kept even should no backup name it any more.
var snapshotKept = `EXISTS (SELECT 1 FROM restores r WHERE r.target_hash = s.hash AND r.` + openRestores + `)`

// ApplyRetention trims every device's history to r as of now, then purges
// the snapshots no backup names any more. The backups and texts restores
// and pushes at work need are kept (workKept, snapshotKept), beside those
// the limits keep.
//
// A device's versions (good backups) beyond its newest r.KeepLast and
// older than r.KeepDays days are deleted; a limit of 0 is not set, and
// with both 0 nothing is deleted. The newest version is never deleted,
// whatever its age. Failed attempts do not count among the versions (a
// device that keeps failing does not push its good versions out); they
// form their own list under the same two limits, so they cannot pile up
// either.
//
// Work is done in batches of a few thousand rows per transaction; a
// cancelled ctx stops between batches with what was done so far.
func (s *Store) ApplyRetention(ctx context.Context, r Retention, now time.Time) (RetentionResult, error) {
	var res RetentionResult
	if r.KeepLast < 0 || r.KeepDays < 0 {
		return res, errors.New("retention: keep_last and keep_days must not be negative")
	}
	if r.KeepLast > 0 || r.KeepDays > 0 {
		if err := s.trimHistories(ctx, r, now, &res); err != nil {
			return res, err
		}
	}
	if err := s.purgeOrphanSnapshots(ctx, now.Add(-SnapshotGrace), &res); err != nil {
		return res, err
	}
	return res, nil
}

// eachDeviceBatch hands fn the ids of every device, in id order, 500 at
// a time, until fn or the listing fails.
func (s *Store) eachDeviceBatch(ctx context.Context, fn func([]int64) error) error {
	var after int64
	for {
		devices, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (int64, error) {
			var id int64
			return id, row.Scan(&id)
		}, `SELECT id FROM devices WHERE id > ? ORDER BY id LIMIT 500`, after)
		if err != nil {
			return fmt.Errorf("list devices: %w", err)
		}
		if len(devices) == 0 {
			return nil
		}
		after = devices[len(devices)-1]
		if err := fn(devices); err != nil {
			return err
		}
	}
}

// trimHistories walks the devices in id order and deletes the backups
// outside the policy, retentionBatch at a time.
func (s *Store) trimHistories(ctx context.Context, r Retention, now time.Time, res *RetentionResult) error {
	// With no age limit every backup is "old enough"; the cutoff then sorts
	// after any stored time.
	cutoff := "9999"
	if r.KeepDays > 0 {
		cutoff = backupTime(now.AddDate(0, 0, -r.KeepDays))
	}
	var pending []string
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := s.deleteBackups(ctx, pending, res); err != nil {
			return err
		}
		pending = pending[:0]
		return nil
	}
	err := s.eachDeviceBatch(ctx, func(devices []int64) error {
		for _, dev := range devices {
			// The newest version is kept even when keep_last is not set.
			for _, list := range []struct {
				cond string
				keep int
			}{{versionCond, max(r.KeepLast, 1)}, {attemptCond, r.KeepLast}} {
				if err := ctx.Err(); err != nil {
					return err
				}
				// Of the list, newest first, the rows at or after cutoff come
				// first; the candidates are the older ones, less those still
				// among the newest keep.
				var recent int
				if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE device_id = ? AND `+list.cond+
					` AND started_at >= ?`, dev, cutoff).Scan(&recent); err != nil {
					return fmt.Errorf("retention: device %d: %w", dev, err)
				}
				skip := max(list.keep-recent, 0)
				for {
					want := retentionBatch - len(pending)
					ids, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (string, error) {
						var id string
						return id, row.Scan(&id)
					}, `SELECT b.id FROM backups b WHERE b.device_id = ? AND `+list.cond+` AND b.started_at < ?
						AND NOT (`+workKept+`)
						ORDER BY b.started_at DESC, b.id DESC LIMIT ? OFFSET ?`, dev, cutoff, want, skip)
					if err != nil {
						return fmt.Errorf("retention: device %d: %w", dev, err)
					}
					pending = append(pending, ids...)
					if len(ids) < want {
						break
					}
					// Deleting the batch moves the next candidates to the
					// Same offset.
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// deleteBackups deletes backups by id in one transaction, and with them
// the snapshots that only they named.
func (s *Store) deleteBackups(ctx context.Context, ids []string, res *RetentionResult) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var deleted, purged int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		deleted, purged = 0, 0
		// finished_at and workKept are checked again: only finished
		// backups no work needed were chosen, and a restore may have been
		// requested since.
		rows, err := tx.QueryContext(ctx, `DELETE FROM backups AS b WHERE b.id IN (`+engine.Placeholders(len(args))+`)
			AND b.finished_at IS NOT NULL AND NOT (`+workKept+`) RETURNING snapshot_hash`, args...)
		if err != nil {
			return err
		}
		freed := map[string]bool{}
		for rows.Next() {
			var hash sql.NullString
			if err := rows.Scan(&hash); err != nil {
				rows.Close()
				return err
			}
			deleted++
			if hash.Valid {
				freed[hash.String] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		hashes := make([]any, 0, len(freed))
		for h := range freed {
			hashes = append(hashes, h)
		}
		n, err := deleteUnreferencedSnapshots(ctx, tx, hashes, "")
		purged = n
		return err
	})
	if err != nil {
		return fmt.Errorf("retention: delete backups: %w", err)
	}
	res.BackupsDeleted += deleted
	res.SnapshotsPurged += purged
	return nil
}

// deleteUnreferencedSnapshots deletes those of hashes that no backup
// names, and, when createdBefore is set, that were stored before it.
// Deltas based on them are first rewritten on what stays
// (rebaseDependents), so no delta is ever left without its base.
func deleteUnreferencedSnapshots(ctx context.Context, q engine.Querier, hashes []any, createdBefore string) (int, error) {
	if len(hashes) == 0 {
		return 0, nil
	}
	query := `SELECT s.id, s.base_id FROM snapshots s WHERE s.hash IN (` + engine.Placeholders(len(hashes)) + `)
		AND NOT EXISTS (SELECT 1 FROM backups b WHERE b.snapshot_hash = s.hash) AND NOT ` + snapshotKept
	args := hashes
	if createdBefore != "" {
		query += ` AND s.created_at < ?`
		args = append(args, createdBefore)
	}
	doomed := map[int64]sql.NullInt64{}
	err := engine.EachRow(ctx, q, query, args, func(row engine.Scanner) error {
		var id int64
		var base sql.NullInt64
		if err := row.Scan(&id, &base); err != nil {
			return err
		}
		doomed[id] = base
		return nil
	})
	if err != nil || len(doomed) == 0 {
		return 0, err
	}
	if _, err := snapstore.RebaseDependents(ctx, q, doomed); err != nil {
		return 0, err
	}
	ids := make([]any, 0, len(doomed))
	for id := range doomed {
		ids = append(ids, id)
	}
	r, err := q.ExecContext(ctx, `DELETE FROM snapshots WHERE id IN (`+engine.Placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return int(n), err
}

// purgeOrphanSnapshots removes snapshots no backup names that are older
// than createdBefore: those left by deleted devices, or by a run that was
// cut short. It walks the hash index (never the compressed data) in
// batches.
func (s *Store) purgeOrphanSnapshots(ctx context.Context, createdBefore time.Time, res *RetentionResult) error {
	before := createdBefore.UTC().Format(TimeFormat)
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hashes, err := engine.QueryAll(ctx, s.reader, func(row engine.Scanner) (any, error) {
			var h string
			return h, row.Scan(&h)
		}, `SELECT s.hash FROM snapshots s WHERE s.hash > ?
			AND NOT EXISTS (SELECT 1 FROM backups b WHERE b.snapshot_hash = s.hash) AND NOT `+snapshotKept+`
			ORDER BY s.hash LIMIT ?`, after, retentionBatch)
		if err != nil {
			return fmt.Errorf("retention: find unreferenced snapshots: %w", err)
		}
		if len(hashes) == 0 {
			return nil
		}
		after = hashes[len(hashes)-1].(string)
		var n int
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			n, err = deleteUnreferencedSnapshots(ctx, tx, hashes, before)
			return err
		})
		if err != nil {
			return fmt.Errorf("retention: purge snapshots: %w", err)
		}
		res.SnapshotsPurged += n
		if len(hashes) < retentionBatch {
			return nil
		}
	}
}
