package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/restore"
	"backupd/db"
)

// changeSetFixture is the restores' fixture (edge-frr in Core,
// branch-frr in Branch, both simulated FRR routers; core-sw, a Cisco
// switch in Core that cannot take a push) with the people of change
// sets: pat and pia write them (everywhere), bo approves them (and
// cannot write them), bp writes and approves within Branch only, and the
// viewer does neither.
type changeSetFixture struct {
	*restoreFixture
}

func newChangeSetFixture(t *testing.T) *changeSetFixture {
	t.Helper()
	f := &changeSetFixture{newRestoreFixture(t)}
	ctx := context.Background()
	for name, perms := range map[string][]string{
		"Pushers":        {auth.PermPush},
		"Branch pushers": {auth.PermPush, auth.PermApprove},
	} {
		if _, err := f.e.store.CreateRole(ctx, name, "", append([]string{"devices.view", "backups.view"}, perms...)); err != nil {
			t.Fatal(err)
		}
	}
	f.e.createUser("pat", restorePassword, "Pushers", true)
	f.e.createUser("pia", restorePassword, "Pushers", true)
	f.e.createUser("bp", restorePassword, "Branch pushers", false, f.branch)
	return f
}

// changeSetForm is a good form for the devices named, one a line.
func changeSetForm(name string, devices ...string) url.Values {
	return url.Values{"name": {name}, "body": {"ip prefix-list BACKUPD-TEST seq 5 permit 10.9.0.0/16\n"},
		"devices": {strings.Join(devices, "\n")}, "concurrency": {"5"}, "stop_after": {"1"}}
}

// createChangeSet posts the form from the new change set's page.
func (b *browser) createChangeSet(form url.Values) page {
	b.e.t.Helper()
	b.get("/change-sets/new")
	return b.post("/change-sets", form)
}

var changeSetLocation = regexp.MustCompile(`^/change-sets/(\d+)\?done=created$`)

