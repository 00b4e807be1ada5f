package db_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
)

// Change sets: made with their targets in order, rendered, approved,
// run target by target as push jobs, stopped, cancelled and expired.

func newChangeSet(t *testing.T, s *db.Store, devices ...int64) db.ChangeSet {
	t.Helper()
	n := db.NewChangeSet{Name: "ntp servers", Body: "ntp server {{.ntp}}\n", Kind: db.ChangeSetTemplate,
		Variables: `{"ntp":"192.0.2.123"}`, Concurrency: 2, StopAfterFailures: 1, CreatedByName: "alice"}
	for _, d := range devices {
		n.Targets = append(n.Targets, db.NewTarget{DeviceID: d})
	}
	c, err := s.CreateChangeSet(context.Background(), n, &db.AuditEntry{Username: "alice", Interface: "api", Action: "change_set.create"})
	if err != nil {
		t.Fatalf("CreateChangeSet: %v", err)
	}
	return c
}

// renderAll renders every target of c without error.
func renderAll(t *testing.T, s *db.Store, c db.ChangeSet) db.ChangeSet {
	t.Helper()
	targets, err := s.ChangeSetTargets(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var renders []db.TargetRender
	for _, tg := range targets {
		renders = append(renders, db.TargetRender{TargetID: tg.ID, Rendered: "ntp server 192.0.2.123\n"})
	}
	c, err = s.SetChangeSetRendered(context.Background(), c.ID, renders, time.Time{}, nil)
	if err != nil {
		t.Fatalf("SetChangeSetRendered: %v", err)
	}
	return c
}

func wantChangeSetState(t *testing.T, err error, have string) {
	t.Helper()
	var st *db.ErrChangeSetState
	if !errors.As(err, &st) || st.Have != have {
		t.Fatalf("err = %v; want *ErrChangeSetState{Have: %s}", err, have)
	}
}

// What a change set may hold is checked before anything is stored.
func TestCreateChangeSetRefusesBadInput(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1, d2 := retDevice(t, s, "d1"), retDevice(t, s, "d2")
	ok := db.NewChangeSet{Name: "n", Body: "b", CreatedByName: "a", Targets: []db.NewTarget{{DeviceID: d1}}}
	for _, tc := range []struct {
		name  string
		edit  func(*db.NewChangeSet)
		field string
	}{
		{"no name", func(n *db.NewChangeSet) { n.Name = " " }, "name"},
		{"no body", func(n *db.NewChangeSet) { n.Body = "" }, "body"},
		{"body too long", func(n *db.NewChangeSet) { n.Body = strings.Repeat("x", db.ChangeSetBodyMax+1) }, "body"},
		{"unknown kind", func(n *db.NewChangeSet) { n.Kind = "script" }, "kind"},
		{"negative concurrency", func(n *db.NewChangeSet) { n.Concurrency = -1 }, "concurrency"},
		{"no devices", func(n *db.NewChangeSet) { n.Targets = nil }, "targets"},
		{"a device twice", func(n *db.NewChangeSet) { n.Targets = []db.NewTarget{{DeviceID: d1}, {DeviceID: d2}, {DeviceID: d1}} }, "targets"},
		{"unknown device", func(n *db.NewChangeSet) { n.Targets = []db.NewTarget{{DeviceID: d1}, {DeviceID: 999999}} }, "targets"},
		{"variables not an object", func(n *db.NewChangeSet) { n.Variables = `"x"` }, "variables"},
		{"target variables not an object", func(n *db.NewChangeSet) { n.Targets = []db.NewTarget{{DeviceID: d1, Variables: "{"}} }, "targets.variables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := ok
			n.Targets = append([]db.NewTarget{}, ok.Targets...)
			tc.edit(&n)
			_, err := s.CreateChangeSet(ctx, n, nil)
			var field *db.ErrInvalidField
			if !errors.As(err, &field) || field.Field != tc.field {
				t.Fatalf("err = %v; want *ErrInvalidField on %s", err, tc.field)
			}
		})
	}
	if list, _, err := s.ListChangeSets(ctx, db.ChangeSetFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("refused change sets were stored: %+v, %v", list, err)
	}
}

