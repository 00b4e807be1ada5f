package syslog

import (
	"sort"
	"sync"
	"time"
)

// rateLimiter is a token bucket per key (a sender address, a device), in
// a map of bounded size: when it is full, the least recently seen of a
// few keys (sampled, so the cost stays constant) makes room. A key
// evicted and seen again starts with a full bucket, which at worst lets a
// spoofing flood through at the burst size; the total work is still
// bounded by what the reader goroutines can read.
type rateLimiter[K comparable] struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	max     int
	senders map[K]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter[K comparable](rate float64, burst, max int) *rateLimiter[K] {
	return &rateLimiter[K]{rate: rate, burst: float64(burst), max: max, senders: make(map[K]*bucket)}
}

// allow takes one token from addr's bucket at time now.
func (r *rateLimiter[K]) allow(addr K, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.senders[addr]
	if b == nil {
		if len(r.senders) >= r.max {
			r.evict()
		}
		b = &bucket{tokens: r.burst, last: now}
		r.senders[addr] = b
	} else if el := now.Sub(b.last); el > 0 {
		b.tokens += el.Seconds() * r.rate
		if b.tokens > r.burst {
			b.tokens = r.burst
		}
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// evict removes the least recently seen of up to 16 keys (Go's map
// iteration order is random, which makes this a sample).
func (r *rateLimiter[K]) evict() {
	var victim K
	var oldest time.Time
	n := 0
	for a, b := range r.senders {
		if n == 0 || b.last.Before(oldest) {
			victim, oldest = a, b.last
		}
		n++
		if n == 16 {
			break
		}
	}
	delete(r.senders, victim)
}

func (r *rateLimiter[K]) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.senders)
}

// debouncer turns bursts of configuration-change messages into one
// trigger per device: a device is due once quiet has passed since its
// last message, or maxWait since its first (so a device that keeps
// logging changes is still backed up now and then). At most max devices
// wait at a time.
type debouncer struct {
	mu      sync.Mutex
	quiet   time.Duration
	maxWait time.Duration
	max     int
	pending map[int64]*waiting
}

type waiting struct{ first, last time.Time }

func newDebouncer(quiet, maxWait time.Duration, max int) *debouncer {
	return &debouncer{quiet: quiet, maxWait: maxWait, max: max, pending: make(map[int64]*waiting)}
}

// note records a matching message for device at now; false when the
// device was not waiting and there is no room for it.
func (d *debouncer) note(device int64, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w := d.pending[device]; w != nil {
		if now.After(w.last) {
			w.last = now
		}
		return true
	}
	if len(d.pending) >= d.max {
		return false
	}
	d.pending[device] = &waiting{first: now, last: now}
	return true
}

// due removes and returns (in ID order) the devices whose wait is over
// at now.
func (d *debouncer) due(now time.Time) []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []int64
	for id, w := range d.pending {
		if !now.Before(w.last.Add(d.quiet)) || !now.Before(w.first.Add(d.maxWait)) {
			ids = append(ids, id)
			delete(d.pending, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (d *debouncer) size() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}
