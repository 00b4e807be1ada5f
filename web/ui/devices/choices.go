package devices

import (
	"slices"
	"strings"

	"backupd/app/collect/driver"
	"backupd/db"
	"backupd/web/ui/core"
)

// The groups and platforms the list's filters and the form offer.

// devicesGroupOption is a group in a select, in tree order.
type devicesGroupOption struct {
	ID    int64
	Label string
}

// devicesGroupOptions lists the groups in scope depth-first, each under
// its parent, labelled with its path of names.
func devicesGroupOptions(tree core.GroupTree, scope db.Scope) []devicesGroupOption {
	var out []devicesGroupOption
	for _, g := range tree.Ordered() {
		if tree.Covers(scope, g.ID) {
			out = append(out, devicesGroupOption{ID: g.ID, Label: tree.PathName(g.ID)})
		}
	}
	return out
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
