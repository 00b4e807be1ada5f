package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// setClock moves the server's clock to t (sign in afterwards).
func setClock(e *env, t time.Time) {
	e.clock.mu.Lock()
	defer e.clock.mu.Unlock()
	e.clock.t = t
}

// wednesdayNoon is a fixed "now" for schedule previews: Wednesday
// 4 March 2026, 12:00 UTC, days before the American (8 March) and
// European (29 March) daylight-saving changes.
var wednesdayNoon = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

func schedulesOf(t *testing.T, e *env) []db.Schedule {
	t.Helper()
	items, _, err := e.store.ListSchedules(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func scheduleNamed(t *testing.T, e *env, name string) db.Schedule {
	t.Helper()
	for _, sc := range schedulesOf(t, e) {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no schedule %q", name)
	return db.Schedule{}
}

// lastAudit is the newest web audit entry with action.
func lastAudit(t *testing.T, e *env, action string) db.AuditEntry {
	t.Helper()
	entries := e.auditEntries()
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Action == action {
			return entries[i]
		}
	}
	t.Fatalf("no audit entry %s among %d", action, len(entries))
	return db.AuditEntry{}
}

func adminBrowser(t *testing.T, e *env) *browser {
	t.Helper()
	e.createUser("root", "root-password-1", auth.RoleAdministrator, true)
	b := e.browser()
	b.mustLogin("root", "root-password-1")
	return b
}

func scheduleForm(name, cron, tz, target string) url.Values {
	return url.Values{"name": {name}, "cron": {cron}, "timezone": {tz}, "spread_seconds": {"600"},
		"enabled": {"1"}, "target": {target}}
}

func TestScheduleCreateShowsNextRunsInItsZone(t *testing.T) {
	e := newEnv(t)
	setClock(e, wednesdayNoon)
	b := adminBrowser(t, e)

	p := b.get("/schedules")
	expect(t, "empty list", p, http.StatusOK, "")
	expectBody(t, "empty list", p, "No schedules", `href="/schedules/new"`)

	p = b.get("/schedules/new")
	expect(t, "new form", p, http.StatusOK, "")
	// The server's zone (UTC here) and the nightly default.
	expectBody(t, "new form", p, `name="timezone" type="text" value="UTC"`, `value="0 2 * * *"`,
		"Every day at 02:00", "Thu 2026-03-05 02:00 UTC", `id="target-all"`)

	// Preview: the next Mondays at 06:30 by Shanghai's clock (20:00 there
	// now), nothing stored.
	form := scheduleForm("Weekly", "30 6 * * 1", "Asia/Shanghai", "all")
	form.Set("action", "preview")
	p = b.post("/schedules", form)
	expect(t, "preview", p, http.StatusOK, "")
	expectBody(t, "preview", p, "Every Monday at 06:30",
		`<time datetime="2026-03-08T22:30:00Z">Mon 2026-03-09 06:30 CST</time>`,
		"Mon 2026-03-16 06:30 CST", "Mon 2026-03-23 06:30 CST", "Mon 2026-03-30 06:30 CST", "Mon 2026-04-06 06:30 CST",
		`value="Weekly"`)
	if n := len(schedulesOf(t, e)); n != 0 {
		t.Fatalf("a preview stored %d schedules", n)
	}

	// New York changes to summer time on 8 March: the first Monday is
	// already EDT, by the schedule's own clock.
	form = scheduleForm("Weekly", "30 6 * * 1", "America/New_York", "all")
	form.Set("action", "preview")
	expectBody(t, "New York preview", b.post("/schedules", form), "Mon 2026-03-09 06:30 EDT")

	p = b.post("/schedules", scheduleForm("Weekly", "30 6 * * 1", "Asia/Shanghai", "all"))
	expect(t, "create", p, http.StatusSeeOther, "/schedules?done=created")
	sc := scheduleNamed(t, e, "Weekly")
	if sc.Cron != "30 6 * * 1" || sc.Timezone != "Asia/Shanghai" || sc.Target != db.ScheduleTargetAll || sc.SpreadSeconds != 600 || !sc.Enabled {
		t.Errorf("stored %+v", sc)
	}
	if want := time.Date(2026, 3, 8, 22, 30, 0, 0, time.UTC); sc.NextRunAt == nil || !sc.NextRunAt.Equal(want) {
		t.Errorf("next run %v, want %v", sc.NextRunAt, want)
	}
	p = b.get("/schedules?done=created")
	expectBody(t, "list", p, "Schedule created.", ">Weekly</a>", "30 6 * * 1", "Every Monday at 06:30", "Asia/Shanghai",
		"All devices", "Mon 2026-03-09 06:30 CST", "Enabled")

	a := lastAudit(t, e, "schedule.create")
	if a.Username != "root" || a.TargetID != strconv.FormatInt(sc.ID, 10) || a.Details["cron"] != "30 6 * * 1" {
		t.Errorf("audit entry %+v", a)
	}

	// Chinese: the same preview in Chinese words.
	b.header.Set("Accept-Language", "zh-CN")
	defer b.header.Del("Accept-Language")
	p = b.get(fmt.Sprintf("/schedules/%d", sc.ID))
	expectBody(t, "Chinese form", p, "每周一 06:30", "周一 2026-03-09 06:30 CST")
}

func TestCronDescriptions(t *testing.T) {
	e := newEnv(t)
	setClock(e, wednesdayNoon)
	b := adminBrowser(t, e)
	for cron, want := range map[string]string{
		"*/15 * * * *":    "Every 15 minutes",
		"0 * * * *":       "Every hour at minute 0",
		"15 */6 * * *":    "Every 6 hours at minute 15",
		"0 2,14 * * *":    "Every day at 02:00, 14:00",
		"0 3 * * 1-5":     "Every Monday to Friday at 03:00",
		"0 3 * * sat,sun": "Every Saturday, Sunday at 03:00",
		"0 1 1 * *":       "On day 1 of every month at 01:00",
		"@daily":          "Every day at 00:00",
		"0 4 * 6 *":       "",
		"*/7 * * * *":     "",
	} {
		p := b.get("/api/schedules/preview?tz=UTC&cron=" + url.QueryEscape(cron))
		expect(t, cron, p, http.StatusOK, "")
		var got struct {
			Description string `json:"description"`
		}
		if err := json.Unmarshal([]byte(p.body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Description != want {
			t.Errorf("%q described as %q, want %q", cron, got.Description, want)
		}
	}
}

func TestScheduleFormRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	seedFleet(t, e)
	b := adminBrowser(t, e)
	b.get("/schedules/new")
	expect(t, "first", b.post("/schedules", scheduleForm("Taken", "0 2 * * *", "UTC", "all")), http.StatusSeeOther, "")

	for _, c := range []struct {
		what   string
		change func(url.Values)
		status int
		want   string
	}{
		{"minute out of range", func(v url.Values) { v.Set("cron", "61 * * * *") }, 422, `minute field &#34;61&#34; is not valid`},
		{"four fields", func(v url.Values) { v.Set("cron", "0 2 * *") }, 422, "has 4 fields; want 5"},
		{"never fires", func(v url.Values) { v.Set("cron", "0 0 30 2 *") }, 422, "Cron expression: never fires"},
		{"unknown zone", func(v url.Values) { v.Set("timezone", "Mars/Olympus") }, 422, `unknown time zone &#34;Mars/Olympus&#34;`},
		{"blank name", func(v url.Values) { v.Set("name", "  ") }, 422, "Name: must not be blank"},
		{"spread not a number", func(v url.Values) { v.Set("spread_seconds", "soon") }, 422, "enter whole seconds from 0 to 86400"},
		{"spread too long", func(v url.Values) { v.Set("spread_seconds", "90000") }, 422, "must be between 0 and 86400 seconds"},
		{"no groups", func(v url.Values) { v.Set("target", "groups") }, 422, "Choose at least one group."},
		{"unknown devices", func(v url.Values) { v.Set("target", "devices"); v.Set("devices", "core-1\nghost-1, ghost-2") }, 422,
			"Names that match no device you can see (2): ghost-1, ghost-2"},
		{"bad target", func(v url.Values) { v.Set("target", "everything") }, 422, "Devices: must be one of"},
		{"name taken", func(v url.Values) { v.Set("name", "taken") }, 409, "Another schedule already has this name"},
	} {
		v := scheduleForm("Nightly", "0 2 * * *", "UTC", "all")
		c.change(v)
		p := b.post("/schedules", v)
		expect(t, c.what, p, c.status, "")
		expectBody(t, c.what, p, c.want, `id="schedule-errors"`, `value="`+strings.TrimSpace(v.Get("name"))+`"`)
	}
	if n := len(schedulesOf(t, e)); n != 1 {
		t.Errorf("refused forms stored schedules: %d, want 1", n)
	}
}

func TestScheduleEditDisableDelete(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	b := adminBrowser(t, e)
	b.get("/schedules/new")
	v := scheduleForm("Core nightly", "0 2 * * *", "UTC", "groups")
	v.Add("group_ids", strconv.FormatInt(f.core, 10))
	expect(t, "create", b.post("/schedules", v), http.StatusSeeOther, "/schedules?done=created")
	sc := scheduleNamed(t, e, "Core nightly")
	if !slices.Equal(sc.TargetIDs, []int64{f.core}) || sc.Target != db.ScheduleTargetGroups {
		t.Fatalf("target %s %v", sc.Target, sc.TargetIDs)
	}
	path := fmt.Sprintf("/schedules/%d", sc.ID)

	p := b.get(path)
	expect(t, "edit form", p, http.StatusOK, "")
	expectBody(t, "edit form", p, `value="Core nightly"`, fmt.Sprintf(`id="group-%d" type="checkbox" name="group_ids" value="%d" checked`, f.core, f.core),
		`id="schedule-delete"`)

	// Edit: devices by name, another time.
	v = scheduleForm("Core nightly", "0 3 * * *", "Europe/Berlin", "devices")
	v.Set("devices", "CORE-1, branch-2\n\ncore-1")
	expect(t, "update", b.post(path, v), http.StatusSeeOther, "/schedules?done=updated")
	sc = scheduleNamed(t, e, "Core nightly")
	ids, _ := e.store.TargetDevices(context.Background(), sc.Target, sc.TargetIDs)
	if sc.Cron != "0 3 * * *" || sc.Timezone != "Europe/Berlin" || len(sc.TargetIDs) != 2 || len(ids) != 2 {
		t.Errorf("updated %+v (devices %v)", sc, ids)
	}
	a := lastAudit(t, e, "schedule.update")
	if fmt.Sprint(a.Details["changed"]) != "[cron timezone target target_ids]" {
		t.Errorf("audit of the update names %v", a.Details["changed"])
	}
	expectBody(t, "device names shown", b.get(path), "branch-2\ncore-1</textarea>")

	// Disable and enable from the list.
	b.get("/schedules")
	expect(t, "disable", b.post(path+"/disable", nil), http.StatusSeeOther, "/schedules?done=disabled")
	sc = scheduleNamed(t, e, "Core nightly")
	if sc.Enabled || sc.NextRunAt != nil {
		t.Errorf("disabled schedule: enabled %v next %v", sc.Enabled, sc.NextRunAt)
	}
	expectBody(t, "list after disable", b.get("/schedules?done=disabled"), "Schedule disabled.", "Disabled", path+"/enable")
	expect(t, "enable", b.post(path+"/enable", nil), http.StatusSeeOther, "/schedules?done=enabled")
	sc = scheduleNamed(t, e, "Core nightly")
	if !sc.Enabled || sc.NextRunAt == nil || !sc.NextRunAt.After(e.clock.Now()) {
		t.Errorf("enabled schedule: enabled %v next %v", sc.Enabled, sc.NextRunAt)
	}
	if a := lastAudit(t, e, "schedule.update"); a.Details["enabled"] != true {
		t.Errorf("audit of enable: %+v", a.Details)
	}

	// CSRF: no token, nothing deleted.
	b.get("/schedules")
	p = b.post(path+"/delete", url.Values{"csrf": {""}})
	expect(t, "delete without token", p, http.StatusForbidden, "")
	if len(schedulesOf(t, e)) != 1 {
		t.Fatal("a tokenless request deleted the schedule")
	}
	expect(t, "delete", b.post(path+"/delete", nil), http.StatusSeeOther, "/schedules?done=deleted")
	if len(schedulesOf(t, e)) != 0 {
		t.Fatal("schedule not deleted")
	}
	if a := lastAudit(t, e, "schedule.delete"); a.Details["name"] != "Core nightly" {
		t.Errorf("audit of delete: %+v", a)
	}
	expect(t, "gone", b.get(path), http.StatusNotFound, "")
}

func TestSchedulePreviewAPI(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	setClock(e, wednesdayNoon)
	b := adminBrowser(t, e)

	p := b.get("/api/schedules/preview?cron=" + url.QueryEscape("30 6 * * 1") + "&tz=Europe/Berlin")
	expect(t, "preview", p, http.StatusOK, "")
	var got struct {
		Description string `json:"description"`
		Timezone    string `json:"timezone"`
		Runs        []struct{ At, Text string }
	}
	if err := json.Unmarshal([]byte(p.body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Description != "Every Monday at 06:30" || got.Timezone != "Europe/Berlin" || len(got.Runs) != 5 ||
		got.Runs[0].At != "2026-03-09T06:30:00+01:00" || got.Runs[0].Text != "Mon 2026-03-09 06:30 CET" ||
		got.Runs[4].Text != "Mon 2026-04-06 06:30 CEST" {
		t.Errorf("preview %+v", got)
	}

	for _, c := range []struct{ query, field, want string }{
		{"cron=" + url.QueryEscape("0 25 * * *"), "cron", "hour field"},
		{"cron=" + url.QueryEscape("0 2 * * *") + "&tz=Nowhere/Land", "tz", "unknown time zone"},
		{"cron=", "cron", "must not be empty"},
	} {
		p := b.get("/api/schedules/preview?" + c.query)
		expect(t, c.query, p, http.StatusUnprocessableEntity, "")
		var answer struct {
			Error struct {
				Message string
				Details struct {
					Errors []struct{ Field, Message string }
				}
			}
		}
		if err := json.Unmarshal([]byte(p.body), &answer); err != nil {
			t.Fatal(err)
		}
		if errs := answer.Error.Details.Errors; len(errs) != 1 || errs[0].Field != c.field || !strings.Contains(errs[0].Message, c.want) ||
			!strings.Contains(answer.Error.Message, c.want) {
			t.Errorf("%s: error %+v, want field %s saying %q", c.query, answer.Error, c.field, c.want)
		}
	}

	// Device search: by scope, bounded.
	p = b.get("/api/schedules/devices?q=core")
	expectBody(t, "admin search", p, `"name":"core-1"`, `"total":3`)
	e.createUser("brancher", "branch-password-1", auth.RoleOperator, false, f.branch)
	s := e.browser()
	s.mustLogin("brancher", "branch-password-1")
	p = s.get("/api/schedules/devices?q=-")
	expectBody(t, "scoped search", p, `"name":"branch-1"`, `"total":2`)
	if strings.Contains(p.body, "core-") {
		t.Error("a Branch user finds a Core device")
	}

	anon := e.browser()
	expect(t, "no session", anon.get("/api/schedules/preview?cron=*+*+*+*+*"), http.StatusUnauthorized, "")
}

func TestScheduleScopeAndPermissions(t *testing.T) {
	e := newEnv(t)
	f := seedFleet(t, e)
	ctx := context.Background()
	create := func(name, target string, ids ...int64) db.Schedule {
		sc, err := e.store.CreateSchedule(ctx, db.Schedule{Name: name, Cron: "0 2 * * *", Timezone: "UTC", Target: target, TargetIDs: ids, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	coreSched := create("Core", db.ScheduleTargetGroups, f.core)
	allSched := create("Everything", db.ScheduleTargetAll)
	branchSched := create("Branch", db.ScheduleTargetGroups, f.branch)
	core1 := mustDeviceID(t, e, "core-1")
	devSched := create("Core device", db.ScheduleTargetDevices, core1)

	e.createUser("brancher", "branch-password-1", auth.RoleOperator, false, f.branch)
	s := e.browser()
	s.mustLogin("brancher", "branch-password-1")
	p := s.get("/schedules")
	expect(t, "scoped list", p, http.StatusOK, "")
	expectBody(t, "scoped list", p, fmt.Sprintf(`/schedules/%d/disable`, branchSched.ID), "Groups: Branch", "Groups: 1 (outside your groups)")
	for _, sc := range []db.Schedule{coreSched, allSched, devSched} {
		if strings.Contains(p.body, fmt.Sprintf(`/schedules/%d/disable`, sc.ID)) || strings.Contains(p.body, fmt.Sprintf(`/schedules/%d/delete`, sc.ID)) {
			t.Errorf("a Branch user is offered to change schedule %q", sc.Name)
		}
	}
	p = s.get(fmt.Sprintf("/schedules/%d", devSched.ID))
	expectBody(t, "out-of-scope form", p, `id="schedule-readonly"`, "Devices of this schedule outside your groups: 1.")
	if strings.Contains(p.body, "core-1") || strings.Contains(p.body, `id="schedule-save"`) {
		t.Error("the read-only form shows a Core device or a save button")
	}
	for _, sc := range []db.Schedule{coreSched, allSched, devSched} {
		base := fmt.Sprintf("/schedules/%d", sc.ID)
		expect(t, "disable "+sc.Name, s.post(base+"/disable", nil), http.StatusForbidden, "")
		expect(t, "delete "+sc.Name, s.post(base+"/delete", nil), http.StatusForbidden, "")
		v := scheduleForm(sc.Name, "0 4 * * *", "UTC", "groups")
		v.Add("group_ids", strconv.FormatInt(f.branch, 10))
		expect(t, "update "+sc.Name, s.post(base, v), http.StatusForbidden, "")
	}
	if got := scheduleNamed(t, e, "Core"); got.Cron != "0 2 * * *" || !got.Enabled {
		t.Errorf("a refused user changed the Core schedule: %+v", got)
	}
	if len(schedulesOf(t, e)) != 4 {
		t.Error("a refused user deleted a schedule")
	}

	p = s.get("/schedules/new")
	expectBody(t, "scoped new form", p, ">Branch</label>", `id="target-groups" type="radio" name="target" value="groups" checked`)
	if strings.Contains(p.body, `id="target-all"`) || strings.Contains(p.body, ">Core</label>") {
		t.Error("a Branch user is offered all devices or the Core group")
	}
	expect(t, "scoped target all", s.post("/schedules", scheduleForm("Mine", "0 2 * * *", "UTC", "all")), http.StatusForbidden, "")
	v := scheduleForm("Mine", "0 2 * * *", "UTC", "groups")
	v.Add("group_ids", strconv.FormatInt(f.core, 10))
	expect(t, "scoped target Core", s.post("/schedules", v), http.StatusForbidden, "")
	v = scheduleForm("Mine", "0 2 * * *", "UTC", "devices")
	v.Set("devices", "core-1")
	expectBody(t, "scoped Core device", s.post("/schedules", v), "Names that match no device you can see (1): core-1")
	v = scheduleForm("Mine", "0 2 * * *", "UTC", "groups")
	v.Add("group_ids", strconv.FormatInt(f.branch, 10))
	expect(t, "scoped target Branch", s.post("/schedules", v), http.StatusSeeOther, "/schedules?done=created")
	expect(t, "own schedule disable", s.post(fmt.Sprintf("/schedules/%d/disable", branchSched.ID), nil), http.StatusSeeOther, "")

	// A viewer reads; a backup reader does not even see the page.
	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	vb := e.browser()
	vb.mustLogin("viewer", "viewer-password-1")
	p = vb.get("/schedules")
	expect(t, "viewer list", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="new-schedule"`) || strings.Contains(p.body, "/disable") || strings.Contains(p.body, "/delete") {
		t.Error("a viewer is offered to change schedules")
	}
	expectBody(t, "viewer form", vb.get(fmt.Sprintf("/schedules/%d", coreSched.ID)), `id="schedule-readonly"`, "02:00 UTC</time>")
	expect(t, "viewer create", vb.post("/schedules", scheduleForm("V", "0 2 * * *", "UTC", "all")), http.StatusForbidden, "")
	expect(t, "viewer new form", vb.get("/schedules/new"), http.StatusForbidden, "")
	expect(t, "viewer delete", vb.post(fmt.Sprintf("/schedules/%d/delete", coreSched.ID), nil), http.StatusForbidden, "")

	e.createUser("reader", "reader-password-1", auth.RoleBackupReader, true)
	rb := e.browser()
	rb.mustLogin("reader", "reader-password-1")
	expect(t, "reader list", rb.get("/schedules"), http.StatusForbidden, "")
	expect(t, "reader preview", rb.get("/api/schedules/preview?cron=*+*+*+*+*"), http.StatusForbidden, "")
}

func mustDeviceID(t *testing.T, e *env, name string) int64 {
	t.Helper()
	var id int64
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT id FROM devices WHERE name = ?`, name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

var rulesVersionRE = regexp.MustCompile(`name="version" value="([0-9a-f]+)"`)

func TestRulesAddEditDeleteAndTry(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	rules := func() []db.NoiseRule {
		t.Helper()
		r, err := e.store.NoiseRules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	p := b.get("/rules")
	expect(t, "rules page", p, http.StatusOK, "")
	expectBody(t, "built-ins", p, `data-platform="cisco_ios"`, `^Building configuration\.\.\.$`, `data-platform="fortinet"`,
		"Palo Alto PAN-OS", "No rules of your own yet.", `id="rule-add"`)
	version := rulesVersionRE.FindStringSubmatch(p.body)[1]

	add := func(pattern, platform, version string) page {
		return b.post("/rules", url.Values{"pattern": {pattern}, "platform": {platform}, "description": {"uptime banner"}, "version": {version}})
	}
	expect(t, "add", add(`^! uptime is `, "cisco_ios", version), http.StatusSeeOther, "/rules?done=added")
	if got := rules(); len(got) != 1 || got[0].Pattern != `^! uptime is ` || got[0].Platform != "cisco_ios" || got[0].Description != "uptime banner" {
		t.Fatalf("stored rules %+v", got)
	}
	p = b.get("/rules?done=added")
	expectBody(t, "list", p, "Rule added.", `<code class="rules-pattern">^! uptime is </code>`, "Cisco IOS", "uptime banner")
	version = rulesVersionRE.FindStringSubmatch(p.body)[1]

	p = add(`^foo(`, "", version)
	expect(t, "bad regex", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad regex", p, "Rule #2, pattern:", "is not a valid regular expression", `value="^foo("`)
	expectBody(t, "match all", add(`.*`, "", version), "matches any line")
	expectBody(t, "bad platform", add(`^x`, "cisco_ioz", version), "Rule #2, platform:")
	p = add(`^x`, "", "0000")
	expect(t, "stale page", p, http.StatusConflict, "")
	expectBody(t, "stale page", p, "The rules changed since this page was loaded")
	if len(rules()) != 1 {
		t.Fatal("a refused rule was stored")
	}

	p = b.get("/rules/1")
	expect(t, "edit form", p, http.StatusOK, "")
	expectBody(t, "edit form", p, `value="^! uptime is "`, `<option value="cisco_ios" selected>`)
	expect(t, "edit missing", b.get("/rules/2"), http.StatusNotFound, "")
	p = b.post("/rules/1", url.Values{"pattern": {`^! uptime is \d+`}, "platform": {""}, "version": {version}})
	expect(t, "update", p, http.StatusSeeOther, "/rules?done=updated")
	if got := rules(); got[0].Pattern != `^! uptime is \d+` || got[0].Platform != "" {
		t.Errorf("updated rule %+v", got[0])
	}
	p = b.post("/rules/1", url.Values{"pattern": {`(?P<mask>`}, "version": {rulesVersionRE.FindStringSubmatch(b.get("/rules").body)[1]}})
	expect(t, "bad update", p, http.StatusUnprocessableEntity, "")
	expectBody(t, "bad update", p, "Rule #1, pattern:")

	// Try it: the built-ins, the user's rule and a pattern being tried.
	sample := "Building configuration...\r\nCurrent configuration : 1234 bytes\n! uptime is 5 days\nhostname r1\ninterface Gi0/1\n ntp clock-period 17179\nntp clock-period 17179868\n"
	p = b.post("/rules/try", url.Values{"platform": {"cisco_ios"}, "sample": {sample}, "pattern": {`^interface Gi`}})
	expect(t, "try", p, http.StatusOK, "")
	expectBody(t, "try", p, "7 lines: 5 ignored whole, 0 compared with a part masked.",
		`data-line="1"`, `data-line="2"`, `data-line="3"`, `data-line="5"`, `data-line="7"`, "your rule #1", "the expression being tried",
		`built-in ^Building configuration\.\.\.$`)
	for _, n := range []string{"4", "6"} {
		if strings.Contains(p.body, `data-line="`+n+`"`) {
			t.Errorf("try marks line %s as noise", n)
		}
	}
	p = b.post("/rules/try", url.Values{"platform": {"fortinet"}, "sample": {"config system global\n    set psksecret ENC qwertyQWERTY==\nend"}})
	expectBody(t, "masked", p, "3 lines: 0 ignored whole, 1 compared with a part masked.",
		`set psksecret ENC <mark class="noise-mask">masked</mark>`)
	expectBody(t, "nothing", b.post("/rules/try", url.Values{"platform": {"vyos"}, "sample": {"set system host-name r1"}}), "No line of this text would be ignored")
	expect(t, "try bad platform", b.post("/rules/try", url.Values{"platform": {"nope"}, "sample": {"x"}}), http.StatusUnprocessableEntity, "")
	expectBody(t, "try bad pattern", b.post("/rules/try", url.Values{"sample": {"x"}, "pattern": {"("}}), "The expression to try cannot be used")
	expect(t, "try too large", b.post("/rules/try", url.Values{"sample": {strings.Repeat("x", 1_000_001)}}), http.StatusRequestEntityTooLarge, "")

	version = rulesVersionRE.FindStringSubmatch(b.get("/rules").body)[1]
	expect(t, "delete without token", b.post("/rules/1/delete", url.Values{"csrf": {""}, "version": {version}}), http.StatusForbidden, "")
	expect(t, "delete", b.post("/rules/1/delete", url.Values{"version": {version}}), http.StatusSeeOther, "/rules?done=deleted")
	if len(rules()) != 0 {
		t.Error("rule not deleted")
	}

	var changes []string
	for _, a := range e.auditEntries() {
		if a.Action == "settings.update" && a.TargetID == db.SettingNoiseRules {
			changes = append(changes, fmt.Sprint(a.Details["change"]))
		}
	}
	if fmt.Sprint(changes) != "[add update delete]" {
		t.Errorf("audited rule changes %v, want [add update delete]", changes)
	}
}

func TestRulesPermissions(t *testing.T) {
	e := newEnv(t)
	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)
	o := e.browser()
	o.mustLogin("operator", "operator-password-1")
	p := o.get("/rules")
	expect(t, "operator reads", p, http.StatusOK, "")
	if strings.Contains(p.body, `id="rule-add"`) {
		t.Error("a user without settings.update sees the add form")
	}
	expect(t, "operator tries", o.post("/rules/try", url.Values{"platform": {"cisco_ios"}, "sample": {"Building configuration..."}}), http.StatusOK, "")
	expect(t, "operator adds", o.post("/rules", url.Values{"pattern": {"^x"}, "version": {"x"}}), http.StatusForbidden, "")
	expect(t, "operator edit form", o.get("/rules/1"), http.StatusForbidden, "")

	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	expect(t, "viewer", v.get("/rules"), http.StatusForbidden, "")
	if strings.Contains(v.get("/schedules").body, `href="/rules"`) {
		t.Error("the navigation offers the rules page to a viewer")
	}
}

// seedVersions gives a new device one good version a day for days days,
// each with its own configuration, and returns the device's id.
func seedVersions(t *testing.T, e *env, name string, days int) int64 {
	t.Helper()
	ctx := context.Background()
	d, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "192.0.2.9", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i := 0; i < days; i++ {
		hash, err := e.store.PutSnapshot(ctx, fmt.Sprintf("hostname %s\n! version %d\n", name, i))
		if err != nil {
			t.Fatal(err)
		}
		started := now.Add(-time.Duration(i)*24*time.Hour - time.Hour)
		finished := started.Add(time.Second)
		if err := e.store.InsertBackup(ctx, db.Backup{ID: fmt.Sprintf("%s-%d", name, i), DeviceID: d.ID, StartedAt: started,
			FinishedAt: &finished, Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule, Changed: true}); err != nil {
			t.Fatal(err)
		}
	}
	return d.ID
}

func backupCount(t *testing.T, e *env, device int64) int {
	t.Helper()
	var n int
	if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM backups WHERE device_id = ?`, device).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRetentionSettingsAndApply(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	dev := seedVersions(t, e, "r-old", 8)

	p := b.get("/settings")
	expect(t, "settings", p, http.StatusOK, "")
	expectBody(t, "settings", p, "the defaults apply: keep the newest 100 versions and 365 days", `value="100"`, `value="365"`,
		"latest good version is never deleted", `id="retention-apply"`, "<dd>test</dd>", "<dd>UTC</dd>")

	for _, c := range []struct{ last, days, want string }{
		{"-1", "10", "Versions to keep: enter a whole number from 0 to 1000000."},
		{"5", "ten", "Days to keep: enter a whole number from 0 to 36500."},
		{"5", "40000", "Days to keep: enter a whole number"},
	} {
		p := b.post("/settings/retention", url.Values{"keep_last": {c.last}, "keep_days": {c.days}})
		expect(t, "bad "+c.last+"/"+c.days, p, http.StatusUnprocessableEntity, "")
		expectBody(t, "bad "+c.last+"/"+c.days, p, c.want, `value="`+c.days+`"`)
	}
	if r, _ := e.store.RetentionPolicy(ctx); r != db.DefaultRetention {
		t.Fatalf("refused values were stored: %+v", r)
	}

	expect(t, "save", b.post("/settings/retention", url.Values{"keep_last": {"2"}, "keep_days": {"3"}}), http.StatusSeeOther, "/settings?done=saved")
	if r, _ := e.store.RetentionPolicy(ctx); r != (db.Retention{KeepLast: 2, KeepDays: 3}) {
		t.Fatalf("stored policy %+v", r)
	}
	a := lastAudit(t, e, "settings.update")
	if a.TargetID != db.SettingRetention || a.Details["keep_last"] != float64(2) || a.Details["keep_days"] != float64(3) {
		t.Errorf("audit %+v", a)
	}
	p = b.get("/settings?done=saved")
	expectBody(t, "saved", p, "Retention policy saved.", "Policy last changed", `value="2"`, `value="3"`)

	// CSRF first: nothing deleted.
	expect(t, "apply without token", b.post("/settings/retention/apply", url.Values{"csrf": {""}}), http.StatusForbidden, "")
	if n := backupCount(t, e, dev); n != 8 {
		t.Fatalf("a tokenless request deleted backups: %d left", n)
	}
	// Versions 0-2 days old are young enough; of the older ones none is
	// among the newest two: five go, with their configurations.
	p = b.post("/settings/retention/apply", nil)
	expect(t, "apply", p, http.StatusSeeOther, "/settings?deleted=5&done=applied&purged=5")
	if n := backupCount(t, e, dev); n != 3 {
		t.Errorf("%d backups left, want 3", n)
	}
	expectBody(t, "applied", b.get(p.header.Get("Location")), "Retention applied: 5 backups deleted, 5 stored configurations purged.")
	if a := lastAudit(t, e, "backup.prune"); a.Details["backups_deleted"] != float64(5) || a.Details["complete"] != true {
		t.Errorf("audit of the run %+v", a.Details)
	}
}

func TestSettingsPermissions(t *testing.T) {
	e := newEnv(t)
	dev := seedVersions(t, e, "r-old", 4)
	if err := e.store.PutSetting(context.Background(), db.SettingRetention, db.Retention{KeepLast: 1, KeepDays: 1}); err != nil {
		t.Fatal(err)
	}
	e.createUser("operator", "operator-password-1", auth.RoleOperator, true)
	o := e.browser()
	o.mustLogin("operator", "operator-password-1")
	p := o.get("/settings")
	expect(t, "operator reads", p, http.StatusOK, "")
	expectBody(t, "operator reads", p, `<fieldset class="bs-plain" disabled>`)
	if strings.Contains(p.body, `id="retention-save"`) || strings.Contains(p.body, `id="retention-apply"`) {
		t.Error("an operator is offered to change retention or apply it")
	}
	expect(t, "operator saves", o.post("/settings/retention", url.Values{"keep_last": {"0"}, "keep_days": {"0"}}), http.StatusForbidden, "")
	expect(t, "operator applies", o.post("/settings/retention/apply", nil), http.StatusForbidden, "")
	if n := backupCount(t, e, dev); n != 4 {
		t.Errorf("a refused apply deleted backups: %d left", n)
	}
	if r, _ := e.store.RetentionPolicy(context.Background()); r != (db.Retention{KeepLast: 1, KeepDays: 1}) {
		t.Errorf("a refused save changed the policy: %+v", r)
	}

	e.createUser("viewer", "viewer-password-1", auth.RoleViewer, true)
	v := e.browser()
	v.mustLogin("viewer", "viewer-password-1")
	expect(t, "viewer", v.get("/settings"), http.StatusForbidden, "")
}

func TestSettingsShowDeltaStorage(t *testing.T) {
	e := newEnv(t)
	b := adminBrowser(t, e)
	ctx := context.Background()
	d, err := e.store.CreateDevice(ctx, db.Device{Name: "r-delta", Host: "192.0.2.9", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// Six versions stored whole, as a backupd before deltas left them.
	base := strings.Repeat("interface GigabitEthernet0/1\n description uplink\n no shutdown\n!\n", 200)
	now := time.Now().UTC()
	for i := range 6 {
		hash, err := e.store.PutSnapshot(ctx, fmt.Sprintf("hostname r-delta\n! version %d\n%s", i, base))
		if err != nil {
			t.Fatal(err)
		}
		started := now.Add(time.Duration(i-6) * time.Hour)
		finished := started.Add(time.Second)
		if err := e.store.InsertBackup(ctx, db.Backup{ID: fmt.Sprintf("r-delta-%d", i), DeviceID: d.ID, StartedAt: started,
			FinishedAt: &finished, Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule}); err != nil {
			t.Fatal(err)
		}
	}
	expectBody(t, "before", b.get("/settings"), `<dd id="delta-facts">0 of 6 (`)
	if _, err := e.store.Repack(ctx, nil); err != nil {
		t.Fatal(err)
	}
	p := b.get("/settings")
	expectBody(t, "after", p, `<dd id="delta-facts">5 of 6 (`)
	b.header.Set("Accept-Language", "zh")
	expectBody(t, "zh", b.get("/settings"), `<dd id="delta-facts">5 / 6 份`)
}
