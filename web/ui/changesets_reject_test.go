package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/restore"
	"backupd/db"
)

// An approver rejects a ready change set with a note: it is cancelled,
// its devices skipped, the page says who rejected it and why, and the
// rejection is audited. pat, who may push but not approve, is offered
// no reject and is refused one; a form without the page's token is
// refused; a long note is refused with the note kept; a set that runs
// is no longer rejected. Four eyes do not bind a rejection: the writer,
// who may approve, rejects their own.
func TestChangeSetReject(t *testing.T) {
	f := newChangeSetFixture(t)
	e := f.e
	ctx := context.Background()
	if err := restore.SaveSettings(ctx, e.store, restore.Settings{FourEyes: true, PendingHours: 24, ApprovedHours: 1}); err != nil {
		t.Fatal(err)
	}
	pat := f.signedIn("pat")
	id := created(t, pat.createChangeSet(changeSetForm("to reject", "edge-frr", "branch-frr")))
	path := changeSetPath(id)

	p := pat.get(path)
	if strings.Contains(p.body, `id="changeset-reject"`) {
		t.Error("pat, who may not approve, is offered a reject")
	}
	expect(t, "pat rejects", pat.post(path+"/reject", url.Values{"note": {"no"}}), http.StatusForbidden, "")

	bo := f.signedIn("bo")
	p = bo.get(path)
	expectBody(t, "bo's page", p, `id="changeset-reject" formaction="`+path+`/reject"`, `id="changeset-approve"`)
	for _, token := range []string{"", "not-the-token"} {
		expect(t, "reject with token "+token, bo.post(path+"/reject", url.Values{"csrf": {token}, "note": {"x"}}), http.StatusForbidden, "")
	}
	p = bo.post(path+"/reject", url.Values{"note": {strings.Repeat("n", 2001)}})
	expect(t, "long note", p, http.StatusUnprocessableEntity, "")
	expectText(t, "long note", p, "The note can be at most 2000 characters.")
	expectBody(t, "long note kept", p, ">"+strings.Repeat("n", 2001)+"</textarea>")
	if c, _ := e.store.ChangeSet(ctx, id); c.State != db.ChangeSetReady {
		t.Fatalf("after refused rejections the set is %s", c.State)
	}

	expect(t, "bo rejects", bo.post(path+"/reject", url.Values{"note": {" not in the window "}}),
		http.StatusSeeOther, path+"?done=rejected")
	c, err := e.store.ChangeSet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != db.ChangeSetCancelled || deref(c.DecidedByName) != "bo" || c.DecisionNote != "not in the window" || c.Error != nil {
		t.Errorf("rejected: %s by %q, note %q, error %q", c.State, deref(c.DecidedByName), c.DecisionNote, deref(c.Error))
	}
	targets, _ := e.store.ChangeSetTargets(ctx, id)
	for _, tg := range targets {
		if tg.State != db.TargetSkipped {
			t.Errorf("%s is %s", tg.DeviceName, tg.State)
		}
	}
	if a := lastAudit(t, e, "changeset.reject"); a.Username != "bo" || a.TargetID != strconv.FormatInt(id, 10) {
		t.Errorf("audit %+v", a)
	}
	p = pat.get(path + "?done=rejected")
	expectText(t, "rejected", p, "Change set rejected. Nothing was sent to any device.", "Cancelled",
		"Rejected by bo: not in the window", "Skipped")
	expectBody(t, "rejected", p, `id="changeset-rejected"`)
	if strings.Contains(p.body, "Approved by") || strings.Contains(p.body, "data-live") {
		t.Error("a rejected set reads as approved, or is still followed")
	}
	p = bo.post(path+"/reject", nil)
	expect(t, "reject twice", p, http.StatusConflict, "")
	expectText(t, "reject twice", p, "This change set is now “Cancelled”")
	bo.header.Set("Accept-Language", "zh-CN")
	expectText(t, "rejected, zh", bo.get(path), "由 bo 驳回：not in the window", "已取消")
	bo.header.Del("Accept-Language")

	// Four eyes do not bind a rejection: root rejects root's own set,
	// without a note.
	root := f.signedIn("root")
	own := created(t, root.createChangeSet(changeSetForm("own", "edge-frr")))
	root.get(changeSetPath(own))
	expect(t, "root rejects own", root.post(changeSetPath(own)+"/reject", nil), http.StatusSeeOther, changeSetPath(own)+"?done=rejected")
	expectText(t, "root's own", root.get(changeSetPath(own)), "Rejected by root")

	// A set that runs is not rejected: no button, and the form is
	// refused with the state.
	run := created(t, pat.createChangeSet(changeSetForm("runs", "edge-frr")))
	bo.get(changeSetPath(run))
	expect(t, "bo approves", bo.post(changeSetPath(run)+"/approve", nil), http.StatusSeeOther, changeSetPath(run)+"?done=approved")
	p = bo.get(changeSetPath(run))
	if c, _ := e.store.ChangeSet(ctx, run); c.State == db.ChangeSetRunning && strings.Contains(p.body, `id="changeset-reject"`) {
		t.Error("a running set offers a reject")
	}
	p = bo.post(changeSetPath(run)+"/reject", url.Values{"note": {"too late"}})
	expect(t, "reject a running set", p, http.StatusConflict, "")
	expectText(t, "reject a running set", p, "This change set is now")
	if c, _ := e.store.ChangeSet(ctx, run); c.State == db.ChangeSetCancelled || c.DecisionNote == "too late" {
		t.Errorf("a running set was rejected: %s %q", c.State, c.DecisionNote)
	}
	changeSetUntil(t, e, run, 60*time.Second, db.ChangeSetDone, db.ChangeSetStopped)
}
