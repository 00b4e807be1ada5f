package db

import (
	"backupd/db/engine"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// How configuration texts are stored.
//
// A snapshot is one distinct text, addressed by the SHA-256 of its bytes.
// Its data is a zstd frame, either whole (base_id NULL) or a delta: a frame
// compressed with the text of the snapshot base_id names as a raw
// dictionary. A version that changed 2% of its lines then costs a few
// hundred bytes instead of a whole compressed copy.
//
// Deltas point from older to newer: a device's newest version is stored
// whole, and when a newer one arrives the previous one is rewritten as a
// delta against it (packDevice, after FinishJob; Repack does the same for a whole database
// written before deltas existed). Reading the newest version, by far the
// most frequent read, decodes one frame. Following base_id from any
// snapshot always ends at a whole frame after at most MaxDeltaChain
// deltas: a snapshot whose chain of older deltas is already that long is
// left whole, a key frame that starts a new chain.

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

var (
	// A whole frame is mostly short-lived: the newest version, rewritten
	// as a delta when the next one arrives. So it is written fast; only
	// the newest and the key frames (one in 65) stay at this level, about
	// 7% larger than the default level's.
	wholeEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	wholeDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))

	// Delta decoders carry their dictionary as state, so each use takes
	// one from a pool rather than sharing.
	deltaDecoders = sync.Pool{New: func() any {
		d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))
		return d
	}}
)

// Delta encoding. A delta is written once, when a version stops being
// the newest, and read rarely, so it is worth the "better" level: on a
// 60 KB configuration with 2% of its lines changed it gives 535 bytes
// where the fastest level gives 698, at about 1.3 ms instead of 0.3 ms.
// That encoder holds some 20 MB of tables, so there is one, shared under
// a lock (packing is not a hot path; one encoder serves several hundred
// packs a second), with a 1 MiB window: a text and its base fit in it up
// to about 500 KB each. Larger texts get an encoder of their own sized to
// them, at the default level, dropped after use.
const (
	deltaWindow    = 1 << 20
	maxDeltaWindow = 64 << 20
)

var deltaEncoder struct {
	sync.Mutex
	e    *zstd.Encoder
	used time.Time
	idle *time.Timer // drops e after deltaIdle unused
}

// deltaIdle is how long the delta encoder's tables outlive their last
// use: packing comes in bursts (a backup run), and a Raspberry Pi
// should have its 20 MB back between them.
const deltaIdle = time.Minute

func dropIdleEncoder() {
	deltaEncoder.Lock()
	defer deltaEncoder.Unlock()
	if deltaEncoder.e != nil && time.Since(deltaEncoder.used) >= deltaIdle {
		deltaEncoder.e.Close()
		deltaEncoder.e = nil
	}
}

// minDeltaBase is the shortest text worth using as a dictionary.
const minDeltaBase = 64

// encodeDelta compresses text with base as its dictionary; nil when the
// two are too large for any window (the text then stays whole).
func encodeDelta(text, base []byte) ([]byte, error) {
	need := len(text) + len(base) + 1024
	if need > maxDeltaWindow {
		return nil, nil
	}
	if need > deltaWindow {
		window := deltaWindow
		for window < need {
			window <<= 1
		}
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(window), zstd.WithLowerEncoderMem(true), zstd.WithEncoderDictRaw(deltaDict, base))
		if err != nil {
			return nil, err
		}
		defer e.Close()
		return e.EncodeAll(text, nil), nil
	}
	deltaEncoder.Lock()
	defer deltaEncoder.Unlock()
	if deltaEncoder.e == nil {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(deltaWindow), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
		deltaEncoder.e = e
	}
	deltaEncoder.used = time.Now()
	if deltaEncoder.idle == nil {
		deltaEncoder.idle = time.AfterFunc(deltaIdle, dropIdleEncoder)
	} else {
		deltaEncoder.idle.Reset(deltaIdle)
	}
	if err := deltaEncoder.e.ResetWithOptions(nil, zstd.WithEncoderDictRaw(deltaDict, base)); err != nil {
		return nil, err
	}
	return deltaEncoder.e.EncodeAll(text, nil), nil
}

// decodeDelta expands a delta frame against the text of its base.
func decodeDelta(data, base []byte) ([]byte, error) {
	d := deltaDecoders.Get().(*zstd.Decoder)
	defer deltaDecoders.Put(d)
	if err := d.ResetWithOptions(nil, zstd.WithDecoderDictRaw(deltaDict, base)); err != nil {
		return nil, err
	}
	return d.DecodeAll(data, nil)
}

// SnapshotHash is the content address of a configuration text: the
// SHA-256 of its bytes, in hex.
func SnapshotHash(text string) string {
	// Written as a string, the text is not copied first.
	h := sha256.New()
	_, _ = io.WriteString(h, text)
	return hex.EncodeToString(h.Sum(nil))
}

// PutSnapshot stores text once per distinct content and returns its hash.
func (s *Store) PutSnapshot(ctx context.Context, text string) (string, error) {
	return putSnapshot(ctx, s.writer, s.d, text)
}

// putSnapshot stores text whole; packing turns it into a delta once a
// newer version of its device exists.
func putSnapshot(ctx context.Context, q engine.Querier, d engine.Dialect, text string) (string, error) {
	hash, _, err := putSnapshotNew(ctx, q, d, text, "")
	return hash, err
}

// The statements of putSnapshotNew, which every backup runs: prepared
// when the store opens (jobQueries).
const snapshotExistsQuery = `SELECT 1 FROM snapshots WHERE hash = ?`

