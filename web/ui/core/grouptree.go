package core

import (
	"context"
	"strings"

	"backupd/db"
)

// GroupTree is every device group, for the pages that list groups, offer
// them as choices, or check them against a user's scope.
type GroupTree struct {
	// groups are as the store lists them: parents before children,
	// siblings in their order.
	groups []db.Group
	byID   map[int64]db.Group
	// names are the groups' paths of names ("Core / Access").
	names map[int64]string
}

// NewGroupTree makes the tree of groups, listed as db.Store.AllGroups
// lists them.
func NewGroupTree(groups []db.Group) GroupTree {
	t := GroupTree{groups: groups, byID: make(map[int64]db.Group, len(groups)), names: make(map[int64]string, len(groups))}
	for _, g := range groups {
		t.byID[g.ID] = g
		name := g.Name
		if g.ParentID != nil {
			name = t.names[*g.ParentID] + " / " + g.Name
		}
		t.names[g.ID] = name
	}
	return t
}

// GroupTree reads every group.
func (u *UI) GroupTree(ctx context.Context) (GroupTree, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return GroupTree{}, err
	}
	return NewGroupTree(groups), nil
}

// Group is group id; ok is false when there is none.
func (t GroupTree) Group(id int64) (g db.Group, ok bool) {
	g, ok = t.byID[id]
	return g, ok
}

// PathName is group id's path of names, root first ("Core / Access").
func (t GroupTree) PathName(id int64) string { return t.names[id] }

// Covers reports whether scope sees group id: every group, or the group
// itself or one of its ancestors is one of scope's groups.
func (t GroupTree) Covers(scope db.Scope, id int64) bool {
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

// CoversAll reports whether scope sees everything a user with allGroups
// and groupIDs sees.
func (t GroupTree) CoversAll(scope db.Scope, allGroups bool, groupIDs []int64) bool {
	if scope.All {
		return true
	}
	if allGroups {
		return false
	}
	for _, id := range groupIDs {
		if !t.Covers(scope, id) {
			return false
		}
	}
	return true
}

// Ordered is the groups depth first, each parent before its children,
// siblings in their order.
func (t GroupTree) Ordered() []db.Group {
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
	var walk func(gs []db.Group, depth int)
	walk = func(gs []db.Group, depth int) {
		if depth > 64 {
			return // a cycle cannot be stored, but a walk stays bounded anyway
		}
		for _, g := range gs {
			out = append(out, g)
			walk(children[g.ID], depth+1)
		}
	}
	walk(roots, 0)
	return out
}
