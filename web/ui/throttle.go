package ui

import (
	"net"
	"strings"
	"sync"
	"time"
)

// Sign-in throttling. Failures are counted per username and per client
// address; past a number of free failures each further one locks the key
// for twice as long as the last (lockBase, 2×, 4× … up to lockMax). A
// locked key is refused without checking the password at all, so a lock
// cannot be used to test passwords. Counts are forgotten forgetAfter the
// last failure. The table lives in memory and is bounded.
const (
	freeUserFailures = 5
	freeAddrFailures = 20
	lockBase         = 30 * time.Second
	lockMax          = 15 * time.Minute
	forgetAfter      = time.Hour

	maxThrottleEntries = 10000
)

type failures struct {
	count int
	last  time.Time
	until time.Time
}

// throttle counts failed sign-ins by key ("user:NAME", "addr:IP").
type throttle struct {
	mu      sync.Mutex
	max     int
	entries map[string]*failures
}

func newThrottle(max int) *throttle {
	return &throttle{max: max, entries: map[string]*failures{}}
}

func userKey(username string) string { return "user:" + strings.ToLower(username) }

// addrKey names a client address; IPv6 clients by their /64, which one
// host usually holds whole.
func addrKey(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return "addr:" + ip
	}
	if a.To4() == nil {
		a = a.Mask(net.CIDRMask(64, 128))
	}
	return "addr:" + a.String()
}

// lockedUntil returns the latest time until which any of keys is locked,
// or the zero time when none is locked at now.
func (t *throttle) lockedUntil(now time.Time, keys ...string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var until time.Time
	for _, k := range keys {
		if f, ok := t.entries[k]; ok && now.Before(f.until) && f.until.After(until) {
			until = f.until
		}
	}
	return until
}

// fail records a failure for key, which locks it once more than free
// failures have been counted. It returns the key's lock end (zero when
// not locked).
func (t *throttle) fail(now time.Time, key string, free int) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.entries[key]
	if ok && now.Sub(f.last) > forgetAfter && !now.Before(f.until) {
		f.count = 0
	}
	if !ok {
		t.makeRoom(now)
		f = &failures{}
		t.entries[key] = f
	}
	f.count++
	f.last = now
	if f.count >= free {
		lock := lockMax
		if shift := f.count - free; shift < 16 {
			lock = min(lockBase<<shift, lockMax)
		}
		f.until = now.Add(lock)
	}
	if now.Before(f.until) {
		return f.until
	}
	return time.Time{}
}

// succeed forgets key's failures.
func (t *throttle) succeed(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, key)
}

// makeRoom keeps the table within its bound: forgotten entries go first,
// then the one whose last failure is oldest among those not locked, then
// the oldest of all. Called with mu held.
func (t *throttle) makeRoom(now time.Time) {
	if len(t.entries) < t.max {
		return
	}
	for k, f := range t.entries {
		if now.Sub(f.last) > forgetAfter && !now.Before(f.until) {
			delete(t.entries, k)
		}
	}
	for len(t.entries) >= t.max {
		var victim string
		var oldest time.Time
		victimLocked := true
		for k, f := range t.entries {
			locked := now.Before(f.until)
			if victim == "" || (victimLocked && !locked) || (locked == victimLocked && f.last.Before(oldest)) {
				victim, oldest, victimLocked = k, f.last, locked
			}
		}
		delete(t.entries, victim)
	}
}
