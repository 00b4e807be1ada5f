package overview

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"backupd/db"
	"backupd/web/ui/core"
)

// The fleet-wide list of configuration changes: every version that
// differed from its device's previous one, in a time range and a group,
// newest first, each a click from its diff. The dashboard's "Changed in
// 24 h" count is this list's first range.

// changesPerPage is the rows of one page.
const changesPerPage = 50

// changesRange is a range the form offers: Label is a message key, Back
// how far back from now it reaches.
type changesRange struct {
	Value, Label string
	Back         time.Duration
}

// changesRanges are the ranges the form offers besides a custom one, by
// their query value: how far back from now each reaches.
var changesRanges = []changesRange{
	{"24h", keyChangesRange24h, 24 * time.Hour},
	{"7d", keyChangesRange7d, 7 * 24 * time.Hour},
	{"30d", keyChangesRange30d, 30 * 24 * time.Hour},
}

// changesCustom is the range value of one between two dates.
const changesCustom = "custom"

// changesForm is the form's fields, as the address carries them.
type changesForm struct {
	// Range is one of changesRanges' values or changesCustom.
	Range string
	// From and To are the custom range's days (YYYY-MM-DD, in the
	// configured time zone, both included), as typed.
	From, To string
	Group    int64
	Page     int
}

func parseChangesForm(q url.Values) changesForm {
	f := changesForm{Range: changesRanges[0].Value, From: q.Get("from"), To: q.Get("to"), Page: 1}
	if r := q.Get("range"); r == changesCustom {
		f.Range = r
	} else {
		for _, c := range changesRanges {
			if r == c.Value {
				f.Range = r
			}
		}
	}
	if len(f.From) > 10 {
		f.From = f.From[:10]
	}
	if len(f.To) > 10 {
		f.To = f.To[:10]
	}
	if g, err := strconv.ParseInt(q.Get("group"), 10, 64); err == nil && g > 0 {
		f.Group = g
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		f.Page = min(p, 1_000_000)
	}
	return f
}

// values is the form as a query, the page left out.
func (f changesForm) values() url.Values {
	q := url.Values{}
	q.Set("range", f.Range)
	if f.Range == changesCustom {
		q.Set("from", f.From)
		q.Set("to", f.To)
	}
	if f.Group > 0 {
		q.Set("group", strconv.FormatInt(f.Group, 10))
	}
	return q
}

// ChangesPath is the list of the changes in the last day, as the
// dashboard's count links to it.
func ChangesPath() string { return core.PathChanges + "?range=" + changesRanges[0].Value }

// query is the store's query of f at now in loc, or the message key of
// a custom range that is not one.
func (f changesForm) query(now time.Time, loc *time.Location) (db.ChangesQuery, string) {
	q := db.ChangesQuery{GroupID: f.Group}
	for _, c := range changesRanges {
		if f.Range == c.Value {
			q.Since = now.Add(-c.Back)
			return q, ""
		}
	}
	from, err := time.ParseInLocation(time.DateOnly, f.From, loc)
	if err != nil {
		return q, keyChangesBadFrom
	}
	to, err := time.ParseInLocation(time.DateOnly, f.To, loc)
	if err != nil {
		return q, keyChangesBadTo
	}
	if to.Before(from) {
		return q, keyChangesToBeforeFrom
	}
	q.Since, q.Until = from, to.AddDate(0, 0, 1)
	return q, ""
}

// changesPage is the data of changes.html.
type changesPage struct {
	Form changesForm
	// Ranges are the choices of the range besides a custom one.
	Ranges []changesChoice
	Groups []searchGroup
	// Error is the message key of a custom range that is not one.
	Error string
	Rows  []changeRow
	Total int
	Pager core.Pager
}

// GroupChoice is the changes form's group <select>.
func (p changesPage) GroupChoice() groupChoice {
	return groupChoice{ID: "changes-group", Groups: p.Groups, Selected: p.Form.Group}
}

// changesChoice is a range the form offers; Label is a message key.
type changesChoice struct{ Value, Label string }

// changeRow is one change: the device, when, and where to see it.
type changeRow struct {
	DeviceName string
	At         time.Time
	DeviceURL  string
	VersionURL string
	DiffURL    string
}

func (u *handlers) changes(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := parseChangesForm(r.URL.Query())
	p := changesPage{Form: f}
	for _, c := range changesRanges {
		p.Ranges = append(p.Ranges, changesChoice{c.Value, c.Label})
	}
	var err error
	if p.Groups, err = u.searchGroups(ctx, scope); err != nil {
		return err
	}
	q, bad := f.query(u.Now(), u.Location)
	if bad != "" {
		p.Error = bad
		return u.Render(w, r, http.StatusUnprocessableEntity, "changes.html", keyTitleChanges, p)
	}
	items, total, err := u.Store.Changes(ctx, scope, q, changesPerPage, (f.Page-1)*changesPerPage)
	if err != nil {
		return err
	}
	p.Total = total
	p.Pager = core.PagerAt(core.PathChanges, f.values(), f.Page, changesPerPage, total)
	for _, c := range items {
		p.Rows = append(p.Rows, changeRow{DeviceName: c.DeviceName, At: c.At,
			DeviceURL: core.DevicePath(c.DeviceID), VersionURL: core.VersionPath(c.DeviceID, c.BackupID),
			DiffURL: core.DiffPath(c.DeviceID, c.BackupID)})
	}
	return u.Render(w, r, http.StatusOK, "changes.html", keyTitleChanges, p)
}
