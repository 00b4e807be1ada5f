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

// ChangeSetRef names a change set.
type ChangeSetRef struct {
	ID   int64
	Name string
}

// ChangeSetsOfTargets returns, by target ID, the change set of each of
// targetIDs (a push job's WorkID) whose every device lies in scope, as
// ChangeSetInScope keeps them: the jobs page links a push job to its
// change set only for those who may see it. Unknown targets and those
// of a set outside scope are left out.
func (s *Store) ChangeSetsOfTargets(ctx context.Context, scope Scope, targetIDs []int64) (map[int64]ChangeSetRef, error) {
	out := map[int64]ChangeSetRef{}
	if len(targetIDs) == 0 {
		return out, nil
	}
	ids := uniqueIDs(targetIDs)
	cond, sargs := scope.clause()
	args := make([]any, 0, len(ids)+len(sargs))
	for _, id := range ids {
		args = append(args, id)
	}
	type row struct {
		target int64
		set    ChangeSetRef
	}
	rows, err := engine.QueryAll(ctx, s.reader, func(r engine.Scanner) (row, error) {
		var x row
		return x, r.Scan(&x.target, &x.set.ID, &x.set.Name)
	}, `SELECT t.id, c.id, c.name FROM change_set_targets t JOIN change_sets c ON c.id = t.change_set_id
		WHERE t.id IN (`+engine.Placeholders(len(ids))+`)
		AND NOT EXISTS (SELECT 1 FROM change_set_targets o WHERE o.change_set_id = c.id
			AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = o.device_id AND `+cond+`))`,
		append(args, sargs...)...)
	if err != nil {
		return nil, fmt.Errorf("change sets of targets: %w", err)
	}
	for _, x := range rows {
		out[x.target] = x.set
	}
	return out, nil
}
