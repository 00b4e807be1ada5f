package overview

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/web"
	"backupd/web/ui/core"
)

// Jobs page bounds: 50 jobs a page, at most as many pages as the
// finished views count.
const (
	jobsPerPage  = 50
	jobsMaxPages = db.JobCountCap / jobsPerPage
)

// jobNotices say what a cancel did; the cancel form comes back to the
// list with the outcome as its "notice" parameter.
var jobNotices = map[cancelOutcome]string{
	cancelDone:      keyJobNoticeCancelled,
	cancelRequested: keyJobNoticeCancelRequested,
	cancelTooLate:   keyJobNoticeFinished,
}

// jobsQuery is what a jobs list shows: a view, optionally one device's
// jobs, a page, and where the progress of the work in hand starts (0:
// the oldest job in hand).
type jobsQuery struct {
	View     string
	DeviceID int64
	Page     int
	Since    int64
}

// parseJobsQuery reads the list's parameters; bad names the first bad one.
func parseJobsQuery(q url.Values) (jq jobsQuery, bad string) {
	jq = jobsQuery{View: db.JobViewActive, Page: 1}
	switch v := q.Get("state"); v {
	case "", db.JobViewActive:
	case db.JobViewFinished, db.JobViewFailed:
		jq.View = v
	default:
		return jq, "state"
	}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"device", &jq.DeviceID}, {"since", &jq.Since}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				return jq, p.name
			}
			*p.dst = n
		}
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > jobsMaxPages {
			return jq, "page"
		}
		jq.Page = n
	}
	return jq, ""
}

