package snapstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"backupd/db/engine"
)

// PackStats count packing since the process started, for metrics.
type PackStats struct {
	Packed uint64 // snapshots rewritten as deltas
	Failed uint64 // packing attempts that failed (the snapshot stays whole)
}

var packed, packFailed atomic.Uint64

// PackCounts returns the process's packing counters.
func PackCounts() PackStats { return PackStats{Packed: packed.Load(), Failed: packFailed.Load()} }

// PackPair rewrites the snapshot older as a delta against newer when that
// is sound: older is whole, newer is whole, older's chain of deltas is
// shorter than MaxDeltaChain, and the delta is smaller. newerText may
// carry newer's text. It reports whether older was rewritten.
func PackPair(ctx context.Context, e *engine.DB, older, newer string, newerText []byte) (bool, error) {
	if older == newer {
		return false, nil
	}
	var olderID, newerID int64
	var olderBase, newerBase sql.NullInt64
	var olderData []byte
	err := e.Reader.QueryRowContext(ctx, `SELECT id, base_id, data FROM snapshots WHERE hash = ?`, older).Scan(&olderID, &olderBase, &olderData)
	if errors.Is(err, sql.ErrNoRows) || olderBase.Valid {
		return false, nil
	}
	if err == nil {
		err = e.Reader.QueryRowContext(ctx, `SELECT id, base_id FROM snapshots WHERE hash = ?`, newer).Scan(&newerID, &newerBase)
		if errors.Is(err, sql.ErrNoRows) || newerBase.Valid {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("pack: %w", err)
	}
	// Cheap refusals first: a key frame due needs no decoding.
	if h, err := chainBelow(ctx, e.Reader, olderID); err != nil || h >= MaxDeltaChain {
		return false, err
	}
	if newerText == nil {
		if newerText, err = Bytes(ctx, e.Reader, newer); err != nil {
			countFailure(err)
			return false, fmt.Errorf("pack: %w", err)
		}
	}
	if len(newerText) < minDeltaBase {
		return false, nil
	}
	olderText, err := wholeDecoder.DecodeAll(olderData, nil)
	if err != nil {
		countFailure(err)
		return false, fmt.Errorf("pack: decompress snapshot %s: %w", older, err)
	}
	if Hash(string(olderText)) != older {
		// Never build on a damaged text: db check reports it.
		packFailed.Add(1)
		return false, fmt.Errorf("pack: snapshot %s does not match its hash", older)
	}
	delta, err := encodeDelta(olderText, newerText)
	if err != nil {
		countFailure(err)
		return false, fmt.Errorf("pack: %w", err)
	}
	if delta == nil || len(delta) >= len(olderData) {
		return false, nil
	}
	// The checks are made again under the write lock: another packer may
	// have moved either snapshot meanwhile.
	var done bool
	err = e.InTx(ctx, func(tx *sql.Tx) error {
		done = false
		var ob, nb sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT base_id FROM snapshots WHERE id = ?`, olderID).Scan(&ob); err != nil || ob.Valid {
			return ignoreNoRows(err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT base_id FROM snapshots WHERE id = ?`, newerID).Scan(&nb); err != nil || nb.Valid {
			return ignoreNoRows(err)
		}
		if h, err := chainBelow(ctx, tx, olderID); err != nil || h >= MaxDeltaChain {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE snapshots SET base_id = ?, data = ?, stored_size = ? WHERE id = ?`,
			newerID, delta, len(delta), olderID); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		countFailure(err)
		return false, fmt.Errorf("pack: %w", err)
	}
	if done {
		packed.Add(1)
	}
	return done, nil
}

// countFailure counts a failed pack, unless the caller gave up (a
// cancelled context is a shutdown, not a damaged store).
func countFailure(err error) {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		packFailed.Add(1)
	}
}

func ignoreNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// chainBelow is the length of the longest chain of deltas that ends at
// the snapshot id: 0 when none is based on it.
func chainBelow(ctx context.Context, q engine.Querier, id int64) (int, error) {
	var h int
	err := q.QueryRowContext(ctx, `WITH RECURSIVE below(id, depth) AS (
			SELECT id, 1 FROM snapshots WHERE base_id = ?
			UNION ALL
			SELECT s.id, below.depth + 1 FROM snapshots s JOIN below ON s.base_id = below.id WHERE below.depth < ?
		) SELECT COALESCE(MAX(depth), 0) FROM below`, id, chainGuard).Scan(&h)
	if err != nil {
		return 0, fmt.Errorf("measure delta chain: %w", err)
	}
	return h, nil
}
