package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"backupd/db"
	"backupd/web/ui/core"
)

// Groups: the whole tree on one page (groups are few next to devices),
// with each group's device count from one grouped query. A user scoped
// to some groups sees those, their subgroups, and their ancestors as
// context without counts or actions; every change needs the group — and
// for a move or a new group the parent, for a reorder the siblings — in
// the user's scope.

// groupTreeNotices are the notices a redirect to /groups may carry.
var groupTreeNotices = map[string]string{
	"created":   keyInvGroupCreated,
	"renamed":   keyInvGroupRenamed,
	"moved":     keyInvGroupMoved,
	"reordered": keyInvGroupReordered,
	"deleted":   keyInvGroupDeleted,
	"unchanged": keyInvGroupUnchanged,
}

// groupTreePage is the data of groups.html.
type groupTreePage struct {
	Rows []invGroupRow
	// InScope is how many groups the user may act on.
	InScope int
	// Ungrouped counts the devices in no group; shown when there are any,
	// to all-groups users only (no scope holds them).
	Ungrouped     int
	ShowUngrouped bool
	// Parents are where the user may create a group; Root whether the top
	// level is one of them.
	Parents []invGroupOption
	Root    bool
	// The create form as typed.
	Name   string
	Parent int64
	Focus  int64
	Error  string
	Args   []any
	Notice string
}

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

func (u *UI) loadGroupForest(ctx context.Context, scope db.Scope) (groupForest, error) {
	groups, err := u.Store.AllGroups(ctx)
	if err != nil {
		return groupForest{}, err
	}
	return newGroupForest(groups, scope), nil
}

func (u *UI) groupTree(w http.ResponseWriter, r *http.Request) error {
	p := groupTreePage{Notice: core.Notice(r, groupTreeNotices)}
	p.Focus, _ = strconv.ParseInt(r.URL.Query().Get("focus"), 10, 64)
	p.Parent, _ = strconv.ParseInt(r.URL.Query().Get("parent"), 10, 64)
	return u.renderGroupTree(w, r, http.StatusOK, p)
}

func (u *UI) renderGroupTree(w http.ResponseWriter, r *http.Request, status int, p groupTreePage) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f, err := u.loadGroupForest(ctx, scope)
	if err != nil {
		return err
	}
	counts, err := u.Store.GroupDeviceCounts(ctx)
	if err != nil {
		return err
	}
	p.Rows = f.rows(counts, p.Focus)
	p.InScope = len(f.inScope)
	p.Parents = f.options(p.Parent, "")
	p.Root = scope.All
	p.ShowUngrouped, p.Ungrouped = scope.All && counts[0] > 0, counts[0]
	return u.Render(w, r, status, "groups.html", keyInvTitleGroups, p)
}

// invGroupTreeAt is where a change to group id sends the browser: the tree,
// scrolled to the group.
func invGroupTreeAt(id int64, notice string) string {
	return fmt.Sprintf("/groups?notice=%s&focus=%d#group-%d", notice, id, id)
}

// invGroupName reads and checks the name field: the message key of what is
// wrong with it, if anything.
func invGroupName(r *http.Request) (string, string, []any) {
	name, fits := core.Field(r, "name", invMaxName)
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return name, keyInvNameMissing, nil
	case !fits:
		return name, keyInvNameTooLong, []any{invMaxName}
	}
	return name, "", nil
}

// invFormGroupID reads a group <select>: nil for the top level ("").
func invFormGroupID(r *http.Request, field string) (*int64, bool) {
	raw := r.PostFormValue(field)
	if raw == "" {
		return nil, true
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return nil, false
	}
	return &id, true
}

// invCheckParent refuses a parent the user may not place groups under: the
// top level needs every group in scope, another group must be in scope.
// A parent that does not exist is the returned message key.
func (u *UI) invCheckParent(ctx context.Context, scope db.Scope, parent *int64) (string, error) {
	if parent == nil {
		if !scope.All {
			return "", core.Forbidden()
		}
		return "", nil
	}
	if _, err := u.Store.GetGroup(ctx, *parent); errors.Is(err, db.ErrNotFound) {
		return keyInvGroupParentGone, nil
	} else if err != nil {
		return "", err
	}
	in, err := u.Store.GroupInScope(ctx, scope, *parent)
	if err != nil {
		return "", err
	}
	if !in {
		return "", core.Forbidden()
	}
	return "", nil
}