// url is the jobs page showing page of view, with the same device filter
// and progress start.
func (jq jobsQuery) url(view string, page int) string {
	q := url.Values{}
	q.Set("state", view)
	if jq.DeviceID != 0 {
		q.Set("device", strconv.FormatInt(jq.DeviceID, 10))
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if jq.Since != 0 {
		q.Set("since", strconv.FormatInt(jq.Since, 10))
	}
	return core.PathJobs + "?" + q.Encode()
}

// jobCounts are the figures at the top of the page.
type jobCounts struct {
	Queued           int `json:"queued"`
	Running          int `json:"running"`
	FinishedLastHour int `json:"finished_last_hour"`
	FinishedLastDay  int `json:"finished_last_day"`
	FailedLastDay    int `json:"failed_last_day"`
}

// jobProgress is how far the work in hand has come.
type jobProgress struct {
	Since    int64  `json:"since"`
	Total    int    `json:"total"`
	Done     int    `json:"done"`
	Failed   int    `json:"failed"`
	Complete bool   `json:"complete"`
	Text     string `json:"text"`
}

// jobsData is what the page and GET /api/jobs share.
type jobsData struct {
	View     string       `json:"state"`
	Counts   jobCounts    `json:"counts"`
	Items    []jobItem    `json:"items"`
	Total    int          `json:"total"`
	Page     int          `json:"page"`
	PerPage  int          `json:"per_page"`
	Pages    int          `json:"pages"`
	Progress *jobProgress `json:"progress"`
	// More reports a finished view whose count stopped at the cap.
	More bool `json:"more"`
	// PagerText says which page this is of how many.
	PagerText string `json:"pager_text"`
	// AsOf is when the figures were read.
	AsOf     time.Time `json:"as_of"`
	AsOfText string    `json:"as_of_text"`
}

// jobsPage is the data of jobs.html.
type jobsPage struct {
	jobsData
	Query  jobsQuery
	Device *db.Device
	// ViewURLs are the tabs' links, by view.
	ViewURLs map[string]string
	PrevURL  string
	NextURL  string
	// Here is this list's URL, where a cancel form comes back to.
	Here   string
	Notice string
}

func (u *handlers) jobs(w http.ResponseWriter, r *http.Request) error {
	jq, bad := parseJobsQuery(r.URL.Query())
	if bad != "" {
		// A hand-edited address: show the default list rather than an
		// error page.
		http.Redirect(w, r, core.PathJobs, http.StatusSeeOther)
		return nil
	}
	dev, err := u.jobsDevice(r, jq.DeviceID)
	if err != nil {
		return err
	}
	data, err := u.jobsData(r, jq)
	if err != nil {
		return err
	}
	p := jobsPage{jobsData: data, Query: jq, Device: dev, ViewURLs: map[string]string{}}
	for _, v := range []string{db.JobViewActive, db.JobViewFinished, db.JobViewFailed} {
		p.ViewURLs[v] = jq.url(v, 1)
	}
	if data.Page > 1 {
		p.PrevURL = jq.url(jq.View, data.Page-1)
	}
	if data.Page < data.Pages {
		p.NextURL = jq.url(jq.View, data.Page+1)
	}
	p.Here = jq.url(jq.View, data.Page)
	p.Notice = jobNotices[cancelOutcome(r.URL.Query().Get("notice"))]
	return u.Render(w, r, http.StatusOK, "jobs.html", keyTitleJobs, p)
}

// jobsDevice is the device a list is narrowed to: nil for none,
// db.ErrNotFound for a device that does not exist, forbidden for one
// outside the user's scope (its name is not shown).
func (u *handlers) jobsDevice(r *http.Request, id int64) (*db.Device, error) {
	if id == 0 {
		return nil, nil
	}
	d, err := u.Store.GetDevice(r.Context(), id)
	if err != nil {
		return nil, err
	}
	ok, err := u.Store.DeviceInScope(r.Context(), core.SessionOf(r).Scope(), d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, core.Forbidden()
	}
	return &d, nil
}

// jobsData reads one list with the counts and the progress, all within
// the user's scope. A page past the end shows the last one.
func (u *handlers) jobsData(r *http.Request, jq jobsQuery) (jobsData, error) {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	now := u.Now()
	d := jobsData{View: jq.View, PerPage: jobsPerPage, AsOf: now, AsOfText: u.TimeText(now)}
	a, err := u.Store.JobActivityInScope(ctx, scope, now)
	if err != nil {
		return d, err
	}
	d.Counts = jobCounts(a)
	rows, total, err := u.Store.JobsInView(ctx, scope, jq.View, jq.DeviceID, jobsPerPage, (jq.Page-1)*jobsPerPage)
	if err != nil {
		return d, err
	}
	d.Total, d.More = total, jq.View != db.JobViewActive && total >= db.JobCountCap
	d.Pages = max((total+jobsPerPage-1)/jobsPerPage, 1)
	d.Page = jq.Page
	if d.Page > d.Pages {
		d.Page = d.Pages
		if rows, _, err = u.Store.JobsInView(ctx, scope, jq.View, jq.DeviceID, jobsPerPage, (d.Page-1)*jobsPerPage); err != nil {
			return d, err
		}
	}
	lang := core.LangOf(r)
	if d.More {
		d.PagerText = u.Text(lang, keyJobPagerMore, core.FormatNum(d.Page), core.FormatNum(total))
	} else {
		d.PagerText = u.Text(lang, keyJobPager, core.FormatNum(d.Page), core.FormatNum(d.Pages), core.FormatNum(total))
	}
	work, err := u.jobWorkOf(r, rows)
	if err != nil {
		return d, err
	}
	d.Items = make([]jobItem, len(rows))
	var failed []string
	for i, row := range rows {
		d.Items[i] = u.jobItem(r, row, work, now)
		if row.State == queue.JobFailed && row.BackupID != nil {
			failed = append(failed, *row.BackupID)
		}
	}
	// A failed job's last attempt links to its session log, when kept.
	logs, err := u.Store.BackupsWithLogs(ctx, failed)
	if err != nil {
		return d, err
	}
	for i, row := range rows {
		if row.State == queue.JobFailed && row.BackupID != nil && logs[*row.BackupID] {
			d.Items[i].LogURL = core.VersionPath(row.DeviceID, *row.BackupID) + "/log"
		}
	}
	if d.Progress, err = u.jobProgress(r, jq.Since); err != nil {
		return d, err
	}
	return d, nil
}

// jobProgress is the progress of the jobs from since on, or of the work
// in hand when since is 0; nil when there is none.
func (u *handlers) jobProgress(r *http.Request, since int64) (*jobProgress, error) {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	if since == 0 {
		start, ok, err := u.Store.JobBatchStart(ctx, scope)
		if err != nil || !ok {
			return nil, err
		}
		since = start
	}
	p, err := u.Store.JobProgressSince(ctx, scope, since)
	if err != nil || p.Total == 0 {
		return nil, err
	}
	lang := core.LangOf(r)
	out := &jobProgress{Since: p.Since, Total: p.Total, Done: p.Done, Failed: p.Failed, Complete: p.Done == p.Total}
	if out.Complete {
		out.Text = u.Text(lang, keyJobProgressComplete, core.FormatNum(p.Total))
	} else {
		out.Text = u.Text(lang, keyJobProgress, core.FormatNum(p.Done), core.FormatNum(p.Total))
	}
	if p.Failed > 0 {
		out.Text += " · " + u.Text(lang, keyJobProgressFailed, core.FormatNum(p.Failed))
	}
	return out, nil
}

// apiJobs is GET /api/jobs: one page of a list with the counts and the
// progress, for the page's live updates. Parameters as the page's, plus
// since (the first job of the batch whose progress to report).
func (u *handlers) apiJobs(w http.ResponseWriter, r *http.Request) error {
	jq, bad := parseJobsQuery(r.URL.Query())
	if bad != "" {
		return web.FieldInvalid("query", bad, jobsParamHelp[bad])
	}
	if _, err := u.jobsDevice(r, jq.DeviceID); err != nil {
		if core.IsForbidden(err) {
			return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the device is outside your device groups")
		}
		return err
	}
	data, err := u.jobsData(r, jq)
	if err != nil {
		return err
	}
	return core.WriteJSON(w, http.StatusOK, data)
}

var jobsParamHelp = map[string]string{
	"state":  "must be active, finished or failed",
	"device": "must be a device id (a positive integer)",
	"since":  "must be a job id (a positive integer)",
	"page":   "must be a page number from 1 to " + strconv.Itoa(jobsMaxPages),
}
