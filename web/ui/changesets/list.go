package changesets

import (
	"net/http"
	"net/url"
	"strconv"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The list: the change sets whose every device is the user's, newest
// first, a page at a time; a view keeps those waiting for approval, the
// running ones or the ended ones.

// The list's views.
const (
	viewAll     = ""
	viewWaiting = "waiting"
	viewRunning = "running"
	viewEnded   = "ended"
)

// listViews are the views in the order the tabs show them.
var listViews = []string{viewWaiting, viewRunning, viewEnded, viewAll}

// viewStates are the states each view shows (none: all).
var viewStates = map[string][]string{
	viewWaiting: {db.ChangeSetReady},
	viewRunning: {db.ChangeSetApproved, db.ChangeSetRunning},
	viewEnded:   {db.ChangeSetDone, db.ChangeSetStopped, db.ChangeSetCancelled, db.ChangeSetExpired},
}

// listPageSize is how many change sets a page lists; maxWaitingCount
// bounds the count of those waiting that the tab shows.
const (
	listPageSize    = 50
	maxWaitingCount = 500
)

// listPage is the data of changesets.html.
type listPage struct {
	View  string
	Tabs  []core.ViewTab
	Items []listItem
	// Waiting counts the change sets waiting for approval (WaitingMore:
	// at least that many).
	Waiting     int
	WaitingMore bool
	// CanCreate shows the link to the form.
	CanCreate bool
	// OlderURL is the next page, NewestURL the first.
	OlderURL, NewestURL string
}

// listItem is one change set as the list shows it.
type listItem struct {
	ID                 int64
	URL                string
	Name               string
	Devices            int
	Creator, CreatedAt string
	StateKey, Badge    string
	// Succeeded and Failed count the devices that ran (shown once it
	// started).
	Started           bool
	Succeeded, Failed int
}

// listQuery is what the list shows.
type listQuery struct {
	View   string
	Before int64
}

func parseListQuery(q url.Values) (listQuery, bool) {
	lq := listQuery{View: q.Get("state")}
	if lq.View != viewAll && viewStates[lq.View] == nil {
		return lq, false
	}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return lq, false
		}
		lq.Before = n
	}
	return lq, true
}

// url is the list of view from before on.
func (lq listQuery) url(view string, before int64) string {
	q := url.Values{}
	if view != viewAll {
		q.Set("state", view)
	}
	if before != 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	if len(q) == 0 {
		return core.PathChangeSets
	}
	return core.PathChangeSets + "?" + q.Encode()
}

func (u *handlers) list(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	if !mayView(s) {
		return core.Forbidden()
	}
	lq, ok := parseListQuery(r.URL.Query())
	if !ok {
		// A hand-edited address: the whole list rather than an error.
		http.Redirect(w, r, core.PathChangeSets, http.StatusSeeOther)
		return nil
	}
	ctx := r.Context()
	scope := s.Scope()
	p := listPage{View: lq.View, CanCreate: s.Can(auth.PermPush)}
	waiting, _, err := u.Store.ListChangeSets(ctx, db.ChangeSetFilter{States: viewStates[viewWaiting], Scope: &scope, Limit: maxWaitingCount})
	if err != nil {
		return err
	}
	p.Waiting, p.WaitingMore = len(waiting), len(waiting) == maxWaitingCount
	lang := core.LangOf(r)
	p.Tabs = u.ViewTabs(lang, listViews, viewKeys, lq.View, func(v string) string { return lq.url(v, 0) },
		map[string]string{viewWaiting: core.CappedCount(p.Waiting, p.WaitingMore)})
	items, next, err := u.Store.ListChangeSets(ctx, db.ChangeSetFilter{States: viewStates[lq.View], Scope: &scope,
		Limit: listPageSize, BeforeID: lq.Before})
	if err != nil {
		return err
	}
	for _, c := range items {
		it := listItem{ID: c.ID, URL: core.ChangeSetPath(c.ID), Name: c.Name, Devices: c.Targets, Creator: c.CreatedByName,
			CreatedAt: u.StoredTimeText(&c.CreatedAt), StateKey: setStateKey(c.State), Badge: setBadges[c.State], Started: c.StartedAt != nil}
		if it.Started {
			counts, err := u.Store.ChangeSetCounts(ctx, c.ID)
			if err != nil {
				return err
			}
			it.Succeeded, it.Failed = counts[db.TargetSucceeded], counts[db.TargetFailed]+counts[db.TargetInterrupted]
		}
		p.Items = append(p.Items, it)
	}
	if next != 0 {
		p.OlderURL = lq.url(lq.View, next)
	}
	if lq.Before != 0 {
		p.NewestURL = lq.url(lq.View, 0)
	}
	return u.Render(w, r, http.StatusOK, "changesets.html", keyTitleList, p)
}
