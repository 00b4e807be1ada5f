package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"backupd/app/backup"
	"backupd/db"
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

var jobStateKeys = map[string]string{
	db.JobQueued:    keyJobStateQueued,
	db.JobRunning:   keyJobStateRunning,
	db.JobSucceeded: keyJobStateSucceeded,
	db.JobFailed:    keyJobStateFailed,
	db.JobCancelled: keyJobStateCancelled,
}

var jobTriggerKeys = map[string]string{
	db.TriggerManual:   keyJobTriggerManual,
	db.TriggerSchedule: keyJobTriggerSchedule,
	db.TriggerRetry:    keyJobTriggerRetry,
	db.TriggerCLI:      keyJobTriggerCLI,
	db.TriggerSyslog:   keyJobTriggerSyslog,
}

// mountJobs registers the jobs page: queued, running and finished backups with live progress and cancel.
func (u *UI) mountJobs(mux *http.ServeMux) {
	u.MountPage(mux, "GET /jobs", "backups.view", u.jobs)
	mux.Handle("POST /jobs/{id}/cancel", u.Page("backups.create", u.cancelJob))
	mux.Handle("GET /api/jobs", u.API("backups.view", u.apiJobs))
	mux.Handle("DELETE /api/jobs/{id}", u.API("backups.create", u.apiCancelJob))
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
	return "/jobs?" + q.Encode()
}

