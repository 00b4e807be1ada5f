package restores

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"backupd/db"
	"backupd/web/ui/core"
)

// The list: the restores of the user's devices, newest first, a page at
// a time; a view keeps those waiting for approval, the open ones or the
// ended ones, and ?device= one device's.

// The list's views.
const (
	viewAll     = ""
	viewWaiting = "waiting"
	viewOpen    = "open"
	viewEnded   = "ended"
)

// listViews are the views in the order the tabs show them.
var listViews = []string{viewWaiting, viewOpen, viewEnded, viewAll}

// viewStates are the states each view shows (none: all).
var viewStates = map[string][]string{
	viewWaiting: {db.RestorePending},
	viewOpen:    db.RestoreOpenStates,
	viewEnded:   endedStates(),
}

func endedStates() []string {
	var out []string
	for _, s := range db.RestoreStates {
		if !slices.Contains(db.RestoreOpenStates, s) {
			out = append(out, s)
		}
	}
	return out
}

// listPageSize is how many restores a page lists; maxWaitingCount bounds
// the count of those waiting that the tab shows.
const (
	listPageSize    = 50
	maxWaitingCount = 500
)

// listPage is the data of restores.html.
type listPage struct {
	View  string
	Tabs  []core.ViewTab
	Items []listItem
	// Device narrows the list to one device; AllURL is the list without.
	Device *db.Device
	AllURL string
	// Waiting counts the restores waiting for approval (WaitingMore: at
	// least that many).
	Waiting     int
	WaitingMore bool
	// OlderURL is the next page, NewestURL the first.
	OlderURL, NewestURL string
}

// listItem is one restore as the list shows it.
type listItem struct {
	ID                     int64
	URL                    string
	DeviceName, DeviceURL  string
	Version                string
	VersionURL             string
	Requester, RequestedAt string
	StateKey, Badge        string
	StageKey               string
	Reason                 string
	// Merge counts a merge's selected lines (0: the whole version).
	Merge int
}

// listQuery is what the list shows.
type listQuery struct {
	View     string
	DeviceID int64
	Before   int64
}

func parseListQuery(q url.Values) (listQuery, bool) {
	lq := listQuery{View: q.Get("state")}
	if lq.View != viewAll && viewStates[lq.View] == nil {
		return lq, false
	}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"device", &lq.DeviceID}, {"before", &lq.Before}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				return lq, false
			}
			*p.dst = n
		}
	}
	return lq, true
}

// url is the list of view (with the same device), from before on.
func (lq listQuery) url(view string, before int64) string {
	q := url.Values{}
	if view != viewAll {
		q.Set("state", view)
	}
	if lq.DeviceID != 0 {
		q.Set("device", strconv.FormatInt(lq.DeviceID, 10))
	}
	if before != 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if len(q) == 0 {
		return core.PathRestores
	}
	return core.PathRestores + "?" + q.Encode()
}

func (u *handlers) list(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	if !mayView(s) {
		return core.Forbidden()
	}
	lq, ok := parseListQuery(r.URL.Query())
	if !ok {
		// A hand-edited address: the whole list rather than an error.
		http.Redirect(w, r, core.PathRestores, http.StatusSeeOther)
		return nil
	}
	ctx := r.Context()
	scope := s.Scope()
	p := listPage{View: lq.View, AllURL: core.PathRestores}
	if lq.DeviceID != 0 {
		d, err := u.deviceInScope(r, lq.DeviceID)
		if err != nil {
			return err
		}
		p.Device = &d
	}
	waiting, _, err := u.Store.ListRestores(ctx, db.RestoreFilter{DeviceID: lq.DeviceID, States: viewStates[viewWaiting],
		Scope: &scope, Limit: maxWaitingCount})
	if err != nil {
		return err
	}
	p.Waiting, p.WaitingMore = len(waiting), len(waiting) == maxWaitingCount
	lang := core.LangOf(r)
	p.Tabs = u.ViewTabs(lang, listViews, viewKeys, lq.View, func(v string) string { return lq.url(v, 0) },
		map[string]string{viewWaiting: core.CappedCount(p.Waiting, p.WaitingMore)})
	items, next, err := u.Store.ListRestores(ctx, db.RestoreFilter{DeviceID: lq.DeviceID, States: viewStates[lq.View],
		Scope: &scope, Limit: listPageSize, BeforeID: lq.Before})
	if err != nil {
		return err
	}
	for _, rs := range items {
		it := listItem{
			ID: rs.ID, URL: core.RestorePath(rs.ID), DeviceName: rs.DeviceName, DeviceURL: core.DevicePath(rs.DeviceID),
			VersionURL: core.VersionPath(rs.DeviceID, rs.TargetBackupID), Requester: rs.RequestedByName,
			RequestedAt: u.StoredTimeText(&rs.RequestedAt), StateKey: stateKey(rs.State), Badge: badges[rs.State],
			Merge: len(rs.Lines),
		}
		if rs.State == db.RestoreRunning {
			it.StageKey = stageKeys[rs.Stage]
		}
		if k, ok := reasonKeys[deref(rs.ErrorReason)]; ok && !rs.Open() && rs.State != db.RestoreSucceeded {
			it.Reason = u.Text(lang, k)
		}
		p.Items = append(p.Items, it)
	}
	if err := u.listVersions(r, p.Items, items); err != nil {
		return err
	}
	if next != 0 {
		p.OlderURL = lq.url(lq.View, next)
	}
	if lq.Before != 0 {
		p.NewestURL = lq.url(lq.View, 0)
	}
	return u.Render(w, r, http.StatusOK, "restores.html", keyTitleList, p)
}

// listVersions writes when each restore's version was taken.
func (u *handlers) listVersions(r *http.Request, out []listItem, items []db.Restore) error {
	for i, rs := range items {
		b, err := u.Store.GetBackup(r.Context(), rs.TargetBackupID)
		if errors.Is(err, db.ErrNotFound) {
			continue // deleted by retention since: its link says so
		}
		if err != nil {
			return err
		}
		out[i].Version = b.StartedAt.In(u.Location).Format("2006-01-02 15:04")
	}
	return nil
}
