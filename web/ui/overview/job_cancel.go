package overview

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"backupd/db"
	"backupd/db/queue"
	"backupd/web"
	"backupd/web/ui/core"
)

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
func (u *handlers) cancel(r *http.Request, id int64) (cancelOutcome, error) {
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
	if j.Kind == queue.KindRestore {
		// A restore is cancelled on its page, by those its rules allow,
		// and only before it runs.
		return "", restoreJobError{restoreID: j.WorkID}
	}
	if j.Kind == queue.KindPush {
		// A push is stopped by cancelling its change set, by those its
		// rules allow: its devices not started are skipped and the one
		// running finishes. Stopping the job here would cut the session
		// in the middle of the device's lines.
		return "", errPushJob
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
	if j.State == queue.JobRunning {
		outcome = cancelRequested
	}
	u.Audit(r, "job.cancel", "job", id, map[string]any{
		"device_id": dev.ID, "device_name": dev.Name, "state": j.State, "outcome": string(outcome),
	})
	return outcome, nil
}

// restoreJobError refuses to cancel a restore's job from the jobs list.
type restoreJobError struct{ restoreID int64 }

func (e restoreJobError) Error() string {
	return "the job runs a restore: cancel it on its page, " + core.RestorePath(e.restoreID) + ", before it runs"
}

// errPushJob refuses to cancel a change set's push job from the jobs
// list; it names no change set, which the user may not be allowed to see.
var errPushJob = errors.New("the job pushes a change set to its device: cancel the change set on its page; " +
	"its devices not started are skipped, the one running finishes")

// cancelJob is the cancel form: it comes back to the list it was sent
// from, saying what happened.
func (u *handlers) cancelJob(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return db.ErrNotFound
	}
	outcome, err := u.cancel(r, id)
	var rj restoreJobError
	if errors.As(err, &rj) {
		return &core.PageError{Status: http.StatusConflict, Message: keyJobRestoreNoCancel, Args: []any{rj.restoreID}}
	}
	if errors.Is(err, errPushJob) {
		return &core.PageError{Status: http.StatusConflict, Message: keyJobPushNoCancel}
	}
	if err != nil {
		return err
	}
	back := core.LocalPath(r.PostFormValue("back"), core.PathJobs)
	if !strings.HasPrefix(back, core.PathJobs) {
		back = core.PathJobs
	}
	to, err := url.Parse(back)
	if err != nil {
		to = &url.URL{Path: core.PathJobs}
	}
	q := to.Query()
	q.Set("notice", string(outcome))
	to.RawQuery = q.Encode()
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
	return nil
}

// apiCancelJob is DELETE /api/jobs/{id}: 200 with what happened, 409
// when the job had already ended.
func (u *handlers) apiCancelJob(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return web.FieldInvalid("path", "id", "must be a job id (a positive integer)")
	}
	outcome, err := u.cancel(r, id)
	var rj restoreJobError
	switch {
	case errors.As(err, &rj):
		return web.NewError(http.StatusConflict, web.CodeConflict, rj.Error())
	case errors.Is(err, errPushJob):
		return web.NewError(http.StatusConflict, web.CodeConflict, err.Error())
	case core.IsForbidden(err):
		return web.NewError(http.StatusForbidden, web.CodePermissionDenied, "the job's device is outside your device groups")
	case err != nil:
		return err
	case outcome == cancelTooLate:
		return web.NewError(http.StatusConflict, web.CodeConflict, "the job has already finished; nothing was cancelled")
	}
	return core.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "outcome": outcome})
}
