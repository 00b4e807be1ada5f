package devices

import (
	"slices"
	"strconv"
	"strings"

	"backupd/app/collect/driver"
	"backupd/db"
)

// The groups and platforms the list's filters and the form offer.

// devicesGroup is a group with its path of names ("Core / Access").
type devicesGroup struct {
	db.Group
	Path string
}

// devicesGroupIndex names every group by its path of names.
func devicesGroupIndex(groups []db.Group) map[int64]devicesGroup {
	byID := make(map[int64]devicesGroup, len(groups))
	// AllGroups lists parents before children.
	for _, g := range groups {
		path := g.Name
		if g.ParentID != nil {
			path = byID[*g.ParentID].Path + " / " + g.Name
		}
		byID[g.ID] = devicesGroup{Group: g, Path: path}
	}
	return byID
}

// devicesGroupOption is a group in a select, in tree order.
type devicesGroupOption struct {
	ID    int64
	Label string
}

// devicesGroupOptions lists the groups in scope depth-first, each under
// its parent, labelled with its path.
func devicesGroupOptions(groups []db.Group, scope db.Scope) []devicesGroupOption {
	byID := devicesGroupIndex(groups)
	children := map[int64][]db.Group{}
	for _, g := range groups {
		var parent int64
		if g.ParentID != nil {
			parent = *g.ParentID
		}
		children[parent] = append(children[parent], g)
	}
	out := make([]devicesGroupOption, 0, len(groups))
	var walk func(parent int64, depth int)
	walk = func(parent int64, depth int) {
		if depth > 64 {
			return // a cycle cannot be stored, but a walk stays bounded anyway
		}
		for _, g := range children[parent] {
			if devicesGroupInScope(g, scope) {
				out = append(out, devicesGroupOption{ID: g.ID, Label: byID[g.ID].Path})
			}
			walk(g.ID, depth+1)
		}
	}
	walk(0, 0)
	return out
}

// devicesGroupInScope applies the scope to a group through its path, which
// lists its ancestors' ids and its own.
func devicesGroupInScope(g db.Group, scope db.Scope) bool {
	if scope.All {
		return true
	}
	for _, part := range strings.Split(strings.Trim(g.Path, "/"), "/") {
		id, err := strconv.ParseInt(part, 10, 64)
		if err == nil && slices.Contains(scope.GroupIDs, id) {
			return true
		}
	}
	return false
}

// devicesPlatform is a platform in a select.
type devicesPlatform struct{ ID, Name string }

func devicesPlatforms() []devicesPlatform {
	ids := driver.IDs()
	out := make([]devicesPlatform, len(ids))
	for i, id := range ids {
		info, _ := driver.Lookup(id)
		out[i] = devicesPlatform{ID: id, Name: info.Name}
	}
	slices.SortFunc(out, func(a, b devicesPlatform) int { return strings.Compare(a.Name, b.Name) })
	return out
}
