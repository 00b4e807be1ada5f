package db

import (
	"context"
	"fmt"

	"backupd/db/engine"
)

// The reads of change sets the web pages need beside those of
// changesets.go.

// ChangeSetInScope reports whether every device of change set id lies
// in scope, as ListChangeSets's Scope keeps them: a set with one device
// outside it does not exist for that caller. It is false for a change
// set that does not exist.
func (s *Store) ChangeSetInScope(ctx context.Context, scope Scope, id int64) (bool, error) {
	cond, args := scope.clause()
	ok, err := engine.Exists(ctx, s.reader, `SELECT 1 FROM change_sets c WHERE c.id = ?
		AND NOT EXISTS (SELECT 1 FROM change_set_targets t WHERE t.change_set_id = c.id
			AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = t.device_id AND `+cond+`))`,
		append([]any{id}, args...)...)
	if err != nil {
		return false, fmt.Errorf("change set %d in scope: %w", id, err)
	}
	return ok, nil
}
