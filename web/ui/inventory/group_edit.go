package inventory

import (
	"errors"
	"net/http"

	"backupd/db"
	"backupd/web/ui/core"
)

// One group's page: rename, move, reorder among its siblings, delete.

// invScopedGroup is the group of the URL: 404 when there is none, 403 when
// it lies outside the user's scope.
func (u *handlers) invScopedGroup(r *http.Request) (db.Group, error) {
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

func (u *handlers) groupDetail(w http.ResponseWriter, r *http.Request) error {
	g, err := u.invScopedGroup(r)
	if err != nil {
		return err
	}
	return u.renderGroupDetail(w, r, http.StatusOK, g, groupDetailPage{Name: g.Name})
}

func (u *handlers) renderGroupDetail(w http.ResponseWriter, r *http.Request, status int, g db.Group, p groupDetailPage) error {
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

func (u *handlers) renameGroup(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) moveGroup(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) reorderGroup(w http.ResponseWriter, r *http.Request) error {
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

func (u *handlers) deleteGroup(w http.ResponseWriter, r *http.Request) error {
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
