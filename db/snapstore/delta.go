package snapstore

import (
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

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