func (u *UI) createGroup(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	name, bad, args := invGroupName(r)
	parent, ok := invFormGroupID(r, "parent")
	p := groupTreePage{Name: name}
	if parent != nil {
		p.Parent = *parent
	}
	fail := func(status int, key string, args ...any) error {
		p.Error, p.Args = key, args
		return u.renderGroupTree(w, r, status, p)
	}
	switch {
	case !ok:
		return fail(http.StatusUnprocessableEntity, keyInvGroupParentGone)
	case bad != "":
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	if gone, err := u.invCheckParent(ctx, core.SessionOf(r).Scope(), parent); err != nil {
		return err
	} else if gone != "" {
		return fail(http.StatusUnprocessableEntity, gone)
	}
	g, err := u.Store.CreateGroup(ctx, name, parent)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvGroupNameExists, name)
	case errors.Is(err, db.ErrInvalidParent):
		return fail(http.StatusUnprocessableEntity, keyInvGroupParentGone)
	case err != nil:
		return err
	}
	u.Audit(r, "group.create", "group", g.ID, map[string]any{"name": g.Name, "parent_id": g.ParentID})
	http.Redirect(w, r, invGroupTreeAt(g.ID, "created"), http.StatusSeeOther)
	return nil
}

// invScopedGroup is the group of the URL: 404 when there is none, 403 when
// it lies outside the user's scope.
func (u *UI) invScopedGroup(r *http.Request) (db.Group, error) {
	id, err := core.PathID(r)
	if err != nil {
		return db.Group{}, err
	}
	g, err := u.Store.GetGroup(r.Context(), id)
	if err != nil {
		return g, err
	}
	in, err := u.Store.GroupInScope(r.Context(), core.SessionOf(r).Scope(), id)
	if err != nil {
		return g, err
	}
	if !in {
		return g, core.Forbidden()
	}
	return g, nil
}

// groupDetailPage is the data of groups_edit.html.
type groupDetailPage struct {
	Group db.Group
	// Trail are the group's ancestors, root first.
	Trail     []db.Group
	Devices   int
	Subgroups int
	// Parents are where the user may move the group; Root whether the top
	// level is one of them.
	Parents []invGroupOption
	Root    bool
	// Name is the rename form as typed.
	Name   string
	Error  string
	Args   []any
	Notice string
}

func (u *UI) groupDetail(w http.ResponseWriter, r *http.Request) error {
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	return u.renderGroupDetail(w, r, http.StatusOK, g, groupDetailPage{Name: g.Name})
}

func (u *UI) renderGroupDetail(w http.ResponseWriter, r *http.Request, status int, g db.Group, p groupDetailPage) error {
	ctx := r.Context()
	scope := core.SessionOf(r).Scope()
	f, err := u.loadGroupForest(ctx, scope)
	if err != nil {
		return err
	}
	if p.Devices, err = u.Store.DevicesInGroup(ctx, g.ID); err != nil {
		return err
	}
	p.Group = g
	p.Subgroups = len(f.children[g.ID])
	for id := g.ParentID; id != nil; id = f.byID[*id].ParentID {
		p.Trail = append([]db.Group{f.byID[*id]}, p.Trail...)
	}
	p.Parents = f.options(invParentKey(g), g.Path)
	p.Root = scope.All
	return u.Render(w, r, status, "groups_edit.html", keyInvTitleGroup, p)
}

