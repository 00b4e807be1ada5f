package overview

import (
	"fmt"
	"testing"
	"time"

	"backupd/db"
)

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

// A job's duration reads as a device's history reads it: a backup of
// 137 ms is "137 ms", not "0:00".
func TestJobDurationText(t *testing.T) {
	tr := func(key string, args ...any) string { return key + fmt.Sprint(args...) }
	for d, want := range map[time.Duration]string{
		0:                        keyJobDurationMS + "0",
		137 * time.Millisecond:   keyJobDurationMS + "137",
		4250 * time.Millisecond:  keyJobDurationS + "4.2",
		59999 * time.Millisecond: keyJobDurationS + "59.9",
		61 * time.Second:         keyJobDurationMin + "1 1",
		time.Hour + 2*time.Minute + 3*time.Second: "1:02:03",
	} {
		if got := durationText(d, tr); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
	}
}