// created is the change set a successful form led to.
func created(t *testing.T, p page) int64 {
	t.Helper()
	m := changeSetLocation.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d Location %q, want 303 to a change set:\n%s", p.status, p.header.Get("Location"), text(p))
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

func changeSetPath(id int64) string { return "/change-sets/" + strconv.FormatInt(id, 10) }

// changeSetUntil ticks the dispatcher, as the leader does, until change
// set id is in one of states.
func changeSetUntil(t testing.TB, e *env, id int64, limit time.Duration, states ...string) db.ChangeSet {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for {
		if err := e.dispatcher.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := e.store.ChangeSet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(states, c.State) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("change set %d is %s after %s, want %v", id, c.State, limit, states)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func changeSetCount(t *testing.T, e *env) int {
	t.Helper()
	sets, _, err := e.store.ListChangeSets(context.Background(), db.ChangeSetFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return len(sets)
}

// Who may do what: the viewer neither sees nor writes change sets;
// bo, who may approve, sees the list and a set but may not write one;
// pat, who may push, writes one from the form, whose group list holds
// the groups of pat's scope only.
func TestChangeSetPermissions(t *testing.T) {
	f := newChangeSetFixture(t)
	viewer := f.signedIn("viewer")
	if strings.Contains(viewer.get("/dashboard").body, `href="/change-sets"`) {
		t.Error("the viewer has Change sets in the navigation")
	}
	expect(t, "viewer list", viewer.get("/change-sets"), http.StatusForbidden, "")
	expect(t, "viewer form", viewer.get("/change-sets/new"), http.StatusForbidden, "")
	expect(t, "viewer create", viewer.post("/change-sets", changeSetForm("x", "edge-frr")), http.StatusForbidden, "")

	pat := f.signedIn("pat")
	expectBody(t, "pat's navigation", pat.get("/dashboard"), `href="/change-sets"`)
	p := pat.get("/change-sets")
	expect(t, "pat list", p, http.StatusOK, "")
	expectBody(t, "pat list", p, `id="changesets-new"`)
	p = pat.get("/change-sets/new")
	expect(t, "pat form", p, http.StatusOK, "")
	expectBody(t, "pat form", p, `id="changeset-form"`, `>Core</option>`, `>Branch</option>`, `name="concurrency" type="number" min="1" max="50" step="1" value="5"`,
		`name="stop_after" type="number" min="0" step="1" value="1"`, `class="bs-mono cs-code"`)
	expectText(t, "pat form", p, "{{.Name}}", "{{.Host}}", "{{.Platform}}", "{{.Vars.KEY}}")
	id := created(t, pat.createChangeSet(changeSetForm("prefix list", "edge-frr", "branch-frr")))

	bo := f.signedIn("bo")
	p = bo.get("/dashboard")
	expectBody(t, "bo's navigation", p, `href="/change-sets"`)
	p = bo.get("/change-sets")
	expect(t, "bo list", p, http.StatusOK, "")
	expectBody(t, "bo list", p, `data-change-set="`+strconv.FormatInt(id, 10)+`"`)
	if strings.Contains(p.body, `id="changesets-new"`) {
		t.Error("bo, who may not push, is offered a new change set")
	}
	expect(t, "bo form", bo.get("/change-sets/new"), http.StatusForbidden, "")
	expect(t, "bo create", bo.post("/change-sets", changeSetForm("x", "edge-frr")), http.StatusForbidden, "")
	p = bo.get(changeSetPath(id))
	expect(t, "bo's view of the set", p, http.StatusOK, "")
	expectBody(t, "bo's view of the set", p, `id="changeset-approve"`)
	if strings.Contains(p.body, `id="changeset-dry-run"`) {
		t.Error("bo, who may not push, may run the dry run")
	}
	// pat may not approve: no button, and the form is refused.
	p = pat.get(changeSetPath(id))
	if strings.Contains(p.body, `id="changeset-approve"`) {
		t.Error("pat, who may not approve, has an approve button")
	}
	expectText(t, "pat's view", p, "It waits for someone allowed to approve change sets")
	expect(t, "pat approves", pat.post(changeSetPath(id)+"/approve", nil), http.StatusForbidden, "")
	expect(t, "bo approves", bo.post(changeSetPath(id)+"/approve", url.Values{"note": {"looks right"}}),
		http.StatusSeeOther, changeSetPath(id)+"?done=approved")
	if c, _ := f.e.store.ChangeSet(context.Background(), id); c.State != db.ChangeSetRunning || deref(c.DecidedByName) != "bo" {
		t.Errorf("after bo's approval the set is %s, decided by %q", c.State, deref(c.DecidedByName))
	}
}

// A change set with one device outside the user's groups does not exist
// for the user: not in the list, 404 for its page, its devices' pages,
// its JSON and its forms. A set of the user's devices only is theirs.
func TestChangeSetScope(t *testing.T) {
	f := newChangeSetFixture(t)
	pat := f.signedIn("pat")
	both := created(t, pat.createChangeSet(changeSetForm("both routers", "edge-frr", "branch-frr")))
	branchOnly := created(t, pat.createChangeSet(changeSetForm("branch router", "branch-frr")))
	targets, err := f.e.store.ChangeSetTargets(context.Background(), both)
	if err != nil {
		t.Fatal(err)
	}

	bp := f.signedIn("bp")
	p := bp.get("/change-sets")
	expect(t, "bp list", p, http.StatusOK, "")
	if strings.Contains(p.body, `data-change-set="`+strconv.FormatInt(both, 10)+`"`) {
		t.Error("the list shows bp a change set with a device outside bp's groups")
	}
	expectBody(t, "bp list", p, `data-change-set="`+strconv.FormatInt(branchOnly, 10)+`"`)
	for _, path := range []string{changeSetPath(both), changeSetPath(both) + "/devices/" + strconv.FormatInt(targets[1].ID, 10)} {
		expect(t, "bp GET "+path, bp.get(path), http.StatusNotFound, "")
	}
	expect(t, "bp's JSON", bp.jobsCall(http.MethodGet, "/api"+changeSetPath(both), false), http.StatusNotFound, "")
	bp.get(changeSetPath(branchOnly))
	for _, move := range []string{"/approve", "/cancel", "/dry-run"} {
		expect(t, "bp POST "+move, bp.post(changeSetPath(both)+move, nil), http.StatusNotFound, "")
	}
	if c, _ := f.e.store.ChangeSet(context.Background(), both); c.State != db.ChangeSetReady {
		t.Errorf("the set out of bp's scope is %s", c.State)
	}
	expect(t, "bp's own set", bp.get(changeSetPath(branchOnly)), http.StatusOK, "")
	// A target of another set is not a device of this one.
	expect(t, "another set's target", pat.get(changeSetPath(branchOnly)+"/devices/"+strconv.FormatInt(targets[0].ID, 10)),
		http.StatusNotFound, "")
	for _, bad := range []string{"/change-sets/abc", "/change-sets/0", "/change-sets/999999", changeSetPath(both) + "/devices/x"} {
		expect(t, "GET "+bad, pat.get(bad), http.StatusNotFound, "")
	}

	// bp's form: Core is not a choice, and names outside Branch are as
	// unknown as names of no device.
	p = bp.get("/change-sets/new")
	if strings.Contains(p.body, `>Core</option>`) || !strings.Contains(p.body, `>Branch</option>`) {
		t.Errorf("bp's group choices:\n%s", p.body)
	}
	form := changeSetForm("reach out", "branch-frr", "edge-frr", "no-such-router")
	p = bp.post("/change-sets", form)
	expect(t, "bp names edge-frr", p, http.StatusUnprocessableEntity, "")
	expectText(t, "bp names edge-frr", p, "2 device names match no device you can see: edge-frr, no-such-router")
	form = changeSetForm("reach out", "branch-frr")
	form.Set("group", strconv.FormatInt(f.core, 10))
	p = bp.post("/change-sets", form)
	expect(t, "bp picks Core", p, http.StatusUnprocessableEntity, "")
	expectText(t, "bp picks Core", p, "Choose one of the device groups listed.")
	if n := changeSetCount(t, f.e); n != 2 {
		t.Errorf("%d change sets after bp's refused forms", n)
	}
}

// Every refusal of the form is a sentence by its field with a 4xx, the
// form as typed, and nothing stored: in English and in Chinese.
func TestChangeSetFormRefusals(t *testing.T) {
	f := newChangeSetFixture(t)
	pat := f.signedIn("pat")
	pat.get("/change-sets/new")
	cases := []struct {
		name string
		edit func(url.Values)
		want string
		kept string
	}{
		{"no name", func(v url.Values) { v.Set("name", "  ") }, "Give the change set a name.", ""},
		{"long name", func(v url.Values) { v.Set("name", strings.Repeat("n", 201)) }, "The name can be at most 200 characters.", strings.Repeat("n", 201)},
		{"no body", func(v url.Values) { v.Set("body", "\n \n") }, "Write the lines to send.", ""},
		{"template that does not parse", func(v url.Values) {
			v.Set("template", "1")
			v.Set("body", "router bgp 65001\n neighbor {{.Vars.peer remote-as 65000\n")
		}, "The template does not parse:", "neighbor {{.Vars.peer remote-as 65000"},
		{"control character", func(v url.Values) { v.Set("body", "hostname a\x07b\n") }, "The lines were refused: line 1 holds a control character.", ""},
		{"variables without =", func(v url.Values) { v.Set("variables", "peer=192.0.2.1\njust words") },
			"Variables, line 2: write KEY=VALUE.", "just words"},
		{"variable key", func(v url.Values) { v.Set("variables", "9lives=x") }, "“9lives” is not a key", "9lives=x"},
		{"variable twice", func(v url.Values) { v.Set("variables", "a=1\na=2") }, "The variable a is set twice.", "a=2"},
		{"no devices", func(v url.Values) { v.Set("devices", "\n , \n") }, "Choose a device group or name at least one device.", ""},
		{"unknown devices", func(v url.Values) { v.Set("devices", "edge-frr\nghost-1\nghost-2") },
			"2 device names match no device you can see: ghost-1, ghost-2", "ghost-2"},
		{"unknown group", func(v url.Values) { v.Set("group", "999999") }, "Choose one of the device groups listed.", ""},
		{"bad group", func(v url.Values) { v.Set("group", "core") }, "Choose one of the device groups listed.", ""},
		{"concurrency 0", func(v url.Values) { v.Set("concurrency", "0") }, "Devices at once: a whole number from 1 to 50.", `value="0"`},
		{"concurrency 51", func(v url.Values) { v.Set("concurrency", "51") }, "Devices at once: a whole number from 1 to 50.", `value="51"`},
		{"concurrency words", func(v url.Values) { v.Set("concurrency", "many") }, "Devices at once: a whole number from 1 to 50.", `value="many"`},
		{"stop after -1", func(v url.Values) { v.Set("stop_after", "-1") }, "Stop after failed devices: a whole number from 0 to 10000.", `value="-1"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := changeSetForm("refused "+tc.name, "edge-frr")
			form.Set("variables", "keep=this")
			tc.edit(form)
			p := pat.post("/change-sets", form)
			expect(t, tc.name, p, http.StatusUnprocessableEntity, "")
			expectText(t, tc.name, p, tc.want, "The change set was not created:")
			expectBody(t, tc.name, p, `id="changeset-form"`, `aria-invalid="true"`)
			if tc.kept != "" {
				expectText(t, tc.name+": kept as typed", p, tc.kept)
			}
			if form.Get("variables") == "keep=this" {
				expectText(t, tc.name+": variables kept", p, "keep=this")
			}
		})
	}
	pat.header.Set("Accept-Language", "zh-CN")
	form := changeSetForm("中文", "ghost-1")
	form.Set("concurrency", "0")
	p := pat.post("/change-sets", form)
	expect(t, "zh", p, http.StatusUnprocessableEntity, "")
	expectText(t, "zh", p, "未能创建变更集：", "有 1 个设备名称与你可见的设备都不匹配：ghost-1", "同时推送的设备数：须为 1 到 50 之间的整数。")
	pat.header.Del("Accept-Language")
	if n := changeSetCount(t, f.e); n != 0 {
		t.Errorf("%d change sets stored by refused forms", n)
	}
	// A group's devices and names together, each once, in that order.
	form = changeSetForm("group and names", "branch-frr", "EDGE-FRR")
	form.Set("group", strconv.FormatInt(f.branch, 10))
	id := created(t, pat.createChangeSet(form))
	targets, err := f.e.store.ChangeSetTargets(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].DeviceName != "branch-frr" || targets[1].DeviceName != "edge-frr" {
		t.Errorf("targets %+v", targets)
	}
}

// The dry run per device: the lines each would be sent, or why not (a
// platform that cannot take a push, a template variable a device
// lacks), and a set with any such device cannot be approved.
func TestChangeSetDryRunReport(t *testing.T) {
	f := newChangeSetFixture(t)
	root := f.signedIn("root")
	form := changeSetForm("descriptions", "edge-frr", "core-sw")
	form.Set("template", "1")
	form.Set("body", "router bgp 65001\n neighbor 192.0.2.10 description {{.Name}}-{{.Vars.site}}\n")
	form.Set("variables", "site=ams")
	id := created(t, root.createChangeSet(form))
	p := root.get(changeSetPath(id) + "?done=created")
	expect(t, "draft", p, http.StatusOK, "")
	expectText(t, "draft", p, "Change set created and dry-run.", "Draft: dry run incomplete", "Template as written",
		" neighbor 192.0.2.10 description {{.Name}}-{{.Vars.site}}", "site", "ams",
		" neighbor 192.0.2.10 description edge-frr-ams", "Lines (2)",
		"This device's platform cannot take a push.", "platform hp_procurve cannot take a push",
		"could not render the lines for 1 devices")
	if strings.Contains(p.body, `id="changeset-approve"`) {
		t.Error("a draft can be approved")
	}
	expectBody(t, "draft", p, `id="changeset-dry-run"`, `id="changeset-cancel"`)

	form = changeSetForm("missing variable", "edge-frr")
	form.Set("template", "1")
	form.Set("body", "router bgp 65001\n neighbor {{.Vars.peer}} remote-as 65000\n")
	id = created(t, root.createChangeSet(form))
	p = root.get(changeSetPath(id))
	expectText(t, "missing variable", p, "The template cannot be rendered for this device:", `map has no entry for key "peer"`)

	// Dry-run again once the switch is gone from the set is not possible,
	// but the button does run it: the draft stays a draft.
	root.get(changeSetPath(id))
	expect(t, "dry run again", root.post(changeSetPath(id)+"/dry-run", nil), http.StatusSeeOther, changeSetPath(id)+"?done=dry_run")
	expectText(t, "dry run again", root.get(changeSetPath(id)+"?done=dry_run"), "The dry run was run again.", "Draft: dry run incomplete")

	// A banner cannot be sent line by line to a switch that takes
	// pushes as a merge: the dry run says so, in the page's language.
	if _, err := f.e.store.CreateDevice(context.Background(), db.Device{Name: "acc-ios", Host: "192.0.2.8", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	form = changeSetForm("banner", "acc-ios")
	form.Set("body", "banner motd ^C\nAuthorised access only\n^C\n")
	id = created(t, root.createChangeSet(form))
	expectText(t, "banner", root.get(changeSetPath(id)), "Some lines cannot be sent one by one on this platform",
		"lines 1-3 of the lines to send are a banner", "Draft: dry run incomplete")

	// A device disabled since: the dry run says so, and nothing goes to it.
	id = created(t, root.createChangeSet(changeSetForm("disabled later", "edge-frr")))
	if _, err := f.e.store.UpdateDevice(context.Background(), f.edge, func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	root.get(changeSetPath(id))
	expect(t, "dry run of a disabled device", root.post(changeSetPath(id)+"/dry-run", nil), http.StatusSeeOther, changeSetPath(id)+"?done=dry_run")
	expectText(t, "dry run of a disabled device", root.get(changeSetPath(id)), "This device is disabled: enable it to push to it",
		"Draft: dry run incomplete")
}

// Every form refuses a request without the page's CSRF token, and
// nothing changes.
func TestChangeSetFormsNeedCSRF(t *testing.T) {
	f := newChangeSetFixture(t)
	root := f.signedIn("root")
	id := created(t, root.createChangeSet(changeSetForm("csrf", "edge-frr")))
	root.get(changeSetPath(id))
	for _, path := range []string{"/change-sets", changeSetPath(id) + "/approve", changeSetPath(id) + "/cancel", changeSetPath(id) + "/dry-run"} {
		for _, token := range []string{"", "not-the-token"} {
			form := changeSetForm("csrf again", "edge-frr")
			form.Set("csrf", token)
			expect(t, "POST "+path+" with token "+strconv.Quote(token), root.post(path, form), http.StatusForbidden, "")
		}
	}
	if c, _ := f.e.store.ChangeSet(context.Background(), id); c.State != db.ChangeSetReady {
		t.Errorf("the set is %s", c.State)
	}
	if n := changeSetCount(t, f.e); n != 1 {
		t.Errorf("%d change sets", n)
	}
}

// Four eyes: the writer's own approval is refused with a sentence (the
// button shows disabled, saying why); another pusher may not cancel it,
// the writer may; an approver approves another, which then runs on both
// routers to "done", each device's result with the device's answer,
// its backups before and after, and its session on its own page.
func TestChangeSetFourEyesCancelAndRun(t *testing.T) {
	f := newChangeSetFixture(t)
	e := f.e
	ctx := context.Background()
	if err := restore.SaveSettings(ctx, e.store, restore.Settings{FourEyes: true, PendingHours: 24, ApprovedHours: 1}); err != nil {
		t.Fatal(err)
	}
	root := f.signedIn("root")
	id := created(t, root.createChangeSet(changeSetForm("four eyes", "edge-frr")))
	p := root.get(changeSetPath(id))
	expectBody(t, "writer's page", p, `id="changeset-four-eyes"`, `disabled aria-describedby="changeset-four-eyes"`)
	p = root.post(changeSetPath(id)+"/approve", url.Values{"note": {"mine"}})
	expect(t, "four eyes", p, http.StatusForbidden, "")
	expectText(t, "four eyes", p, "Four eyes are required: someone other than the person who wrote this change set must approve it.")
	expectBody(t, "four eyes keeps the note", p, ">mine</textarea>")
	root.header.Set("Accept-Language", "zh-CN")
	p = root.post(changeSetPath(id)+"/approve", nil)
	expectText(t, "four eyes, zh", p, "已启用双人审批：必须由创建人以外的人批准此变更集。", "等待审批")
	root.header.Del("Accept-Language")
	p = root.post(changeSetPath(id)+"/approve", url.Values{"note": {strings.Repeat("n", 2001)}})
	expect(t, "long note", p, http.StatusUnprocessableEntity, "")
	expectText(t, "long note", p, "The note can be at most 2000 characters.")
	if c, _ := e.store.ChangeSet(ctx, id); c.State != db.ChangeSetReady {
		t.Fatalf("after refused approvals the set is %s", c.State)
	}

	// Cancel: not someone else's (without approve), the writer's own.
	pat := f.signedIn("pat")
	mineID := created(t, pat.createChangeSet(changeSetForm("pat's", "edge-frr")))
	pia := f.signedIn("pia")
	p = pia.get(changeSetPath(mineID))
	if strings.Contains(p.body, `id="changeset-cancel"`) {
		t.Error("pia is offered to cancel pat's change set")
	}
	p = pia.post(changeSetPath(mineID)+"/cancel", nil)
	expect(t, "pia cancels pat's", p, http.StatusForbidden, "")
	expectText(t, "pia cancels pat's", p, "You may cancel only the change sets you wrote")
	pat.get(changeSetPath(mineID))
	expect(t, "pat cancels", pat.post(changeSetPath(mineID)+"/cancel", nil), http.StatusSeeOther, changeSetPath(mineID)+"?done=cancelled")
	p = pat.get(changeSetPath(mineID) + "?done=cancelled")
	expectText(t, "cancelled", p, "Change set cancelled.", "Cancelled", "Skipped")
	if strings.Contains(p.body, "data-live") {
		t.Error("a cancelled set's page still follows it")
	}
	p = pat.post(changeSetPath(mineID)+"/cancel", nil)
	expect(t, "cancel twice", p, http.StatusConflict, "")
	expectText(t, "cancel twice", p, "This change set is now “Cancelled”")

	// bo approves root's set; it runs on both simulated routers (stop
	// after 0: never), which take the line but not "write memory", as
	// the simulator's FRR does not know it: each device's answer shows.
	form := changeSetForm("both routers", "edge-frr", "branch-frr")
	form.Set("stop_after", "0")
	run := created(t, root.createChangeSet(form))
	bo := f.signedIn("bo")
	expectText(t, "stop never", bo.get(changeSetPath(run)), "Stop after failed devices", "never")
	expect(t, "bo approves", bo.post(changeSetPath(run)+"/approve", url.Values{"note": {"checked"}}),
		http.StatusSeeOther, changeSetPath(run)+"?done=approved")
	c := changeSetUntil(t, e, run, 60*time.Second, db.ChangeSetDone, db.ChangeSetStopped)
	if c.State != db.ChangeSetDone {
		t.Fatalf("the set is %s: %s", c.State, deref(c.Error))
	}
	targets, _ := e.store.ChangeSetTargets(ctx, run)
	for _, tg := range targets {
		if tg.State != db.TargetFailed || tg.PostBackupID == nil || tg.PreBackupID == nil || deref(tg.ErrorReason) != restore.ReasonRefused {
			t.Errorf("%s: %s %s (%s)", tg.DeviceName, tg.State, deref(tg.Error), deref(tg.ErrorReason))
		}
	}
	p = bo.get(changeSetPath(run))
	expectText(t, "done", p, "Done", "Approved by", "bo", "checked", "Failed", "The device refused a line.",
		"% Unknown command: write memory", "Backup before", "Backup after", "Session")
	for _, tg := range targets {
		expectBody(t, "done", p, `href="/devices/`+strconv.FormatInt(tg.DeviceID, 10)+`/versions/`+*tg.PreBackupID+`"`,
			`href="/devices/`+strconv.FormatInt(tg.DeviceID, 10)+`/versions/`+*tg.PostBackupID+`"`)
	}
	if strings.Contains(p.body, "data-live") || strings.Contains(p.body, `id="changeset-cancel"`) {
		t.Error("an ended set is followed or offers a cancel")
	}
	expectText(t, "the list", bo.get("/change-sets?state=ended"), "both routers", "0 succeeded · 2 failed")
	dp := bo.get(changeSetPath(run) + "/devices/" + strconv.FormatInt(targets[0].ID, 10))
	expect(t, "device page", dp, http.StatusOK, "")
	expectText(t, "device page", dp, "Push to edge-frr", "Session transcript", "ip prefix-list BACKUPD-TEST seq 5 permit 10.9.0.0/16",
		"% Unknown command: write memory")
	expectBody(t, "device page", dp, `id="changeset-transcript-text"`, `id="changeset-device-after"`, `id="changeset-device-error"`)
}

// The page's script's JSON: the set's and each device's state in the
// user's language, and no configuration text; 403 for a user who may
// not see change sets.
func TestChangeSetStateJSON(t *testing.T) {
	f := newChangeSetFixture(t)
	pat := f.signedIn("pat")
	id := created(t, pat.createChangeSet(changeSetForm("json", "edge-frr", "branch-frr")))
	pat.header.Set("Accept-Language", "zh-CN")
	p := pat.jobsCall(http.MethodGet, "/api"+changeSetPath(id), false)
	if p.status != http.StatusOK {
		t.Fatalf("%d %s", p.status, p.body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(p.body), &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, ",") != "counts,id,live,state,state_text,targets,updated_at" {
		t.Errorf("keys %v", keys)
	}
	var got struct {
		ID        int64          `json:"id"`
		State     string         `json:"state"`
		StateText string         `json:"state_text"`
		Live      bool           `json:"live"`
		Counts    map[string]int `json:"counts"`
		Targets   []map[string]any
	}
	if err := json.Unmarshal([]byte(p.body), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.State != db.ChangeSetReady || got.StateText != "等待审批" || !got.Live || got.Counts[db.TargetPending] != 2 || len(got.Targets) != 2 {
		t.Errorf("JSON %+v", got)
	}
	for _, tg := range got.Targets {
		if len(tg) != 5 || tg["state"] != db.TargetPending || tg["state_text"] != "未开始" {
			t.Errorf("target %v", tg)
		}
	}
	if strings.Contains(p.body, "prefix-list") || strings.Contains(p.body, "10.9.0.0") {
		t.Errorf("the JSON holds configuration text: %s", p.body)
	}
	viewer := f.signedIn("viewer")
	expect(t, "viewer's JSON", viewer.jobsCall(http.MethodGet, "/api"+changeSetPath(id), false), http.StatusForbidden, "")
}
