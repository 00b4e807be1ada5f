package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

// A change set's push job on the jobs page reads as its change set and
// links to it, for those who may see the set: root, in English and in
// Chinese. bp, who pushes within Branch only, sees the job of
// branch-frr but not the set (it holds edge-frr too), and the viewer may
// see no change set at all: for both it is a push job like any, and
// neither the set's number nor its name reaches them.
func TestChangeSetPushJobOnJobsPage(t *testing.T) {
	f := newChangeSetFixture(t)
	e := f.e
	ctx := context.Background()
	root := f.signedIn("root")
	id := created(t, root.createChangeSet(changeSetForm("prefix list", "edge-frr", "branch-frr")))
	if _, err := e.store.ApproveChangeSet(ctx, id, db.Decision{Name: "bo"}, time.Now().Add(2*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.StartChangeSet(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	targets, err := e.store.ChangeSetTargets(ctx, id)
	if err != nil || len(targets) != 2 || targets[1].DeviceName != "branch-frr" {
		t.Fatalf("targets %+v %v", targets, err)
	}
	// Queued for an hour from now, so that the engine leaves it there.
	tg, enq, err := e.store.QueueChangeSetTarget(ctx, targets[1].ID, time.Now().Add(time.Hour))
	if err != nil || enq.Busy != nil || tg.JobID == nil {
		t.Fatalf("queue: %+v %+v %v", tg, enq, err)
	}
	job := *tg.JobID
	set := strconv.FormatInt(id, 10)

	p := root.get("/jobs")
	expectBody(t, "root's jobs page", p, `href="`+changeSetPath(id)+`">`)
	expectText(t, "root's jobs page", p, "Change set #"+set+" “prefix list”: Waits until")
	it := pushJobItem(t, root, job)
	if it.ResultURL != changeSetPath(id) || !strings.HasPrefix(it.ResultText, "Change set #"+set+" “prefix list”: Waits until") ||
		it.TriggerText != "Push" {
		t.Errorf("root's item %+v", it)
	}
	root.header.Set("Accept-Language", "zh-CN")
	if it := pushJobItem(t, root, job); it.ResultURL != changeSetPath(id) || !strings.HasPrefix(it.ResultText, "变更集 #"+set+"“prefix list”：") {
		t.Errorf("root's item in Chinese %+v", it)
	}
	root.header.Del("Accept-Language")

	for _, name := range []string{"bp", "viewer"} {
		b := f.signedIn(name)
		p := b.get("/jobs")
		expectBody(t, name+"'s jobs page", p, `branch-frr`)
		it := pushJobItem(t, b, job)
		if it.ResultURL != "" || it.TriggerText != "Push" || strings.Contains(it.ResultText, "Change set") {
			t.Errorf("%s's item %+v", name, it)
		}
		api := b.jobsCall(http.MethodGet, "/api/jobs?state=active", false)
		for _, leak := range []string{changeSetPath(id), "prefix list", "Change set #"} {
			if strings.Contains(p.body, leak) || strings.Contains(api.body, leak) {
				t.Errorf("%s is shown %q of a change set out of reach", name, leak)
			}
		}
	}
}

// A change set's push job is stopped by cancelling the change set, never
// from the jobs page: cutting a running push would leave its device half
// configured. The page offers neither cancel nor "back up again" on it,
// and the cancel form and DELETE /api/jobs/{id} refuse it, in English
// and in Chinese, the job left queued.
func TestChangeSetPushJobNotCancelledFromJobsPage(t *testing.T) {
	f := newChangeSetFixture(t)
	e := f.e
	ctx := context.Background()
	root := f.signedIn("root")
	id := created(t, root.createChangeSet(changeSetForm("prefix list", "edge-frr")))
	if _, err := e.store.ApproveChangeSet(ctx, id, db.Decision{Name: "bo"}, time.Now().Add(2*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.StartChangeSet(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	targets, err := e.store.ChangeSetTargets(ctx, id)
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets %+v %v", targets, err)
	}
	tg, _, err := e.store.QueueChangeSetTarget(ctx, targets[0].ID, time.Now().Add(time.Hour))
	if err != nil || tg.JobID == nil {
		t.Fatalf("queue: %+v %v", tg, err)
	}
	job := strconv.FormatInt(*tg.JobID, 10)

	p := root.get("/jobs")
	if strings.Contains(p.body, `action="/jobs/`+job+`/cancel"`) {
		t.Error("the jobs page offers to cancel the push job")
	}
	var list struct {
		Items []struct {
			ID        int64  `json:"id"`
			CancelURL string `json:"cancel_url"`
			Retry     bool   `json:"retry"`
		} `json:"items"`
	}
	api := root.jobsCall(http.MethodGet, "/api/jobs?state=active", false)
	if err := json.Unmarshal([]byte(api.body), &list); err != nil {
		t.Fatal(err)
	}
	for _, it := range list.Items {
		if strconv.FormatInt(it.ID, 10) == job && (it.CancelURL != "" || it.Retry) {
			t.Errorf("the push job's item offers cancel %q or retry %v", it.CancelURL, it.Retry)
		}
	}
	p = root.jobsCall(http.MethodDelete, "/api/jobs/"+job, true)
	if p.status != http.StatusConflict || !strings.Contains(p.body, "cancel the change set on its page") {
		t.Errorf("DELETE the push job: %d %s", p.status, p.body)
	}
	for _, c := range []struct{ lang, says string }{
		{"en", "This job pushes a change set to its device."},
		{"zh-CN", "此任务向其设备推送变更集。"},
	} {
		root.header.Set("Accept-Language", c.lang)
		root.get("/jobs")
		p = root.post("/jobs/"+job+"/cancel", nil)
		expect(t, c.lang+" cancel form", p, http.StatusConflict, "")
		expectText(t, c.lang+" cancel form", p, c.says)
	}
	root.header.Del("Accept-Language")
	if js, err := e.store.GetJobs(ctx, []int64{*tg.JobID}); err != nil || len(js) != 1 || js[0].State != "queued" {
		t.Fatalf("after the jobs page's cancels the push job is %+v %v", js, err)
	}
}

// pushJob is a job as GET /api/jobs lists it, what these tests read.
type pushJob struct {
	ID          int64  `json:"id"`
	TriggerText string `json:"trigger_text"`
	ResultText  string `json:"result_text"`
	ResultURL   string `json:"result_url"`
}

// pushJobItem is job as b's GET /api/jobs lists it among the active ones.
func pushJobItem(t *testing.T, b *browser, job int64) pushJob {
	t.Helper()
	p := b.jobsCall(http.MethodGet, "/api/jobs?state=active", false)
	var out struct {
		Items []pushJob `json:"items"`
	}
	if err := json.Unmarshal([]byte(p.body), &out); p.status != http.StatusOK || err != nil {
		t.Fatalf("GET /api/jobs: %d %v %s", p.status, err, p.body)
	}
	for _, it := range out.Items {
		if it.ID == job {
			return it
		}
	}
	t.Fatalf("job %d is not among the active ones: %s", job, p.body)
	return pushJob{}
}

// A restore's job leads to the restore only for those who may see
// restores: the viewer, who may not, sees a restore job like any, its
// number not shown, and still no cancel (its page cancels it).
func TestRestoreJobLinkNeedsRestoreRights(t *testing.T) {
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
	if it := pushJobItem(t, root, *r.JobID); it.ResultURL != restorePath(id) {
		t.Errorf("root's item %+v", it)
	}
	viewer := f.signedIn("viewer")
	p := viewer.get("/jobs")
	expectBody(t, "viewer's jobs page", p, "edge-frr")
	it := pushJobItem(t, viewer, *r.JobID)
	if it.ResultURL != "" || it.TriggerText != "Restore" || strings.Contains(it.ResultText, "#"+strconv.FormatInt(id, 10)) {
		t.Errorf("viewer's item %+v", it)
	}
	if strings.Contains(p.body, restorePath(id)) || strings.Contains(p.body, `action="/jobs/`+strconv.FormatInt(*r.JobID, 10)+`/cancel"`) {
		t.Error("the viewer's jobs page links the restore or offers to cancel its job")
	}
}
