package ui_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"backupd/app/auth"
	"backupd/app/collect/driver"
	"backupd/app/secret"
	"backupd/db"
)

// invGroups returns the groups by name.
func invGroups(t *testing.T, e *env) map[string]db.Group {
	t.Helper()
	all, err := e.store.AllGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]db.Group{}
	for _, g := range all {
		out[g.Name] = g
	}
	return out
}

// invChildren lists the names of parent's children (0: the roots) in
// tree order.
func invChildren(t *testing.T, e *env, parent int64) string {
	t.Helper()
	all, err := e.store.AllGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range all {
		if (g.ParentID == nil && parent == 0) || (g.ParentID != nil && *g.ParentID == parent) {
			names = append(names, g.Name)
		}
	}
	return strings.Join(names, ",")
}

// invLastAudit is the newest web audit entry with action.
func invLastAudit(t *testing.T, e *env, action string) db.AuditEntry {
	t.Helper()
	entries := e.auditEntries()
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Action == action {
			return entries[i]
		}
	}
	t.Fatalf("no audit entry %s", action)
	return db.AuditEntry{}
}

func invID(id int64) string { return strconv.FormatInt(id, 10) }

// treeOrder lists the group ids of the tree in the page's order.
var treeItem = regexp.MustCompile(`<li id="group-(\d+)"`)

func invTreeOrder(body string) string {
	var ids []string
	for _, m := range treeItem.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return strings.Join(ids, ",")
}

