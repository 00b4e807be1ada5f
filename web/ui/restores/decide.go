package restores

import (
	"net/http"
	"strings"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The decisions on a restore: approve (the preview the page showed, by
// its hash: a preview that changed since is refused), reject, cancel.
// A refusal shows the restore again, as it is now, with the sentence and
// the note as typed.

func (u *handlers) approve(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "approved", func(rs db.Restore, note string) error {
		hash := strings.TrimSpace(r.PostFormValue("preview"))
		if hash == "" {
			return refusalError{refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoPreview}}
		}
		_, err := u.Restores.Approve(r.Context(), u.RestoreActor(r), rs.ID, hash, note)
		return err
	})
}

func (u *handlers) reject(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "rejected", func(rs db.Restore, note string) error {
		_, err := u.Restores.Reject(r.Context(), u.RestoreActor(r), rs.ID, note)
		return err
	})
}

// cancel withdraws a restore that has not started: an approver may
// cancel any, the requester their own.
func (u *handlers) cancel(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "cancelled", func(rs db.Restore, _ string) error {
		s := core.SessionOf(r)
		mine := rs.RequestedBy != nil && *rs.RequestedBy == s.UserID && s.Can(auth.PermRestore)
		if !mine && !s.Can(auth.PermApprove) {
			return refusalError{refusal{Status: http.StatusForbidden, Key: keyErrCancelOwn}}
		}
		_, err := u.Restores.Cancel(r.Context(), u.RestoreActor(r), rs.ID)
		return err
	})
}

// refusalError is a refusal the page itself makes before asking
// app/restore.
type refusalError struct{ refusal }

func (refusalError) Error() string { return "refused" }

// decide runs one decision on the restore of the path, then goes back
// to its page with done as the notice; a refusal shows the page again
// with it.
func (u *handlers) decide(w http.ResponseWriter, r *http.Request, done string, act func(rs db.Restore, note string) error) error {
	rs, d, err := u.restoreOf(r)
	if err != nil {
		return err
	}
	note, fits := core.Field(r, "note", maxNoteChars)
	refused := func(rf refusal) error {
		// The page shows the restore as it is now, which the refused
		// move may have found changed.
		now, err := u.Store.Restore(r.Context(), rs.ID)
		if err != nil {
			return err
		}
		return u.showRestore(w, r, rf.Status, now, d, &rf, note)
	}
	switch {
	case u.Restores == nil:
		return refused(refusal{Status: http.StatusServiceUnavailable, Key: keyErrNotRunning})
	case !fits:
		return refused(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoteTooLong, Args: []any{maxNoteChars}})
	}
	if err := act(rs, note); err != nil {
		if re, ok := err.(refusalError); ok {
			return refused(re.refusal)
		}
		if rf, ok := u.refusalOf(err, core.LangOf(r)); ok {
			return refused(rf)
		}
		return err
	}
	http.Redirect(w, r, core.RestorePath(rs.ID)+"?done="+done, http.StatusSeeOther)
	return nil
}
