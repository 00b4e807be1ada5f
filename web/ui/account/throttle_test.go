package account

import (
	"fmt"
	"testing"
	"time"
)

func TestThrottleLocksDoublesAndForgets(t *testing.T) {
	th := newThrottle(100)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := userKey("Alice")
	if k != userKey("alice") {
		t.Error("usernames are not compared without case")
	}
	for i := 1; i < pairRule.free; i++ {
		if until := th.fail(now, k, pairRule); !until.IsZero() {
			t.Fatalf("failure %d locked until %v", i, until)
		}
	}
	steps := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 15 * time.Minute, 15 * time.Minute}
	for _, want := range steps {
		until := th.fail(now, k, pairRule)
		if got := until.Sub(now); got != want {
			t.Fatalf("lock %v, want %v", got, want)
		}
		if th.lockedUntil(now, "addr:192.0.2.1", k) != until {
			t.Fatal("lockedUntil does not report the lock")
		}
		now = until
		if !th.lockedUntil(now, k).IsZero() {
			t.Fatal("a lock outlives its end")
		}
	}
	// An hour after the last failure, counting starts again.
	now = now.Add(forgetAfter + time.Second)
	if until := th.fail(now, k, pairRule); !until.IsZero() {
		t.Errorf("failures were not forgotten after an hour: locked until %v", until)
	}
	th.succeed(k)
	if _, ok := th.entries[k]; ok {
		t.Error("success did not forget the failures")
	}
}

func TestThrottleStaysBounded(t *testing.T) {
	th := newThrottle(50)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// A locked key survives a flood of single failures from elsewhere.
	locked := userKey("target")
	for range pairRule.free {
		th.fail(now, locked, pairRule)
	}
	for i := range 10000 {
		th.fail(now.Add(time.Duration(i)*time.Millisecond), addrKey(fmt.Sprintf("10.0.%d.%d", i/256, i%256)), addrRule)
		if len(th.entries) > 50 {
			t.Fatalf("%d entries, bound is 50", len(th.entries))
		}
	}
	if th.lockedUntil(now, locked).IsZero() {
		t.Error("a flood of other keys evicted a locked one")
	}
}

// The backstop per username locks briefly once failures from every
// address together reach its threshold, and then counts from zero: an
// attacker with many addresses cannot keep the user out for long.
func TestThrottleBackstopIsShortAndStartsOver(t *testing.T) {
	th := newThrottle(1000)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := userKey("admin")
	for i := 1; i < userRule.free; i++ {
		if until := th.fail(now, k, userRule); !until.IsZero() {
			t.Fatalf("failure %d locked the username until %v", i, until)
		}
	}
	until := th.fail(now, k, userRule)
	if got := until.Sub(now); got != time.Minute {
		t.Fatalf("backstop lock %v, want 1m", got)
	}
	now = until
	if until := th.fail(now, k, userRule); !until.IsZero() {
		t.Errorf("the failure after a backstop lock locked again (until %v): the count must start over", until)
	}
}

// Two addresses of one username count apart, as do two usernames of one
// address.
func TestPairKeys(t *testing.T) {
	if pairKey("Admin", "192.0.2.1") != pairKey("admin", "192.0.2.1") {
		t.Error("usernames are not compared without case")
	}
	if pairKey("admin", "192.0.2.1") == pairKey("admin", "192.0.2.2") {
		t.Error("one username from two addresses counts together")
	}
	if pairKey("admin", "192.0.2.1") == pairKey("alice", "192.0.2.1") {
		t.Error("two usernames from one address count together")
	}
}

func TestAddrKeyGroupsIPv6ByPrefix(t *testing.T) {
	if addrKey("2001:db8:1:2:aaaa::1") != addrKey("2001:db8:1:2:bbbb::2") {
		t.Error("two addresses of one /64 count apart")
	}
	if addrKey("2001:db8:1:3::1") == addrKey("2001:db8:1:2::1") {
		t.Error("two /64s count together")
	}
	if addrKey("192.0.2.1") == addrKey("192.0.2.2") {
		t.Error("two IPv4 addresses count together")
	}
}
