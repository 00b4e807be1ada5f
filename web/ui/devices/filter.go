package devices

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"backupd/app/collect/driver"
	"backupd/db"
)

// The list's filters, as the query of every page link, the export link
// and the "back up" forms' way back carry them.

// devicesFilter is the list's query: the filters, kept in every page
// link, the export link and the "back up" forms' way back.
type devicesFilter struct {
	Query    string
	GroupID  int64
	Platform string
	Status   string
	// ZoneID is the zone's id, 0 for any.
	ZoneID int64
	// Enabled is "", "true" or "false".
	Enabled string
	// Failing keeps the enabled devices whose last backup failed
	// (last_backup=failed): the dashboard's "Failing" count.
	Failing bool
	// HandMade (source=hand) keeps the devices no inventory source
	// syncs, SourceID (source=<id>) those one source syncs: 0 for any.
	HandMade bool
	SourceID int64
	// SyncDisabled (sync=disabled) keeps the devices a sync disabled.
	SyncDisabled bool
	// ChangedDays is "changed in the last N days" as typed (shown again
	// when refused); changedDays is N, 0 for no such filter.
	ChangedDays string
	changedDays int
	// Sort is "" (by id) or one of devicesSorts.
	Sort string
	Page int
	// Error is the message key of a refused value (ChangedDays).
	Error string
}

// devicesSourceHand is the source query value of the devices made by
// hand (or imported): those no inventory source syncs.
const devicesSourceHand = "hand"

// devicesSorts are the orders the list offers, by their query value.
var devicesSorts = map[string]db.DeviceSort{
	string(db.DeviceSortLastChanged):    db.DeviceSortLastChanged,
	string(db.DeviceSortLastChangedAsc): db.DeviceSortLastChangedAsc,
}

// devicesParseFilter reads the filters; a value that cannot match
// anything (an unknown status, say) is dropped rather than refused. A
// number of days that is not one is refused: f.Error says why.
func devicesParseFilter(q url.Values) devicesFilter {
	f := devicesFilter{Query: strings.TrimSpace(q.Get("q")), Page: 1}
	if raw := strings.TrimSpace(q.Get("changed_days")); raw != "" {
		f.ChangedDays = raw
		if utf8.RuneCountInString(raw) > 16 {
			f.ChangedDays = string([]rune(raw)[:16])
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > devicesMaxChangedDays {
			f.Error = keyDevicesBadChangedDays
		} else {
			f.changedDays = n
		}
	}
	if _, ok := devicesSorts[q.Get("sort")]; ok {
		f.Sort = q.Get("sort")
	}
	if utf8.RuneCountInString(f.Query) > devicesMaxQuery {
		f.Query = string([]rune(f.Query)[:devicesMaxQuery])
	}
	if id, err := strconv.ParseInt(q.Get("group_id"), 10, 64); err == nil && id > 0 {
		f.GroupID = id
	}
	if _, ok := driver.Lookup(q.Get("platform")); ok {
		f.Platform = q.Get("platform")
	}
	if id, err := strconv.ParseInt(q.Get("zone_id"), 10, 64); err == nil && id > 0 {
		f.ZoneID = id
	}
	switch s := q.Get("status"); s {
	case db.StatusUnknown, db.StatusReachable, db.StatusUnreachable:
		f.Status = s
	}
	switch e := q.Get("enabled"); e {
	case "true", "false":
		f.Enabled = e
	}
	f.Failing = q.Get("last_backup") == "failed"
	if src := q.Get("source"); src == devicesSourceHand {
		f.HandMade = true
	} else if id, err := strconv.ParseInt(src, 10, 64); err == nil && id > 0 {
		f.SourceID = id
	}
	f.SyncDisabled = q.Get("sync") == "disabled"
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		// Far past any real list (the list shows its last page then), and
		// far from overflowing the offset.
		f.Page = min(n, 1_000_000)
	}
	return f
}

// store is the filter for the store as of now.
func (f devicesFilter) store(now time.Time) db.DeviceFilter {
	out := db.DeviceFilter{Query: f.Query, Platform: f.Platform, Status: f.Status, Failing: f.Failing, Sort: devicesSorts[f.Sort],
		HandMade: f.HandMade, DisabledBySync: f.SyncDisabled}
	if f.changedDays > 0 {
		since := now.AddDate(0, 0, -f.changedDays)
		out.ChangedSince = &since
	}
	if f.GroupID > 0 {
		out.GroupID = &f.GroupID
	}
	if f.ZoneID > 0 {
		out.ZoneID = &f.ZoneID
	}
	if f.SourceID > 0 {
		out.InventorySourceID = &f.SourceID
	}
	if f.Enabled != "" {
		enabled := f.Enabled == "true"
		out.Enabled = &enabled
	}
	return out
}

// Active reports whether any filter is set.
func (f devicesFilter) Active() bool {
	return f.Query != "" || f.GroupID != 0 || f.Platform != "" || f.Status != "" || f.ZoneID != 0 || f.Enabled != "" || f.Failing || f.ChangedDays != "" ||
		f.HandMade || f.SourceID != 0 || f.SyncDisabled
}

func (f devicesFilter) values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", f.Query)
	if f.GroupID > 0 {
		v.Set("group_id", strconv.FormatInt(f.GroupID, 10))
	}
	set("platform", f.Platform)
	set("status", f.Status)
	if f.ZoneID > 0 {
		v.Set("zone_id", strconv.FormatInt(f.ZoneID, 10))
	}
	set("enabled", f.Enabled)
	if f.Failing {
		v.Set("last_backup", "failed")
	}
	if f.HandMade {
		v.Set("source", devicesSourceHand)
	}
	if f.SourceID > 0 {
		v.Set("source", strconv.FormatInt(f.SourceID, 10))
	}
	if f.SyncDisabled {
		v.Set("sync", "disabled")
	}
	set("changed_days", f.ChangedDays)
	set("sort", f.Sort)
	return v
}

// SortURL is the first page of the list in the other order by last
// change: newest first, then oldest first.
func (f devicesFilter) SortURL() string {
	g := f
	g.Sort = string(db.DeviceSortLastChanged)
	if f.Sort == string(db.DeviceSortLastChanged) {
		g.Sort = string(db.DeviceSortLastChangedAsc)
	}
	return g.url(devicesListPath, 1)
}

// SortState is the aria-sort value of the "Last changed" column.
func (f devicesFilter) SortState() string {
	switch f.Sort {
	case string(db.DeviceSortLastChanged):
		return "descending"
	case string(db.DeviceSortLastChangedAsc):
		return "ascending"
	}
	return ""
}

// url is path with the filters and, past the first, the page.
func (f devicesFilter) url(path string, page int) string {
	v := f.values()
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
