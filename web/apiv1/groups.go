package apiv1

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"backupd/db"
	"backupd/web"
)

// Group is a device group.
type Group struct {
	ID        int64  `json:"id" doc:"Group identifier."`
	Name      string `json:"name" doc:"Group name, unique among groups."`
	ParentID  *int64 `json:"parent_id" doc:"Parent group; null for a root group."`
	Path      string `json:"path" doc:"Materialised path of ancestor ids including the group's own, e.g. /3/7/."`
	Depth     int    `json:"depth" doc:"Depth in the tree; a root group is 0."`
	SortOrder int    `json:"sort_order" doc:"Ordering among siblings."`
	CreatedAt string `json:"created_at" doc:"Creation time, UTC, ISO 8601 without zone designator."`
}

// GroupNode is a group with its children, for the tree view.
type GroupNode struct {
	Group
	Children []GroupNode `json:"children" doc:"Child groups, ordered by sort_order, name, id; empty for a leaf."`
}

func toGroup(g db.Group) Group {
	return Group{ID: g.ID, Name: g.Name, ParentID: g.ParentID, Path: g.Path, Depth: g.Depth, SortOrder: g.SortOrder, CreatedAt: g.CreatedAt}
}

// GroupCreate is the body of POST /groups.
type GroupCreate struct {
	Name     string `json:"name" minLength:"1" maxLength:"128" doc:"Group name, unique among groups; surrounding spaces are trimmed."`
	ParentID *int64 `json:"parent_id,omitempty" nullable:"true" doc:"Parent group id; null or absent makes a root group."`
}

// GroupUpdate is the body of PUT /groups/{group_id}.
type GroupUpdate struct {
	Name     *string `json:"name,omitempty" nullable:"false" minLength:"1" maxLength:"128" doc:"New name; absent keeps the current name."`
	ParentID *int64  `json:"parent_id,omitempty" nullable:"true" doc:"New parent id. Absent or null moves the group to the root level: send the current parent_id to keep it."`
}

// TransformSchema says in the schema what absent and null mean on PUT.
func (GroupUpdate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.Description = "Body of PUT /groups/{group_id}. Neither a full replace nor a plain partial update: an absent name keeps the current name, but an absent parent_id counts as null and moves the group to the root level. To keep the parent, send the current parent_id."
	return s
}

type groupIDPath struct {
	GroupID int64 `path:"group_id" minimum:"1" doc:"Group identifier."`
}

type groupOutput struct{ Body Group }

func groupError(err error) error {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return web.NewError(http.StatusNotFound, "RESOURCE_GROUP_NOT_FOUND", "group not found")
	case errors.Is(err, db.ErrNameExists):
		return web.NewError(http.StatusConflict, "RESOURCE_GROUP_NAME_EXISTS", "a group with this name already exists")
	case errors.Is(err, db.ErrHasChildren):
		return web.NewError(http.StatusConflict, "RESOURCE_GROUP_HAS_CHILDREN", "the group has child groups; move or delete them first")
	case errors.Is(err, db.ErrInUse):
		return web.NewError(http.StatusConflict, "RESOURCE_GROUP_IN_USE", "devices still belong to the group; move or delete them first")
	case errors.Is(err, db.ErrInvalidParent):
		return web.NewError(http.StatusBadRequest, "RESOURCE_GROUP_INVALID_PARENT", strings.TrimPrefix(err.Error(), db.ErrInvalidParent.Error()+": "))
	}
	return err
}

// trimmedName trims a name and rejects a blank one.
func trimmedName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", web.FieldInvalid("body", field, "must not be blank")
	}
	return name, nil
}

