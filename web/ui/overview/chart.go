package overview

import (
	"strconv"
	"strings"
	"time"

	"backupd/db"
)

// backupChart is the dashboard's bar chart of backups per day, laid out
// here and drawn by the template as inline SVG: no script, and CSS
// classes rather than style attributes (the CSP forbids those). Numbers
// are preformatted strings, so the markup stays short.
type backupChart struct {
	Width, Height string
	// Plot area edges, for the axis line.
	Left, Right, Bottom string
	Ticks               []chartTick
	Bars                []chartBar
	Labels              []chartLabel
	// Empty is set when no backup finished in the period.
	Empty bool
	// Totals over the period; OK is the successes without a change.
	OK, Changed, Failed int
}

type chartTick struct {
	Y, LabelY string
	Label     int
}

// chartBar is one day: its stacked segments and an invisible full-height
// area that carries the tooltip.
type chartBar struct {
	Day                       string
	X, Width, HitY, HitHeight string
	Segments                  []chartSegment
	// OK are successes without a change.
	OK, Changed, Failed int
}

type chartSegment struct {
	Class, X, Y, Width, Height string
}

type chartLabel struct {
	X, Y, Text string
}

// Chart geometry, in SVG user units.
const (
	chartWidth   = 720.0
	chartHeight  = 240.0
	chartLeft    = 44.0
	chartRight   = 8.0
	chartTop     = 12.0
	chartBottom  = 28.0
	chartBarFill = 0.72
	chartTicks   = 4
)

func newBackupChart(days []db.DayOutcome, loc *time.Location) backupChart {
	c := backupChart{
		Width: f(chartWidth), Height: f(chartHeight),
		Left: f(chartLeft), Right: f(chartWidth - chartRight), Bottom: f(chartHeight - chartBottom),
	}
	peak := 0
	for _, d := range days {
		peak = max(peak, d.Succeeded+d.Failed)
		c.OK += d.Succeeded - d.Changed
		c.Changed += d.Changed
		c.Failed += d.Failed
	}
	c.Empty = peak == 0
	step := niceStep((peak + chartTicks - 1) / chartTicks)
	top := step * chartTicks
	plotH := chartHeight - chartTop - chartBottom
	plotW := chartWidth - chartLeft - chartRight
	y := func(v int) float64 { return chartTop + plotH - plotH*float64(v)/float64(top) }
	for i := 0; i <= chartTicks; i++ {
		v := step * i
		c.Ticks = append(c.Ticks, chartTick{Y: f(y(v)), LabelY: f(y(v) + 4), Label: v})
	}
	slot := plotW / float64(len(days))
	barW := slot * chartBarFill
	for i, d := range days {
		x := chartLeft + slot*float64(i) + (slot-barW)/2
		b := chartBar{
			Day: d.Start.In(loc).Format("2006-01-02"), X: f(x), Width: f(barW),
			HitY: f(chartTop), HitHeight: f(plotH),
			OK: d.Succeeded - d.Changed, Changed: d.Changed, Failed: d.Failed,
		}
		// Bottom up: unchanged successes, changed ones, failures.
		base := 0
		for _, s := range []struct {
			class string
			n     int
		}{{"seg-ok", d.Succeeded - d.Changed}, {"seg-changed", d.Changed}, {"seg-failed", d.Failed}} {
			if s.n <= 0 {
				continue
			}
			b.Segments = append(b.Segments, chartSegment{
				Class: s.class, X: b.X, Width: b.Width, Y: f(y(base + s.n)), Height: f(y(base) - y(base+s.n)),
			})
			base += s.n
		}
		c.Bars = append(c.Bars, b)
		// A date under every seventh bar, counting back from today.
		if (len(days)-1-i)%7 == 0 {
			c.Labels = append(c.Labels, chartLabel{
				X: f(x + barW/2), Y: f(chartHeight - chartBottom + 18), Text: d.Start.In(loc).Format("01-02"),
			})
		}
	}
	return c
}

// niceStep is the smallest of 1, 2, 5, 10, 20, 50 … not below n.
func niceStep(n int) int {
	if n < 1 {
		return 1
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// f formats a coordinate with at most one decimal.
func f(v float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
}
