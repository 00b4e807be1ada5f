package db

import (
	"context"

	"backupd/db/engine"
)

// Scope is the part of the device-group tree a caller may see: every group
// (All), or the listed groups and all their descendants. It is applied in
// SQL so that counts and pages are right.
type Scope struct {
	All      bool
	GroupIDs []int64
}

// clause returns a condition on the devices alias d, and its arguments.
// Devices outside any group are visible to all-groups callers only.
func (s Scope) clause() (string, []any) {
	if s.All {
		return "1=1", nil
	}
	if len(s.GroupIDs) == 0 {
		return "0=1", nil
	}
	args := make([]any, len(s.GroupIDs))
	for i, id := range s.GroupIDs {
		args[i] = id
	}
	return `d.group_id IN (SELECT g.id FROM device_groups g JOIN device_groups s
		ON substr(g.path, 1, length(s.path)) = s.path
		WHERE s.id IN (` + engine.Placeholders(len(args)) + `))`, args
}

// GroupInScope reports whether group id lies in the scope.
func (s *Store) GroupInScope(ctx context.Context, scope Scope, groupID int64) (bool, error) {
	if scope.All {
		return true, nil
	}
	if len(scope.GroupIDs) == 0 {
		return false, nil
	}
	args := []any{groupID}
	for _, id := range scope.GroupIDs {
		args = append(args, id)
	}
	return engine.Exists(ctx, s.reader, `SELECT 1 FROM device_groups g JOIN device_groups s
		ON substr(g.path, 1, length(s.path)) = s.path
		WHERE g.id = ? AND s.id IN (`+engine.Placeholders(len(scope.GroupIDs))+`) LIMIT 1`, args...)
}

// scopeGroupsQuery selects the ids of the groups a scope of n listed
// groups covers: those groups and all their descendants.
func scopeGroupsQuery(n int) string {
	return `SELECT g.id FROM device_groups g JOIN device_groups s
		ON substr(g.path, 1, length(s.path)) = s.path WHERE s.id IN (` + engine.Placeholders(n) + `)`
}

func scopeArgs(scope Scope) []any {
	args := make([]any, len(scope.GroupIDs))
	for i, id := range scope.GroupIDs {
		args[i] = id
	}
	return args
}