// A change set's life: draft, rendered (a render error keeps it a
// draft), approved, started, its targets queued as push jobs (one whose
// device is busy waits), run and ended with their jobs, counted by state,
// and the set stopped, its targets not run skipped. Every move refuses a
// set or target that moved on, with the state found.
func TestChangeSetRun(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1, d2, d3 := retDevice(t, s, "d1"), retDevice(t, s, "d2"), retDevice(t, s, "d3")
	c := newChangeSet(t, s, d3, d1, d2)
	if c.State != db.ChangeSetDraft || c.Targets != 3 || c.Concurrency != 2 || c.Kind != db.ChangeSetTemplate {
		t.Fatalf("new change set = %+v", c)
	}
	targets, err := s.ChangeSetTargets(ctx, c.ID)
	if err != nil || len(targets) != 3 || targets[0].DeviceID != d3 || targets[2].DeviceID != d2 || targets[0].State != db.TargetPending {
		t.Fatalf("targets = %+v, %v; want d3, d1, d2 pending", targets, err)
	}
	_, err = s.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob"}, time.Time{}, nil)
	wantChangeSetState(t, err, db.ChangeSetDraft)

	// A render error keeps it a draft; too few renders are refused.
	renders := []db.TargetRender{{TargetID: targets[0].ID, Rendered: "x\n"}, {TargetID: targets[1].ID, Error: `missing variable "ntp"`},
		{TargetID: targets[2].ID, Rendered: "x\n"}}
	if c, err = s.SetChangeSetRendered(ctx, c.ID, renders, time.Time{}, nil); err != nil || c.State != db.ChangeSetDraft {
		t.Fatalf("render with an error = %+v, %v; want a draft", c, err)
	}
	if _, err := s.SetChangeSetRendered(ctx, c.ID, renders[:2], time.Time{}, nil); err == nil {
		t.Fatal("a render of two of three targets was taken")
	}
	if tg, err := s.ChangeSetTarget(ctx, targets[1].ID); err != nil || tg.RenderError == nil || tg.Rendered != nil {
		t.Fatalf("the target that failed to render: %+v, %v", tg, err)
	}
	c = renderAll(t, s, c)
	if c.State != db.ChangeSetReady {
		t.Fatalf("rendered change set is %s; want ready", c.State)
	}
	if c, err = s.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob", Note: "go"}, time.Now().Add(time.Hour), nil); err != nil ||
		c.State != db.ChangeSetApproved || c.DecidedByName == nil || *c.DecidedByName != "bob" {
		t.Fatalf("ApproveChangeSet = %+v, %v", c, err)
	}
	if _, _, err := s.QueueChangeSetTarget(ctx, targets[0].ID, time.Time{}); err == nil {
		t.Fatal("a target of a set not started was queued")
	}
	if c, err = s.StartChangeSet(ctx, c.ID, nil); err != nil || c.State != db.ChangeSetRunning || c.StartedAt == nil {
		t.Fatalf("StartChangeSet = %+v, %v", c, err)
	}
	_, err = s.StartChangeSet(ctx, c.ID, nil)
	wantChangeSetState(t, err, db.ChangeSetRunning)

	// d1's backup runs: its target waits; the others are queued.
	enqueueNow(t, s, queue.TriggerManual, d1)
	bc, err := s.ClaimJobs(ctx, "engine", 1, nil)
	if err != nil || len(bc) != 1 {
		t.Fatal(bc, err)
	}
	tg1, enq, err := s.QueueChangeSetTarget(ctx, targets[1].ID, time.Time{})
	if err != nil || enq.Busy == nil || tg1.State != db.TargetPending {
		t.Fatalf("queuing d1's target while its backup runs = %+v, %+v, %v; want busy", tg1, enq, err)
	}
	var claims []queue.Claim
	for _, i := range []int{0, 2} {
		tg, enq, err := s.QueueChangeSetTarget(ctx, targets[i].ID, time.Time{})
		if err != nil || enq.Busy != nil || tg.State != db.TargetQueued || tg.JobID == nil {
			t.Fatalf("QueueChangeSetTarget(%d) = %+v, %+v, %v", i, tg, enq, err)
		}
		if _, _, err := s.QueueChangeSetTarget(ctx, targets[i].ID, time.Time{}); err == nil {
			t.Fatalf("target %d queued twice", i)
		}
	}
	claims, err = s.ClaimJobsOfKinds(ctx, "pusher", 5, nil, []string{queue.KindPush})
	if err != nil || len(claims) != 2 || claims[0].Trigger != queue.TriggerPush {
		t.Fatalf("push claims = %+v, %v", claims, err)
	}
	for _, cl := range claims {
		tg, err := s.StartChangeSetTarget(ctx, cl.WorkID, cl)
		if err != nil || tg.State != db.TargetRunning || tg.PreBackupID == nil || *tg.PreBackupID != cl.BackupID {
			t.Fatalf("StartChangeSetTarget = %+v, %v", tg, err)
		}
		if err := s.SetChangeSetTargetStage(ctx, cl.WorkID, "apply"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendChangeSetTargetTranscript(ctx, cl.WorkID, []db.TranscriptSegment{{Kind: "sent", Text: "ntp server ********\n"}}); err != nil {
			t.Fatal(err)
		}
	}
	ok, bad := claims[0], claims[1]
	postID, err := s.RecordExtraAttempt(ctx, ok, queue.TriggerPush, time.Now(), queue.Outcome{Success: true, Text: "ntp\n", FinishedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetChangeSetTargetPostBackup(ctx, ok.WorkID, postID); err != nil {
		t.Fatal(err)
	}
	if tg, err := s.FinishChangeSetTarget(ctx, ok.WorkID, db.TargetEnd{State: db.TargetSucceeded}, &ok, nil); err != nil ||
		tg.State != db.TargetSucceeded || tg.PostBackupID == nil || *tg.PostBackupID != postID {
		t.Fatalf("FinishChangeSetTarget(ok) = %+v, %v", tg, err)
	}
	if _, err := s.FinishChangeSetTarget(ctx, bad.WorkID, db.TargetEnd{State: db.TargetFailed, Error: "% Invalid input", Reason: "apply"}, &ok, nil); err == nil {
		t.Fatal("a target was finished with another target's claim")
	}
	if _, err := s.FinishChangeSetTarget(ctx, bad.WorkID, db.TargetEnd{State: db.TargetFailed, Error: "% Invalid input", Reason: "apply"}, &bad, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.FinishChangeSetTarget(ctx, bad.WorkID, db.TargetEnd{State: db.TargetSucceeded}, nil, nil)
	var ts *db.ErrTargetState
	if !errors.As(err, &ts) || ts.Have != db.TargetFailed {
		t.Fatalf("finishing a failed target again: %v; want *ErrTargetState failed", err)
	}
	if segs, _, err := s.ChangeSetTargetTranscript(ctx, ok.WorkID); err != nil || len(segs) != 1 {
		t.Fatalf("transcript = %+v, %v", segs, err)
	}
	jobs, err := s.GetJobs(ctx, []int64{ok.ID, bad.ID})
	if err != nil || len(jobs) != 2 {
		t.Fatal(jobs, err)
	}
	for _, j := range jobs {
		want := queue.JobSucceeded
		if j.ID == bad.ID {
			want = queue.JobFailed
		}
		if j.State != want || j.Kind != queue.KindPush {
			t.Errorf("push job %d: %s %s; want %s", j.ID, j.Kind, j.State, want)
		}
	}
	counts, err := s.ChangeSetCounts(ctx, c.ID)
	want := map[string]int{db.TargetSucceeded: 1, db.TargetFailed: 1, db.TargetPending: 1}
	if err != nil || !maps.Equal(counts, want) {
		t.Fatalf("counts = %v, %v; want %v", counts, err, want)
	}

	// One failure is the limit: stopped, the pending target skipped.
	if c, err = s.FinishChangeSet(ctx, c.ID, db.ChangeSetStopped, "1 device failed", nil); err != nil || c.State != db.ChangeSetStopped ||
		c.Error == nil || c.FinishedAt == nil {
		t.Fatalf("FinishChangeSet = %+v, %v", c, err)
	}
	counts, _ = s.ChangeSetCounts(ctx, c.ID)
	want = map[string]int{db.TargetSucceeded: 1, db.TargetFailed: 1, db.TargetSkipped: 1}
	if !maps.Equal(counts, want) {
		t.Fatalf("counts after the stop = %v; want %v", counts, want)
	}
	_, err = s.CancelChangeSet(ctx, c.ID, nil, "", nil)
	wantChangeSetState(t, err, db.ChangeSetStopped)
}

// Cancelling a running change set skips its pending targets and its
// queued ones (their jobs cancelled with them) and lets a running one
// end; a push job whose process stops leaves its target interrupted, and
// a queued push job cancelled on the jobs page skips its target.
func TestChangeSetCancelAndInterrupt(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1, d2, d3, d4 := retDevice(t, s, "d1"), retDevice(t, s, "d2"), retDevice(t, s, "d3"), retDevice(t, s, "d4")
	c := renderAll(t, s, newChangeSet(t, s, d1, d2, d3, d4))
	if _, err := s.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob"}, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartChangeSet(ctx, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	targets, _ := s.ChangeSetTargets(ctx, c.ID)
	var jobs []int64
	for _, tg := range targets[:3] {
		_, enq, err := s.QueueChangeSetTarget(ctx, tg.ID, time.Time{})
		if err != nil || enq.JobID == 0 {
			t.Fatal(enq, err)
		}
		jobs = append(jobs, enq.JobID)
	}
	// d1's push runs under a process that will stop; d2's job is cancelled
	// on the jobs page; d3's waits; d4's was never queued.
	claims, err := s.ClaimJobsOfKinds(ctx, "pusher", 1, []int64{jobs[0]}, []string{queue.KindPush})
	if err != nil || len(claims) != 1 {
		t.Fatal(claims, err)
	}
	if _, err := s.StartChangeSetTarget(ctx, targets[0].ID, claims[0]); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.CancelJob(ctx, jobs[1]); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if tg, err := s.ChangeSetTarget(ctx, targets[1].ID); err != nil || tg.State != db.TargetSkipped {
		t.Fatalf("target of a cancelled job: %+v, %v; want skipped", tg, err)
	}
	// A running set is cancelled, never rejected: its approval stands.
	if _, err := s.CancelChangeSet(ctx, c.ID, &db.Decision{Name: "carol", Note: "wrong server"}, "", nil); err == nil {
		t.Fatal("a running change set was rejected")
	} else {
		wantChangeSetState(t, err, db.ChangeSetRunning)
	}
	if c, err = s.CancelChangeSet(ctx, c.ID, nil, "cancelled by carol", nil); err != nil ||
		c.State != db.ChangeSetCancelled || c.Decision != db.DecisionApproved || derefString(c.Error) != "cancelled by carol" {
		t.Fatalf("CancelChangeSet = %+v, %v", c, err)
	}
	if got, err := s.GetJobs(ctx, []int64{jobs[2]}); err != nil || got[0].State != queue.JobCancelled {
		t.Fatalf("the queued target's job: %+v, %v; want cancelled", got, err)
	}
	res, err := s.InterruptJobs(ctx, "pusher", 10)
	if err != nil || len(res.Work) != 1 || res.Work[0].Kind != queue.KindPush {
		t.Fatalf("InterruptJobs = %+v, %v", res, err)
	}
	counts, err := s.ChangeSetCounts(ctx, c.ID)
	want := map[string]int{db.TargetInterrupted: 1, db.TargetSkipped: 3}
	if err != nil || !maps.Equal(counts, want) {
		t.Fatalf("counts = %v, %v; want %v", counts, err, want)
	}
	for _, d := range []int64{d1, d2, d3, d4} {
		if n := activeJobs(t, s, d); n != 0 {
			t.Errorf("device %d has %d active jobs", d, n)
		}
	}
}

// A dry run that renders every device makes the set ready until the
// time it is given; one that does not leaves a draft, which never
// expires, and a ready set past its time cannot be approved.
func TestChangeSetRenderSetsItsExpiry(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	c := newChangeSet(t, s, retDevice(t, s, "d1"))
	targets, err := s.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	c, err = s.SetChangeSetRendered(ctx, c.ID, []db.TargetRender{{TargetID: targets[0].ID, Rendered: "ntp server 192.0.2.1\n"}}, until, nil)
	if err != nil || c.State != db.ChangeSetReady || c.ExpiresAt == nil || *c.ExpiresAt != until.Format(db.TimeFormat) {
		t.Fatalf("ready set: %+v, %v; want it to expire at %s", c, err, until.Format(db.TimeFormat))
	}
	c, err = s.SetChangeSetRendered(ctx, c.ID, []db.TargetRender{{TargetID: targets[0].ID, Error: "no peer"}}, until, nil)
	if err != nil || c.State != db.ChangeSetDraft || c.ExpiresAt != nil {
		t.Fatalf("draft again: %+v, %v; want no expiry", c, err)
	}
	past := time.Now().Add(-time.Minute)
	if _, err := s.SetChangeSetRendered(ctx, c.ID, []db.TargetRender{{TargetID: targets[0].ID, Rendered: "ntp server 192.0.2.1\n"}}, past, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob"}, time.Now().Add(time.Hour), nil); !errors.Is(err, db.ErrChangeSetExpired) {
		t.Fatalf("approval of a set past its time: %v; want ErrChangeSetExpired", err)
	}
}

// Ready and approved change sets expire; drafts (their author's work)
// and running ones do not. An approved set past its time cannot start.
func TestExpireChangeSets(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := retDevice(t, s, "d1")
	past := time.Now().Add(-time.Minute)
	draft := newChangeSet(t, s, d)
	ready := renderAll(t, s, newChangeSet(t, s, d))
	approved := renderAll(t, s, newChangeSet(t, s, d))
	if _, err := s.ApproveChangeSet(ctx, approved.ID, db.Decision{Name: "bob"}, past, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartChangeSet(ctx, approved.ID, nil); !errors.Is(err, db.ErrChangeSetExpired) {
		t.Fatalf("start of an expired set: %v; want ErrChangeSetExpired", err)
	}
	running := renderAll(t, s, newChangeSet(t, s, d))
	if _, err := s.ApproveChangeSet(ctx, running.ID, db.Decision{Name: "bob"}, time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartChangeSet(ctx, running.ID, nil); err != nil {
		t.Fatal(err)
	}
	poke := func(id int64) {
		if _, err := s.Writer().Exec(`UPDATE change_sets SET expires_at = ? WHERE id = ?`, past.UTC().Format(db.TimeFormat), id); err != nil {
			t.Fatal(err)
		}
	}
	poke(draft.ID)
	poke(ready.ID)
	poke(running.ID)
	moved, err := s.ExpireChangeSets(ctx, time.Now(), &db.AuditEntry{Interface: "system", Action: "change_set.expire"})
	if err != nil || len(moved) != 2 || moved[0].ID != ready.ID || moved[1].ID != approved.ID || moved[0].State != db.ChangeSetExpired {
		t.Fatalf("ExpireChangeSets = %+v, %v; want the ready and the approved set", moved, err)
	}
	// Nothing of an expired set will run: its devices are skipped.
	for _, c := range moved {
		if counts, err := s.ChangeSetCounts(ctx, c.ID); err != nil || counts[db.TargetSkipped] != 1 || len(counts) != 1 {
			t.Errorf("devices of expired set %d: %v, %v; want 1 skipped", c.ID, counts, err)
		}
	}
	for id, want := range map[int64]string{draft.ID: db.ChangeSetDraft, running.ID: db.ChangeSetRunning} {
		if c, err := s.ChangeSet(ctx, id); err != nil || c.State != want {
			t.Errorf("change set %d: %+v, %v; want %s", id, c, err, want)
		}
	}
	list, next, err := s.ListChangeSets(ctx, db.ChangeSetFilter{States: []string{db.ChangeSetExpired}, Limit: 1})
	if err != nil || len(list) != 1 || list[0].ID != approved.ID || next != approved.ID {
		t.Fatalf("first page of expired sets = %+v, next %d, %v", list, next, err)
	}
	list, next, err = s.ListChangeSets(ctx, db.ChangeSetFilter{States: []string{db.ChangeSetExpired}, Limit: 1, BeforeID: next})
	if err != nil || len(list) != 1 || list[0].ID != ready.ID || next != 0 {
		t.Fatalf("second page of expired sets = %+v, next %d, %v", list, next, err)
	}
	if _, _, err := s.ListChangeSets(ctx, db.ChangeSetFilter{States: []string{"lost"}}); err == nil {
		t.Fatal("a list by an unknown state was taken")
	}
	// A user scoped to a group sees the sets whose every device lies in
	// it: not one with a device outside it (or in no group).
	g := createGroup(t, s, "site", nil)
	inGroup := insertDevice(t, s, "in-group", &g.ID, nil, nil)
	mine := newChangeSet(t, s, inGroup)
	mixed := newChangeSet(t, s, inGroup, d)
	list, _, err = s.ListChangeSets(ctx, db.ChangeSetFilter{Scope: &db.Scope{GroupIDs: []int64{g.ID}}})
	if err != nil || len(list) != 1 || list[0].ID != mine.ID {
		t.Fatalf("a scoped user sees %+v, %v; want only change set %d (not %d)", list, err, mine.ID, mixed.ID)
	}
	if list, _, err := s.ListChangeSets(ctx, db.ChangeSetFilter{Scope: &db.Scope{All: true}}); err != nil || len(list) != 6 {
		t.Fatalf("an unscoped user sees %d change sets, %v; want 6", len(list), err)
	}
}

// A rejection is a cancel by an approver of a set waiting to run: it
// says who decided and that they rejected it. A draft (nothing to
// decide) and a set already running are refused as they stand.
func TestChangeSetReject(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := retDevice(t, s, "d1")
	draft := newChangeSet(t, s, d)
	_, err := s.CancelChangeSet(ctx, draft.ID, &db.Decision{Name: "bob", Note: "no"}, "", nil)
	wantChangeSetState(t, err, db.ChangeSetDraft)
	ready := renderAll(t, s, newChangeSet(t, s, d))
	c, err := s.CancelChangeSet(ctx, ready.ID, &db.Decision{Name: "bob", Note: "not in this window"}, "", nil)
	if err != nil || c.State != db.ChangeSetCancelled || c.Decision != db.DecisionRejected || derefString(c.DecidedByName) != "bob" ||
		c.DecisionNote != "not in this window" {
		t.Fatalf("rejected: %+v, %v", c, err)
	}
	// The author's own cancel is no decision.
	mine, err := s.CancelChangeSet(ctx, draft.ID, nil, "", nil)
	if err != nil || mine.Decision != "" || mine.DecidedByName != nil {
		t.Fatalf("cancelled by its author: %+v, %v", mine, err)
	}
}
