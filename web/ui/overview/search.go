package overview

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/web/ui/core"
)

// Search bounds. One search reads at most searchHitLimit matching lines
// (the first ones in device-name order) and stops after searchTimeout;
// the page lists them per device, searchDevicesPerPage devices a page,
// a few lines and versions each, and says what it left out.
const (
	searchHitLimit          = 2000
	searchTimeout           = 20 * time.Second
	searchDevicesPerPage    = 20
	searchLinesPerVersion   = 10
	searchVersionsPerDevice = 5
	searchDefaultContext    = 2
)

// searchContextChoices are the lines of context the form offers around
// each matching line.
var searchContextChoices = []int{0, 2, 5}

// searchForm is the search form's fields, as the address carries them.
type searchForm struct {
	Q       string
	Regex   bool
	Case    bool
	All     bool
	Group   int64
	Context int
	Page    int
}

func parseSearchForm(q url.Values) searchForm {
	f := searchForm{
		Q: q.Get("q"), Regex: q.Get("mode") == "regex", Case: q.Get("case") == "1",
		All: q.Get("versions") == "all", Context: searchDefaultContext, Page: 1,
	}
	if g, err := strconv.ParseInt(q.Get("group"), 10, 64); err == nil && g > 0 {
		f.Group = g
	}
	if c, err := strconv.Atoi(q.Get("context")); err == nil {
		for _, choice := range searchContextChoices {
			if c == choice {
				f.Context = c
			}
		}
	}
	if p, err := strconv.Atoi(q.Get("page")); err == nil && p > 1 {
		f.Page = p
	}
	return f
}

// values is the query of this search, without the page.
func (f searchForm) values() url.Values {
	q := url.Values{}
	q.Set("q", f.Q)
	if f.Regex {
		q.Set("mode", "regex")
	}
	if f.Case {
		q.Set("case", "1")
	}
	if f.All {
		q.Set("versions", "all")
	}
	if f.Group != 0 {
		q.Set("group", strconv.FormatInt(f.Group, 10))
	}
	if f.Context != searchDefaultContext {
		q.Set("context", strconv.Itoa(f.Context))
	}
	return q
}

// searchPage is the data of search.html.
type searchPage struct {
	Form           searchForm
	MaxQuery       int
	ContextChoices []int
	Groups         []searchGroup
	// Error is a message key (with Args) saying why the query cannot run.
	Error string
	Args  []any
	// Searched is set when results (possibly none) are shown.
	Searched bool
	// TimedOut: the search stopped at searchTimeout; what it found is
	// shown.
	TimedOut   bool
	TimeoutSec int
	// LimitReached: the search stopped at searchHitLimit lines;
	// VersionCapped: a version had more matching lines than a search
	// lists (backup.MaxHitsPerVersion).
	LimitReached  bool
	VersionCapped bool
	HitLimit      int
	VersionCap    int
	Hits          int
	DeviceTotal   int
	Devices       []searchDevice
	// Pager pages the devices; its From and To number this page's.
	Pager core.Pager
	// Secrets says whether the lines' secrets are masked.
	Secrets core.Secrets
}

// groupChoice is the group <select> of the search and the changes forms
// (partial "group-select"): ID is the element's id, Selected the group
// chosen (0: all).
type groupChoice struct {
	ID       string
	Groups   []searchGroup
	Selected int64
}

// GroupChoice is the search form's group <select>.
func (p searchPage) GroupChoice() groupChoice {
	return groupChoice{ID: "search-group", Groups: p.Groups, Selected: p.Form.Group}
}

// searchGroup is a group the search can be narrowed to; Label is indented
// by depth.
type searchGroup struct {
	ID    int64
	Label string
}

func (u *handlers) search(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f := parseSearchForm(r.URL.Query())
	p := searchPage{Form: f, MaxQuery: backup.MaxSearchQuery, ContextChoices: searchContextChoices,
		HitLimit: searchHitLimit, VersionCap: backup.MaxHitsPerVersion, TimeoutSec: int(searchTimeout / time.Second)}
	var err error
	if p.Groups, err = u.searchGroups(ctx, scope); err != nil {
		return err
	}
	fail := func(key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.Render(w, r, http.StatusUnprocessableEntity, "search.html", keyTitleSearch, p)
	}
	switch {
	case f.Q == "":
		return u.Render(w, r, http.StatusOK, "search.html", keyTitleSearch, p)
	case len(f.Q) > backup.MaxSearchQuery:
		return fail(keySearchTooLong, backup.MaxSearchQuery)
	}
	if f.Group != 0 {
		// A group narrows the search to itself and its subgroups, which
		// lie in the user's scope when the group does.
		if _, err := u.Store.GetGroup(ctx, f.Group); errors.Is(err, db.ErrNotFound) {
			return fail(keySearchGroup)
		} else if err != nil {
			return err
		}
		in, err := u.Store.GroupInScope(ctx, scope, f.Group)
		if err != nil {
			return err
		}
		if !in {
			return fail(keySearchGroup)
		}
		scope = db.Scope{GroupIDs: []int64{f.Group}}
	}

	// Masked texts are searched as shown: a secret's value finds
	// nothing.
	sec, err := u.SecretsFor(r, "search", 0, map[string]any{"page": "search", "all_versions": f.All})
	if err != nil {
		return err
	}
	p.Secrets = sec
	sctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	res, err := backup.Search(sctx, u.Store, scope, backup.SearchOptions{
		Query: f.Q, Regex: f.Regex, CaseSensitive: f.Case, AllVersions: f.All, Limit: searchHitLimit, Mask: sec.Keys,
	})
	switch {
	case errors.Is(err, backup.ErrInvalidQuery):
		reason := strings.TrimPrefix(err.Error(), backup.ErrInvalidQuery.Error()+": ")
		return fail(keySearchInvalid, reason)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		p.TimedOut = true
	case err != nil:
		return err
	}
	p.Searched = true
	p.Hits = len(res.Hits)
	p.LimitReached = res.Truncated && len(res.Hits) >= searchHitLimit
	p.VersionCapped = res.Truncated && !p.LimitReached

	devices := groupHits(res.Hits)
	p.DeviceTotal = len(devices)
	pages := max((len(devices)+searchDevicesPerPage-1)/searchDevicesPerPage, 1)
	page := min(f.Page, pages)
	p.Pager = core.PagerAt(core.PathSearch, f.values(), page, searchDevicesPerPage, len(devices))
	p.Devices = devices[(page-1)*searchDevicesPerPage : min(page*searchDevicesPerPage, len(devices))]
	texts := map[string][]string{}
	for i := range p.Devices {
		for j := range p.Devices[i].Versions {
			v := &p.Devices[i].Versions[j]
			lines, err := u.versionLines(ctx, v.BackupID, f.Context, texts, sec)
			if err != nil {
				return err
			}
			v.Rows = searchRows(v.hits, lines, f.Context)
		}
	}
	return u.Render(w, r, http.StatusOK, "search.html", keyTitleSearch, p)
}

// searchGroups lists the groups the user may narrow a search to: every
// group in scope, in tree order.
func (u *handlers) searchGroups(ctx context.Context, scope db.Scope) ([]searchGroup, error) {
	tree, err := u.GroupTree(ctx)
	if err != nil {
		return nil, err
	}
	var out []searchGroup
	for _, g := range tree.Ordered() {
		if tree.Covers(scope, g.ID) {
			out = append(out, searchGroup{ID: g.ID, Label: strings.Repeat("\u00a0\u00a0", g.Depth) + g.Name})
		}
	}
	return out, nil
}
