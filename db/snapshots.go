package db

import (
	"context"
	"fmt"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// PutSnapshot stores text once per distinct content and returns its hash.
func (s *Store) PutSnapshot(ctx context.Context, text string) (string, error) {
	return snapstore.Put(ctx, s.writer, s.d, text)
}

// SnapshotText returns the configuration text stored under hash, or
// ErrNotFound.
func (s *Store) SnapshotText(ctx context.Context, hash string) (string, error) {
	text, err := snapstore.Bytes(ctx, s.reader, hash)
	return string(text), err
}

// packDevice rewrites the device's previous version as a delta against
// its newest one, which stays whole: what keeps history small as backups
// arrive (FinishJob calls it once a new text is stored). text is the
// newest version's when the caller holds it (hash names it), saving a
// read. Anything that makes a delta unsuitable (a key frame is due, the
// newest is itself not whole, the delta would not be smaller) leaves the
// previous version whole, which is never wrong.
func (s *Store) packDevice(ctx context.Context, deviceID int64, hash string, text []byte) error {
	var hashes []string
	err := engine.EachRow(ctx, s.reader, `SELECT snapshot_hash FROM backups WHERE device_id = ? AND `+versionCond+`
		ORDER BY started_at DESC, id DESC LIMIT 64`, []any{deviceID}, func(row engine.Scanner) error {
		var h string
		if err := row.Scan(&h); err != nil {
			return err
		}
		if len(hashes) < 2 && (len(hashes) == 0 || hashes[len(hashes)-1] != h) {
			hashes = append(hashes, h)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pack device %d: %w", deviceID, err)
	}
	if len(hashes) < 2 {
		return nil
	}
	if hashes[0] != hash {
		text = nil
	}
	_, err = snapstore.PackPair(ctx, s.e, hashes[1], hashes[0], text)
	return err
}

// RepackResult counts what one Repack did.
type RepackResult struct {
	Devices int // devices whose history was walked
	Packed  int // snapshots rewritten as deltas
	Bytes   int64
}

// Repack walks every device's history, oldest version first, and packs
// each version against the next: how a database written before deltas
// existed (or history a failed pack left whole) becomes small. Each
// rewrite is its own short transaction, so a kill at any moment loses
// nothing: the snapshot is either still whole or already a delta, and the
// next run carries on past what is done. A cancelled ctx stops between
// rewrites. progress, when set, is called after every device.
func (s *Store) Repack(ctx context.Context, progress func(RepackResult)) (res RepackResult, err error) {
	before, err := s.storedBytes(ctx)
	if err != nil {
		return res, err
	}
	defer func() {
		if after, err := s.storedBytes(context.WithoutCancel(ctx)); err == nil {
			res.Bytes = before - after
		}
	}()
	err = s.eachDeviceBatch(ctx, func(devices []int64) error {
		for _, dev := range devices {
			n, err := s.repackDevice(ctx, dev)
			res.Packed += n
			if err != nil {
				return err
			}
			res.Devices++
			if progress != nil {
				progress(res)
			}
		}
		return nil
	})
	return res, err
}

func (s *Store) storedBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.reader.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = 'snapshot_stored_bytes'`).Scan(&n)
	return n, err
}

// repackDevice packs one device's versions pairwise, oldest first.
func (s *Store) repackDevice(ctx context.Context, deviceID int64) (int, error) {
	type version struct {
		hash  string
		whole bool
	}
	var versions []version
	err := engine.EachRow(ctx, s.reader, `SELECT b.snapshot_hash, s.base_id IS NULL FROM backups b JOIN snapshots s ON s.hash = b.snapshot_hash
		WHERE b.device_id = ? AND b.success = 1 AND b.snapshot_hash IS NOT NULL AND b.finished_at IS NOT NULL
		ORDER BY b.started_at, b.id`, []any{deviceID}, func(row engine.Scanner) error {
		var v version
		if err := row.Scan(&v.hash, &v.whole); err != nil {
			return err
		}
		if n := len(versions); n == 0 || versions[n-1].hash != v.hash {
			versions = append(versions, v)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("repack device %d: %w", deviceID, err)
	}
	var n int
	for i := 0; i+1 < len(versions); i++ {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		older, newer := versions[i], versions[i+1]
		if !older.whole || !newer.whole {
			continue
		}
		ok, err := snapstore.PackPair(ctx, s.e, older.hash, newer.hash, nil)
		if err != nil {
			return n, fmt.Errorf("repack device %d: %w", deviceID, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// SnapshotFigures are the stored configurations' totals, from the
// trigger-kept counters.
type SnapshotFigures struct {
	Snapshots, Deltas     int64
	RawBytes, StoredBytes int64
}

// SnapshotFigures reads the stored configurations' totals.
func (s *Store) SnapshotFigures(ctx context.Context) (SnapshotFigures, error) {
	var f SnapshotFigures
	dst := map[string]*int64{"snapshots": &f.Snapshots, "snapshot_deltas": &f.Deltas,
		"snapshot_bytes": &f.RawBytes, "snapshot_stored_bytes": &f.StoredBytes}
	err := engine.EachRow(ctx, s.reader, `SELECT name, value FROM counters WHERE name IN ('snapshots', 'snapshot_deltas', 'snapshot_bytes', 'snapshot_stored_bytes')`,
		nil, func(row engine.Scanner) error {
			var name string
			var v int64
			if err := row.Scan(&name, &v); err != nil {
				return err
			}
			*dst[name] = v
			return nil
		})
	if err != nil {
		return f, fmt.Errorf("snapshot figures: %w", err)
	}
	return f, nil
}
