package core

import (
	"net/http"
	"net/url"
	"strconv"
)

// Offset paging, shared by the lists that count their rows (devices,
// credentials, templates, schedules, users, API keys, search results): a
// handler builds a Pager and its template shows it with the "pager"
// partial (partials.html):
//
//	p.Pager = NewPager(r, page, perPage, total)
//	{{template "pager" $.Paged .Pager}}
//
// Lists paged another way keep their own links: the device history walks
// by cursor, the audit log does not count its rows, and the jobs list's
// line is made in Go for the page and its live updates alike.

// MaxListPage bounds the page number a link may ask for, and with it the
// rows a request may skip.
const MaxListPage = 1_000_000

// PageNumber reads the "page" query parameter: 1 when missing or bad, at
// most last.
func PageNumber(r *http.Request, last int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, last)
}

// Pager is page Page of Pages of a list, with the links around it (empty
// where there is none). From and To number the rows of this page
// (1-based; 0 when it has none), of Total. The audit log, which does not
// count, fills in only Page, PrevURL and NextURL.
type Pager struct {
	Page, Pages     int
	From, To, Total int
	FirstURL        string
	PrevURL         string
	NextURL         string
	LastURL         string
}

// NewPager describes page (1-based) of a list of total rows, perPage a
// page, whose links keep the request's path and query (the filters)
// without the notice a redirect added.
func NewPager(r *http.Request, page, perPage, total int) Pager {
	return PagerAt(r.URL.Path, r.URL.Query(), page, perPage, total)
}

// PagerAt is NewPager for a list whose links are path with query, for a
// list that rebuilds its query from the filters it understood.
func PagerAt(path string, query url.Values, page, perPage, total int) Pager {
	p := Pager{Page: page, Pages: max((total+perPage-1)/perPage, 1), Total: total}
	if from := (page-1)*perPage + 1; from <= total {
		p.From, p.To = from, min(page*perPage, total)
	}
	if page > 1 {
		// Past the end, "previous" is the last page.
		p.FirstURL, p.PrevURL = PageURL(path, query, 1), PageURL(path, query, min(page-1, p.Pages))
	}
	if page < p.Pages {
		p.NextURL, p.LastURL = PageURL(path, query, page+1), PageURL(path, query, p.Pages)
	}
	return p
}

// noticeParams are the query parameters a redirect adds to a list to show
// a notice once; page links drop them.
var noticeParams = []string{"done", "notice"}

// PageURL is page of the list at path with query: the query's other
// parameters kept, page 1 without a "page" parameter.
func PageURL(path string, query url.Values, page int) string {
	q := url.Values{}
	for k, vs := range query {
		q[k] = vs
	}
	for _, k := range noticeParams {
		q.Del(k)
	}
	q.Del("page")
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// pagerView is what the "pager" partial runs on: the page's view, for its
// texts, and the list's Pager.
type pagerView struct {
	*View
	Pager Pager
}

// Paged hands a list's Pager to the "pager" partial.
func (v *View) Paged(p Pager) pagerView { return pagerView{View: v, Pager: p} }
