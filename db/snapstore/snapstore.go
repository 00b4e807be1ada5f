// Package snapstore stores configuration texts: once per distinct text,
// addressed by its SHA-256, compressed with zstd, and a version that is
// no longer a device's newest as a delta against the next one. It knows
// the snapshots table only; which versions a device has, and so which
// pairs to pack, is package db's (its backups). Every function takes the
// connection or transaction to run on, so a snapshot is written in the
// same transaction as the backup that names it.
//
// A snapshot is one distinct text, addressed by the SHA-256 of its bytes.
// Its data is a zstd frame, either whole (base_id NULL) or a delta: a frame
// compressed with the text of the snapshot base_id names as a raw
// dictionary. A version that changed 2% of its lines then costs a few
// hundred bytes instead of a whole compressed copy.
//
// Deltas point from older to newer: a device's newest version is stored
// whole, and when a newer one arrives the previous one is rewritten as a
// delta against it (PackPair, which db calls after a backup stores a new
// text, and db's Repack for a whole database written before deltas
// existed). Reading the newest version, by far the
// most frequent read, decodes one frame. Following base_id from any
// snapshot always ends at a whole frame after at most MaxDeltaChain
// deltas: a snapshot whose chain of older deltas is already that long is
// left whole, a key frame that starts a new chain.
package snapstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"backupd/db/engine"
)

// MaxDeltaChain is the most deltas a read decodes to reach a text. 64,
// like git's --aggressive depth of 50, keeps a year of 2%-a-night
// history below git's size; 32 made the key frames cost more than the
// margin (db/storage_bench_test.go measures both). The deepest read
// decodes in about 2 ms; the newest, read most, is one frame.
const MaxDeltaChain = 64

// chainGuard bounds a walk along base_id: a longer chain than packing ever
// builds means the store is damaged (a loop), not a slow read.
const chainGuard = 2 * MaxDeltaChain

// deltaDict is the dictionary id delta frames carry.
const deltaDict = 1

// Hash is the content address of a configuration text: the
// SHA-256 of its bytes, in hex.
func Hash(text string) string {
	// Written as a string, the text is not copied first.
	h := sha256.New()
	_, _ = io.WriteString(h, text)
	return hex.EncodeToString(h.Sum(nil))
}

// Put stores text whole; packing turns it into a delta once a
// newer version of its device exists.
func Put(ctx context.Context, q engine.Querier, d engine.Dialect, text string) (string, error) {
	hash, _, err := PutNew(ctx, q, d, text, "")
	return hash, err
}

// The statements of PutNew, which every backup runs: prepared
// when the store opens (jobQueries).
const ExistsQuery = `SELECT 1 FROM snapshots WHERE hash = ?`

func InsertQuery(d engine.Dialect) string {
	return d.InsertOrIgnore(`snapshots (hash, size, stored_size, data, created_at)`, `VALUES (?, ?, ?, ?, ?)`)
}

// PutNew is Put, telling whether the text was new.
func PutNew(ctx context.Context, q engine.Querier, d engine.Dialect, text, hash string) (string, bool, error) {
	if hash == "" {
		hash = Hash(text)
	}
	if ok, err := engine.Exists(ctx, q, ExistsQuery, hash); err != nil {
		return "", false, err
	} else if ok {
		return hash, false, nil
	}
	data := wholeEncoder.EncodeAll([]byte(text), nil)
	r, err := q.ExecContext(ctx, InsertQuery(d), hash, len(text), len(data), data, time.Now().UTC().Format(engine.TimeFormat))
	if err != nil {
		return "", false, fmt.Errorf("insert snapshot: %w", err)
	}
	n, err := r.RowsAffected()
	return hash, n > 0, err
}

// Text reads one snapshot through q (a transaction, or a pool).
func Text(ctx context.Context, q engine.Querier, hash string) (string, error) {
	text, err := Bytes(ctx, q, hash)
	return string(text), err
}

