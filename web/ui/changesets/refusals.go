package changesets

import (
	"errors"
	"net/http"

	"backupd/app/restore"
	"backupd/db"
)

// refusal is a decision app/restore or the store refused, as the page
// says it: a status and a message key with its arguments.
type refusal struct {
	Status int
	Key    string
	Args   []any
}

// refusalError is a refusal the page itself makes before asking
// app/restore.
type refusalError struct{ refusal }

func (refusalError) Error() string { return "refused" }

// refusalOf turns the refusals of app/restore and the store into what
// the page says; ok is false for any other error (a failure: the caller
// returns it). lang translates a state named in the sentence.
func (u *handlers) refusalOf(err error, lang string) (refusal, bool) {
	var state *db.ErrChangeSetState
	var field *db.ErrInvalidField
	var re refusalError
	switch {
	case errors.As(err, &re):
		return re.refusal, true
	case errors.Is(err, restore.ErrFourEyes):
		return refusal{Status: http.StatusForbidden, Key: keyErrFourEyes}, true
	case errors.Is(err, db.ErrChangeSetExpired):
		return refusal{Status: http.StatusConflict, Key: keyErrExpired}, true
	case errors.As(err, &state):
		return refusal{Status: http.StatusConflict, Key: keyErrState, Args: []any{u.Text(lang, setStateKey(state.Have))}}, true
	case errors.As(err, &field):
		// A bound the page did not check first: the store's own words.
		return refusal{Status: http.StatusUnprocessableEntity, Key: keyErrInvalid, Args: []any{field.Error()}}, true
	}
	return refusal{}, false
}