func (a *API) registerGroups() {
	register(a, operation(http.MethodGet, "/groups", "list-groups", "Groups", "groups.view",
		"List groups", "Returns one page of groups ordered by id.", nil),
		func(ctx context.Context, in *ListParams) (*struct{ Body Page[Group] }, error) {
			page, err := listPage(*in, func(limit, off int) ([]db.Group, int, error) {
				return a.deps.Store.ListGroups(ctx, limit, off)
			}, toGroup)
			return &struct{ Body Page[Group] }{page}, err
		})

	register(a, operation(http.MethodGet, "/groups/tree", "get-group-tree", "Groups", "groups.view",
		"Get the group tree", "Returns the whole tree (not paginated): root groups with their children, recursively.", nil),
		func(ctx context.Context, _ *struct{}) (*struct{ Body []GroupNode }, error) {
			groups, err := a.deps.Store.AllGroups(ctx)
			if err != nil {
				return nil, err
			}
			return &struct{ Body []GroupNode }{buildTree(groups)}, nil
		})

	register(a, operation(http.MethodGet, "/groups/{group_id}", "get-group", "Groups", "groups.view",
		"Get a group", "Returns one group.", Codes{http.StatusNotFound: {{"RESOURCE_GROUP_NOT_FOUND", "no group has this id.", "group not found"}}}),
		func(ctx context.Context, in *groupIDPath) (*groupOutput, error) {
			g, err := a.deps.Store.GetGroup(ctx, in.GroupID)
			if err != nil {
				return nil, groupError(err)
			}
			return &groupOutput{toGroup(g)}, nil
		})

	register(a, operation(http.MethodPost, "/groups", "create-group", "Groups", "groups.create",
		"Create a group", "Creates a group under parent_id, or at the root when parent_id is null or absent. It is placed after its existing siblings.", Codes{http.StatusBadRequest: {{"RESOURCE_GROUP_INVALID_PARENT", "parent_id names a group that does not exist.", "group 42 does not exist"}}, http.StatusConflict: {{"RESOURCE_GROUP_NAME_EXISTS", "another group has this name.", "a group with this name already exists"}}}),
		func(ctx context.Context, in *struct{ Body GroupCreate }) (*groupOutput, error) {
			name, err := trimmedName("name", in.Body.Name)
			if err != nil {
				return nil, err
			}
			g, err := a.deps.Store.CreateGroup(ctx, name, in.Body.ParentID)
			if err != nil {
				return nil, groupError(err)
			}
			a.audit(ctx, "group.create", "group", g.ID, map[string]any{"name": g.Name, "parent_id": g.ParentID})
			return &groupOutput{toGroup(g)}, nil
		})

	register(a, operation(http.MethodPut, "/groups/{group_id}", "update-group", "Groups", "groups.update",
		"Update a group", "Renames and/or moves a group. An absent name keeps the current name. An absent parent_id is treated as null and moves the group to the root level; to keep the parent, send the current parent_id. Moving a group moves its whole subtree.", Codes{http.StatusBadRequest: {{"RESOURCE_GROUP_INVALID_PARENT", "parent_id names a group that does not exist, the group itself, or one of its descendants.", "group 42 does not exist"}}, http.StatusNotFound: {{"RESOURCE_GROUP_NOT_FOUND", "no group has this id.", "group not found"}}, http.StatusConflict: {{"RESOURCE_GROUP_NAME_EXISTS", "another group has this name.", "a group with this name already exists"}}}),
		func(ctx context.Context, in *struct {
			GroupID int64 `path:"group_id" minimum:"1" doc:"Group identifier."`
			Body    GroupUpdate
		}) (*groupOutput, error) {
			var name *string
			if in.Body.Name != nil {
				n, err := trimmedName("name", *in.Body.Name)
				if err != nil {
					return nil, err
				}
				name = &n
			}
			g, err := a.deps.Store.UpdateGroup(ctx, in.GroupID, name, in.Body.ParentID)
			if err != nil {
				return nil, groupError(err)
			}
			a.audit(ctx, "group.update", "group", g.ID, map[string]any{"fields": sentFields(ctx), "name": g.Name, "parent_id": g.ParentID})
			return &groupOutput{toGroup(g)}, nil
		})

	register(a, operation(http.MethodDelete, "/groups/{group_id}", "delete-group", "Groups", "groups.delete",
		"Delete a group", "Deletes a group. A group with child groups, or with devices in it, cannot be deleted.", Codes{http.StatusNotFound: {{"RESOURCE_GROUP_NOT_FOUND", "no group has this id.", "group not found"}}, http.StatusConflict: {{"RESOURCE_GROUP_HAS_CHILDREN", "the group has child groups.", "the group has child groups; move or delete them first"}, {"RESOURCE_GROUP_IN_USE", "devices belong to the group.", "devices still belong to the group; move or delete them first"}}}),
		func(ctx context.Context, in *groupIDPath) (*deleteOutput, error) {
			if err := a.deps.Store.DeleteGroup(ctx, in.GroupID); err != nil {
				return nil, groupError(err)
			}
			a.audit(ctx, "group.delete", "group", in.GroupID, nil)
			return deleted(), nil
		})
}

// buildTree nests groups (ordered parent before child, siblings in display
// order) into tree nodes.
func buildTree(groups []db.Group) []GroupNode {
	children := map[int64][]db.Group{}
	var roots []db.Group
	for _, g := range groups {
		if g.ParentID == nil {
			roots = append(roots, g)
		} else {
			children[*g.ParentID] = append(children[*g.ParentID], g)
		}
	}
	var build func([]db.Group) []GroupNode
	build = func(gs []db.Group) []GroupNode {
		nodes := make([]GroupNode, 0, len(gs))
		for _, g := range gs {
			nodes = append(nodes, GroupNode{Group: toGroup(g), Children: build(children[g.ID])})
		}
		return nodes
	}
	return build(roots)
}