func TestGroupsTreeCreateRenameMoveReorderDelete(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	p := b.get("/groups")
	expect(t, "groups page", p, http.StatusOK, "")
	expectBody(t, "groups page", p, `<a href="/groups" aria-current="page">Groups</a>`,
		`<a href="/groups/`+invID(f.core)+`">Core</a>`, "3 devices", "2 devices", `id="group-create"`)

	// Create a subgroup: redirected to the tree, scrolled to it.
	p = b.post("/groups", url.Values{"name": {"  Access  "}, "parent": {invID(f.core)}})
	access := invGroups(t, e)["Access"]
	if access.ID == 0 || access.ParentID == nil || *access.ParentID != f.core {
		t.Fatalf("Access not created under Core: %+v", access)
	}
	expect(t, "create", p, http.StatusSeeOther, fmt.Sprintf("/groups?notice=created&focus=%d#group-%d", access.ID, access.ID))
	if a := invLastAudit(t, e, "group.create"); a.TargetID != invID(access.ID) || a.Details["name"] != "Access" ||
		a.Details["parent_id"] != float64(f.core) || a.Username != "root" || a.SessionID == nil {
		t.Errorf("group.create audit %+v", a)
	}
	p = b.get("/groups?notice=created&focus=" + invID(access.ID))
	expectBody(t, "after create", p, "The group has been created.", `<li id="group-`+invID(access.ID)+`" class="group-focus">`)
	// Access is nested in Core's list.
	if !regexp.MustCompile(`(?s)<li id="group-` + invID(f.core) + `".*?<ul>\s*<li id="group-` + invID(access.ID) + `"`).MatchString(p.body) {
		t.Error("Access is not rendered inside Core")
	}

	// Refusals leave everything as it was and say what to do.
	before := invChildren(t, e, 0) + "|" + invChildren(t, e, f.core)
	p = b.post("/groups", url.Values{"name": {"core"}, "parent": {""}})
	expect(t, "duplicate name", p, http.StatusConflict, "")
	expectBody(t, "duplicate name", p, "A group named “core” already exists", `value="core"`)
	expect(t, "blank name", b.post("/groups", url.Values{"name": {"  "}, "parent": {""}}), http.StatusUnprocessableEntity, "")
	expect(t, "long name", b.post("/groups", url.Values{"name": {strings.Repeat("x", 129)}}), http.StatusUnprocessableEntity, "")
	p = b.post("/groups", url.Values{"name": {"Orphan"}, "parent": {"9999"}})
	expect(t, "missing parent", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "missing parent", p, "does not exist any more")
	if after := invChildren(t, e, 0) + "|" + invChildren(t, e, f.core); after != before {
		t.Errorf("refused creates changed the tree: %s → %s", before, after)
	}

	// Rename.
	p = b.post("/groups/"+invID(access.ID)+"/rename", url.Values{"name": {"Access layer"}})
	expect(t, "rename", p, http.StatusSeeOther, fmt.Sprintf("/groups?notice=renamed&focus=%d#group-%d", access.ID, access.ID))
	if a := invLastAudit(t, e, "group.update"); fmt.Sprint(a.Details["fields"]) != "[name]" || a.Details["name"] != "Access layer" {
		t.Errorf("rename audit %+v", a.Details)
	}
	p = b.post("/groups/"+invID(access.ID)+"/rename", url.Values{"name": {"BRANCH"}})
	expect(t, "rename to a taken name", p, http.StatusConflict, "")
	expectBody(t, "rename to a taken name", p, "A group named “BRANCH” already exists", `value="BRANCH"`)
	if invGroups(t, e)["Access layer"].ID != access.ID {
		t.Error("a refused rename changed the name")
	}

	// Move Branch under Access layer, then refuse Core into its own
	// descendant.
	p = b.post("/groups/"+invID(f.branch)+"/move", url.Values{"parent": {invID(access.ID)}})
	expect(t, "move", p, http.StatusSeeOther, "")
	if g := invGroups(t, e)["Branch"]; g.ParentID == nil || *g.ParentID != access.ID || g.Depth != 2 {
		t.Errorf("Branch after the move: %+v", g)
	}
	if a := invLastAudit(t, e, "group.update"); fmt.Sprint(a.Details["fields"]) != "[parent_id]" || a.Details["parent_id"] != float64(access.ID) {
		t.Errorf("move audit %+v", a.Details)
	}
	p = b.post("/groups/"+invID(f.core)+"/move", url.Values{"parent": {invID(f.branch)}})
	expect(t, "move into own subtree", p, http.StatusBadRequest, "")
	expectBody(t, "move into own subtree", p, "“Core” cannot be moved into itself or one of its subgroups")
	if g := invGroups(t, e)["Core"]; g.ParentID != nil {
		t.Error("Core moved into its own subtree")
	}
	// The move form does not even offer its own subtree.
	p = b.get("/groups/" + invID(f.core))
	if strings.Contains(p.body, `<option value="`+invID(f.branch)+`"`) || strings.Contains(p.body, `<option value="`+invID(access.ID)+`"`) {
		t.Error("the move form offers the group's own subtree")
	}
	// Back to the top level.
	expect(t, "move to top", b.post("/groups/"+invID(f.branch)+"/move", url.Values{"parent": {""}}), http.StatusSeeOther, "")
	if g := invGroups(t, e)["Branch"]; g.ParentID != nil || g.Depth != 0 || g.Path != "/"+invID(f.branch)+"/" {
		t.Errorf("Branch back at the top: %+v", g)
	}

	// Reorder among siblings: Core, Branch, Edge → Core, Edge, Branch.
	b.post("/groups", url.Values{"name": {"Edge"}, "parent": {""}})
	edge := invGroups(t, e)["Edge"]
	if got := invChildren(t, e, 0); got != "Core,Branch,Edge" {
		t.Fatalf("roots %s", got)
	}
	p = b.post("/groups/"+invID(edge.ID)+"/order", url.Values{"dir": {"up"}})
	expect(t, "move up", p, http.StatusSeeOther, fmt.Sprintf("/groups?notice=reordered&focus=%d#group-%d-up", edge.ID, edge.ID))
	if got := invChildren(t, e, 0); got != "Core,Edge,Branch" {
		t.Errorf("roots after moving Edge up: %s", got)
	}
	if a := invLastAudit(t, e, "group.update"); fmt.Sprint(a.Details["fields"]) != "[sort_order]" || a.TargetID != invID(edge.ID) {
		t.Errorf("reorder audit %+v", a)
	}
	p = b.get("/groups")
	if got, want := invTreeOrder(p.body), fmt.Sprintf("%d,%d,%d,%d", f.core, access.ID, edge.ID, f.branch); got != want {
		t.Errorf("page order %s, want %s", got, want)
	}
	// The first root cannot go up: its button is disabled, and a POST
	// changes nothing.
	expectBody(t, "first root", p, `id="group-`+invID(f.core)+`-up" class="inv-icon-button" title="Move Core up" disabled>`)
	n := len(e.auditEntries())
	expect(t, "up at the top", b.post("/groups/"+invID(f.core)+"/order", url.Values{"dir": {"up"}}), http.StatusSeeOther, "")
	if got := invChildren(t, e, 0); got != "Core,Edge,Branch" || len(e.auditEntries()) != n {
		t.Errorf("moving the first group up changed %s or audited", got)
	}
	expect(t, "bad direction", b.post("/groups/"+invID(edge.ID)+"/order", url.Values{"dir": {"left"}}), http.StatusBadRequest, "")
	expect(t, "down", b.post("/groups/"+invID(edge.ID)+"/order", url.Values{"dir": {"down"}}), http.StatusSeeOther, "")
	if got := invChildren(t, e, 0); got != "Core,Branch,Edge" {
		t.Errorf("roots after moving Edge down: %s", got)
	}

	// Delete: refused with subgroups, refused with devices, done when
	// empty.
	p = b.post("/groups/"+invID(f.core)+"/delete", nil)
	expect(t, "delete with subgroups", p, http.StatusConflict, "")
	expectBody(t, "delete with subgroups", p, "“Core” has subgroups. Move or delete them first")
	p = b.post("/groups/"+invID(f.branch)+"/delete", nil)
	expect(t, "delete with devices", p, http.StatusConflict, "")
	expectBody(t, "delete with devices", p, "2 device(s) still belong to “Branch”. Move them to another group or delete them first")
	p = b.post("/groups/"+invID(edge.ID)+"/delete", nil)
	expect(t, "delete empty", p, http.StatusSeeOther, "/groups?notice=deleted")
	if _, ok := invGroups(t, e)["Edge"]; ok {
		t.Error("Edge still exists")
	}
	if a := invLastAudit(t, e, "group.delete"); a.TargetID != invID(edge.ID) || a.Details["name"] != "Edge" {
		t.Errorf("delete audit %+v", a)
	}
	expectBody(t, "after delete", b.get("/groups?notice=deleted"), "The group has been deleted.")
	expect(t, "unknown group", b.get("/groups/9999"), http.StatusNotFound, "")
	expect(t, "bad id", b.get("/groups/x"), http.StatusNotFound, "")

	// Chinese.
	b.post("/lang", url.Values{"lang": {"zh"}, "next": {"/groups"}})
	expectBody(t, "Chinese groups", b.get("/groups"), "分组树", "创建分组", "3 台设备")
}

