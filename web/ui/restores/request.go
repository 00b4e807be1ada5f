package restores

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/app/restore"
	"backupd/db"
	"backupd/web/ui/core"
)

// A request: the form on a version's page posts the device, the version
// and an optional reason. app/restore checks what only it knows (the
// platform's method, the zone, a version holding masked secrets) and
// takes the backup the preview shows; the request's page follows it.

// requestPage is the data of restore_request.html: a request refused,
// with the reason as typed.
type requestPage struct {
	Device    db.Device
	DeviceURL string
	// Version is the version asked for, when it is one of the device's.
	Version *versionRef
	Reason  string
	// Lines are the lines of a merge as sent, kept for the form again.
	Lines   []int
	Refusal refusal
	// Retry: the form is shown again (a reason too long, a busy device).
	Retry bool
}

// versionRef is a stored version as the restore pages link it.
type versionRef struct {
	ID, When, ISO, URL string
}

func (u *handlers) versionRef(d db.Device, b db.Backup) *versionRef {
	return &versionRef{ID: b.ID, When: b.StartedAt.In(u.Location).Format("2006-01-02 15:04:05"),
		ISO: b.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), URL: core.VersionPath(d.ID, b.ID)}
}

// maxVersionID bounds a version id (a UUID) read from a form.
const maxVersionID = 64

func (u *handlers) request(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	raw := r.PostFormValue("device_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return db.ErrNotFound
	}
	d, err := u.deviceInScope(r, id)
	if err != nil {
		return err
	}
	reason, fits := core.Field(r, "reason", maxNoteChars)
	p := requestPage{Device: d, DeviceURL: core.DevicePath(d.ID), Reason: reason}
	refuse := func(rf refusal) error {
		p.Refusal = rf
		p.Retry = p.Version != nil && (rf.Key == keyErrReasonTooLong || rf.Key == keyErrBusy)
		if !p.Retry {
			p.Lines = nil
		}
		return u.Render(w, r, rf.Status, "restore_request.html", keyTitleRequest, p)
	}
	if u.Restores == nil {
		return refuse(refusal{Status: http.StatusServiceUnavailable, Key: keyErrNotRunning})
	}
	versionID := strings.TrimSpace(r.PostFormValue("version"))
	if versionID == "" || len(versionID) > maxVersionID {
		return refuse(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoVersion})
	}
	b, err := u.Store.GetBackup(ctx, versionID)
	if err != nil {
		return err // an unknown version is a page that does not exist
	}
	if b.DeviceID != d.ID {
		return refuse(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrOtherDevice, Args: []any{d.Name}})
	}
	p.Version = u.versionRef(d, b)
	switch {
	case !b.Success || b.SnapshotHash == nil:
		return refuse(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoText})
	case !fits:
		return refuse(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrReasonTooLong, Args: []any{maxNoteChars}})
	}
	// The open restore is named before a backup is asked for, which
	// would join that restore's job.
	open, err := u.Store.OpenRestore(ctx, d.ID)
	switch {
	case err == nil:
		return refuse(refusal{Status: http.StatusConflict, Key: keyErrOpenRestore, Args: []any{open.ID}, OpenURL: core.RestorePath(open.ID)})
	case !errors.Is(err, db.ErrNotFound):
		return err
	}
	lines, ok := formLines(r)
	if !ok {
		return refuse(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrBadLines})
	}
	if r.PostFormValue("all") == "1" && b.SnapshotHash != nil {
		// Every configuration line, without the blocks a merge cannot
		// type line by line (a banner, a certificate): the form says
		// it leaves them out, where selecting them is refused.
		text, err := u.Store.SnapshotText(ctx, *b.SnapshotHash)
		if err != nil {
			return err
		}
		plat, _ := driver.Lookup(d.Platform)
		lines = restore.AllLines(plat, text)
		lines = lines[:min(len(lines), restore.MaxSelected)]
	}
	p.Lines = lines
	rs, err := u.Restores.Request(ctx, u.RestoreActor(r), d.ID, b.ID, reason, lines)
	if err != nil {
		if rf, ok := u.refusalOf(err, core.LangOf(r)); ok {
			return refuse(rf)
		}
		return err
	}
	http.Redirect(w, r, core.RestorePath(rs.ID)+"?done=requested", http.StatusSeeOther)
	return nil
}

// formLines reads the lines a merge form ticked ("line", one number a
// box); false when one is not a line number.
func formLines(r *http.Request) ([]int, bool) {
	raw := r.PostForm["line"]
	if len(raw) > restore.MaxSelected {
		return nil, false
	}
	var out []int
	for _, v := range raw {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
