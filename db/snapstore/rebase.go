package snapstore

import (
	"context"
	"database/sql"
	"fmt"

	"backupd/db/engine"
)

// RebaseDependents prepares the snapshots doomed (id → base_id) for
// deletion in q's transaction: every delta based on one of them that is
// not itself doomed is rewritten against its nearest surviving ancestor,
// or whole when it has none, so no delta is left without its base. It
// returns how many were rewritten.
func RebaseDependents(ctx context.Context, q engine.Querier, doomed map[int64]sql.NullInt64) (int, error) {
	if len(doomed) == 0 {
		return 0, nil
	}
	ids := make([]any, 0, len(doomed))
	for id := range doomed {
		ids = append(ids, id)
	}
	type dependent struct {
		id   int64
		hash string
		base sql.NullInt64
		data []byte
	}
	list := engine.Placeholders(len(ids))
	deps, err := engine.QueryAll(ctx, q, func(row engine.Scanner) (dependent, error) {
		var d dependent
		return d, row.Scan(&d.id, &d.hash, &d.base, &d.data)
	}, `SELECT id, hash, base_id, data FROM snapshots WHERE base_id IN (`+list+`) AND id NOT IN (`+list+`)`, append(ids, ids...)...)
	if err != nil {
		return 0, fmt.Errorf("find deltas on deleted snapshots: %w", err)
	}
	for _, d := range deps {
		text, err := expand(ctx, q, d.hash, d.base, d.data)
		if err != nil {
			return 0, err
		}
		// The nearest ancestor that stays.
		anc := d.base
		for steps := 0; anc.Valid; steps++ {
			up, gone := doomed[anc.Int64]
			if !gone {
				break
			}
			if steps > chainGuard {
				return 0, fmt.Errorf("snapshot %s: its delta chain loops: the store is damaged (run backupd db check)", d.hash)
			}
			anc = up
		}
		var data []byte
		var base any
		if anc.Valid {
			var ah string
			if err := q.QueryRowContext(ctx, `SELECT hash FROM snapshots WHERE id = ?`, anc.Int64).Scan(&ah); err != nil {
				return 0, fmt.Errorf("read the new base of snapshot %s: %w", d.hash, err)
			}
			baseText, err := Bytes(ctx, q, ah)
			if err != nil {
				return 0, err
			}
			if len(baseText) >= minDeltaBase {
				if data, err = encodeDelta(text, baseText); err != nil {
					return 0, err
				}
			}
		}
		if data != nil {
			base = anc.Int64
		} else {
			data = wholeEncoder.EncodeAll(text, nil)
		}
		if _, err := q.ExecContext(ctx, `UPDATE snapshots SET base_id = ?, data = ?, stored_size = ? WHERE id = ?`,
			base, data, len(data), d.id); err != nil {
			return 0, fmt.Errorf("rewrite snapshot %s: %w", d.hash, err)
		}
	}
	// The doomed ones no longer count as deltas, and the base guard lets
	// them go in any order.
	if _, err := q.ExecContext(ctx, `UPDATE snapshots SET base_id = NULL WHERE id IN (`+list+`) AND base_id IS NOT NULL`, ids...); err != nil {
		return 0, err
	}
	return len(deps), nil
}