func TestGroupsFollowScope(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	ctx := context.Background()
	site, _ := e.store.CreateGroup(ctx, "Site", nil)
	north, _ := e.store.CreateGroup(ctx, "Site-North", &site.ID)
	rack, _ := e.store.CreateGroup(ctx, "Rack-1", &north.ID)
	south, _ := e.store.CreateGroup(ctx, "Site-South", &site.ID)
	if _, err := e.store.CreateDevice(ctx, db.Device{Name: "north-1", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &rack.ID, Encoding: "utf-8", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e.createUser("north", "north-password-1", auth.RoleOperator, false, north.ID)
	b := e.browser()
	b.mustLogin("north", "north-password-1")

	p := b.get("/groups")
	expect(t, "scoped tree", p, http.StatusOK, "")
	// Site shows as context: no link, no count, no buttons.
	expectBody(t, "scoped tree", p, `<a href="/groups/`+invID(north.ID)+`">Site-North</a>`, "(1 with subgroups)",
		`<a href="/groups/`+invID(rack.ID)+`">Rack-1</a>`, "Outside your groups", "Site")
	for _, hidden := range []string{"Core", "Branch", "Site-South", `href="/groups/` + invID(site.ID) + `"`, "Devices in no group",
		`action="/groups/` + invID(north.ID) + `/order"`, `<option value="">`} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the scoped tree shows %q", hidden)
		}
	}
	// Rack-1's siblings are all in scope: it may be reordered.
	expectBody(t, "scoped tree", p, `action="/groups/`+invID(rack.ID)+`/order"`)
	if got, want := invTreeOrder(p.body), fmt.Sprintf("%d,%d,%d", site.ID, north.ID, rack.ID); got != want {
		t.Errorf("scoped tree %s, want %s", got, want)
	}

	before := invChildren(t, e, 0) + "|" + invChildren(t, e, site.ID) + "|" + invChildren(t, e, north.ID)
	for _, c := range []struct {
		what, path string
		form       url.Values
	}{
		{"detail of another group", "", nil},
		{"create at the top", "/groups", url.Values{"name": {"Mine"}, "parent": {""}}},
		{"create under Core", "/groups", url.Values{"name": {"Mine"}, "parent": {invID(f.core)}}},
		{"create under the ancestor", "/groups", url.Values{"name": {"Mine"}, "parent": {invID(site.ID)}}},
		{"rename Core", "/groups/" + invID(f.core) + "/rename", url.Values{"name": {"Mine"}}},
		{"rename the ancestor", "/groups/" + invID(site.ID) + "/rename", url.Values{"name": {"Mine"}}},
		{"move Core", "/groups/" + invID(f.core) + "/move", url.Values{"parent": {invID(north.ID)}}},
		{"move Rack-1 out of scope", "/groups/" + invID(rack.ID) + "/move", url.Values{"parent": {invID(south.ID)}}},
		{"move Rack-1 to the top", "/groups/" + invID(rack.ID) + "/move", url.Values{"parent": {""}}},
		{"reorder the scope's root among foreign siblings", "/groups/" + invID(north.ID) + "/order", url.Values{"dir": {"down"}}},
		{"reorder Branch", "/groups/" + invID(f.branch) + "/order", url.Values{"dir": {"up"}}},
		{"delete Site-South", "/groups/" + invID(south.ID) + "/delete", nil},
	} {
		var p page
		if c.path == "" {
			p = b.get("/groups/" + invID(f.core))
		} else {
			p = b.post(c.path, c.form)
		}
		expect(t, c.what, p, http.StatusForbidden, "")
	}
	after := invChildren(t, e, 0) + "|" + invChildren(t, e, site.ID) + "|" + invChildren(t, e, north.ID)
	if after != before {
		t.Errorf("refused actions changed the tree: %s → %s", before, after)
	}
	if n := len(e.auditEntries()); n != 1 { // the sign-in
		t.Errorf("%d audit entries after refused actions, want only the sign-in", n)
	}

	// Within scope everything works.
	expect(t, "create in scope", b.post("/groups", url.Values{"name": {"Rack-2"}, "parent": {invID(north.ID)}}), http.StatusSeeOther, "")
	rack2 := invGroups(t, e)["Rack-2"]
	expect(t, "reorder in scope", b.post("/groups/"+invID(rack2.ID)+"/order", url.Values{"dir": {"up"}}), http.StatusSeeOther, "")
	if got := invChildren(t, e, north.ID); got != "Rack-2,Rack-1" {
		t.Errorf("Site-North's children %s", got)
	}
	expect(t, "move in scope", b.post("/groups/"+invID(rack2.ID)+"/move", url.Values{"parent": {invID(rack.ID)}}), http.StatusSeeOther, "")
	p = b.get("/groups/" + invID(rack.ID))
	expect(t, "detail in scope", p, http.StatusOK, "")
	// The move form offers only groups in scope, and no top level.
	if strings.Contains(p.body, `<option value="`+invID(site.ID)+`"`) || strings.Contains(p.body, `<option value="">`) {
		t.Error("the scoped move form offers a group out of scope or the top level")
	}
	expect(t, "delete in scope", b.post("/groups/"+invID(rack2.ID)+"/delete", nil), http.StatusSeeOther, "")
	// "Create a subgroup here" preselects the parent.
	expectBody(t, "create here", b.get("/groups?parent="+invID(rack.ID)), `<option value="`+invID(rack.ID)+`" selected>`)
}

