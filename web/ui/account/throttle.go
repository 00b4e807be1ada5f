package account

import (
	"net"
	"strings"
	"sync"
	"time"
)

// Sign-in throttling. Failures are counted under three keys, each with
// its own rule (lockRule):
//
//   - the username from one client address (pairRule): five free
//     failures, then each further one locks that pair for twice as long
//     as the last (30 s, 1 min, 2 min … up to 15 min). Someone guessing a
//     password slows only himself: the user signs in from anywhere else.
//   - the client address, whatever the username (addrRule): twenty free
//     failures, then the same doubling; it stops one address from trying
//     many usernames.
//   - the username from every address together (userRule): a backstop
//     against guessing from many addresses at once, with a far higher
//     threshold and a short lock that starts the count again.
//
// A locked key is refused without checking the password at all, so a
// lock cannot be used to test passwords. Counts are forgotten forgetAfter
// the last failure. The table lives in memory, per node, and is bounded:
// a node that restarts forgets, and the addresses an attacker can use
// are what bound him, not the state of other nodes.
const (
	forgetAfter = time.Hour

	maxThrottleEntries = 10000
)

// lockRule is how failures under one kind of key lock it.
type lockRule struct {
	// free failures are allowed before the first lock.
	free int
	// base is the first lock; each further failure doubles it up to max.
	base, max time.Duration
	// reset starts the count again once a lock is set, so that the next
	// lock needs free failures again (the backstop's rule).
	reset bool
}

var (
	pairRule = lockRule{free: 5, base: 30 * time.Second, max: 15 * time.Minute}
	addrRule = lockRule{free: 20, base: 30 * time.Second, max: 15 * time.Minute}
	userRule = lockRule{free: 100, base: time.Minute, max: time.Minute, reset: true}
)

type failures struct {
	count int
	last  time.Time
	until time.Time
}

// throttle counts failed sign-ins by key ("pair:IP|NAME", "addr:IP",
// "user:NAME").
type throttle struct {
	mu      sync.Mutex
	max     int
	entries map[string]*failures
}

func newThrottle(max int) *throttle {
	return &throttle{max: max, entries: map[string]*failures{}}
}

func userKey(username string) string { return "user:" + strings.ToLower(username) }

// pairKey names a username tried from one client address (grouped as
// addrKey groups it).
func pairKey(username, ip string) string {
	return "pair:" + strings.TrimPrefix(addrKey(ip), "addr:") + "|" + strings.ToLower(username)
}

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

// fail records a failure for key, which locks it by rule once rule.free
// failures have been counted. It returns the key's lock end (zero when
// not locked).
func (t *throttle) fail(now time.Time, key string, rule lockRule) time.Time {
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
	if f.count >= rule.free {
		lock := rule.max
		if shift := f.count - rule.free; shift < 16 {
			lock = min(rule.base<<shift, rule.max)
		}
		f.until = now.Add(lock)
		if rule.reset {
			f.count = 0
		}
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

// signIn is the throttle's keys of one sign-in (or password check): the
// username as typed, from one client address.
type signIn struct{ pair, addr, user string }

func signInKeys(username, ip string) signIn {
	return signIn{pair: pairKey(username, ip), addr: addrKey(ip), user: userKey(username)}
}

// locked returns until when the sign-in is refused unchecked (zero: it
// is not).
func (t *throttle) locked(now time.Time, k signIn) time.Time {
	return t.lockedUntil(now, k.pair, k.addr, k.user)
}

// failed records a wrong password under each key and returns the latest
// lock it set (zero: none).
func (t *throttle) failed(now time.Time, k signIn) time.Time {
	until := t.fail(now, k.pair, pairRule)
	for _, u := range []time.Time{t.fail(now, k.addr, addrRule), t.fail(now, k.user, userRule)} {
		if u.After(until) {
			until = u
		}
	}
	return until
}

// succeeded forgets the failures of the username from this address; the
// address's and the username's own counts stay, as others made them.
func (t *throttle) succeeded(k signIn) { t.succeed(k.pair) }
