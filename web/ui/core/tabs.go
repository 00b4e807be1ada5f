package core

// Lists shown by views (restores, change sets) put their views as tabs
// above the rows: the view shown is marked, and a tab may carry a count,
// such as how many wait for approval.

// ViewTab is one view's tab: its label, its address, whether it is the
// view shown, and its count ("" for none).
type ViewTab struct {
	Label, URL string
	Current    bool
	Count      string
}

// ViewTabs are the tabs of views, in order: each labelled in lang by the
// message keys names for it and addressed by url, the current one
// marked, and counted by counts (a view without one shows none).
func (u *UI) ViewTabs(lang string, views []string, keys map[string]string, current string, url func(view string) string,
	counts map[string]string) []ViewTab {
	tabs := make([]ViewTab, 0, len(views))
	for _, v := range views {
		tabs = append(tabs, ViewTab{Label: u.Text(lang, keys[v]), URL: url(v), Current: v == current, Count: counts[v]})
	}
	return tabs
}

// CappedCount is a count that stops at a bound, as a tab shows it: ""
// for none, "500+" when more were left uncounted.
func CappedCount(n int, more bool) string {
	switch {
	case n <= 0:
		return ""
	case more:
		return FormatNum(n) + "+"
	}
	return FormatNum(n)
}
