package schedules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/adhocore/gronx"

	"backupd/app/backup"
	"backupd/web/ui/core"
)

// A cron expression in plain words, for the common shapes.

// describeCron says in plain words when a cron expression fires, for the
// common shapes: every N minutes, hourly, every N hours, daily at some
// times, on some weekdays, on some days of the month. Anything else
// (months, steps in odd places, both kinds of day) gets "" and the
// preview's list of fire times speaks for it.
func (u *handlers) describeCron(lang, expr string) string {
	if _, err := backup.NextRuns(expr, "UTC", u.Now(), 0); err != nil {
		return ""
	}
	segs, err := gronx.Segments(expr)
	if err != nil || len(segs) != 6 || segs[0] != "0" {
		return ""
	}
	minute, hour, dom, month, dow := segs[1], segs[2], segs[3], segs[4], segs[5]
	wild := func(s string) bool { return s == "*" || s == "?" }
	if !wild(month) {
		return ""
	}
	t := func(key string, args ...any) string { return u.Text(lang, key, args...) }
	everyDay := wild(dom) && wild(dow)
	m, minuteFixed := cronNumber(minute, 0, 59)
	switch {
	case wild(minute) && wild(hour) && everyDay:
		return t(keySchedDescEveryMinute)
	case wild(hour) && everyDay:
		if n, ok := cronStep(minute, 60); ok {
			return t(keySchedDescEveryMinutes, n)
		}
		if minuteFixed {
			return t(keySchedDescHourly, m)
		}
		return ""
	case !minuteFixed:
		return ""
	}
	if n, ok := cronStep(hour, 24); ok && everyDay {
		return t(keySchedDescEveryHours, n, m)
	}
	hours, ok := cronList(hour, 0, 23)
	if !ok {
		return ""
	}
	times := make([]string, len(hours))
	for i, h := range hours {
		times[i] = fmt.Sprintf("%02d:%02d", h, m)
	}
	at := strings.Join(times, t(core.KeyListSep))
	switch {
	case everyDay:
		return t(keySchedDescDaily, at)
	case wild(dom):
		if days, ok := u.cronWeekdays(lang, dow); ok {
			return t(keySchedDescWeekly, days, at)
		}
	case wild(dow):
		if days, ok := cronList(dom, 1, 31); ok {
			parts := make([]string, len(days))
			for i, d := range days {
				parts[i] = strconv.Itoa(d)
			}
			return t(keySchedDescMonthly, strings.Join(parts, t(core.KeyListSep)), at)
		}
	}
	return ""
}

// cronWeekdays names the days of a day-of-week field made of days and
// ranges ("1", "1,3", "1-5"; 0 and 7 are Sunday).
func (u *handlers) cronWeekdays(lang, field string) (string, bool) {
	var parts []string
	for _, item := range strings.Split(field, ",") {
		from, to, isRange := strings.Cut(item, "-")
		a, ok := cronNumber(from, 0, 7)
		if !ok {
			return "", false
		}
		if !isRange {
			parts = append(parts, u.Text(lang, keySchedDayLong[a%7]))
			continue
		}
		b, ok := cronNumber(to, 0, 7)
		if !ok || b <= a {
			return "", false
		}
		parts = append(parts, u.Text(lang, keySchedDescDayRange,
			u.Text(lang, keySchedDayLong[a%7]), u.Text(lang, keySchedDayLong[b%7])))
	}
	return strings.Join(parts, u.Text(lang, core.KeyListSep)), true
}

// cronNumber reads a plain number field within [lo, hi].
func cronNumber(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi && !strings.HasPrefix(s, "+")
}

// cronList reads a comma-separated list of plain numbers, sorted.
func cronList(s string, lo, hi int) ([]int, bool) {
	var out []int
	for _, item := range strings.Split(s, ",") {
		n, ok := cronNumber(item, lo, hi)
		if !ok {
			return nil, false
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// cronStep reads "*/n" where n divides period evenly: only then does the
// step keep the same pace across the hour or day boundary, and "every n"
// say the truth.
func cronStep(s string, period int) (int, bool) {
	rest, ok := strings.CutPrefix(s, "*/")
	if !ok {
		return 0, false
	}
	n, ok := cronNumber(rest, 2, period-1)
	return n, ok && period%n == 0
}
