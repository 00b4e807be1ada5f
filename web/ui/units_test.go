package ui

import (
	"fmt"
	"testing"
	"time"

	"backupd/db"
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

func TestDayBoundsFollowTheLocalCalendar(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 2026-03-29 is the spring-forward day in Berlin: 23 hours long.
	now := time.Date(2026, 3, 30, 10, 0, 0, 0, berlin)
	b := dayBounds(now, berlin, 3)
	if len(b) != 4 {
		t.Fatalf("%d bounds, want 4", len(b))
	}
	for i, want := range []string{"2026-03-28T00:00:00+01:00", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", "2026-03-31T00:00:00+02:00"} {
		if got := b[i].Format(time.RFC3339); got != want {
			t.Errorf("bound %d = %s, want %s", i, got, want)
		}
	}
	if d := b[2].Sub(b[1]); d != 23*time.Hour {
		t.Errorf("the spring-forward day lasts %v, want 23h", d)
	}
}

func TestBackupChartLayout(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 5, 7: 10, 11: 20, 26: 50, 101: 200} {
		if got := niceStep(n); got != want {
			t.Errorf("niceStep(%d) = %d, want %d", n, got, want)
		}
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	days := make([]db.DayOutcome, 30)
	for i := range days {
		days[i].Start = start.AddDate(0, 0, i)
	}
	days[29] = db.DayOutcome{Start: days[29].Start, Succeeded: 10, Changed: 3, Failed: 5}
	c := newBackupChart(days, time.UTC)
	if len(c.Bars) != 30 || c.OK != 7 || c.Changed != 3 || c.Failed != 5 || c.Empty {
		t.Fatalf("chart totals %+v", c)
	}
	// 15 backups on the busiest day: ticks every 5 up to 20.
	if last := c.Ticks[len(c.Ticks)-1]; last.Label != 20 || c.Ticks[1].Label != 5 {
		t.Errorf("ticks %+v", c.Ticks)
	}
	bar := c.Bars[29]
	if len(bar.Segments) != 3 || bar.Segments[0].Class != "seg-ok" || bar.Segments[2].Class != "seg-failed" {
		t.Fatalf("last bar's segments %+v", bar.Segments)
	}
	// Stacked: each segment starts where the one below ends, the stack
	// reaching 15/20 of the plot height.
	plot := chartHeight - chartTop - chartBottom
	var height float64
	for _, s := range bar.Segments {
		var h float64
		fmt.Sscan(s.Height, &h)
		height += h
	}
	if want := plot * 15 / 20; height < want-0.5 || height > want+0.5 {
		t.Errorf("stack height %.1f, want %.1f", height, want)
	}
	if len(c.Bars[0].Segments) != 0 {
		t.Error("an empty day has segments")
	}
	if len(c.Labels) != 5 || c.Labels[len(c.Labels)-1].Text != "01-30" {
		t.Errorf("x labels %+v, want five ending at today", c.Labels)
	}
	if !newBackupChart(make([]db.DayOutcome, 30), time.UTC).Empty {
		t.Error("a chart without backups is not marked empty")
	}
}
