package apiv1

import "math"

// ListParams are the paging parameters of the ordinary lists.
type ListParams struct {
	Page  int `query:"page" default:"1" minimum:"1" doc:"Page number, starting at 1."`
	Limit int `query:"limit" default:"50" minimum:"1" maximum:"100" doc:"Page size, 1 to 100."`
}

// Pagination describes where a page sits in the whole list.
type Pagination struct {
	Page       int  `json:"page" doc:"Current page, starting at 1."`
	Limit      int  `json:"limit" doc:"Page size used."`
	Total      int  `json:"total" doc:"Total number of records."`
	TotalPages int  `json:"total_pages" doc:"Number of pages; 1 when there are no records."`
	HasNext    bool `json:"has_next" doc:"A later page exists."`
	HasPrev    bool `json:"has_prev" doc:"An earlier page exists."`
}

// Page is the pagination envelope.
type Page[T any] struct {
	Items      []T        `json:"items" doc:"Records of the page."`
	Pagination Pagination `json:"pagination" doc:"Position of the page in the whole list."`
}

// offset is where page starts; ok is false when the page lies beyond any
// representable row (a huge page number), which is simply an empty page.
func offset(page, limit int) (int, bool) {
	if page-1 > math.MaxInt32/limit {
		return 0, false
	}
	return (page - 1) * limit, true
}

// paginate builds the envelope for a page of items out of total.
func paginate[T any](items []T, page, limit, total int) Page[T] {
	if items == nil {
		items = []T{}
	}
	pages := 1
	if total > 0 {
		pages = (total + limit - 1) / limit
	}
	return Page[T]{Items: items, Pagination: Pagination{
		Page: page, Limit: limit, Total: total, TotalPages: pages,
		HasNext: page < pages, HasPrev: page > 1,
	}}
}

// listPage runs a store list query for the requested page.
func listPage[S, T any](p ListParams, query func(limit, offset int) ([]S, int, error), convert func(S) T) (Page[T], error) {
	off, ok := offset(p.Page, p.Limit)
	if !ok {
		_, total, err := query(1, 0)
		return paginate([]T{}, p.Page, p.Limit, total), err
	}
	rows, total, err := query(p.Limit, off)
	if err != nil {
		return Page[T]{}, err
	}
	items := make([]T, len(rows))
	for i, r := range rows {
		items[i] = convert(r)
	}
	return paginate(items, p.Page, p.Limit, total), nil
}
