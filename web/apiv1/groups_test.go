package apiv1_test

import (
	"fmt"
	"net/http"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

// Contract "Groups" rules 1-4, pagination and PRODUCT.md §3 tree decisions.

func (e *env) group(name string, parent any) int64 {
	e.t.Helper()
	r := e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": name, "parent_id": parent})
	e.expect(r, 201, "")
	return r.id()
}

// device inserts a device row directly: the device endpoints come later,
// but in-use checks must already hold.
func (e *env) device(name string, groupID, credentialID, templateID any) int64 {
	e.t.Helper()
	var id int64
	if err := dbtest.Poke(e.t, e.store).QueryRow(`INSERT INTO devices (name, host, port, platform, login_method, group_id, credential_id, template_id, created_at, updated_at)
		 VALUES (?, '127.0.0.1', 22, 'cisco_ios', 'ssh', ?, ?, ?, ?, ?) RETURNING id`, name, groupID, credentialID, templateID, db.Now(), db.Now()).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func TestGroupsPathDepthAndSortOrder(t *testing.T) {
	e := newEnv(t)
	root := e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "  Core  "})
	e.expect(root, 201, "")
	if root.JSON["name"] != "Core" || root.JSON["parent_id"] != nil || root.JSON["depth"] != 0.0 {
		t.Fatalf("root group: %s", root.Raw)
	}
	if want := fmt.Sprintf("/%d/", root.id()); root.JSON["path"] != want {
		t.Errorf("path %v, want %s", root.JSON["path"], want)
	}
	a := e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "A", "parent_id": root.id()})
	b := e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "B", "parent_id": root.id()})
	if want := fmt.Sprintf("/%d/%d/", root.id(), a.id()); a.JSON["path"] != want || a.JSON["depth"] != 1.0 {
		t.Errorf("child: %s", a.Raw)
	}
	if b.JSON["sort_order"].(float64) != a.JSON["sort_order"].(float64)+1 {
		t.Errorf("sibling sort_order: %v then %v", a.JSON["sort_order"], b.JSON["sort_order"])
	}
	got := e.do(http.MethodGet, fmt.Sprintf("/api/v1/groups/%d", a.id()), e.adminKey, nil)
	e.expect(got, 200, "")
	if string(got.Raw) != string(a.Raw) {
		t.Errorf("GET differs from POST: %s vs %s", got.Raw, a.Raw)
	}
	if created := a.JSON["created_at"].(string); len(created) != len("2006-01-02T15:04:05") {
		t.Errorf("created_at %q is not ISO 8601 without zone", created)
	}
}

func TestGroupsNameUnique(t *testing.T) {
	e := newEnv(t)
	e.group("Core", nil)
	e.expect(e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "Core"}), 409, "RESOURCE_GROUP_NAME_EXISTS")
	e.expect(e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "core "}), 409, "RESOURCE_GROUP_NAME_EXISTS")
	other := e.group("Edge", nil)
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", other), e.adminKey, map[string]any{"name": "CORE"}), 409, "RESOURCE_GROUP_NAME_EXISTS")
	// Renaming a group to its own name is no clash.
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", other), e.adminKey, map[string]any{"name": "Edge"}), 200, "")
}

