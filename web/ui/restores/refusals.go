package restores

import (
	"errors"
	"net/http"

	"backupd/app/restore"
	"backupd/db"
	"backupd/web/ui/core"
)

// refusal is a request or decision app/restore or the store refused,
// as the page says it: a status, a message key with its arguments, and
// the device's open restore when that is the reason.
type refusal struct {
	Status int
	Key    string
	Args   []any
	// OpenURL is the open restore that stands in the way.
	OpenURL string
}

// refusalOf turns the refusals of app/restore and the store into what
// the page says; ok is false for any other error (a failure: the
// caller returns it). lang translates a state named in the sentence.
func (u *handlers) refusalOf(err error, lang string) (refusal, bool) {
	var open *db.ErrOpenRestore
	var state *db.ErrRestoreState
	var field *db.ErrInvalidField
	switch {
	case errors.Is(err, restore.ErrNotSupported):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNotSupported}, true
	case errors.Is(err, restore.ErrRemoteZone):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrRemoteZone}, true
	case errors.Is(err, restore.ErrDisabled):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrDisabled}, true
	case errors.Is(err, restore.ErrNoSelection):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrNoLines}, true
	case errors.Is(err, restore.ErrSelectionNotMerge):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrLinesNotMerge}, true
	case errors.Is(err, restore.ErrMaskedVersion):
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrMaskedVersion}, true
	case errors.Is(err, restore.ErrFourEyes):
		return refusal{Status: http.StatusForbidden, Key: keyErrFourEyes}, true
	case errors.Is(err, restore.ErrBusy):
		return refusal{Status: http.StatusConflict, Key: keyErrBusy}, true
	case errors.Is(err, db.ErrRestoreExpired):
		return refusal{Status: http.StatusConflict, Key: keyErrExpired}, true
	case errors.Is(err, db.ErrPreviewStale):
		return refusal{Status: http.StatusConflict, Key: keyErrPreviewStale}, true
	case errors.As(err, &open):
		if open.ID == 0 {
			return refusal{Status: http.StatusConflict, Key: keyErrOpenRestoreIs}, true
		}
		return refusal{Status: http.StatusConflict, Key: keyErrOpenRestore, Args: []any{open.ID}, OpenURL: core.RestorePath(open.ID)}, true
	case errors.As(err, &state):
		return refusal{Status: http.StatusConflict, Key: keyErrState, Args: []any{u.Text(lang, stateKey(state.Have))}}, true
	case errors.As(err, &field):
		// A bound the page did not check first: the store's own words.
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrInvalid, Args: []any{field.Error()}}, true
	}
	return refusal{}, false
}

// stateKey is the message key of a state; an unknown one (a newer
// release's) reads as failed rather than as a raw name.
func stateKey(state string) string {
	if k, ok := stateKeys[state]; ok {
		return k
	}
	return stateKeys[db.RestoreFailed]
}
