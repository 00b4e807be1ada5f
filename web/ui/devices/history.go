package devices

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/web/ui/core"
)

// A device's history: its backup attempts, newest first, a page at a
// time, each version linked to its text and to a diff with the one
// before it.

// detailHistory is one page of the device's attempts.
type detailHistory struct {
	Rows                   []detailHistoryRow
	Total                  int
	Page, Pages            int
	First, Last            int
	NewestURL, NewerURL    string
	OlderURL, OldestURL    string
	HasVersions            bool
	DefaultFrom, DefaultTo string
	// Filter is what the history shows; Error the message key of a date
	// that is not one.
	Filter historyFilter
	Error  string
}

// historyFilter is the history's "show" choice and date range, as the
// page's address carries them.
type historyFilter struct {
	// Show is historyShowAll or historyShowChanges. Without a choice, a
	// device with more attempts than a page shows its changes only.
	Show string
	// Since and Until are days (YYYY-MM-DD, in the configured zone, both
	// included), as typed.
	Since, Until string
}

const (
	historyShowAll     = "all"
	historyShowChanges = "changes"
)

func parseHistoryFilter(q url.Values) historyFilter {
	f := historyFilter{Since: q.Get("since"), Until: q.Get("until")}
	switch q.Get("show") {
	case historyShowAll, historyShowChanges:
		f.Show = q.Get("show")
	}
	if len(f.Since) > 10 {
		f.Since = f.Since[:10]
	}
	if len(f.Until) > 10 {
		f.Until = f.Until[:10]
	}
	return f
}

// values is the filter as a query, for the page links.
func (f historyFilter) values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"show": f.Show, "since": f.Since, "until": f.Until} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v
}

// Active reports whether the history is narrowed by a date.
func (f historyFilter) Active() bool { return f.Since != "" || f.Until != "" }

// apply sets q's filter from f in loc, or returns the message key of a
// date that is not one.
func (f historyFilter) apply(q *db.HistoryQuery, loc *time.Location) string {
	q.ChangesOnly = f.Show == historyShowChanges
	if f.Since != "" {
		t, err := time.ParseInLocation(time.DateOnly, f.Since, loc)
		if err != nil {
			return keyDetailHistoryBadSince
		}
		q.Since = t
	}
	if f.Until != "" {
		t, err := time.ParseInLocation(time.DateOnly, f.Until, loc)
		if err != nil {
			return keyDetailHistoryBadUntil
		}
		q.Until = t.AddDate(0, 0, 1)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return keyDetailHistoryBadOrder
	}
	return ""
}

// link is the device page at the history, with the filter and extra.
func (f historyFilter) link(d db.Device, extra url.Values) string {
	v := f.values()
	for k, vals := range extra {
		v[k] = vals
	}
	if len(v) == 0 {
		return detailPath(d) + "#history"
	}
	return detailPath(d) + "?" + v.Encode() + "#history"
}

// detailHistoryRow is one attempt as the history lists it.
type detailHistoryRow struct {
	ID           string
	StartedAt    time.Time
	When         string
	TriggerKey   string
	DurationKey  string
	DurationArgs []any
	Running      bool
	Success      bool
	Error        string
	// Reason is Error's class, which the page says in its language.
	Reason string
	// LogURL is the failed attempt's session log, when one was kept.
	LogURL  string
	Changed bool
	// First marks the device's first version (not a change).
	First      bool
	Size       string
	HasText    bool
	VersionURL string
	// DiffURL compares a changed version with the one before it.
	DiffURL string
}

// detailHistory reads the page of history the request's query asks for:
// the newest by default, older than ?before=, newer than ?after=, or
// ?page=last.
func (u *handlers) detailHistory(r *http.Request, d db.Device) (*detailHistory, error) {
	q := db.HistoryQuery{Limit: detailHistoryPageSize}
	query := r.URL.Query()
	f := parseHistoryFilter(query)
	if bad := f.apply(&q, u.Location); bad != "" {
		return &detailHistory{Filter: f, Error: bad}, nil
	}
	for _, c := range []struct {
		name string
		dst  **db.BackupCursor
	}{{"before", &q.Before}, {"after", &q.After}} {
		if v := query.Get(c.name); v != "" {
			cur, err := db.ParseBackupCursor(v)
			if err != nil {
				return nil, &core.PageError{Status: http.StatusBadRequest, Message: keyDetailBadPageLink}
			}
			*c.dst = &cur
		}
	}
	q.Oldest = query.Get("page") == "last" && q.Before == nil && q.After == nil
	page, err := u.Store.DeviceHistory(r.Context(), d.ID, q)
	if err != nil {
		return nil, err
	}
	// With no choice made, more attempts than a page hold show the
	// changes only: the runs in between are the same version again.
	if f.Show == "" {
		f.Show = historyShowAll
		if page.Total > detailHistoryPageSize {
			f.Show, q.ChangesOnly = historyShowChanges, true
			if page, err = u.Store.DeviceHistory(r.Context(), d.ID, q); err != nil {
				return nil, err
			}
		}
	}
	// A page emptied by retention since its link was made: start over.
	if len(page.Items) == 0 && page.Total > 0 {
		first := db.HistoryQuery{Limit: detailHistoryPageSize, ChangesOnly: q.ChangesOnly, Since: q.Since, Until: q.Until}
		if page, err = u.Store.DeviceHistory(r.Context(), d.ID, first); err != nil {
			return nil, err
		}
	}
	h := &detailHistory{Total: page.Total, Filter: f}
	if page.Total == 0 {
		return h, nil
	}
	h.Pages = (page.Total + detailHistoryPageSize - 1) / detailHistoryPageSize
	h.Page = min(page.Newer/detailHistoryPageSize+1, h.Pages)
	h.First, h.Last = page.Newer+1, page.Newer+len(page.Items)
	if page.Newer > 0 {
		h.NewestURL = f.link(d, nil)
		h.NewerURL = f.link(d, url.Values{"after": {db.CursorOf(page.Items[0]).String()}})
	}
	if h.Last < page.Total {
		h.OlderURL = f.link(d, url.Values{"before": {db.CursorOf(page.Items[len(page.Items)-1]).String()}})
		h.OldestURL = f.link(d, url.Values{"page": {"last"}})
	}
	if err := u.detailRows(r, d, h, page.Items); err != nil {
		return nil, err
	}
	return h, nil
}