// Rule 1: an omitted name keeps the current name. Rule 2: an omitted
// parent_id is null and moves the group to the root.
func TestGroupsPutOmittedFields(t *testing.T) {
	e := newEnv(t)
	root := e.group("Root", nil)
	child := e.group("Child", root)
	path := fmt.Sprintf("/api/v1/groups/%d", child)

	r := e.do(http.MethodPut, path, e.adminKey, map[string]any{"parent_id": root})
	e.expect(r, 200, "")
	if r.JSON["name"] != "Child" || r.JSON["parent_id"] != float64(root) {
		t.Fatalf("explicit parent_id should keep the parent: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{"name": "Renamed"})
	e.expect(r, 200, "")
	if r.JSON["name"] != "Renamed" || r.JSON["parent_id"] != nil || r.JSON["depth"] != 0.0 || r.JSON["path"] != fmt.Sprintf("/%d/", child) {
		t.Fatalf("omitted parent_id should move to the root: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, map[string]any{})
	e.expect(r, 200, "")
	if r.JSON["name"] != "Renamed" {
		t.Fatalf("omitted name should be kept: %s", r.Raw)
	}
	r = e.do(http.MethodPut, path, e.adminKey, `{"parent_id":null,"name":"N2"}`)
	e.expect(r, 200, "")
	if r.JSON["parent_id"] != nil || r.JSON["name"] != "N2" {
		t.Fatalf("null parent_id: %s", r.Raw)
	}
}

func TestGroupsMoveRewritesSubtree(t *testing.T) {
	e := newEnv(t)
	a := e.group("A", nil)
	b := e.group("B", a)
	c := e.group("C", b)
	d := e.group("D", c)
	x := e.group("X", nil)
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", b), e.adminKey, map[string]any{"parent_id": x}), 200, "")
	for id, want := range map[int64]struct {
		path  string
		depth float64
	}{
		b: {fmt.Sprintf("/%d/%d/", x, b), 1},
		c: {fmt.Sprintf("/%d/%d/%d/", x, b, c), 2},
		d: {fmt.Sprintf("/%d/%d/%d/%d/", x, b, c, d), 3},
		a: {fmt.Sprintf("/%d/", a), 0},
	} {
		r := e.do(http.MethodGet, fmt.Sprintf("/api/v1/groups/%d", id), e.adminKey, nil)
		if r.JSON["path"] != want.path || r.JSON["depth"] != want.depth {
			t.Errorf("group %d after move: %s, want path %s depth %v", id, r.Raw, want.path, want.depth)
		}
	}
}

func TestGroupsInvalidParent(t *testing.T) {
	e := newEnv(t)
	a := e.group("A", nil)
	b := e.group("B", a)
	c := e.group("C", b)
	e.expect(e.do(http.MethodPost, "/api/v1/groups", e.adminKey, map[string]any{"name": "Z", "parent_id": 999}), 400, "RESOURCE_GROUP_INVALID_PARENT")
	for _, target := range []int64{a, b, c} {
		r := e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", a), e.adminKey, map[string]any{"parent_id": target})
		e.expect(r, 400, "RESOURCE_GROUP_INVALID_PARENT")
	}
	e.expect(e.do(http.MethodPut, fmt.Sprintf("/api/v1/groups/%d", a), e.adminKey, map[string]any{"parent_id": 999}), 400, "RESOURCE_GROUP_INVALID_PARENT")
	// Nothing moved.
	r := e.do(http.MethodGet, fmt.Sprintf("/api/v1/groups/%d", c), e.adminKey, nil)
	if r.JSON["path"] != fmt.Sprintf("/%d/%d/%d/", a, b, c) {
		t.Errorf("failed move changed the tree: %s", r.Raw)
	}
}

// Rules 3 and 4.
func TestGroupsDeleteRules(t *testing.T) {
	e := newEnv(t)
	parent := e.group("Parent", nil)
	child := e.group("Child", parent)
	used := e.group("Used", nil)
	e.device("r1", used, nil, nil)

	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", parent), e.adminKey, nil), 409, "RESOURCE_GROUP_HAS_CHILDREN")
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", used), e.adminKey, nil), 409, "RESOURCE_GROUP_IN_USE")
	r := e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", child), e.adminKey, nil)
	e.expect(r, 200, "")
	if string(r.Raw) != `{"status":"success"}`+"\n" && string(r.Raw) != `{"status":"success"}` {
		t.Errorf("delete body %s", r.Raw)
	}
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", child), e.adminKey, nil), 404, "RESOURCE_GROUP_NOT_FOUND")
	e.expect(e.do(http.MethodDelete, fmt.Sprintf("/api/v1/groups/%d", parent), e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, fmt.Sprintf("/api/v1/groups/%d", parent), e.adminKey, nil), 404, "RESOURCE_GROUP_NOT_FOUND")
}

func TestGroupsTree(t *testing.T) {
	e := newEnv(t)
	empty := e.do(http.MethodGet, "/api/v1/groups/tree", e.adminKey, nil)
	e.expect(empty, 200, "")
	if string(empty.Raw) != "[]\n" && string(empty.Raw) != "[]" {
		t.Fatalf("empty tree: %s", empty.Raw)
	}
	z := e.group("Zeta", nil)
	a := e.group("Alpha", nil)
	z1 := e.group("Z-one", z)
	e.group("Z-one-one", z1)
	r := e.do(http.MethodGet, "/api/v1/groups/tree", e.adminKey, nil)
	e.expect(r, 200, "")
	if len(r.List) != 2 {
		t.Fatalf("want 2 roots: %s", r.Raw)
	}
	first := r.List[0].(map[string]any)
	if first["id"] != float64(z) { // sort_order first: Zeta was created first
		t.Errorf("roots not ordered by sort_order: %s", r.Raw)
	}
	second := r.List[1].(map[string]any)
	if second["id"] != float64(a) || len(second["children"].([]any)) != 0 {
		t.Errorf("leaf must have empty children: %v", second)
	}
	kids := first["children"].([]any)
	grandkids := kids[0].(map[string]any)["children"].([]any)
	if len(kids) != 1 || len(grandkids) != 1 || grandkids[0].(map[string]any)["name"] != "Z-one-one" {
		t.Errorf("nesting wrong: %s", r.Raw)
	}
}

func TestPagination(t *testing.T) {
	e := newEnv(t)
	pg := func(r *response) map[string]any { return r.JSON["pagination"].(map[string]any) }

	r := e.do(http.MethodGet, "/api/v1/groups", e.adminKey, nil)
	e.expect(r, 200, "")
	if p := pg(r); p["page"] != 1.0 || p["limit"] != 50.0 || p["total"] != 0.0 || p["total_pages"] != 1.0 || p["has_next"] != false || p["has_prev"] != false {
		t.Fatalf("empty list pagination: %s", r.Raw)
	}
	if items := r.JSON["items"].([]any); len(items) != 0 {
		t.Fatal("items not empty")
	}
	for i := 0; i < 7; i++ {
		e.group(fmt.Sprintf("g%d", i), nil)
	}
	r = e.do(http.MethodGet, "/api/v1/groups?page=2&limit=3", e.adminKey, nil)
	p := pg(r)
	if p["total"] != 7.0 || p["total_pages"] != 3.0 || p["has_next"] != true || p["has_prev"] != true || p["limit"] != 3.0 || p["page"] != 2.0 {
		t.Fatalf("page 2: %s", r.Raw)
	}
	items := r.JSON["items"].([]any)
	if len(items) != 3 || items[0].(map[string]any)["name"] != "g3" {
		t.Fatalf("page 2 items not ordered by id: %s", r.Raw)
	}
	r = e.do(http.MethodGet, "/api/v1/groups?page=3&limit=3", e.adminKey, nil)
	if pg(r)["has_next"] != false || len(r.JSON["items"].([]any)) != 1 {
		t.Fatalf("last page: %s", r.Raw)
	}
	r = e.do(http.MethodGet, "/api/v1/groups?page=50&limit=3", e.adminKey, nil)
	e.expect(r, 200, "")
	if pg(r)["total"] != 7.0 || len(r.JSON["items"].([]any)) != 0 || pg(r)["has_next"] != false {
		t.Fatalf("page past the end: %s", r.Raw)
	}
	r = e.do(http.MethodGet, "/api/v1/groups?page=9223372036854775807&limit=100", e.adminKey, nil)
	e.expect(r, 200, "")
	if pg(r)["total"] != 7.0 || len(r.JSON["items"].([]any)) != 0 {
		t.Fatalf("huge page: %s", r.Raw)
	}
	e.expect(e.do(http.MethodGet, "/api/v1/groups?limit=100", e.adminKey, nil), 200, "")
	e.expect(e.do(http.MethodGet, "/api/v1/groups?limit=1", e.adminKey, nil), 200, "")
	for _, q := range []string{"page=0", "page=-1", "limit=0", "limit=101", "limit=abc", "page=1.5", "limit=99999999999999999999"} {
		for _, list := range []string{"groups", "credentials", "templates"} {
			r := e.do(http.MethodGet, "/api/v1/"+list+"?"+q, e.adminKey, nil)
			e.expect(r, 422, "VALIDATION_ERROR")
		}
	}
}
