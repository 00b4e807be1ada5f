package admin

import (
	"net/http"
	"slices"
	"strings"

	"backupd/app/auth"
)

// The permissions as the role and API key forms show them: a grid of
// resources by actions, and a summary for lists.

// Permissions grid: the catalogue of auth.Permissions as rows of a
// resource ("groups") and columns of an action ("view"), with labels in
// the page's language.

// The grid's columns.
var permActions = []string{"view", "create", "update", "delete", "use"}

// Message keys of resources and actions are these prefixes and the name.
const (
	resourceKeyPrefix = "admin.resource."
	actionKeyPrefix   = "admin.action."
)

// resourceLabels maps a resource to its label's key; a resource without
// one shows its name.
var resourceLabels = labelsByName(adminResourceLabels, resourceKeyPrefix)

// actionLabels maps an action to its label's key.
var actionLabels = labelsByName(adminActionLabels, actionKeyPrefix)

func labelsByName(keys []string, prefix string) map[string]string {
	m := map[string]string{}
	for _, k := range keys {
		m[strings.TrimPrefix(k, prefix)] = k
	}
	return m
}

func labelOr(labels map[string]string, name string) string {
	if k, ok := labels[name]; ok {
		return k
	}
	return name
}

// permRow is one resource of the grid; Label is a message key.
type permRow struct {
	Label string
	Cells []permCell
}

// permCell is one checkbox: Perm is empty where the resource has no such
// action.
type permCell struct {
	Perm     string
	Action   string
	Checked  bool
	Disabled bool
}

// permGrid lays out the catalogue; checked and enabled say which boxes
// are ticked and which the user may change.
func permGrid(checked, enabled func(perm string) bool) []permRow {
	var rows []permRow
	index := map[string]int{}
	for _, p := range auth.Permissions {
		res, act, _ := strings.Cut(p, ".")
		i, ok := index[res]
		if !ok {
			i = len(rows)
			index[res] = i
			row := permRow{Label: labelOr(resourceLabels, res)}
			for _, a := range permActions {
				row.Cells = append(row.Cells, permCell{Action: labelOr(actionLabels, a)})
			}
			rows = append(rows, row)
		}
		col := slices.Index(permActions, act)
		if col < 0 {
			// An action outside the four columns: a column of its own
			// for this row, at the end.
			col = len(rows[i].Cells)
			rows[i].Cells = append(rows[i].Cells, permCell{Action: labelOr(actionLabels, act)})
		}
		rows[i].Cells[col] = permCell{Perm: p, Action: labelOr(actionLabels, act), Checked: checked(p), Disabled: !enabled(p)}
	}
	return rows
}

// permLine is a resource and the actions a set of permissions allows on
// it, for lists; all are message keys.
type permLine struct {
	Label   string
	Actions []permLabel
}

// permLabel is a message key in a field, as templates translate them.
type permLabel struct{ Label string }

// permSummary groups perms by resource, in the catalogue's order; names
// that are not permissions (left by an older release) are left out.
func permSummary(perms []string) []permLine {
	held := map[string]bool{}
	for _, p := range perms {
		held[p] = true
	}
	var out []permLine
	index := map[string]int{}
	for _, p := range auth.Permissions {
		if !held[p] {
			continue
		}
		res, act, _ := strings.Cut(p, ".")
		i, ok := index[res]
		if !ok {
			i = len(out)
			index[res] = i
			out = append(out, permLine{Label: labelOr(resourceLabels, res)})
		}
		out[i].Actions = append(out[i].Actions, permLabel{labelOr(actionLabels, act)})
	}
	return out
}

// formPermissions reads the "perm" checkboxes: known permissions only,
// in the catalogue's order; ok is false when one is not a permission.
func formPermissions(r *http.Request) (perms []string, ok bool) {
	sent := map[string]bool{}
	for _, p := range r.PostForm["perm"] {
		if !auth.IsPermission(p) {
			return nil, false
		}
		sent[p] = true
	}
	for _, p := range auth.Permissions {
		if sent[p] {
			perms = append(perms, p)
		}
	}
	return perms, true
}
