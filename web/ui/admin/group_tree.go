package admin

import (
	"context"
	"strings"

	"backupd/db"
)

// groupTree is every device group, for the scope picker and the checks
// that a scope lies within another.
type groupTree struct {
	groups []db.Group
	byID   map[int64]db.Group
}

func (u *handlers) loadGroupTree(ctx context.Context) (groupTree, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return groupTree{}, err
	}
	t := groupTree{groups: groups, byID: map[int64]db.Group{}}
	for _, g := range groups {
		t.byID[g.ID] = g
	}
	return t, nil
}

// covers reports whether scope sees group id (itself or an ancestor is in
// it).
func (t groupTree) covers(scope db.Scope, id int64) bool {
	if scope.All {
		return true
	}
	g, ok := t.byID[id]
	if !ok {
		return false
	}
	for _, sid := range scope.GroupIDs {
		if sg, ok := t.byID[sid]; ok && strings.HasPrefix(g.Path, sg.Path) {
			return true
		}
	}
	return false
}

// coversAll reports whether scope sees everything a user with allGroups
// and groupIDs sees.
func (t groupTree) coversAll(scope db.Scope, allGroups bool, groupIDs []int64) bool {
	if scope.All {
		return true
	}
	if allGroups {
		return false
	}
	for _, id := range groupIDs {
		if !t.covers(scope, id) {
			return false
		}
	}
	return true
}

// ordered is the groups depth first, each parent before its children,
// siblings in their order.
func (t groupTree) ordered() []db.Group {
	children := map[int64][]db.Group{}
	var roots []db.Group
	for _, g := range t.groups {
		if g.ParentID == nil {
			roots = append(roots, g)
		} else {
			children[*g.ParentID] = append(children[*g.ParentID], g)
		}
	}
	out := make([]db.Group, 0, len(t.groups))
	var walk func(gs []db.Group)
	walk = func(gs []db.Group) {
		for _, g := range gs {
			out = append(out, g)
			walk(children[g.ID])
		}
	}
	walk(roots)
	return out
}