// jobItem is one job as the page shows it and the script receives it:
// the texts are in the user's language and the times in the server's
// zone, so that the script only places them.
type jobItem struct {
	ID          int64  `json:"id"`
	DeviceID    int64  `json:"device_id"`
	DeviceName  string `json:"device_name"`
	DeviceURL   string `json:"device_url"`
	Trigger     string `json:"trigger"`
	TriggerText string `json:"trigger_text"`
	State       string `json:"state"`
	StateText   string `json:"state_text"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	// Interruptions counts attempts cut short by the backup process
	// stopping; they do not use up the attempts.
	Interruptions int        `json:"interruptions"`
	AttemptText   string     `json:"attempt_text"`
	QueuedAt      time.Time  `json:"queued_at"`
	QueuedText    string     `json:"queued_text"`
	StartedAt     *time.Time `json:"started_at"`
	StartedText   string     `json:"started_text"`
	FinishedAt    *time.Time `json:"finished_at"`
	FinishedText  string     `json:"finished_text"`
	// Duration is how long the job ran, or has run so far; nil before it
	// starts.
	Duration     *float64 `json:"duration_seconds"`
	DurationText string   `json:"duration_text"`
	// Result is what came of it: the error of a failure, the last
	// attempt's error of a job waiting to retry, a link to the version a
	// success stored.
	ResultText string `json:"result_text"`
	ResultURL  string `json:"result_url,omitempty"`
	ResultBad  bool   `json:"result_bad"`
	// CancelURL is where the cancel form posts; empty when the user may
	// not cancel it or it has ended.
	CancelURL string `json:"cancel_url,omitempty"`
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

func (u *UI) jobs(w http.ResponseWriter, r *http.Request) error {
	jq, bad := parseJobsQuery(r.URL.Query())
	if bad != "" {
		// A hand-edited address: show the default list rather than an
		// error page.
		http.Redirect(w, r, "/jobs", http.StatusSeeOther)
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
func (u *UI) jobsDevice(r *http.Request, id int64) (*db.Device, error) {
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
func (u *UI) jobsData(r *http.Request, jq jobsQuery) (jobsData, error) {
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
	d.Items = make([]jobItem, len(rows))
	for i, row := range rows {
		d.Items[i] = u.jobItem(r, row, now)
	}
	if d.Progress, err = u.jobProgress(r, jq.Since); err != nil {
		return d, err
	}
	return d, nil
}

// jobProgress is the progress of the jobs from since on, or of the work
// in hand when since is 0; nil when there is none.
func (u *UI) jobProgress(r *http.Request, since int64) (*jobProgress, error) {
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

// jobItem prepares one job for the page and the script.
func (u *UI) jobItem(r *http.Request, row db.JobRow, now time.Time) jobItem {
	lang := core.LangOf(r)
	t := func(key string, args ...any) string { return u.Text(lang, key, args...) }
	j := row.Job
	// Shown as "attempt 2 of 3"; a process without an engine shows the
	// default its backups run with.
	jobMaxAttempts := backup.DefaultMaxAttempts
	if u.Engine != nil {
		jobMaxAttempts = u.Engine.MaxAttempts()
	}
	it := jobItem{
		ID: j.ID, DeviceID: j.DeviceID, DeviceName: row.DeviceName, DeviceURL: "/devices/" + strconv.FormatInt(j.DeviceID, 10),
		Trigger: j.Trigger, TriggerText: j.Trigger, State: j.State, StateText: j.State,
		Attempt: j.Attempt, MaxAttempts: jobMaxAttempts, Interruptions: j.Interruptions, AttemptText: "—",
		QueuedAt: j.CreatedAt, QueuedText: u.TimeText(j.CreatedAt),
		StartedAt: j.StartedAt, StartedText: "—", FinishedAt: j.FinishedAt, FinishedText: "—", DurationText: "—",
	}
	if k, ok := jobTriggerKeys[j.Trigger]; ok {
		it.TriggerText = t(k)
	}
	if k, ok := jobStateKeys[j.State]; ok {
		it.StateText = t(k)
	}
	if j.Attempt > 0 {
		it.AttemptText = t(keyJobAttempt, j.Attempt, max(jobMaxAttempts, j.Attempt))
	}
	if j.Interruptions > 0 {
		interrupted := t(keyJobInterruptions, j.Interruptions)
		if j.Attempt > 0 {
			interrupted = it.AttemptText + " · " + interrupted
		}
		it.AttemptText = interrupted
	}
	if j.StartedAt != nil {
		it.StartedText = u.TimeText(*j.StartedAt)
		end := now
		switch {
		case j.FinishedAt != nil:
			end = *j.FinishedAt
			it.FinishedText = u.TimeText(end)
		case j.State != db.JobRunning:
			// Waiting to retry: the last attempt's length is not kept.
			end = *j.StartedAt
		}
		if d := end.Sub(*j.StartedAt); d > 0 || j.State == db.JobRunning {
			secs := max(d, 0).Seconds()
			it.Duration, it.DurationText = &secs, formatDuration(max(d, 0))
		}
	} else if j.FinishedAt != nil {
		it.FinishedText = u.TimeText(*j.FinishedAt)
	}
	u.jobResult(&it, j, now, t)
	if (j.State == db.JobQueued || j.State == db.JobRunning) && core.SessionOf(r).Can("backups.create") {
		it.CancelURL = "/jobs/" + strconv.FormatInt(j.ID, 10) + "/cancel"
	}
	return it
}

// jobResult fills in what came of a job.
func (u *UI) jobResult(it *jobItem, j db.Job, now time.Time, t func(string, ...any) string) {
	msg := ""
	if j.Error != nil {
		switch *j.Error {
		case db.ErrorCancelled:
			msg = t(keyJobResultCancelled)
		case db.ErrorInterrupted:
			msg = t(keyJobResultInterrupted)
		case db.ErrorInterruptedTooOften:
			msg = t(keyJobResultInterruptedTooOften)
		default:
			msg = *j.Error
		}
	}
	switch j.State {
	case db.JobSucceeded:
		if j.BackupID != nil {
			it.ResultText = t(keyJobResultVersion)
			it.ResultURL = it.DeviceURL + "/versions/" + url.PathEscape(*j.BackupID)
		}
	case db.JobFailed, db.JobCancelled:
		it.ResultText, it.ResultBad = msg, j.State == db.JobFailed
	case db.JobQueued:
		switch {
		case msg != "":
			it.ResultText, it.ResultBad = t(keyJobResultRetry, msg), true
		case j.NotBefore.After(now):
			it.ResultText = t(keyJobResultWaiting, u.TimeText(j.NotBefore))
		}
	}
}

// formatDuration writes d as m:ss, or h:mm:ss from an hour on.
func formatDuration(d time.Duration) string {
	s := int64(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// apiJobs is GET /api/jobs: one page of a list with the counts and the
// progress, for the page's live updates. Parameters as the page's, plus
// since (the first job of the batch whose progress to report).
func (u *UI) apiJobs(w http.ResponseWriter, r *http.Request) error {
	jq, bad := parseJobsQuery(r.URL.Query())
	if bad != "" {
		return web.FieldInvalid("query", bad, jobsParamHelp[bad])
	}
	if _, err := u.jobsDevice(r, jq.DeviceID); err != nil {
		var pe *core.PageError
		if errors.As(err, &pe) {
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

// cancelOutcome is what a cancel request did.
type cancelOutcome string

const (
	cancelDone      cancelOutcome = "cancelled"        // a queued job will never run
	cancelRequested cancelOutcome = "cancel_requested" // a running one stops within seconds
	cancelTooLate   cancelOutcome = "already_finished" // it had ended: nothing changed
)

// cancel stops job id for the request's user and records it in the
// audit log: db.ErrNotFound for an unknown job, forbidden for a job of a
// device outside the user's scope.
func (u *UI) cancel(r *http.Request, id int64) (cancelOutcome, error) {
	ctx := r.Context()
	jobs, err := u.Store.GetJobs(ctx, []int64{id})
	if err != nil {
		return "", err
	}
	if len(jobs) == 0 {
		return "", db.ErrNotFound
	}
	j := jobs[0]
	dev, err := u.Store.GetDevice(ctx, j.DeviceID)
	if err != nil {
		return "", err
	}
	s := core.SessionOf(r)
	if ok, err := u.Store.DeviceInScope(ctx, s.Scope(), dev); err != nil {
		return "", err
	} else if !ok {
		return "", core.Forbidden()
	}
	var stopped bool
	if u.Engine != nil {
		stopped, err = u.Engine.Cancel(ctx, id)
	} else {
		stopped, err = u.Store.CancelJob(ctx, id)
	}
	if err != nil {
		return "", err
	}
	if !stopped {
		return cancelTooLate, nil
	}
	outcome := cancelDone
	if j.State == db.JobRunning {
		outcome = cancelRequested
	}
	uid := s.UserID
	u.AuditEntry(r, db.AuditEntry{
		UserID: &uid, Username: s.Username, SessionID: s.AuditRef(), Action: "job.cancel",
		TargetType: "job", TargetID: core.IDString(id),
		Details: map[string]any{"device_id": dev.ID, "device_name": dev.Name, "state": j.State, "outcome": string(outcome)},
	})
	return outcome, nil
}

// cancelJob is the cancel form: it comes back to the list it was sent
// from, saying what happened.
func (u *UI) cancelJob(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return db.ErrNotFound
	}
	outcome, err := u.cancel(r, id)
	if err != nil {
		return err
	}
	back := core.LocalPath(r.PostFormValue("back"), "/jobs")
	if !strings.HasPrefix(back, "/jobs") {
		back = "/jobs"
	}
	to, err := url.Parse(back)
	if err != nil {
		to = &url.URL{Path: "/jobs"}
	}
	q := to.Query()
	q.Set("notice", string(outcome))
	to.RawQuery = q.Encode()
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
	return nil
}

// apiCancelJob is DELETE /api/jobs/{id}: 200 with what happened, 409
// when the job had already ended.
func (u *UI) apiCancelJob(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return web.FieldInvalid("path", "id", "must be a job id (a positive integer)")
	}
	outcome, err := u.cancel(r, id)
	var pe *core.PageError
	switch {
	case errors.As(err, &pe):
		return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the job's device is outside your device groups")
	case err != nil:
		return err
	case outcome == cancelTooLate:
		return web.NewError(http.StatusConflict, web.CodeConflict, "the job has already finished; nothing was cancelled")
	}
	return core.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "outcome": outcome})
}
