package snapstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"backupd/db/engine"
)

// storedFrame is one snapshot row as stored.
type storedFrame struct {
	id   int64
	hash string
	size int64
	base sql.NullInt64
	data []byte
}

// frameBatch reads the next 200 snapshot rows after id after, in id
// order, that meet cond (an SQL "AND ..." or "").
func frameBatch(ctx context.Context, q engine.Querier, after int64, cond string) ([]storedFrame, error) {
	return engine.QueryAll(ctx, q, func(r engine.Scanner) (storedFrame, error) {
		var x storedFrame
		return x, r.Scan(&x.id, &x.hash, &x.size, &x.base, &x.data)
	}, `SELECT id, hash, size, base_id, data FROM snapshots WHERE id > ? `+cond+` ORDER BY id LIMIT 200`, after)
}

// Check decodes every stored frame on its own (a delta against
// its base's text) and reports those that do not give the text their hash
// names, whose base is missing, or whose size is wrong. It reads in id
// order, a batch at a time.
func Check(ctx context.Context, q engine.Querier, report func(string)) error {
	var after int64
	for {
		batch, err := frameBatch(ctx, q, after, "")
		if err != nil {
			return fmt.Errorf("check snapshots: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		after = batch[len(batch)-1].id
		for _, x := range batch {
			var text []byte
			if x.base.Valid {
				var bh string
				err := q.QueryRowContext(ctx, `SELECT hash FROM snapshots WHERE id = ?`, x.base.Int64).Scan(&bh)
				if errors.Is(err, sql.ErrNoRows) {
					report(fmt.Sprintf("snapshot %s is a delta on snapshot %d, which is missing", x.hash, x.base.Int64))
					continue
				}
				if err != nil {
					return err
				}
				base, err := Bytes(ctx, q, bh)
				if err != nil {
					report(fmt.Sprintf("snapshot %s is a delta on snapshot %s, which cannot be read: %v", x.hash, bh, err))
					continue
				}
				text, err = decodeDelta(x.data, base)
				if err != nil {
					report(fmt.Sprintf("snapshot %s: its delta cannot be decoded: %v", x.hash, err))
					continue
				}
			} else {
				text, err = wholeDecoder.DecodeAll(x.data, nil)
				if err != nil {
					report(fmt.Sprintf("snapshot %s cannot be decoded: %v", x.hash, err))
					continue
				}
			}
			if sum := sha256.Sum256(text); !bytes.Equal(sum[:], mustHex(x.hash)) {
				report(fmt.Sprintf("snapshot %s decodes to a text with another hash (%x)", x.hash, sum[:6]))
				continue
			}
			if int64(len(text)) != x.size {
				report(fmt.Sprintf("snapshot %s: %d bytes decoded, %d recorded", x.hash, len(text), x.size))
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// ExpandAll rewrites every delta whole, through q: what a rollback of the
// delta migration needs before the column goes.
func ExpandAll(ctx context.Context, q engine.Querier) (int, error) {
	var n int
	for {
		// Expanded rows drop out of the condition: each batch starts over.
		batch, err := frameBatch(ctx, q, 0, "AND base_id IS NOT NULL")
		if err != nil {
			return n, fmt.Errorf("expand deltas: %w", err)
		}
		if len(batch) == 0 {
			return n, nil
		}
		for _, x := range batch {
			text, err := expand(ctx, q, x.hash, x.base, x.data)
			if err != nil {
				return n, err
			}
			data := wholeEncoder.EncodeAll(text, nil)
			if _, err := q.ExecContext(ctx, `UPDATE snapshots SET base_id = NULL, data = ?, stored_size = ? WHERE id = ?`, data, len(data), x.id); err != nil {
				return n, fmt.Errorf("expand snapshot %s: %w", x.hash, err)
			}
			n++
		}
	}
}
