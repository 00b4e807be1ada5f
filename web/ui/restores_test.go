package ui_test

import (
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/auth"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// restoreFixture is a server with two simulated FRR routers (edge-frr
// in Core, branch-frr in Branch), each backed up once, edge-frr changed
// since (so a restore of its first version has something to change), a
// Cisco switch in Core whose platform cannot restore, and the people of
// a restore: who may ask, who may approve, and who may do neither.
type restoreFixture struct {
	e                    *env
	core, branch         int64
	edge, branchDev, ios int64
	edgeSim              *devsim.Device
	// edgeV1 and branchV1 are the routers' first versions, iosV1 the
	// switch's (stored directly).
	edgeV1, branchV1, iosV1 string
}

const restorePassword = "restore-password-1"

func newRestoreFixture(t *testing.T) *restoreFixture {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	f := &restoreFixture{e: e}
	for name, dst := range map[string]*int64{"Core": &f.core, "Branch": &f.branch} {
		g, err := e.store.CreateGroup(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		*dst = g.ID
	}
	f.edge, f.edgeSim = restoreSimFRR(t, e, "edge-frr", f.core)
	f.branchDev, _ = restoreSimFRR(t, e, "branch-frr", f.branch)
	f.edgeV1 = restoreBackup(t, e, f.edge).ID
	f.branchV1 = restoreBackup(t, e, f.branchDev).ID
	f.edgeSim.Mutate(7)
	// A platform that cannot restore (classic IOS merges since).
	ios, err := e.store.CreateDevice(ctx, db.Device{Name: "core-sw", Host: "192.0.2.7", Port: 22, Platform: "hp_procurve",
		LoginMethod: "ssh", GroupID: &f.core, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	f.ios = ios.ID
	hash, err := e.store.PutSnapshot(ctx, "hostname core-sw\n!\nend\n")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	f.iosV1 = "00000000-0000-4000-8000-0000000000c1"
	if err := e.store.InsertBackup(ctx, db.Backup{ID: f.iosV1, DeviceID: f.ios, StartedAt: at, FinishedAt: &at, Success: true,
		SnapshotHash: &hash, Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}

	role := func(name string, perms ...string) {
		if _, err := e.store.CreateRole(ctx, name, "", append([]string{"devices.view", "backups.view"}, perms...)); err != nil {
			t.Fatal(err)
		}
	}
	role("Restore requesters", auth.PermRestore)
	role("Restore approvers", auth.PermApprove)
	role("Branch restorers", auth.PermRestore, auth.PermApprove)
	e.createUser("root", restorePassword, auth.RoleAdministrator, true)
	e.createUser("viewer", restorePassword, auth.RoleViewer, true)
	e.createUser("oper", restorePassword, auth.RoleOperator, true)
	e.createUser("ana", restorePassword, "Restore requesters", true)
	e.createUser("cy", restorePassword, "Restore requesters", true)
	e.createUser("bo", restorePassword, "Restore approvers", true)
	e.createUser("sam", restorePassword, "Branch restorers", false, f.branch)
	return f
}

// restoreSimFRR starts a simulated FRR router on loopback and registers
// it in group with its login.
func restoreSimFRR(t *testing.T, e *env, name string, group int64) (int64, *devsim.Device) {
	t.Helper()
	ctx := context.Background()
	sim, err := devsim.NewDevice(devsim.Options{Platform: "frr", Hostname: name, Username: "admin",
		Password: "sim-password-1", SSHAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	cred, err := e.store.CreateCredential(ctx, db.Credential{Name: "login of " + name, Username: "admin",
		Password: e.sealer.Seal("sim-password-1", secret.PurposePassword)})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(sim.SSHAddr())
	p, _ := strconv.Atoi(port)
	dev, err := e.store.CreateDevice(ctx, db.Device{Name: name, Host: "127.0.0.1", Port: p, Platform: "frr",
		LoginMethod: "ssh", GroupID: &group, CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return dev.ID, sim
}

// restoreBackup backs the device up now, through the engine, and returns
// the version.
func restoreBackup(t testing.TB, e *env, device int64) db.Backup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := e.engine.Enqueue(ctx, []int64{device}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		js, err := e.store.Queue.GetJobs(ctx, ids)
		if err != nil || len(js) != 1 {
			t.Fatal(len(js), err)
		}
		switch js[0].State {
		case queue.JobSucceeded:
			b, err := e.store.GetBackup(ctx, *js[0].BackupID)
			if err != nil {
				t.Fatal(err)
			}
			return b
		case queue.JobFailed, queue.JobCancelled:
			t.Fatalf("backup of device %d: %s %v", device, js[0].State, js[0].Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the backup of device %d did not end", device)
	return db.Backup{}
}

// restoreUntil ticks the dispatcher, as the leader does, until restore
// id is in one of states.
func restoreUntil(t testing.TB, e *env, id int64, limit time.Duration, states ...string) db.Restore {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for {
		if err := e.dispatcher.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := e.store.Restore(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(states, r.State) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("restore %d is %s (stage %q) after %s, want %v", id, r.State, r.Stage, limit, states)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// restoreEnds are the states a restore ends in after it ran.
var restoreEnds = []string{db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed, db.RestoreInterrupted}

// signedIn is a browser signed in as user.
func (f *restoreFixture) signedIn(user string) *browser {
	f.e.t.Helper()
	b := f.e.browser()
	b.mustLogin(user, restorePassword)
	return b
}

// versionPath is the page of version v of device.
func versionPath(device int64, v string) string {
	return "/devices/" + strconv.FormatInt(device, 10) + "/versions/" + v
}

// request asks for a restore of version v of device from its version
// page, as the form there does.
func (b *browser) requestRestore(device int64, v, reason string) page {
	b.e.t.Helper()
	b.get(versionPath(device, v))
	return b.post("/restores", url.Values{"device_id": {strconv.FormatInt(device, 10)}, "version": {v}, "reason": {reason}})
}

var restoreLocation = regexp.MustCompile(`^/restores/(\d+)\?done=requested$`)

// requested is the restore a successful request led to.
func requested(t *testing.T, p page) int64 {
	t.Helper()
	m := restoreLocation.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || m == nil {
		t.Fatalf("request: %d Location %q, want 303 to a restore:\n%s", p.status, p.header.Get("Location"), p.body)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

func restorePath(id int64) string { return "/restores/" + strconv.FormatInt(id, 10) }

// text is a page's body with the HTML entities read (an apostrophe is
// &#39; in the markup).
func text(p page) string { return html.UnescapeString(p.body) }

// expectText fails unless the page, as read, says each of want.
func expectText(t *testing.T, what string, p page, want ...string) {
	t.Helper()
	body := text(p)
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s: page lacks %q:\n%s", what, w, body)
		}
	}
}

// previewHash is the preview the page's approve form carries.
var previewInput = regexp.MustCompile(`name="preview" value="([0-9a-f]*)"`)

func previewHash(t *testing.T, p page) string {
	t.Helper()
	m := previewInput.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the page has no approve form:\n%s", p.body)
	}
	return m[1]
}

// Who may do what: a viewer and a device editor neither see nor ask for
// restores; someone holding configs.restore asks but cannot approve,
// someone holding configs.approve approves; a user whose groups do not
// hold the device finds no such restore; a requester cannot cancel
// someone else's request. The audit log names each.
func TestRestorePermissionsAndScope(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	edgeV1 := versionPath(f.edge, f.edgeV1)

	for _, user := range []string{"viewer", "oper"} {
		b := f.signedIn(user)
		p := b.get(edgeV1)
		expect(t, user+" version page", p, http.StatusOK, "")
		if strings.Contains(p.body, `id="version-restore"`) {
			t.Errorf("%s sees the restore action", user)
		}
		if strings.Contains(b.get("/dashboard").body, `href="/restores"`) {
			t.Errorf("%s has Restores in the navigation", user)
		}
		expect(t, user+" list", b.get("/restores"), http.StatusForbidden, "")
		expect(t, user+" request", b.post("/restores", url.Values{"device_id": {strconv.FormatInt(f.edge, 10)}, "version": {f.edgeV1}}),
			http.StatusForbidden, "")
	}
	if n := len(mustList(t, e, db.RestoreFilter{})); n != 0 {
		t.Fatalf("%d restores after refused requests", n)
	}

	// Ana may ask.
	ana := f.signedIn("ana")
	p := ana.get(edgeV1)
	expectBody(t, "ana's version page", p, `id="version-restore-form"`, `action="/restores"`, `name="version" value="`+f.edgeV1+`"`)
	if !strings.Contains(ana.get("/dashboard").body, `href="/restores"`) {
		t.Error("ana has no Restores in the navigation")
	}
	id := requested(t, ana.requestRestore(f.edge, f.edgeV1, "undo this morning's change"))
	p = ana.get(restorePath(id) + "?done=requested")
	expectText(t, "just requested", p, "Restore requested", "undo this morning's change", "edge-frr")
	restoreUntil(t, e, id, 30*time.Second, db.RestorePending)
	p = ana.get(restorePath(id))
	expectBody(t, "pending, as ana", p, "Waiting for approval", `id="restore-diff"`, `id="restore-cancel"`)
	if strings.Contains(p.body, `id="restore-approve"`) {
		t.Error("ana, who may not approve, has an approve button")
	}
	expect(t, "ana approves", ana.post(restorePath(id)+"/approve", url.Values{"preview": {"x"}}), http.StatusForbidden, "")

	// Cy, another requester, cannot withdraw Ana's request.
	cy := f.signedIn("cy")
	cy.get(restorePath(id))
	p = cy.post(restorePath(id)+"/cancel", nil)
	expect(t, "cy cancels ana's", p, http.StatusForbidden, "")
	expectText(t, "cy cancels ana's", p, "You may cancel only the restores you asked for")

	// Sam's groups hold branch-frr only.
	sam := f.signedIn("sam")
	if p := sam.get("/restores"); p.status != http.StatusOK || strings.Contains(p.body, "edge-frr") {
		t.Errorf("sam's list: %d, shows edge-frr: %v", p.status, strings.Contains(p.body, "edge-frr"))
	}
	expect(t, "sam opens it", sam.get(restorePath(id)), http.StatusNotFound, "")
	expect(t, "sam's script asks", sam.get("/api"+restorePath(id)), http.StatusNotFound, "")
	sam.get("/restores")
	expect(t, "sam approves", sam.post(restorePath(id)+"/approve", url.Values{"preview": {"x"}}), http.StatusNotFound, "")
	expect(t, "sam asks for edge-frr", sam.post("/restores", url.Values{"device_id": {strconv.FormatInt(f.edge, 10)}, "version": {f.edgeV1}}),
		http.StatusNotFound, "")

	// Bo approves what the page showed.
	bo := f.signedIn("bo")
	expectBody(t, "bo's list", bo.get("/restores"), `id="restores-waiting"`, `href="/restores?state=waiting"`)
	p = bo.get("/restores?state=waiting")
	expectBody(t, "bo's waiting list", p, `href="/restores/`+strconv.FormatInt(id, 10)+`"`, "edge-frr", `<span class="restores-count">1</span>`)
	p = bo.get(restorePath(id))
	hash := previewHash(t, p)
	expectBody(t, "pending, as bo", p, `id="restore-approve"`, `id="restore-reject"`)
	p = bo.post(restorePath(id)+"/approve", url.Values{"preview": {hash}, "note": {"looks right"}})
	expect(t, "bo approves", p, http.StatusSeeOther, restorePath(id)+"?done=approved")
	r := restoreUntil(t, e, id, 60*time.Second, restoreEnds...)
	// The simulated router takes configuration lines without applying
	// them, so the run cannot converge and puts the router back: the
	// page shows a rollback, verified, with its reason and its backups.
	if r.State != db.RestoreRolledBack || deref(r.ErrorReason) != restore.ReasonNotConverged {
		t.Fatalf("restore on the simulator: %s (%s) %s", r.State, deref(r.ErrorReason), deref(r.Error))
	}
	p = bo.get(restorePath(id))
	expectBody(t, "rolled back", p, `id="restore-rolled-back"`, `id="restore-rollback-verified"`, `id="restore-error"`,
		`id="restore-transcript"`, `id="restore-backups"`, "/versions/"+*r.PreBackupID, "/versions/"+*r.RollbackBackupID)
	expectText(t, "rolled back", p, "Rolled back", "The changes did not settle.", "still differ after 1 pass")
	if strings.Contains(p.body, "data-open") || strings.Contains(p.body, `id="restore-approve"`) || strings.Contains(p.body, `id="restore-cancel"`) {
		t.Error("an ended restore's page still follows it or offers a decision")
	}
	if r.DecidedByName == nil || *r.DecidedByName != "bo" || r.DecisionNote != "looks right" {
		t.Errorf("decision: %v %q", r.DecidedByName, r.DecisionNote)
	}

	var actions []string
	for _, a := range e.auditEntries() {
		if strings.HasPrefix(a.Action, "restore.") {
			actions = append(actions, a.Username+" "+a.Action+" "+a.TargetType+":"+a.TargetID)
		}
	}
	want := []string{"ana restore.request restore:" + strconv.FormatInt(id, 10), "bo restore.approve restore:" + strconv.FormatInt(id, 10)}
	if !slices.Equal(actions, want) {
		t.Errorf("audit %v, want %v", actions, want)
	}

	// The restore's job reads as one on the jobs page, which leaves its
	// cancel to the restore's page.
	root := f.signedIn("root")
	root.get("/jobs")
	jobs := decodeJobs(t, root.jobsCall(http.MethodGet, "/api/jobs?state=finished", false))
	found := false
	for _, it := range jobs.Items {
		if it.ResultURL == restorePath(id) {
			found = true
			if it.CancelURL != "" || it.Retry || it.ResultText == "" {
				t.Errorf("restore job item %+v", it)
			}
		}
	}
	if !found {
		t.Errorf("no job links restore %d: %+v", id, jobs.Items)
	}
	if r.JobID == nil {
		t.Fatal("the restore has no job")
	}
	p = root.jobsCall(http.MethodDelete, "/api/jobs/"+strconv.FormatInt(*r.JobID, 10), true)
	if p.status != http.StatusConflict || !strings.Contains(p.body, restorePath(id)) {
		t.Errorf("DELETE the restore's job: %d %s", p.status, p.body)
	}
}

func mustList(t *testing.T, e *env, f db.RestoreFilter) []db.Restore {
	t.Helper()
	out, _, err := e.store.ListRestores(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Each refusal is a sentence on the page with a 4xx, in the page's
// language, and changes nothing: a second restore of a device, an
// approval of a preview the page did not show, four eyes, an expired
// request, a version of another device, a platform that cannot
// restore, a disabled device, one behind a remote collector, a failed
// backup, bounds of the reason and note, bad ids.
func TestRestoreRefusals(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	ctx := context.Background()
	root := f.signedIn("root")
	id := requested(t, root.requestRestore(f.edge, f.edgeV1, ""))
	r := restoreUntil(t, e, id, 30*time.Second, db.RestorePending)

	// One restore per device; the refused request takes no backup.
	jobs := func() (n int) {
		t.Helper()
		if err := dbtest.Peek(t, e.store).QueryRow(`SELECT COUNT(*) FROM jobs WHERE device_id = ?`, f.edge).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := jobs()
	p := root.requestRestore(f.edge, f.edgeV1, "")
	expect(t, "second request", p, http.StatusConflict, "")
	if n := jobs(); n != before {
		t.Errorf("the refused request queued %d jobs", n-before)
	}
	expectText(t, "second request", p, "already has an open restore (#"+strconv.FormatInt(id, 10)+")")
	expectBody(t, "second request", p, `href="`+restorePath(id)+`"`)
	p = root.get(versionPath(f.edge, f.edgeV1))
	expectBody(t, "version page of a device being restored", p, `id="version-restore-open"`, `href="`+restorePath(id)+`"`)

	// Approvals of another preview, of none, with a note too long.
	root.get(restorePath(id))
	p = root.post(restorePath(id)+"/approve", url.Values{"preview": {strings.Repeat("ab", 32)}})
	expect(t, "stale preview", p, http.StatusConflict, "")
	expectText(t, "stale preview", p, "The preview changed since this page showed it")
	p = root.post(restorePath(id)+"/approve", url.Values{"preview": {""}})
	expect(t, "no preview", p, http.StatusUnprocessableEntity, "")
	expectText(t, "no preview", p, "does not say which preview it approves")
	p = root.post(restorePath(id)+"/approve", url.Values{"preview": {*r.PreviewHash}, "note": {strings.Repeat("n", 2001)}})
	expect(t, "long note", p, http.StatusUnprocessableEntity, "")
	expectText(t, "long note", p, "The note can be at most 2000 characters")

	// Four eyes, on the settings page: the requester's own approval is
	// refused, in English and in Chinese.
	root.get("/settings")
	expect(t, "four eyes on", root.post("/settings/restore", url.Values{"four_eyes": {"1"}, "pending_hours": {"24"}, "approved_hours": {"1"}}),
		http.StatusSeeOther, "/settings?done=restore_saved#restore")
	p = root.get(restorePath(id))
	expectBody(t, "four eyes, the requester's page", p, `id="restore-four-eyes"`, `disabled aria-describedby="restore-four-eyes"`)
	p = root.post(restorePath(id)+"/approve", url.Values{"preview": {*r.PreviewHash}})
	expect(t, "four eyes", p, http.StatusForbidden, "")
	expectText(t, "four eyes", p, "Four eyes are required: someone other than the person who asked for this restore must approve it.")
	root.header.Set("Accept-Language", "zh-CN")
	p = root.post(restorePath(id)+"/approve", url.Values{"preview": {*r.PreviewHash}})
	expect(t, "four eyes, zh", p, http.StatusForbidden, "")
	expectText(t, "four eyes, zh", p, "已启用双人审批：必须由申请人以外的人批准此还原。", "等待审批")
	root.header.Del("Accept-Language")
	if now, _ := e.store.Restore(ctx, id); now.State != db.RestorePending {
		t.Fatalf("after refused approvals the restore is %s", now.State)
	}

	// Expired: its time ran out before the sweep ended it.
	if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, `UPDATE restores SET expires_at = ? WHERE id = ?`,
		time.Now().Add(-time.Minute).UTC().Format(db.TimeFormat), id); err != nil {
		t.Fatal(err)
	}
	bo := f.signedIn("bo")
	bo.get(restorePath(id))
	p = bo.post(restorePath(id)+"/approve", url.Values{"preview": {*r.PreviewHash}})
	expect(t, "expired", p, http.StatusConflict, "")
	expectText(t, "expired", p, "This restore request has expired")
	restoreUntil(t, e, id, 10*time.Second, db.RestoreExpired)
	p = bo.post(restorePath(id)+"/reject", url.Values{"note": {"too late"}})
	expect(t, "reject an expired one", p, http.StatusConflict, "")
	expectText(t, "reject an expired one", p, "This restore is now “Expired”")

	// Requests that cannot be.
	post := func(device, version, reason string) page {
		root.get(versionPath(f.edge, f.edgeV1))
		return root.post("/restores", url.Values{"device_id": {device}, "version": {version}, "reason": {reason}})
	}
	dev := func(id int64) string { return strconv.FormatInt(id, 10) }
	expect(t, "device abc", post("abc", f.edgeV1, ""), http.StatusNotFound, "")
	expect(t, "unknown device", post("999999", f.edgeV1, ""), http.StatusNotFound, "")
	expect(t, "unknown version", post(dev(f.edge), "00000000-0000-4000-8000-000000000404", ""), http.StatusNotFound, "")
	p = post(dev(f.edge), "", "")
	expect(t, "no version", p, http.StatusUnprocessableEntity, "")
	expectText(t, "no version", p, "Choose the version to restore.")
	p = post(dev(f.edge), f.branchV1, "")
	expect(t, "another device's version", p, http.StatusUnprocessableEntity, "")
	expectText(t, "another device's version", p, "This version is not one of edge-frr's versions")
	p = post(dev(f.ios), f.iosV1, "")
	expect(t, "platform without restore", p, http.StatusUnprocessableEntity, "")
	expectText(t, "platform without restore", p, "Restore is not supported on this platform.")
	p = post(dev(f.branchDev), f.branchV1, strings.Repeat("r", 2001))
	expect(t, "long reason", p, http.StatusUnprocessableEntity, "")
	expectText(t, "long reason", p, "The reason can be at most 2000 characters.")
	expectBody(t, "long reason", p, `id="restore-request-form"`, strings.Repeat("r", 2001))

	failed := "00000000-0000-4000-8000-0000000000f1"
	at := time.Now()
	msg := "connection refused"
	if err := e.store.InsertBackup(ctx, db.Backup{ID: failed, DeviceID: f.branchDev, StartedAt: at, FinishedAt: &at,
		ErrorMessage: &msg, Trigger: queue.TriggerManual}); err != nil {
		t.Fatal(err)
	}
	p = post(dev(f.branchDev), failed, "")
	expect(t, "failed backup", p, http.StatusUnprocessableEntity, "")
	expectText(t, "failed backup", p, "holds no configuration to put back")

	poke := func(q string, args ...any) {
		t.Helper()
		if _, err := dbtest.Poke(t, e.store).ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	poke(`UPDATE devices SET enabled = 0 WHERE id = ?`, f.branchDev)
	p = post(dev(f.branchDev), f.branchV1, "")
	expect(t, "disabled device", p, http.StatusUnprocessableEntity, "")
	expectText(t, "disabled device", p, "The device is disabled")
	expectBody(t, "disabled device's version page", root.get(versionPath(f.branchDev, f.branchV1)),
		`id="version-restore-why"`, `disabled aria-describedby="version-restore-why"`)
	poke(`UPDATE devices SET enabled = 1 WHERE id = ?`, f.branchDev)
	zone, err := e.store.CreateZone(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	poke(`UPDATE devices SET zone_id = ? WHERE id = ?`, zone.ID, f.branchDev)
	p = post(dev(f.branchDev), f.branchV1, "")
	expect(t, "remote zone", p, http.StatusUnprocessableEntity, "")
	expectText(t, "remote zone", p, "reached through a remote collector")
	if n := len(mustList(t, e, db.RestoreFilter{DeviceID: f.branchDev})); n != 0 {
		t.Errorf("%d restores of branch-frr after refused requests", n)
	}

	// The action shows on a platform that cannot restore, disabled,
	// saying why.
	p = root.get(versionPath(f.ios, f.iosV1))
	expectBody(t, "switch's version page", p, `id="version-restore-button" disabled`)
	expectText(t, "switch's version page", p, "Restore is not supported on this platform.")
	root.header.Set("Accept-Language", "zh-CN")
	expectText(t, "switch's version page, zh", root.get(versionPath(f.ios, f.iosV1)), "还原此版本", "此平台不支持配置还原。")
	root.header.Del("Accept-Language")

	// Bad ids.
	for _, path := range []string{"/restores/abc", "/restores/0", "/restores/999999", "/restores/-1"} {
		expect(t, path, root.get(path), http.StatusNotFound, "")
	}
	p = root.jobsCall(http.MethodGet, "/api/restores/999999", false)
	if p.status != http.StatusNotFound || !strings.Contains(p.body, `"code"`) {
		t.Errorf("API unknown restore: %d %s", p.status, p.body)
	}
	expect(t, "bad view", root.get("/restores?state=bogus"), http.StatusSeeOther, "/restores")
	expect(t, "unknown device's list", root.get("/restores?device=999999"), http.StatusNotFound, "")
	if strings.Contains(e.logs.String(), "level=ERROR") {
		t.Errorf("a refusal was logged as an error:\n%s", e.logs.String())
	}
}

// Every new form refuses a request without the page's CSRF token, and
// nothing changes.
func TestRestoreFormsNeedCSRF(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	root := f.signedIn("root")
	id := requested(t, root.requestRestore(f.edge, f.edgeV1, ""))
	restoreUntil(t, e, id, 30*time.Second, db.RestorePending)
	before, _ := restore.LoadSettings(context.Background(), e.store)
	for _, path := range []string{"/restores", restorePath(id) + "/approve", restorePath(id) + "/reject", restorePath(id) + "/cancel", "/settings/restore"} {
		for _, token := range []string{"", "not-the-token"} {
			p := root.post(path, url.Values{"csrf": {token}, "device_id": {strconv.FormatInt(f.branchDev, 10)}, "version": {f.branchV1},
				"four_eyes": {"1"}, "pending_hours": {"5"}, "approved_hours": {"2"}})
			expect(t, "POST "+path+" with token "+strconv.Quote(token), p, http.StatusForbidden, "")
		}
	}
	if r, _ := e.store.Restore(context.Background(), id); r.State != db.RestorePending {
		t.Errorf("the restore is %s", r.State)
	}
	if n := len(mustList(t, e, db.RestoreFilter{})); n != 1 {
		t.Errorf("%d restores", n)
	}
	if after, _ := restore.LoadSettings(context.Background(), e.store); after != before {
		t.Errorf("settings changed: %+v", after)
	}
}

// The restores section of the settings page: field errors in English
// and Chinese, then saved, audited and in force.
func TestRestoreSettings(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	root := f.signedIn("root")
	p := root.get("/settings")
	expectBody(t, "settings page", p, `id="restore-form"`, `name="pending_hours" type="number" min="1" max="720" step="1" value="24"`)
	bad := url.Values{"pending_hours": {"0"}, "approved_hours": {"x"}}
	p = root.post("/settings/restore", bad)
	expect(t, "bad hours", p, http.StatusUnprocessableEntity, "")
	expectText(t, "bad hours", p, "Hours a request waits: a whole number from 1 to 720.", "Hours an approved restore waits: a whole number from 1 to 720.")
	expectBody(t, "bad hours keep what was typed", p, `name="approved_hours" type="number" min="1" max="720" step="1" value="x"`)
	root.header.Set("Accept-Language", "zh-CN")
	p = root.post("/settings/restore", bad)
	expectText(t, "bad hours, zh", p, "申请等待时间：须为 1 到 720 之间的整数。", "已批准还原的等待时间：须为 1 到 720 之间的整数。")
	root.header.Del("Accept-Language")
	if set, _ := restore.LoadSettings(context.Background(), e.store); set != restore.DefaultSettings {
		t.Fatalf("refused settings stored: %+v", set)
	}
	p = root.post("/settings/restore", url.Values{"four_eyes": {"1"}, "pending_hours": {"48"}, "approved_hours": {"2"}})
	expect(t, "save", p, http.StatusSeeOther, "/settings?done=restore_saved#restore")
	expectText(t, "saved", root.get("/settings?done=restore_saved"), "Restore settings saved.")
	want := restore.Settings{FourEyes: true, PendingHours: 48, ApprovedHours: 2}
	if set, _ := restore.LoadSettings(context.Background(), e.store); set != want {
		t.Errorf("stored %+v, want %+v", set, want)
	}
	var audited map[string]any
	for _, a := range e.auditEntries() {
		if a.Action == "settings.update" && a.TargetID == restore.SettingKey {
			audited = a.Details
		}
	}
	if audited["four_eyes"] != true || audited["pending_hours"] != float64(48) || audited["approved_hours"] != float64(2) {
		t.Errorf("audit details %v", audited)
	}
	// An operator sees the settings, and cannot change them.
	oper := f.signedIn("oper")
	oper.get("/settings")
	expect(t, "operator saves", oper.post("/settings/restore", url.Values{"pending_hours": {"5"}, "approved_hours": {"5"}}), http.StatusForbidden, "")
}

// The restore's page and its script's JSON say the state in the
// page's language.
func TestRestoreStateJSON(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	ana := f.signedIn("ana")
	id := requested(t, ana.requestRestore(f.edge, f.edgeV1, ""))
	restoreUntil(t, e, id, 30*time.Second, db.RestorePending)
	ana.header.Set("Accept-Language", "zh-CN")
	p := ana.jobsCall(http.MethodGet, "/api"+restorePath(id), false)
	var got struct {
		ID        int64  `json:"id"`
		State     string `json:"state"`
		StateText string `json:"state_text"`
		Open      bool   `json:"open"`
	}
	if err := json.Unmarshal([]byte(p.body), &got); err != nil || p.status != http.StatusOK {
		t.Fatalf("%d %s: %v", p.status, p.body, err)
	}
	if got.ID != id || got.State != db.RestorePending || got.StateText != "等待审批" || !got.Open {
		t.Errorf("JSON %+v", got)
	}
	ana.get(restorePath(id))
	p = ana.post(restorePath(id)+"/cancel", nil)
	expect(t, "ana withdraws", p, http.StatusSeeOther, restorePath(id)+"?done=cancelled")
	p = ana.get(restorePath(id) + "?done=cancelled")
	expectText(t, "cancelled, zh", p, "已取消还原。未向设备发送任何内容。", "已取消")
	if strings.Contains(p.body, "data-open") {
		t.Error("an ended restore's page still follows it")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// A restore's job on the jobs page reads as the restore, links to it,
// and offers neither cancel nor "back up again": the jobs page refuses
// to cancel it (409), which its own page does while it waits.
func TestRestoreJobOnJobsPage(t *testing.T) {
	f := newRestoreFixture(t)
	e := f.e
	ctx := context.Background()
	root := f.signedIn("root")
	id := requested(t, root.requestRestore(f.edge, f.edgeV1, ""))
	r := restoreUntil(t, e, id, 30*time.Second, db.RestorePending)
	if _, err := e.store.ApproveRestore(ctx, id, db.Decision{Name: "bo"}, *r.PreviewHash, time.Now().Add(2*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	// Queued for an hour from now, so that the engine leaves it there.
	r, _, err := e.store.QueueRestore(ctx, id, time.Now().Add(time.Hour), nil)
	if err != nil || r.State != db.RestoreQueued || r.JobID == nil {
		t.Fatalf("queue: %+v %v", r, err)
	}
	job := strconv.FormatInt(*r.JobID, 10)
	p := root.get("/jobs")
	expectBody(t, "jobs page", p, `href="`+restorePath(id)+`">Restore #`+strconv.FormatInt(id, 10)+`: Waits until`)
	if strings.Contains(p.body, `action="/jobs/`+job+`/cancel"`) {
		t.Error("the jobs page offers to cancel the restore's job")
	}
	jobs := decodeJobs(t, root.jobsCall(http.MethodGet, "/api/jobs?state=active", false))
	found := false
	for _, it := range jobs.Items {
		if strconv.FormatInt(it.ID, 10) == job {
			found = true
			if it.ResultURL != restorePath(id) || it.CancelURL != "" || it.Retry || it.TriggerText != "Restore" {
				t.Errorf("restore job item %+v", it)
			}
		}
	}
	if !found {
		t.Fatalf("the restore's job is not among the active ones: %+v", jobs.Items)
	}
	p = root.jobsCall(http.MethodDelete, "/api/jobs/"+job, true)
	if p.status != http.StatusConflict || !strings.Contains(p.body, restorePath(id)) {
		t.Errorf("DELETE the restore's job: %d %s", p.status, p.body)
	}
	root.get("/jobs")
	p = root.post("/jobs/"+job+"/cancel", nil)
	expect(t, "cancel form", p, http.StatusConflict, "")
	expectText(t, "cancel form", p, "This job runs restore #"+strconv.FormatInt(id, 10)+".")
	if r, _ := e.store.Restore(ctx, id); r.State != db.RestoreQueued {
		t.Fatalf("after the jobs page's cancels the restore is %s", r.State)
	}
	// Its own page cancels it, job and all.
	p = root.get(restorePath(id))
	expectBody(t, "queued restore", p, `id="restore-cancel"`, "data-open")
	expect(t, "cancel on its page", root.post(restorePath(id)+"/cancel", nil), http.StatusSeeOther, restorePath(id)+"?done=cancelled")
	if r, _ := e.store.Restore(ctx, id); r.State != db.RestoreCancelled {
		t.Errorf("after its page's cancel the restore is %s", r.State)
	}
	js, err := e.store.Queue.GetJobs(ctx, []int64{*r.JobID})
	if err != nil || len(js) != 1 || js[0].State != queue.JobCancelled {
		t.Errorf("its job: %+v %v", js, err)
	}
}