func (u *UI) renameGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	name, bad, args := invGroupName(r)
	fail := func(status int, key string, args ...any) error {
		return u.renderGroupDetail(w, r, status, g, groupDetailPage{Name: name, Error: key, Args: args})
	}
	if bad != "" {
		return fail(http.StatusUnprocessableEntity, bad, args...)
	}
	if name == g.Name {
		http.Redirect(w, r, invGroupTreeAt(g.ID, "unchanged"), http.StatusSeeOther)
		return nil
	}
	updated, err := u.Store.UpdateGroup(r.Context(), g.ID, &name, g.ParentID)
	switch {
	case errors.Is(err, db.ErrNameExists):
		return fail(http.StatusConflict, keyInvGroupNameExists, name)
	case err != nil:
		return err
	}
	u.Audit(r, "group.update", "group", g.ID, map[string]any{"fields": []string{"name"}, "name": updated.Name,
		"previous_name": g.Name, "parent_id": updated.ParentID})
	http.Redirect(w, r, invGroupTreeAt(g.ID, "renamed"), http.StatusSeeOther)
	return nil
}

func (u *UI) moveGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	fail := func(status int, key string, args ...any) error {
		return u.renderGroupDetail(w, r, status, g, groupDetailPage{Name: g.Name, Error: key, Args: args})
	}
	parent, ok := invFormGroupID(r, "parent")
	if !ok {
		return fail(http.StatusUnprocessableEntity, keyInvGroupParentGone)
	}
	if gone, err := u.invCheckParent(r.Context(), core.SessionOf(r).Scope(), parent); err != nil {
		return err
	} else if gone != "" {
		return fail(http.StatusUnprocessableEntity, gone)
	}
	if invSameParent(g.ParentID, parent) {
		http.Redirect(w, r, invGroupTreeAt(g.ID, "unchanged"), http.StatusSeeOther)
		return nil
	}
	moved, err := u.Store.UpdateGroup(r.Context(), g.ID, nil, parent)
	switch {
	case errors.Is(err, db.ErrInvalidParent):
		// The store refuses a parent inside the group's own subtree.
		return fail(http.StatusBadRequest, keyInvGroupMoveIntoSelf, g.Name)
	case err != nil:
		return err
	}
	u.Audit(r, "group.update", "group", g.ID, map[string]any{"fields": []string{"parent_id"}, "name": moved.Name,
		"parent_id": moved.ParentID, "previous_parent_id": g.ParentID})
	http.Redirect(w, r, invGroupTreeAt(g.ID, "moved"), http.StatusSeeOther)
	return nil
}

// invSameParent reports whether two parent ids (nil: top level) are one.
func invSameParent(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func (u *UI) reorderGroup(w http.ResponseWriter, r *http.Request) error {
	step := 0
	switch r.PostFormValue("dir") {
	case "up":
		step = -1
	case "down":
		step = 1
	default:
		return &core.PageError{Status: http.StatusBadRequest, Message: keyInvGroupBadDirection}
	}
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	f, err := u.loadGroupForest(r.Context(), core.SessionOf(r).Scope())
	if err != nil {
		return err
	}
	if !f.canReorder(g) {
		return core.Forbidden()
	}
	moved, err := u.Store.ReorderGroup(r.Context(), g.ID, step)
	if err != nil {
		return err
	}
	notice := "unchanged"
	if moved {
		notice = "reordered"
		u.Audit(r, "group.update", "group", g.ID, map[string]any{"fields": []string{"sort_order"}, "name": g.Name,
			"parent_id": g.ParentID, "direction": r.PostFormValue("dir")})
	}
	http.Redirect(w, r, invGroupTreeAt(g.ID, notice)+"-"+r.PostFormValue("dir"), http.StatusSeeOther)
	return nil
}

func (u *UI) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	fail := func(status int, key string, args ...any) error {
		return u.renderGroupDetail(w, r, status, g, groupDetailPage{Name: g.Name, Error: key, Args: args})
	}
	err = u.Store.DeleteGroup(r.Context(), g.ID)
	switch {
	case errors.Is(err, db.ErrHasChildren):
		return fail(http.StatusConflict, keyInvGroupHasChildren, g.Name)
	case errors.Is(err, db.ErrInUse):
		n, cerr := u.Store.DevicesInGroup(r.Context(), g.ID)
		if cerr != nil {
			return cerr
		}
		return fail(http.StatusConflict, keyInvGroupInUse, n, g.Name)
	case err != nil:
		return err
	}
	u.Audit(r, "group.delete", "group", g.ID, map[string]any{"name": g.Name})
	core.RedirectNotice(w, r, "/groups", "deleted")
	return nil
}
