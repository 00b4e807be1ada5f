package changesets

import (
	"net/http"

	"backupd/app/auth"
	"backupd/db"
	"backupd/web/ui/core"
)

// The moves a person makes on a change set: approve it (which starts
// it), reject it, cancel it, run its dry run again. A refusal shows the set again,
// as it is now, with the sentence and the note as typed.

func (u *handlers) approve(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "approved", func(c db.ChangeSet, note string) error {
		_, err := u.Restores.ApproveChangeSet(r.Context(), u.RestoreActor(r), c.ID, note)
		return err
	})
}

// reject refuses a change set waiting to run, with the note: an
// approver's decision, which four eyes do not bind.
func (u *handlers) reject(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "rejected", func(c db.ChangeSet, note string) error {
		_, err := u.Restores.RejectChangeSet(r.Context(), u.RestoreActor(r), c.ID, note)
		return err
	})
}

// cancel stops a change set: an approver may cancel any, its creator
// their own. Devices not started are skipped; those running finish.
func (u *handlers) cancel(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "cancelled", func(c db.ChangeSet, _ string) error {
		s := core.SessionOf(r)
		if !(mine(r, c) && s.Can(auth.PermPush)) && !s.Can(auth.PermApprove) {
			return refusalError{refusal{Status: http.StatusForbidden, Key: keyErrCancelOwn}}
		}
		_, err := u.Restores.CancelChangeSet(r.Context(), u.RestoreActor(r), c.ID, "")
		return err
	})
}

// dryRun renders a draft or ready change set again for each device (a
// device's platform or address fixed since, say).
func (u *handlers) dryRun(w http.ResponseWriter, r *http.Request) error {
	return u.decide(w, r, "dry_run", func(c db.ChangeSet, _ string) error {
		_, err := u.Restores.DryRun(r.Context(), u.RestoreActor(r), c.ID)
		return err
	})
}

// decide runs one move on the change set of the path, then goes back to
// its page with done as the notice; a refusal shows the page again with
// it.
func (u *handlers) decide(w http.ResponseWriter, r *http.Request, done string, act func(c db.ChangeSet, note string) error) error {
	c, err := u.setOf(r)
	if err != nil {
		return err
	}
	note, fits := core.Field(r, "note", maxNoteChars)
	refused := func(rf refusal) error {
		// The page shows the set as it is now, which the refused move
		// may have found changed.
		now, err := u.Store.ChangeSet(r.Context(), c.ID)
		if err != nil {
			return err
		}
		return u.showSet(w, r, rf.Status, now, &rf, note)
	}
	switch {
	case u.Restores == nil:
		return refused(refusal{Status: http.StatusServiceUnavailable, Key: keyErrNotRunning})
	case !fits:
		return refused(refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoteTooLong, Args: []any{maxNoteChars}})
	}
	if err := act(c, note); err != nil {
		if rf, ok := u.refusalOf(err, core.LangOf(r)); ok {
			return refused(rf)
		}
		return err
	}
	http.Redirect(w, r, core.ChangeSetPath(c.ID)+"?done="+done, http.StatusSeeOther)
	return nil
}