func TestGroupsPermissionsAndCSRF(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	p := v.get("/groups")
	expect(t, "viewer tree", p, http.StatusOK, "")
	expectBody(t, "viewer tree", p, "Core", "3 devices")
	for _, hidden := range []string{`id="group-create"`, `/order"`, "<form method=\"post\" action=\"/groups"} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the viewer's tree shows %q", hidden)
		}
	}
	p = v.get("/groups/" + invID(f.core))
	expect(t, "viewer detail", p, http.StatusOK, "")
	for _, hidden := range []string{`id="group-rename"`, `id="group-move"`, `id="group-delete"`} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the viewer's group page shows %q", hidden)
		}
	}
	for path, form := range map[string]url.Values{
		"/groups":                              {"name": {"X"}, "parent": {""}},
		"/groups/" + invID(f.core) + "/rename": {"name": {"X"}},
		"/groups/" + invID(f.core) + "/move":   {"parent": {invID(f.branch)}},
		"/groups/" + invID(f.core) + "/order":  {"dir": {"down"}},
		"/groups/" + invID(f.core) + "/delete": nil,
	} {
		expect(t, "viewer POST "+path, v.post(path, form), http.StatusForbidden, "")
	}

	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	a := e.browser()
	a.mustLogin("root", "root-password-1")
	a.get("/groups")
	expect(t, "no token", a.post("/groups", url.Values{"name": {"X"}, "parent": {""}, "csrf": {""}}), http.StatusForbidden, "")
	expect(t, "wrong token", a.post("/groups/"+invID(f.core)+"/rename", url.Values{"name": {"X"}, "csrf": {"forged"}}), http.StatusForbidden, "")
	if g := invGroups(t, e); len(g) != 2 || g["Core"].ID != f.core {
		t.Errorf("refused posts changed the groups: %v", g)
	}
	if strings.Contains(invChildren(t, e, 0), "X") {
		t.Error("a group was created without a token")
	}
}

