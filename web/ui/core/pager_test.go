package core

import (
	"net/http/httptest"
	"testing"
)

func TestPagerLinksKeepTheFilters(t *testing.T) {
	r := httptest.NewRequest("GET", "/users?q=al&done=created&page=2", nil)
	p := NewPager(r, PageNumber(r, 10000), 50, 120)
	want := Pager{Page: 2, Pages: 3, From: 51, To: 100, Total: 120,
		FirstURL: "/users?q=al", PrevURL: "/users?q=al", NextURL: "/users?page=3&q=al", LastURL: "/users?page=3&q=al"}
	if p != want {
		t.Errorf("page 2:\n got %+v\nwant %+v", p, want)
	}
	// Past the end: no rows, "previous" is the last page.
	p = NewPager(httptest.NewRequest("GET", "/credentials?page=9&notice=deleted", nil), 9, 50, 120)
	want = Pager{Page: 9, Pages: 3, Total: 120, FirstURL: "/credentials", PrevURL: "/credentials?page=3"}
	if p != want {
		t.Errorf("past the end:\n got %+v\nwant %+v", p, want)
	}
	if p := NewPager(httptest.NewRequest("GET", "/schedules", nil), 1, 50, 0); p != (Pager{Page: 1, Pages: 1}) {
		t.Errorf("empty list: %+v", p)
	}
	for query, want := range map[string]int{"": 1, "page=0": 1, "page=-3": 1, "page=x": 1, "page=7": 7, "page=99999": 10000} {
		if got := PageNumber(httptest.NewRequest("GET", "/users?"+query, nil), 10000); got != want {
			t.Errorf("?%s: page %d, want %d", query, got, want)
		}
	}
}
