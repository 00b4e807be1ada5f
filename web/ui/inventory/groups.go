package inventory

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

func (u *handlers) groupTree(w http.ResponseWriter, r *http.Request) error {
	p := groupTreePage{Notice: core.Notice(r, groupTreeNotices)}
	p.Focus, _ = strconv.ParseInt(r.URL.Query().Get("focus"), 10, 64)
	p.Parent, _ = strconv.ParseInt(r.URL.Query().Get("parent"), 10, 64)
	return u.renderGroupTree(w, r, http.StatusOK, p)
}

func (u *handlers) renderGroupTree(w http.ResponseWriter, r *http.Request, status int, p groupTreePage) error {
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
func (u *handlers) invCheckParent(ctx context.Context, scope db.Scope, parent *int64) (string, error) {
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

func (u *handlers) createGroup(w http.ResponseWriter, r *http.Request) error {
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