// invPrivateKey returns a fresh OpenSSH private key in PEM form, with a
// passphrase when one is given.
func invPrivateKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(key, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(key, "test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

func (e *env) invOpen(sealed []byte, purpose string) string {
	e.t.Helper()
	if sealed == nil {
		return "<nil>"
	}
	v, err := e.sealer.Open(sealed, purpose)
	if err != nil {
		e.t.Fatalf("open %s: %v", purpose, err)
	}
	return v
}

func invCredential(t *testing.T, e *env, name string) db.Credential {
	t.Helper()
	items, _, err := e.store.ListCredentials(context.Background(), 500, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range items {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no credential %q", name)
	return db.Credential{}
}

func TestCredentialsSecretsAreWriteOnly(t *testing.T) {
	e := newEnv(t)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	const (
		password = "Pw-first-Secret-7731"
		enable   = "En-first-Secret-8842"
		newPw    = "Pw-second-Secret-9953"
	)
	key := invPrivateKey(t, "")
	keyLine := strings.Split(key, "\n")[1] // a line of the key's body
	secrets := []string{password, enable, newPw, keyLine}
	var bodies []string
	keep := func(p page) page { bodies = append(bodies, p.body); return p }

	keep(b.get("/credentials/new"))
	p := keep(b.post("/credentials", url.Values{"name": {"core-login"}, "username": {" netops "}, "password": {password},
		"enable_password": {enable}, "private_key": {strings.ReplaceAll(key, "\n", "\r\n")}, "remarks": {"rotated yearly"}}))
	expect(t, "create", p, http.StatusSeeOther, "/credentials?notice=created")
	c := invCredential(t, e, "core-login")
	if c.Username != "netops" || e.invOpen(c.Password, secret.PurposePassword) != password ||
		e.invOpen(c.EnablePassword, secret.PurposeEnablePassword) != enable || e.invOpen(c.PrivateKey, secret.PurposePrivateKey) != key {
		t.Fatalf("stored credential does not open to what was typed: %+v", c)
	}
	if a := invLastAudit(t, e, "credential.create"); a.Details["name"] != "core-login" ||
		fmt.Sprint(a.Details["secrets"]) != "[password enable_password private_key]" {
		t.Errorf("create audit %+v", a.Details)
	}

	p = keep(b.get("/credentials?notice=created"))
	expectBody(t, "list", p, "The credential has been created.", `<a href="/credentials/`+invID(c.ID)+`">core-login</a>`, "netops",
		"rotated yearly")
	if n := strings.Count(p.body, `<span class="inv-set">Set</span>`); n != 3 {
		t.Errorf("list shows %d secrets set, want 3", n)
	}
	p = keep(b.get("/credentials/" + invID(c.ID)))
	expectBody(t, "edit form", p, `value="core-login"`, `value="netops"`, `name="clear_password"`, `name="clear_enable_password"`,
		`name="clear_private_key"`, "Leave the field blank to keep it")

	// Blank secrets keep what is stored, byte for byte.
	p = keep(b.post("/credentials/"+invID(c.ID), url.Values{"name": {"core-login"}, "username": {"netops2"}, "password": {""},
		"enable_password": {""}, "private_key": {""}, "remarks": {"rotated yearly"}}))
	expect(t, "edit keeping secrets", p, http.StatusSeeOther, "/credentials?notice=updated")
	kept := invCredential(t, e, "core-login")
	if kept.Username != "netops2" || string(kept.Password) != string(c.Password) ||
		string(kept.EnablePassword) != string(c.EnablePassword) || string(kept.PrivateKey) != string(c.PrivateKey) {
		t.Error("an edit with blank secrets changed them")
	}
	if a := invLastAudit(t, e, "credential.update"); fmt.Sprint(a.Details["fields"]) != "[username]" {
		t.Errorf("update audit %+v", a.Details)
	}

	// A new password replaces only the password; the box clears the
	// enable password.
	p = keep(b.post("/credentials/"+invID(c.ID), url.Values{"name": {"core-login"}, "username": {"netops2"}, "password": {newPw},
		"clear_enable_password": {"1"}, "remarks": {"rotated yearly"}}))
	expect(t, "replace and clear", p, http.StatusSeeOther, "/credentials?notice=updated")
	changed := invCredential(t, e, "core-login")
	if e.invOpen(changed.Password, secret.PurposePassword) != newPw || changed.EnablePassword != nil ||
		string(changed.PrivateKey) != string(c.PrivateKey) {
		t.Errorf("after replace and clear: password %q, enable %v", e.invOpen(changed.Password, secret.PurposePassword), changed.EnablePassword)
	}
	if a := invLastAudit(t, e, "credential.update"); fmt.Sprint(a.Details["fields"]) != "[password enable_password]" {
		t.Errorf("update audit %+v", a.Details)
	}
	p = keep(b.get("/credentials/" + invID(c.ID)))
	if strings.Contains(p.body, `name="clear_enable_password"`) {
		t.Error("the form offers to remove an enable password that is not stored")
	}

	// Refusals: nothing changes, and what was typed does not come back.
	n := len(e.auditEntries())
	for _, c2 := range []struct {
		what   string
		form   url.Values
		status int
		says   string
	}{
		{"set and clear", url.Values{"name": {"core-login"}, "password": {password}, "clear_password": {"1"}}, http.StatusUnprocessableEntity, "Do one or the other"},
		{"bad key", url.Values{"name": {"core-login"}, "password": {password}, "private_key": {"ssh-ed25519 AAAA public"}}, http.StatusUnprocessableEntity, "The private key is not readable"},
		{"key with passphrase", url.Values{"name": {"core-login"}, "enable_password": {enable}, "private_key": {invPrivateKey(t, "pass")}}, http.StatusUnprocessableEntity, "protected by a passphrase"},
		{"blank name", url.Values{"name": {" "}, "password": {password}}, http.StatusUnprocessableEntity, "Enter a name."},
		{"long password", url.Values{"name": {"core-login"}, "password": {strings.Repeat("p", 1025)}}, http.StatusUnprocessableEntity, "at most 1024 characters"},
	} {
		p := keep(b.post("/credentials/"+invID(c.ID), c2.form))
		expect(t, c2.what, p, c2.status, "")
		expectBody(t, c2.what, p, c2.says, "the secrets you typed were not kept")
	}
	if got := invCredential(t, e, "core-login"); string(got.Password) != string(changed.Password) || got.EnablePassword != nil {
		t.Error("a refused edit changed the credential")
	}
	if len(e.auditEntries()) != n {
		t.Error("a refused edit was audited")
	}
	keep(b.post("/credentials", url.Values{"name": {"other"}}))
	p = keep(b.post("/credentials", url.Values{"name": {"CORE-LOGIN"}, "password": {password}, "enable_password": {enable}}))
	expect(t, "duplicate name", p, http.StatusConflict, "")
	expectBody(t, "duplicate name", p, "A credential named “CORE-LOGIN” already exists", `value="CORE-LOGIN"`)
	p = keep(b.post("/credentials/"+invID(c.ID), url.Values{"name": {"other"}, "password": {password}}))
	expect(t, "rename to a taken name", p, http.StatusConflict, "")

	// Delete: refused while a device uses it.
	ctx := context.Background()
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
		CredentialID: &c.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	expectBody(t, "list with a device", keep(b.get("/credentials")), `<td class="num">1</td>`)
	p = keep(b.post("/credentials/"+invID(c.ID)+"/delete", nil))
	expect(t, "delete in use", p, http.StatusConflict, "")
	expectBody(t, "delete in use", p, "Devices still log in with “core-login”. Give them another credential first")
	if err := e.store.DeleteDevice(ctx, dev.ID); err != nil {
		t.Fatal(err)
	}
	p = keep(b.post("/credentials/"+invID(c.ID)+"/delete", nil))
	expect(t, "delete", p, http.StatusSeeOther, "/credentials?notice=deleted")
	if a := invLastAudit(t, e, "credential.delete"); a.TargetID != invID(c.ID) {
		t.Errorf("delete audit %+v", a)
	}
	expect(t, "deleted", b.get("/credentials/"+invID(c.ID)), http.StatusNotFound, "")

	// No secret anywhere: pages, logs, audit details.
	var audit strings.Builder
	for _, a := range e.auditEntries() {
		fmt.Fprintf(&audit, "%v\n", a.Details)
	}
	for _, s := range secrets {
		for i, body := range bodies {
			if strings.Contains(body, s) {
				t.Errorf("page %d holds the secret %q", i, s)
			}
		}
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the log holds the secret %q", s)
		}
		if strings.Contains(audit.String(), s) {
			t.Errorf("the audit log holds the secret %q", s)
		}
	}
}

func TestCredentialsPermissionsAndPaging(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := 1; i <= 120; i++ {
		if _, err := e.store.CreateCredential(ctx, db.Credential{Name: fmt.Sprintf("cred-%03d", i), Username: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	first := invCredential(t, e, "cred-001")
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")

	p := v.get("/credentials")
	expect(t, "page 1", p, http.StatusOK, "")
	if rows := strings.Count(p.body, `<th scope="row"><a href="/credentials/`); rows != 50 {
		t.Errorf("page 1 has %d rows, want 50", rows)
	}
	expectBody(t, "page 1", p, "1–50 of 120", "Page 1 of 3", `href="/credentials?page=2" rel="next"`, "cred-050")
	if strings.Contains(p.body, "cred-051") || strings.Contains(p.body, `rel="prev"`) {
		t.Error("page 1 shows a row of page 2 or a previous link")
	}
	p = v.get("/credentials?page=3")
	expectBody(t, "page 3", p, "101–120 of 120", `href="/credentials?page=2" rel="prev"`, "cred-120")
	expect(t, "past the end", v.get("/credentials?page=9"), http.StatusSeeOther, "/credentials?page=3")

	// The viewer sees no button and is refused every change.
	if strings.Contains(p.body, `id="credential-new"`) {
		t.Error("the viewer sees the new credential button")
	}
	p = v.get("/credentials/" + invID(first.ID))
	expect(t, "viewer detail", p, http.StatusOK, "")
	expectBody(t, "viewer detail", p, `<dl class="inv-facts">`)
	if strings.Contains(p.body, `id="credential-form"`) || strings.Contains(p.body, `id="credential-delete"`) {
		t.Error("the viewer sees the edit or delete form")
	}
	expect(t, "viewer new form", v.get("/credentials/new"), http.StatusForbidden, "")
	expect(t, "viewer create", v.post("/credentials", url.Values{"name": {"x"}}), http.StatusForbidden, "")
	expect(t, "viewer update", v.post("/credentials/"+invID(first.ID), url.Values{"name": {"x"}}), http.StatusForbidden, "")
	expect(t, "viewer delete", v.post("/credentials/"+invID(first.ID)+"/delete", nil), http.StatusForbidden, "")

	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	a := e.browser()
	a.mustLogin("root", "root-password-1")
	a.get("/credentials/new")
	expect(t, "create without token", a.post("/credentials", url.Values{"name": {"x"}, "csrf": {""}}), http.StatusForbidden, "")
	if _, total, _ := e.store.ListCredentials(ctx, 1, 0); total != 120 {
		t.Errorf("%d credentials after refused posts, want 120", total)
	}
	a.post("/lang", url.Values{"lang": {"zh"}, "next": {"/credentials"}})
	expectBody(t, "Chinese credentials", a.get("/credentials"), "新建凭据", "第 1 页，共 3 页")
}

func invTemplate(t *testing.T, e *env, name string) db.Template {
	t.Helper()
	items, _, err := e.store.ListTemplates(context.Background(), 500, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range items {
		if tpl.Name == name {
			return tpl
		}
	}
	t.Fatalf("no template %q", name)
	return db.Template{}
}

func TestTemplatesCRUDAndPlatformDefaults(t *testing.T) {
	e := newEnv(t)
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")

	// Every platform's defaults are listed, with a link to start from them.
	p := b.get("/templates")
	expect(t, "templates page", p, http.StatusOK, "")
	expectBody(t, "templates page", p, "No templates yet", "more system:running-config", "/export show-sensitive",
		`href="/templates/new?platform=cisco_asa"`)
	for _, id := range driver.IDs() {
		if !strings.Contains(p.body, `<tr data-platform="`+id+`">`) {
			t.Errorf("the defaults table lacks %s", id)
		}
	}
	p = b.get("/templates/new?platform=cisco_asa")
	expectBody(t, "prefilled form", p, `<option value="cisco_asa" data-name="Cisco ASA" data-defaults="more system:running-config" selected>`,
		`name="commands" rows="10" class="inv-code" spellcheck="false" aria-describedby="template-commands-hint template-defaults-box">more system:running-config</textarea>`,
		`<pre class="inv-commands" id="template-defaults">more system:running-config</pre>`)
	expectBody(t, "plain form", b.get("/templates/new"), `<option value="" data-name="" data-defaults="">Choose a platform</option>`,
		`id="template-defaults-none">`)

	// Blank commands become the platform's defaults; CRLF becomes LF.
	p = b.post("/templates", url.Values{"name": {"junos"}, "platform": {"juniper_junos"}, "commands": {"  \r\n "}})
	expect(t, "create with defaults", p, http.StatusSeeOther, "/templates?notice=created")
	if tpl := invTemplate(t, e, "junos"); tpl.Commands != driver.DefaultCommands("juniper_junos") {
		t.Errorf("blank commands stored as %q", tpl.Commands)
	}
	p = b.post("/templates", url.Values{"name": {" asa-full "}, "platform": {"cisco_asa"}, "commands": {"show version\r\nmore system:running-config"}})
	expect(t, "create", p, http.StatusSeeOther, "/templates?notice=created")
	tpl := invTemplate(t, e, "asa-full")
	if tpl.Commands != "show version\nmore system:running-config" || tpl.Platform != "cisco_asa" {
		t.Errorf("stored %+v", tpl)
	}
	if a := invLastAudit(t, e, "template.create"); a.TargetID != invID(tpl.ID) || a.Details["platform"] != "cisco_asa" || a.Details["name"] != "asa-full" {
		t.Errorf("create audit %+v", a)
	}
	expectBody(t, "list", b.get("/templates?notice=created"), "The template has been created.",
		`<a href="/templates/`+invID(tpl.ID)+`">asa-full</a>`, "Cisco ASA")

	// Refusals.
	for _, c := range []struct {
		what string
		form url.Values
		says string
	}{
		{"unknown platform", url.Values{"name": {"x"}, "platform": {"cisco_nope"}}, "Choose the platform the commands are for."},
		{"no platform", url.Values{"name": {"x"}, "platform": {""}}, "Choose the platform"},
		{"blank name", url.Values{"name": {" "}, "platform": {"vyos"}}, "Enter a name."},
		{"too long", url.Values{"name": {"x"}, "platform": {"vyos"}, "commands": {strings.Repeat("a", 65537)}}, "at most 64 KiB"},
	} {
		p := b.post("/templates", c.form)
		expect(t, c.what, p, http.StatusUnprocessableEntity, "")
		expectBody(t, c.what, p, c.says)
	}
	if _, total, _ := e.store.ListTemplates(context.Background(), 1, 0); total != 2 {
		t.Errorf("%d templates after refused creates, want 2", total)
	}

	// Edit.
	p = b.get("/templates/" + invID(tpl.ID))
	expectBody(t, "edit form", p, `value="asa-full"`, "show version\nmore system:running-config</textarea>", "No device uses this template.")
	p = b.post("/templates/"+invID(tpl.ID), url.Values{"name": {"asa"}, "platform": {"cisco_asa"}, "commands": {"show version\nmore system:running-config"}})
	expect(t, "rename", p, http.StatusSeeOther, "/templates?notice=updated")
	if a := invLastAudit(t, e, "template.update"); fmt.Sprint(a.Details["fields"]) != "[name]" {
		t.Errorf("update audit %+v", a.Details)
	}
	p = b.post("/templates/"+invID(tpl.ID), url.Values{"name": {"asa"}, "platform": {"fortinet"}, "commands": {""}})
	expect(t, "new platform, blank commands", p, http.StatusSeeOther, "")
	if got := invTemplate(t, e, "asa"); got.Platform != "fortinet" || got.Commands != driver.DefaultCommands("fortinet") {
		t.Errorf("after the platform change %+v", got)
	}
	expect(t, "unchanged", b.post("/templates/"+invID(tpl.ID), url.Values{"name": {"asa"}, "platform": {"fortinet"}, "commands": {"show"}}),
		http.StatusSeeOther, "/templates/"+invID(tpl.ID)+"?notice=unchanged")
	p = b.post("/templates/"+invID(tpl.ID), url.Values{"name": {"asa"}, "platform": {"nope"}})
	expect(t, "edit to unknown platform", p, http.StatusUnprocessableEntity, "")

	// Delete: a used template needs the fall-back box.
	ctx := context.Background()
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: "fw1", Host: "192.0.2.1", Port: 22, Platform: "fortinet", LoginMethod: "ssh",
		TemplateID: &tpl.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	p = b.get("/templates/" + invID(tpl.ID))
	expectBody(t, "used template", p, "Devices using it that you can see: 1", `name="fallback"`)
	p = b.post("/templates/"+invID(tpl.ID)+"/delete", nil)
	expect(t, "delete in use", p, http.StatusConflict, "")
	expectBody(t, "delete in use", p, "Devices use “asa”. Deleting it makes them back up with their platform&#39;s default commands")
	invTemplate(t, e, "asa")
	expect(t, "delete with fallback", b.post("/templates/"+invID(tpl.ID)+"/delete", url.Values{"fallback": {"1"}}), http.StatusSeeOther, "/templates?notice=deleted")
	if d, _ := e.store.GetDevice(ctx, dev.ID); d.TemplateID != nil {
		t.Error("the device still names the deleted template")
	}
	if a := invLastAudit(t, e, "template.delete"); a.TargetID != invID(tpl.ID) || a.Details["devices_fell_back"] != true {
		t.Errorf("delete audit %+v", a)
	}
	junos := invTemplate(t, e, "junos")
	expect(t, "delete unused", b.post("/templates/"+invID(junos.ID)+"/delete", nil), http.StatusSeeOther, "/templates?notice=deleted")

	b.post("/lang", url.Values{"lang": {"zh"}, "next": {"/templates"}})
	expectBody(t, "Chinese templates", b.get("/templates"), "各平台默认命令", "以此为起点")
}

func TestTemplatesPermissions(t *testing.T) {
	e := newEnv(t)
	tpl, err := e.store.CreateTemplate(context.Background(), db.Template{Name: "ios", Platform: "cisco_ios",
		Commands: "a\nb\nc\nd\ne"})
	if err != nil {
		t.Fatal(err)
	}
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	p := v.get("/templates")
	expect(t, "viewer list", p, http.StatusOK, "")
	expectBody(t, "viewer list", p, "and 2 more", "show running-config")
	for _, hidden := range []string{`id="template-new"`, `/templates/new?platform=`} {
		if strings.Contains(p.body, hidden) {
			t.Errorf("the viewer's list shows %q", hidden)
		}
	}
	p = v.get("/templates/" + invID(tpl.ID))
	expectBody(t, "viewer detail", p, `<pre class="inv-commands inv-commands-full" id="template-commands-view">a
b
c
d
e</pre>`)
	if strings.Contains(p.body, `id="template-form"`) || strings.Contains(p.body, `id="template-delete"`) {
		t.Error("the viewer sees the edit or delete form")
	}
	expect(t, "viewer new", v.get("/templates/new"), http.StatusForbidden, "")
	expect(t, "viewer create", v.post("/templates", url.Values{"name": {"x"}, "platform": {"vyos"}}), http.StatusForbidden, "")
	expect(t, "viewer update", v.post("/templates/"+invID(tpl.ID), url.Values{"name": {"x"}, "platform": {"vyos"}}), http.StatusForbidden, "")
	expect(t, "viewer delete", v.post("/templates/"+invID(tpl.ID)+"/delete", nil), http.StatusForbidden, "")

	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	a := e.browser()
	a.mustLogin("root", "root-password-1")
	a.get("/templates")
	expect(t, "delete without token", a.post("/templates/"+invID(tpl.ID)+"/delete", url.Values{"csrf": {""}}), http.StatusForbidden, "")
	invTemplate(t, e, "ios")
}
