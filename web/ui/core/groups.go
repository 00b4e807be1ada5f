package core

import (
	"context"

	"backupd/db"
)

// maxGroupIndent caps the indentation of a group checklist.
const maxGroupIndent = 6

// GroupCheck is one group of the "group-checks" partial (partials.html):
// a checkbox, indented by Depth.
type GroupCheck struct {
	ID      int64
	Name    string
	Depth   int
	Checked bool
}

// GroupChecklist lays groups (in tree order, as the store lists them) out
// for the "group-checks" partial, those in checked ticked. The schedule
// and notification-rule forms share it.
func GroupChecklist(groups []db.Group, checked map[int64]bool) []GroupCheck {
	out := make([]GroupCheck, 0, len(groups))
	for _, g := range groups {
		out = append(out, GroupCheck{ID: g.ID, Name: g.Name, Depth: min(g.Depth, maxGroupIndent), Checked: checked[g.ID]})
	}
	return out
}

// GroupNames names every group by its id, for lists that spell out the
// groups of a target.
func (u *UI) GroupNames(ctx context.Context) (map[int64]string, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(groups))
	for _, g := range groups {
		names[g.ID] = g.Name
	}
	return names, nil
}