func insertSnapshotQuery(d engine.Dialect) string {
	return d.InsertOrIgnore(`snapshots (hash, size, stored_size, data, created_at)`, `VALUES (?, ?, ?, ?, ?)`)
}

// putSnapshotNew is putSnapshot, telling whether the text was new.
func putSnapshotNew(ctx context.Context, q engine.Querier, d engine.Dialect, text, hash string) (string, bool, error) {
	if hash == "" {
		hash = SnapshotHash(text)
	}
	if ok, err := engine.Exists(ctx, q, snapshotExistsQuery, hash); err != nil {
		return "", false, err
	} else if ok {
		return hash, false, nil
	}
	data := wholeEncoder.EncodeAll([]byte(text), nil)
	r, err := q.ExecContext(ctx, insertSnapshotQuery(d), hash, len(text), len(data), data, Now())
	if err != nil {
		return "", false, fmt.Errorf("insert snapshot: %w", err)
	}
	n, err := r.RowsAffected()
	return hash, n > 0, err
}

// SnapshotText returns the configuration text stored under hash, or
// ErrNotFound.
func (s *Store) SnapshotText(ctx context.Context, hash string) (string, error) {
	text, err := snapshotBytes(ctx, s.reader, hash)
	return string(text), err
}

// snapshotText reads one snapshot through q (a transaction, or a pool).
func snapshotText(ctx context.Context, q engine.Querier, hash string) (string, error) {
	text, err := snapshotBytes(ctx, q, hash)
	return string(text), err
}

// snapshotBytes returns the text stored under hash. The slice may be
// shared with the text cache: callers never modify it.
func snapshotBytes(ctx context.Context, q engine.Querier, hash string) ([]byte, error) {
	if text, ok := texts.get(hash); ok {
		// The cache knows the text; the row must still exist.
		if ok, err := engine.Exists(ctx, q, `SELECT 1 FROM snapshots WHERE hash = ?`, hash); err != nil {
			return nil, fmt.Errorf("get snapshot: %w", err)
		} else if !ok {
			return nil, ErrNotFound
		}
		return text, nil
	}
	var base sql.NullInt64
	var data []byte
	err := q.QueryRowContext(ctx, `SELECT base_id, data FROM snapshots WHERE hash = ?`, hash).Scan(&base, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
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
			return nil, ErrNotFound
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
// entry is only found after its row was (see snapshotBytes).
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

// PackStats count packing since the process started, for metrics.
type PackStats struct {
	Packed uint64 // snapshots rewritten as deltas
	Failed uint64 // packing attempts that failed (the snapshot stays whole)
}

var packed, packFailed atomic.Uint64

// PackCounts returns the process's packing counters.
func PackCounts() PackStats { return PackStats{Packed: packed.Load(), Failed: packFailed.Load()} }

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
	_, err = s.packPair(ctx, hashes[1], hashes[0], text)
	return err
}

// packPair rewrites the snapshot older as a delta against newer when that
// is sound: older is whole, newer is whole, older's chain of deltas is
// shorter than MaxDeltaChain, and the delta is smaller. newerText may
// carry newer's text. It reports whether older was rewritten.
func (s *Store) packPair(ctx context.Context, older, newer string, newerText []byte) (bool, error) {
	if older == newer {
		return false, nil
	}
	var olderID, newerID int64
	var olderBase, newerBase sql.NullInt64
	var olderData []byte
	err := s.reader.QueryRowContext(ctx, `SELECT id, base_id, data FROM snapshots WHERE hash = ?`, older).Scan(&olderID, &olderBase, &olderData)
	if errors.Is(err, sql.ErrNoRows) || olderBase.Valid {
		return false, nil
	}
	if err == nil {
		err = s.reader.QueryRowContext(ctx, `SELECT id, base_id FROM snapshots WHERE hash = ?`, newer).Scan(&newerID, &newerBase)
		if errors.Is(err, sql.ErrNoRows) || newerBase.Valid {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("pack: %w", err)
	}
	// Cheap refusals first: a key frame due needs no decoding.
	if h, err := chainBelow(ctx, s.reader, olderID); err != nil || h >= MaxDeltaChain {
		return false, err
	}
	if newerText == nil {
		if newerText, err = snapshotBytes(ctx, s.reader, newer); err != nil {
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
	if SnapshotHash(string(olderText)) != older {
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
	err = s.InTx(ctx, func(tx *sql.Tx) error {
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
		ok, err := s.packPair(ctx, older.hash, newer.hash, nil)
		if err != nil {
			return n, fmt.Errorf("repack device %d: %w", deviceID, err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// rebaseDependents prepares the snapshots doomed (id → base_id) for
// deletion in q's transaction: every delta based on one of them that is
// not itself doomed is rewritten against its nearest surviving ancestor,
// or whole when it has none, so no delta is left without its base. It
// returns how many were rewritten.
func rebaseDependents(ctx context.Context, q engine.Querier, doomed map[int64]sql.NullInt64) (int, error) {
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
	list := placeholders(len(ids))
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
			baseText, err := snapshotBytes(ctx, q, ah)
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

// checkSnapshots decodes every stored frame on its own (a delta against
// its base's text) and reports those that do not give the text their hash
// names, whose base is missing, or whose size is wrong. It reads in id
// order, a batch at a time.
func checkSnapshots(ctx context.Context, q engine.Querier, report func(string)) error {
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
				base, err := snapshotBytes(ctx, q, bh)
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

// expandAll rewrites every delta whole, through q: what a rollback of the
// delta migration needs before the column goes.
func expandAll(ctx context.Context, q engine.Querier) (int, error) {
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
