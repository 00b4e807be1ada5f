package overview

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"backupd/app/auth"
	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/web/ui/core"
)

// One job as the jobs page and its script show it: texts in the user's
// language, times in the interface's zone.

// jobStateKeys and jobTriggerKeys name each state and trigger.
var jobStateKeys = map[string]string{
	queue.JobQueued:    keyJobStateQueued,
	queue.JobRunning:   keyJobStateRunning,
	queue.JobSucceeded: keyJobStateSucceeded,
	queue.JobFailed:    keyJobStateFailed,
	queue.JobCancelled: keyJobStateCancelled,
}

var jobTriggerKeys = map[string]string{
	queue.TriggerManual:   keyJobTriggerManual,
	queue.TriggerSchedule: keyJobTriggerSchedule,
	queue.TriggerRetry:    keyJobTriggerRetry,
	queue.TriggerCLI:      keyJobTriggerCLI,
	queue.TriggerSyslog:   keyJobTriggerSyslog,
	queue.TriggerRestore:  keyJobTriggerRestore,
	queue.TriggerPush:     keyJobTriggerPush,
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
	// Retry is set on a failed job the user may back up again: the form
	// queues its device at once, as "Back up now" does.
	Retry bool `json:"retry,omitempty"`
	// LogURL is a failed job's last session log, when one was kept.
	LogURL string `json:"log_url,omitempty"`
}

// jobWork is where a list's restore and push jobs may lead the user: to
// their restore when the user may see restores, and to the change sets
// the user may see, by target ID (a push job's WorkID).
type jobWork struct {
	restores bool
	sets     map[int64]db.ChangeSetRef
}

// jobWorkOf reads what the restore and push jobs of rows belong to, for
// the request's user. A change set is shown only to those who may see
// change sets, and only when every device of it lies in their device
// groups (as its page is a 404 otherwise): its number and name are not
// shown to anyone else.
func (u *handlers) jobWorkOf(r *http.Request, rows []db.JobRow) (jobWork, error) {
	s := core.SessionOf(r)
	w := jobWork{restores: s.Can(auth.PermRestore) || s.Can(auth.PermApprove)}
	if !s.Can(auth.PermPush) && !s.Can(auth.PermApprove) {
		return w, nil
	}
	var targets []int64
	for _, row := range rows {
		if row.Kind == queue.KindPush && row.WorkID != 0 {
			targets = append(targets, row.WorkID)
		}
	}
	var err error
	w.sets, err = u.Store.ChangeSetsOfTargets(r.Context(), s.Scope(), targets)
	return w, err
}

// jobItem prepares one job for the page and the script.
func (u *handlers) jobItem(r *http.Request, row db.JobRow, work jobWork, now time.Time) jobItem {
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
		ID: j.ID, DeviceID: j.DeviceID, DeviceName: row.DeviceName, DeviceURL: core.DevicePath(j.DeviceID),
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
		case j.State != queue.JobRunning:
			// Waiting to retry: the last attempt's length is not kept.
			end = *j.StartedAt
		}
		if d := end.Sub(*j.StartedAt); d > 0 || j.State == queue.JobRunning {
			secs := max(d, 0).Seconds()
			it.Duration, it.DurationText = &secs, durationText(max(d, 0), t)
		}
	} else if j.FinishedAt != nil {
		it.FinishedText = u.TimeText(*j.FinishedAt)
	}
	u.jobResult(&it, j, now, lang, t)
	if (j.State == queue.JobQueued || j.State == queue.JobRunning) && core.SessionOf(r).Can("backups.create") {
		it.CancelURL = core.PathJobs + "/" + strconv.FormatInt(j.ID, 10) + "/cancel"
	}
	it.Retry = j.State == queue.JobFailed && core.SessionOf(r).Can("backups.create")
	switch {
	case j.Kind == queue.KindRestore && j.WorkID != 0:
		// A restore is followed and, before it runs, cancelled on its
		// page: stopping it here mid-change would leave the device in a
		// state nobody knows, and "back up again" is not what a failed
		// restore needs. For those who may see restores it reads as one
		// and leads to that page.
		it.CancelURL, it.Retry = "", false
		if !work.restores {
			break
		}
		it.ResultURL = core.RestorePath(j.WorkID)
		if it.ResultText == "" || j.State == queue.JobSucceeded {
			it.ResultText = t(keyJobResultRestore, j.WorkID)
		} else {
			it.ResultText = t(keyJobResultRestoreSays, j.WorkID, it.ResultText)
		}
	case j.Kind == queue.KindPush:
		// A push is stopped by cancelling its change set, and a failed
		// one is not mended by backing the device up again: neither is
		// offered here. It reads as its change set and leads to its page,
		// for those who may see it; for anyone else it is a push job.
		it.CancelURL, it.Retry = "", false
		set, ok := work.sets[j.WorkID]
		if !ok {
			break
		}
		it.ResultURL = core.ChangeSetPath(set.ID)
		if it.ResultText == "" || j.State == queue.JobSucceeded {
			it.ResultText = t(keyJobResultChangeSet, set.ID, set.Name)
		} else {
			it.ResultText = t(keyJobResultChangeSetSays, set.ID, set.Name, it.ResultText)
		}
	}
	return it
}

// jobResult fills in what came of a job.
func (u *handlers) jobResult(it *jobItem, j queue.Job, now time.Time, lang string, t func(string, ...any) string) {
	msg := ""
	if j.Error != nil {
		switch *j.Error {
		case queue.ErrorCancelled:
			msg = t(keyJobResultCancelled)
		case queue.ErrorInterrupted:
			msg = t(keyJobResultInterrupted)
		case queue.ErrorInterruptedTooOften:
			msg = t(keyJobResultInterruptedTooOften)
		default:
			msg = *j.Error
			if j.ErrorReason != nil {
				if reason := u.ReasonText(lang, *j.ErrorReason); reason != "" {
					msg = t(keyJobResultReason, reason, msg)
				}
			}
		}
	}
	switch j.State {
	case queue.JobSucceeded:
		if j.BackupID != nil {
			it.ResultText = t(keyJobResultVersion)
			it.ResultURL = it.DeviceURL + "/versions/" + url.PathEscape(*j.BackupID)
		}
	case queue.JobFailed, queue.JobCancelled:
		it.ResultText, it.ResultBad = msg, j.State == queue.JobFailed
	case queue.JobQueued:
		switch {
		case msg != "":
			it.ResultText, it.ResultBad = t(keyJobResultRetry, msg), true
		case j.NotBefore.After(now):
			it.ResultText = t(keyJobResultWaiting, u.TimeText(j.NotBefore))
		}
	}
}

// durationText writes d as a device's history does: milliseconds under a
// second, tenths of seconds under a minute, then minutes and seconds, and
// h:mm:ss from an hour on. Most backups take well under a second: "0:00"
// said nothing of them.
func durationText(d time.Duration, t func(string, ...any) string) string {
	switch {
	case d < time.Second:
		return t(keyJobDurationMS, d.Milliseconds())
	case d < time.Minute:
		return t(keyJobDurationS, strconv.FormatFloat(float64(d/(100*time.Millisecond))/10, 'f', 1, 64))
	case d < time.Hour:
		return t(keyJobDurationMin, int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