// Bytes returns the text stored under hash. The slice may be
// shared with the text cache: callers never modify it.
func Bytes(ctx context.Context, q engine.Querier, hash string) ([]byte, error) {
	if text, ok := texts.get(hash); ok {
		// The cache knows the text; the row must still exist.
		if ok, err := engine.Exists(ctx, q, `SELECT 1 FROM snapshots WHERE hash = ?`, hash); err != nil {
			return nil, fmt.Errorf("get snapshot: %w", err)
		} else if !ok {
			return nil, engine.ErrNotFound
		}
		return text, nil
	}
	var base sql.NullInt64
	var data []byte
	err := q.QueryRowContext(ctx, `SELECT base_id, data FROM snapshots WHERE hash = ?`, hash).Scan(&base, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get snapshot: %w", err)
	}
	if pool, ok := q.(*sql.DB); ok && base.Valid {
		// A delta's chain is walked in one read transaction: retention
		// may re-base it meanwhile, and the walk must see one state.
		tx, err := pool.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, fmt.Errorf("get snapshot: %w", err)
		}
		defer tx.Rollback()
		err = tx.QueryRowContext(ctx, `SELECT base_id, data FROM snapshots WHERE hash = ?`, hash).Scan(&base, &data)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, engine.ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("get snapshot: %w", err)
		}
		q = tx
	}
	return expand(ctx, q, hash, base, data)
}

// expand decodes one stored frame: a whole frame at once, a delta by
// walking base_id to the nearest whole frame (or cached text) and decoding
// back along the chain. Every text decoded on the way is cached, so
// reading a device's versions one after another decodes each frame once.
func expand(ctx context.Context, q engine.Querier, hash string, base sql.NullInt64, data []byte) ([]byte, error) {
	type frame struct {
		hash string
		data []byte
	}
	chain := []frame{{hash, data}}
	var text []byte
	for base.Valid {
		if len(chain) > chainGuard {
			return nil, fmt.Errorf("snapshot %s: its delta chain is longer than %d: the store is damaged (run backupd db check)", hash, chainGuard)
		}
		var h string
		var d []byte
		next := base
		err := q.QueryRowContext(ctx, `SELECT hash, base_id, data FROM snapshots WHERE id = ?`, next.Int64).Scan(&h, &base, &d)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("snapshot %s: the base its delta needs (snapshot %d) is missing: the store is damaged (run backupd db check)", hash, next.Int64)
		}
		if err != nil {
			return nil, fmt.Errorf("get snapshot: %w", err)
		}
		if t, ok := texts.get(h); ok {
			text = t
			break
		}
		chain = append(chain, frame{h, d})
	}
	i := len(chain) - 1
	if text == nil {
		t, err := wholeDecoder.DecodeAll(chain[i].data, nil)
		if err != nil {
			return nil, fmt.Errorf("decompress snapshot %s: %w", chain[i].hash, err)
		}
		if t == nil {
			t = []byte{}
		}
		text = t
		// A whole frame read on its own (the newest version, what
		// backups compare with) is not kept: one decode, and nothing
		// else reads it soon. One reached through a chain is.
		if i > 0 {
			texts.put(chain[i].hash, text)
		}
		i--
	}
	for ; i >= 0; i-- {
		t, err := decodeDelta(chain[i].data, text)
		if err != nil {
			return nil, fmt.Errorf("decompress snapshot %s: %w", chain[i].hash, err)
		}
		if t == nil {
			t = []byte{}
		}
		text = t
		texts.put(chain[i].hash, text)
	}
	return text, nil
}

// textCache keeps recently decoded texts by hash, bounded in bytes. A hash
// names one text forever, so an entry is never stale; a deleted snapshot's
// entry is only found after its row was (see Bytes).
type textCache struct {
	mu    sync.Mutex
	m     map[string][]byte
	order []string // insertion order, oldest first: evicted first
	bytes int
	limit int
}

// texts is shared by every store in the process: content addressing makes
// that safe.
var texts = &textCache{m: map[string][]byte{}, limit: 8 << 20}

func (c *textCache) get(hash string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[hash]
	return t, ok
}

func (c *textCache) put(hash string, text []byte) {
	if len(text) > c.limit/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[hash]; ok {
		return
	}
	for c.bytes+len(text) > c.limit && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old])
		delete(c.m, old)
	}
	c.m[hash] = text
	c.order = append(c.order, hash)
	c.bytes += len(text)
}

// ResetCache empties the process's cache of decoded texts, so that the
// next reads decode what is stored (tests, and measurements of reads).
func ResetCache() {
	texts.mu.Lock()
	defer texts.mu.Unlock()
	clear(texts.m)
	texts.order, texts.bytes = nil, 0
}

// PutQueries are the statements PutNew runs, for a caller that prepares
// them (the store prepares every backup's statements when it opens).
func PutQueries(d engine.Dialect) []string { return []string{ExistsQuery, InsertQuery(d)} }