// detailRows turns attempts into rows, linking each changed version to a
// diff with the version before it, and picks the two newest versions of
// the page as the comparison form's default.
func (u *handlers) detailRows(r *http.Request, d db.Device, h *detailHistory, items []db.Backup) error {
	h.Rows = make([]detailHistoryRow, len(items))
	var failed []string
	for i, b := range items {
		h.Rows[i] = u.detailRow(d, b)
		if b.FinishedAt != nil && !b.Success {
			failed = append(failed, b.ID)
		}
	}
	logs, err := u.Store.BackupsWithLogs(r.Context(), failed)
	if err != nil {
		return err
	}
	for i := range h.Rows {
		if logs[h.Rows[i].ID] {
			h.Rows[i].LogURL = detailLogPath(d.ID, h.Rows[i].ID)
		}
	}
	// Each changed version links to a diff with the version before it,
	// found walking up from the page's oldest version, which needs one
	// look past the page.
	oldest := detailOldestVersion(h.Rows)
	var prev string
	if oldest >= 0 {
		before, ok, err := u.Store.PreviousVersion(r.Context(), d.ID, db.CursorOf(items[oldest]))
		if err != nil {
			return err
		}
		if ok {
			prev = before.ID
		}
	}
	for i := oldest; i >= 0; i-- {
		if !h.Rows[i].HasText {
			continue
		}
		switch {
		case h.Filter.Show == historyShowChanges && h.Rows[i].Changed:
			// The rows are not consecutive versions: the diff finds the
			// version before each change itself.
			h.Rows[i].DiffURL = core.DiffPath(d.ID, items[i].ID)
		case h.Rows[i].Changed && prev != "":
			h.Rows[i].DiffURL = detailDiffPath(d, prev, items[i].ID)
		}
		prev = items[i].ID
	}
	for _, row := range h.Rows {
		if !row.HasText {
			continue
		}
		h.HasVersions = true
		switch {
		case h.DefaultTo == "":
			h.DefaultTo = row.ID
		case h.DefaultFrom == "":
			h.DefaultFrom = row.ID
		}
	}
	return nil
}

// detailOldestVersion is the index of the oldest row with a version, -1 when
// none has one.
func detailOldestVersion(rows []detailHistoryRow) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].HasText {
			return i
		}
	}
	return -1
}

func (u *handlers) detailRow(d db.Device, b db.Backup) detailHistoryRow {
	row := detailHistoryRow{
		ID: b.ID, StartedAt: b.StartedAt, When: b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05"),
		TriggerKey: detailTriggers[b.Trigger], Running: b.FinishedAt == nil && !b.Success, Success: b.Success,
		Changed: b.Changed && b.Success, First: b.First && b.Success, HasText: b.SnapshotHash != nil,
	}
	if row.TriggerKey == "" {
		row.TriggerKey = keyDetailTriggerOther
	}
	if b.ErrorReason != nil {
		row.Reason = *b.ErrorReason
	}
	if b.ErrorMessage != nil {
		row.Error = *b.ErrorMessage
	}
	if b.DurationMS != nil {
		row.DurationKey, row.DurationArgs = detailDuration(*b.DurationMS)
	}
	if b.Bytes != nil {
		row.Size = detailSize(*b.Bytes)
	}
	if row.HasText {
		row.VersionURL = detailVersionPath(d, b.ID)
	}
	return row
}

// detailTriggers names each trigger's message.
var detailTriggers = map[string]string{
	queue.TriggerManual:   keyDetailTriggerManual,
	queue.TriggerSchedule: keyDetailTriggerSchedule,
	queue.TriggerRetry:    keyDetailTriggerRetry,
	queue.TriggerCLI:      keyDetailTriggerCLI,
	queue.TriggerSyslog:   keyDetailTriggerSyslog,
	queue.TriggerRestore:  keyDetailTriggerRestore,
	queue.TriggerPush:     keyDetailTriggerPush,
}

// detailDuration is a duration's message and its arguments: milliseconds
// under a second, tenths of seconds under a minute, then minutes and
// seconds.
func detailDuration(ms int64) (string, []any) {
	switch {
	case ms < 1000:
		return keyDetailDurationMS, []any{ms}
	case ms < 60_000:
		return keyDetailDurationS, []any{strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64)}
	}
	s := ms / 1000
	return keyDetailDurationMin, []any{s / 60, s % 60}
}

// detailSize writes a byte count the way people read it.
func detailSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MB"
}
