package inventory

import (
	"context"
	"strconv"
	"strings"

	"backupd/db"
)

// The group tree as one user sees it: the groups in scope, their
// ancestors as context, and where each may be moved.

// invGroupRow is one group of the tree, in depth-first order. Descend opens
// the list of its children; Ascend closes that many levels after it.
type invGroupRow struct {
	ID       int64
	Name     string
	Depth    int
	InScope  bool
	Devices  int
	Subtree  int
	CountKey string
	// CanReorder holds when all its siblings are in the user's scope too;
	// First and Last say where it stands among them.
	CanReorder  bool
	First, Last bool
	Focus       bool
	Descend     bool
	Ascend      []struct{}
}

// invGroupOption is a group in a parent <select>, indented by depth.
type invGroupOption struct {
	ID       int64
	Label    string
	Selected bool
}

// groupForest is the group tree as one user sees it.
type groupForest struct {
	byID     map[int64]db.Group
	children map[int64][]int64 // parent id (0 for the roots) → ids in tree order
	inScope  map[int64]bool
	visible  map[int64]bool
	all      bool
}

func newGroupForest(groups []db.Group, scope db.Scope) groupForest {
	f := groupForest{byID: map[int64]db.Group{}, children: map[int64][]int64{}, inScope: map[int64]bool{},
		visible: map[int64]bool{}, all: scope.All}
	// AllGroups orders by depth, then sort_order, name and id: appending
	// in that order lists every group's children in tree order.
	for _, g := range groups {
		f.byID[g.ID] = g
		f.children[invParentKey(g)] = append(f.children[invParentKey(g)], g.ID)
	}
	var scopePaths []string
	for _, id := range scope.GroupIDs {
		if g, ok := f.byID[id]; ok {
			scopePaths = append(scopePaths, g.Path)
		}
	}
	for _, g := range groups {
		in := scope.All
		for _, p := range scopePaths {
			in = in || strings.HasPrefix(g.Path, p)
		}
		if !in {
			continue
		}
		f.inScope[g.ID] = true
		// The path names the group and its ancestors.
		for _, part := range strings.Split(strings.Trim(g.Path, "/"), "/") {
			if id, err := strconv.ParseInt(part, 10, 64); err == nil {
				f.visible[id] = true
			}
		}
	}
	return f
}

// invParentKey is the key of g's siblings in groupForest.children.
func invParentKey(g db.Group) int64 {
	if g.ParentID == nil {
		return 0
	}
	return *g.ParentID
}

// canReorder reports whether the user may move g among its siblings: all
// of them must be in scope, so the parent must be (or, for a root group,
// every group).
func (f groupForest) canReorder(g db.Group) bool {
	if g.ParentID == nil {
		return f.all
	}
	return f.inScope[*g.ParentID]
}

// walk visits the visible groups depth first, in tree order.
func (f groupForest) walk(visit func(g db.Group)) {
	var rec func(parent int64)
	rec = func(parent int64) {
		for _, id := range f.children[parent] {
			if f.visible[id] {
				visit(f.byID[id])
				rec(id)
			}
		}
	}
	rec(0)
}

// rows lays the visible tree out for groups.html. counts are the devices
// directly in each group.
func (f groupForest) rows(counts map[int64]int, focus int64) []invGroupRow {
	subtree := map[int64]int{}
	var sum func(id int64) int
	sum = func(id int64) int {
		n := counts[id]
		for _, c := range f.children[id] {
			n += sum(c)
		}
		subtree[id] = n
		return n
	}
	for _, id := range f.children[0] {
		sum(id)
	}
	var rows []invGroupRow
	f.walk(func(g db.Group) {
		sib := f.children[invParentKey(g)]
		row := invGroupRow{ID: g.ID, Name: g.Name, Depth: g.Depth, InScope: f.inScope[g.ID],
			CanReorder: f.inScope[g.ID] && f.canReorder(g), First: sib[0] == g.ID, Last: sib[len(sib)-1] == g.ID,
			Focus: g.ID == focus}
		if row.InScope {
			row.Devices, row.Subtree = counts[g.ID], subtree[g.ID]
			row.CountKey = keyInvGroupDevicesMany
			if row.Devices == 1 {
				row.CountKey = keyInvGroupDevicesOne
			}
		}
		rows = append(rows, row)
	})
	for i := range rows {
		next := 0
		if i+1 < len(rows) {
			next = rows[i+1].Depth
		}
		if next > rows[i].Depth {
			rows[i].Descend = true
		} else {
			rows[i].Ascend = make([]struct{}, rows[i].Depth-next)
		}
	}
	return rows
}

// options lists the groups in scope as parent choices, depth first,
// leaving out the subtree at path skip (a group and its descendants are
// no place to move it to).
func (f groupForest) options(selected int64, skip string) []invGroupOption {
	var out []invGroupOption
	f.walk(func(g db.Group) {
		if !f.inScope[g.ID] || (skip != "" && strings.HasPrefix(g.Path, skip)) {
			return
		}
		out = append(out, invGroupOption{ID: g.ID, Label: strings.Repeat("\u00a0\u00a0\u00a0", g.Depth) + g.Name, Selected: g.ID == selected})
	})
	return out
}

func (u *handlers) loadGroupForest(ctx context.Context, scope db.Scope) (groupForest, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return groupForest{}, err
	}
	return newGroupForest(groups, scope), nil
}
