package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
)

func enqueueNow(t *testing.T, s *db.Store, trigger string, ids ...int64) []int64 {
	t.Helper()
	reqs := make([]queue.JobRequest, len(ids))
	for i, id := range ids {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: trigger, NotBefore: time.Now().Add(-time.Second)}
	}
	jobs, err := s.EnqueueJobs(context.Background(), reqs)
	if err != nil {
		t.Fatalf("EnqueueJobs: %v", err)
	}
	return jobs
}

func TestEnqueueJoinsActiveJobOfSameDevice(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1 := insertDevice(t, s, "r1", nil, nil, nil)
	d2 := insertDevice(t, s, "r2", nil, nil, nil)
	first := enqueueNow(t, s, queue.TriggerManual, d1, d2, 9999)
	if first[0] == 0 || first[1] == 0 || first[0] == first[1] || first[2] != 0 {
		t.Fatalf("job ids = %v, want two distinct jobs and 0 for the missing device", first)
	}
	again := enqueueNow(t, s, queue.TriggerSchedule, d1)
	if again[0] != first[0] {
		t.Fatalf("second request for a queued device made job %d, want it to join job %d", again[0], first[0])
	}
	claims, err := s.ClaimJobs(ctx, "w1", 10, nil)
	if err != nil || len(claims) != 2 {
		t.Fatalf("ClaimJobs = %d claims, %v; want 2", len(claims), err)
	}
	// Running counts as active too.
	if again := enqueueNow(t, s, queue.TriggerManual, d1); again[0] != first[0] {
		t.Fatalf("request for a running device made job %d, want %d", again[0], first[0])
	}
	for _, c := range claims {
		if err := s.FinishJob(ctx, c, queue.Outcome{Success: true, Text: "hostname r\n", FinishedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	// Finished: a new request is a new job.
	if next := enqueueNow(t, s, queue.TriggerManual, d1); next[0] == first[0] || next[0] == 0 {
		t.Fatalf("request after the job finished returned job %d, want a new one", next[0])
	}
}

// Two processes' workers racing for the same queue never take the same
// job twice.
func TestClaimJobsNeverHandsOutAJobTwice(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var ids []int64
	for i := range 200 {
		ids = append(ids, insertDevice(t, s, fmt.Sprintf("d%d", i), nil, nil, nil))
	}
	enqueueNow(t, s, queue.TriggerManual, ids...)
	other := dbtest.Reopen(t, s)
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	for w, st := range []*db.Store{s, other, s, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				claims, err := st.ClaimJobs(ctx, fmt.Sprint("w", w), 3, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if len(claims) == 0 {
					return
				}
				mu.Lock()
				for _, c := range claims {
					if prev, dup := seen[c.ID]; dup {
						t.Errorf("job %d claimed by %s and w%d", c.ID, prev, w)
					}
					seen[c.ID] = fmt.Sprint("w", w)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Fatalf("claimed %d jobs, want 200", len(seen))
	}
	var running, backupsRunning int
	s.Reader().QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running'`).Scan(&running)
	s.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NULL`).Scan(&backupsRunning)
	if running != 200 || backupsRunning != 200 {
		t.Fatalf("running jobs %d, running backup records %d; want 200 each", running, backupsRunning)
	}
}

// A claim among a list of jobs takes, oldest first, the ready ones of the
// list, whether they lead the queue (the walk of the queue finds them),
// sit behind more ready jobs of others than the list is long (the walk
// gives up and SQL filters the whole list), or come unsorted.
func TestClaimAmongListFollowsQueueOrder(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var devices []int64
	for i := range 12 {
		devices = append(devices, insertDevice(t, s, fmt.Sprint("q", i), nil, nil, nil))
	}
	// Jobs 0..9 are ready oldest first (job i ready 20-i s ago); 10 and
	// 11 are ready the latest.
	reqs := make([]queue.JobRequest, len(devices))
	for i, d := range devices {
		reqs[i] = queue.JobRequest{DeviceID: d, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(time.Duration(i-20) * time.Second)}
	}
	jobs, err := s.EnqueueJobs(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	claim := func(n int, only ...int64) []int64 {
		t.Helper()
		claims, err := s.ClaimJobs(ctx, "w", n, only)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, c := range claims {
			got = append(got, c.ID)
		}
		slices.Sort(got)
		return got
	}
	// Behind ten ready jobs of others, a list of two: the walk stops
	// after three rows and SQL finds them.
	if got := claim(5, jobs[11], jobs[10]); !slices.Equal(got, []int64{jobs[10], jobs[11]}) {
		t.Fatalf("claimed %v from behind the queue, want %v", got, jobs[10:12])
	}
	// Among the head of the queue, oldest first: 1 and 3 before 8.
	if got := claim(2, jobs[8], jobs[3], jobs[1]); !slices.Equal(got, []int64{jobs[1], jobs[3]}) {
		t.Fatalf("claimed %v, want the two oldest %v, %v", got, jobs[1], jobs[3])
	}
	// Nothing of the list ready: no claim, the others stay queued.
	if got := claim(3, jobs[1], jobs[3]); len(got) != 0 {
		t.Fatalf("claimed %v of jobs already running", got)
	}
	if got := claim(1, jobs[8]); !slices.Equal(got, []int64{jobs[8]}) {
		t.Fatalf("claimed %v, want %v", got, jobs[8])
	}
	var queued int
	s.Reader().QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'queued'`).Scan(&queued)
	if queued != 7 {
		t.Fatalf("%d jobs still queued, want 7", queued)
	}
}

func TestClaimRespectsNotBeforeAndOnly(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d1 := insertDevice(t, s, "r1", nil, nil, nil)
	d2 := insertDevice(t, s, "r2", nil, nil, nil)
	d3 := insertDevice(t, s, "r3", nil, nil, nil)
	later, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: d1, Trigger: queue.TriggerSchedule, NotBefore: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	now := enqueueNow(t, s, queue.TriggerManual, d2, d3)
	claims, err := s.ClaimJobs(ctx, "w", 10, []int64{later[0], now[1]})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 || claims[0].ID != now[1] {
		t.Fatalf("claims = %+v, want only job %d (the other is not due, the third not asked for)", claims, now[1])
	}
	next, ok, err := s.NextJobAt(ctx)
	if err != nil || !ok || next.After(time.Now()) {
		t.Fatalf("NextJobAt = %v %v %v, want the ready job of r2", next, ok, err)
	}
}

func TestFinishJobRetryAndDeviceStatus(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := insertDevice(t, s, "r1", nil, nil, nil)
	enqueueNow(t, s, queue.TriggerManual, d)
	claims, _ := s.ClaimJobs(ctx, "w", 1, nil)
	no := false
	retryAt := time.Now().Add(-time.Millisecond)
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: "connect 127.0.0.1:1: connection refused", Reachable: &no, RetryAt: &retryAt, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	dev, _ := s.GetDevice(ctx, d)
	if dev.Status != db.StatusUnreachable || dev.LastBackupSuccess == nil || *dev.LastBackupSuccess {
		t.Fatalf("device after a refused connection: status %s, last success %v", dev.Status, dev.LastBackupSuccess)
	}
	b, _ := s.GetBackup(ctx, claims[0].BackupID)
	if b.FinishedAt == nil || b.Success || b.ErrorMessage == nil || b.Trigger != queue.TriggerManual {
		t.Fatalf("first attempt's record: %+v", b)
	}
	retry, err := s.ClaimJobs(ctx, "w", 1, nil)
	if err != nil || len(retry) != 1 || retry[0].ID != claims[0].ID || retry[0].Attempt != 2 {
		t.Fatalf("retry claim = %+v, %v; want the same job, attempt 2", retry, err)
	}
	yes := true
	key := []byte("ssh-ed25519 key bytes")
	if err := s.FinishJob(ctx, retry[0], queue.Outcome{Success: true, Text: "x\n", Changed: true, Reachable: &yes, PinHostKey: key, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b, _ = s.GetBackup(ctx, retry[0].BackupID)
	if !b.Success || !b.Changed || b.Trigger != queue.TriggerRetry || b.SnapshotHash == nil || *b.SnapshotHash != snapstore.Hash("x\n") || *b.Bytes != 2 {
		t.Fatalf("retry record: %+v", b)
	}
	dev, _ = s.GetDevice(ctx, d)
	pinned, pending, _ := s.HostKeys(ctx, d)
	if dev.Status != db.StatusReachable || !*dev.LastBackupSuccess || string(pinned) != string(key) || pending != nil {
		t.Fatalf("device after success: status %s, pinned %q, pending %q", dev.Status, pinned, pending)
	}
	jobs, _ := s.GetJobs(ctx, []int64{retry[0].ID})
	if jobs[0].State != queue.JobSucceeded || jobs[0].Owner != nil {
		t.Fatalf("job after success: %+v", jobs[0])
	}
}

func TestInterruptJobsRequeuesAndLeavesNothingRunning(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var ids []int64
	for i := range 3 {
		ids = append(ids, insertDevice(t, s, fmt.Sprint("r", i), nil, nil, nil))
	}
	enqueueNow(t, s, queue.TriggerManual, ids...)
	if _, err := s.ClaimJobs(ctx, "dead", 2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimJobs(ctx, "alive", 1, nil); err != nil {
		t.Fatal(err)
	}
	owners, _ := s.RunningOwners(ctx)
	if len(owners) != 2 {
		t.Fatalf("owners = %v", owners)
	}
	res, err := s.InterruptJobs(ctx, "dead", 3)
	if err != nil || res.Attempts != 2 || len(res.GaveUp) != 0 {
		t.Fatalf("InterruptJobs = %+v, %v; want 2 attempts ended, none given up", res, err)
	}
	var running, queued, interrupted int
	s.Reader().QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'running'`).Scan(&running)
	s.Reader().QueryRow(`SELECT COUNT(*) FROM jobs WHERE state = 'queued'`).Scan(&queued)
	s.Reader().QueryRow(`SELECT COUNT(*) FROM backups WHERE finished_at IS NOT NULL AND success = 0 AND error_message = ?`, queue.ErrorInterrupted).Scan(&interrupted)
	if running != 1 || queued != 2 || interrupted != 2 {
		t.Fatalf("running %d queued %d interrupted records %d; want 1, 2, 2", running, queued, interrupted)
	}
	// At the interruption limit an interrupted job fails instead of
	// looping, and says why.
	claims, _ := s.ClaimJobs(ctx, "dead2", 2, nil)
	res, err = s.InterruptJobs(ctx, "dead2", claims[0].Interruptions+1)
	if err != nil || len(res.GaveUp) != 2 {
		t.Fatalf("InterruptJobs at the limit = %+v, %v; want both given up", res, err)
	}
	jobs, _ := s.GetJobs(ctx, []int64{claims[0].ID})
	if jobs[0].State != queue.JobFailed || jobs[0].Error == nil || *jobs[0].Error != queue.ErrorInterruptedTooOften || jobs[0].Attempt != 0 {
		t.Fatalf("job at its interruption limit: %+v", jobs[0])
	}
	dev, _ := s.GetDevice(ctx, jobs[0].DeviceID)
	if dev.LastBackupSuccess == nil || *dev.LastBackupSuccess {
		t.Fatalf("device of a job given up: last backup success %v, want false", dev.LastBackupSuccess)
	}
}

// Each interruption of the process (crash, kill -9, power cut) takes back
// the attempt its claim counted: a job interrupted more often than it has
// attempts still has all of them, and only the interruption limit ends it.
func TestInterruptionsDoNotUseUpAttempts(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := insertDevice(t, s, "r1", nil, nil, nil)
	job := enqueueNow(t, s, queue.TriggerSchedule, d)[0]
	const maxAttempts, maxInterruptions = 3, 5
	for i := 1; i < maxInterruptions; i++ {
		claims, err := s.ClaimJobs(ctx, fmt.Sprint("dead-", i), 1, nil)
		if err != nil || len(claims) != 1 || claims[0].ID != job || claims[0].Attempt != 1 {
			t.Fatalf("claim after %d interruptions = %+v, %v; want job %d at attempt 1", i-1, claims, err, job)
		}
		res, err := s.InterruptJobs(ctx, fmt.Sprint("dead-", i), maxInterruptions)
		if err != nil || res.Attempts != 1 || len(res.GaveUp) != 0 {
			t.Fatalf("interruption %d = %+v, %v", i, res, err)
		}
		got, _ := s.GetJobs(ctx, []int64{job})
		if got[0].State != queue.JobQueued || got[0].Attempt != 0 || got[0].Interruptions != i || got[0].NotBefore.After(time.Now()) {
			t.Fatalf("after interruption %d: %+v; want queued, ready, attempt 0, %d interruptions", i, got[0], i)
		}
	}
	if maxInterruptions-1 <= maxAttempts {
		t.Fatal("the loop must interrupt the job more often than it has attempts")
	}
	// A failure that is the device's own still counts.
	claims, _ := s.ClaimJobs(ctx, "alive", 1, nil)
	retryAt := time.Now().Add(-time.Millisecond)
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: "connect: refused", RetryAt: &retryAt, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	claims, _ = s.ClaimJobs(ctx, "dead-last", 1, nil)
	if len(claims) != 1 || claims[0].Attempt != 2 {
		t.Fatalf("claim after a real failure = %+v; want attempt 2", claims)
	}
	res, err := s.InterruptJobs(ctx, "dead-last", maxInterruptions)
	if err != nil || len(res.GaveUp) != 1 || res.GaveUp[0] != d {
		t.Fatalf("interruption %d = %+v, %v; want the job given up", maxInterruptions, res, err)
	}
	got, _ := s.GetJobs(ctx, []int64{job})
	if got[0].State != queue.JobFailed || *got[0].Error != queue.ErrorInterruptedTooOften || got[0].Attempt != 1 || got[0].Interruptions != maxInterruptions {
		t.Fatalf("after %d interruptions: %+v", maxInterruptions, got[0])
	}
}

// An operator's request, or a change the device logged (syslog), for a
// device whose job waits (a retry backing off, a schedule's spread) makes
// that job ready now with its attempts renewed; a schedule's request
// leaves it as it is.
func TestExplicitRequestRunsAWaitingJobNow(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := insertDevice(t, s, "r1", nil, nil, nil)
	job := enqueueNow(t, s, queue.TriggerSchedule, d)[0]
	s.ClaimJobs(ctx, "dead", 1, nil)
	if _, err := s.InterruptJobs(ctx, "dead", queue.DefaultMaxInterruptions); err != nil {
		t.Fatal(err)
	}
	claims, _ := s.ClaimJobs(ctx, "w", 1, nil)
	later := time.Now().Add(time.Hour)
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: "connect: refused", RetryAt: &later, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: d, Trigger: queue.TriggerSchedule, NotBefore: time.Now()}}); err != nil || ids[0] != job {
		t.Fatalf("schedule request = %v, %v; want it to join job %d", ids, err, job)
	}
	got, _ := s.GetJobs(ctx, []int64{job})
	if got[0].Attempt != 1 || got[0].NotBefore.Before(later.Add(-time.Second)) {
		t.Fatalf("a schedule's request changed the waiting job: %+v", got[0])
	}
	for _, trigger := range []string{queue.TriggerCLI, queue.TriggerManual, queue.TriggerSyslog} {
		if trigger != queue.TriggerCLI { // wait to retry again
			claims, _ := s.ClaimJobs(ctx, "w", 1, nil)
			if len(claims) != 1 || claims[0].ID != job {
				t.Fatalf("claim = %+v; want job %d", claims, job)
			}
			if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: "connect: refused", RetryAt: &later, FinishedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		ids, err := s.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: d, Trigger: trigger, NotBefore: time.Now()}})
		if err != nil || ids[0] != job {
			t.Fatalf("%s request = %v, %v; want it to join job %d", trigger, ids, err, job)
		}
		got, _ = s.GetJobs(ctx, []int64{job})
		if got[0].State != queue.JobQueued || got[0].Attempt != 0 || got[0].NotBefore.After(time.Now()) || got[0].Interruptions != 1 {
			t.Fatalf("after a %s request the waiting job is %+v; want it ready now with no attempt used, its interruption still counted", trigger, got[0])
		}
		if want := map[bool]string{true: queue.TriggerSyslog, false: queue.TriggerSchedule}[trigger == queue.TriggerSyslog]; got[0].Trigger != want {
			t.Fatalf("after a %s request the waiting job's trigger is %s, want %s", trigger, got[0].Trigger, want)
		}
	}
}

func TestAcceptHostKey(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := insertDevice(t, s, "r1", nil, nil, nil)
	if _, err := s.AcceptHostKey(ctx, d); err != db.ErrNoPendingHostKey {
		t.Fatalf("accept without a pending key: %v", err)
	}
	if _, err := s.AcceptHostKey(ctx, 424242); err != db.ErrNotFound {
		t.Fatalf("accept on a missing device: %v", err)
	}
	enqueueNow(t, s, queue.TriggerManual, d)
	claims, _ := s.ClaimJobs(ctx, "w", 1, nil)
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: "host key changed", PendingHostKey: []byte("new"), FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	key, err := s.AcceptHostKey(ctx, d)
	pinned, pending, _ := s.HostKeys(ctx, d)
	if err != nil || string(key) != "new" || string(pinned) != "new" || pending != nil {
		t.Fatalf("accept: key %q err %v pinned %q pending %q", key, err, pinned, pending)
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	r, err := s.RetentionPolicy(ctx)
	if err != nil || r != db.DefaultRetention {
		t.Fatalf("default retention = %+v, %v", r, err)
	}
	if err := s.PutSetting(ctx, db.SettingRetention, db.Retention{KeepLast: 5}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.RetentionPolicy(ctx); r != (db.Retention{KeepLast: 5}) {
		t.Fatalf("retention after put = %+v", r)
	}
	rules := []db.NoiseRule{{Pattern: `^! uptime`, Platform: "cisco_ios"}}
	if err := s.PutSetting(ctx, db.SettingNoiseRules, rules); err != nil {
		t.Fatal(err)
	}
	got, err := s.NoiseRules(ctx)
	if err != nil || len(got) != 1 || got[0] != rules[0] {
		t.Fatalf("noise rules = %+v, %v", got, err)
	}
	var x sql.NullString
	if ok, err := s.GetSetting(ctx, "never_set", &x); ok || err != nil {
		t.Fatalf("unset key: %v %v", ok, err)
	}
}

func TestCancelAndListJobs(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	g := createGroup(t, s, "core", nil)
	other := createGroup(t, s, "branch", nil)
	d1 := insertDevice(t, s, "r1", &g.ID, nil, nil)
	d2 := insertDevice(t, s, "r2", &other.ID, nil, nil)
	d3 := insertDevice(t, s, "r3", &g.ID, nil, nil)
	jobs := enqueueNow(t, s, queue.TriggerManual, d1, d2, d3)
	claims, _ := s.ClaimJobs(ctx, "w", 1, []int64{jobs[0]})

	if ok, err := s.CancelJob(ctx, jobs[1]); !ok || err != nil {
		t.Fatalf("cancel queued: %v %v", ok, err)
	}
	if ok, err := s.CancelJob(ctx, jobs[0]); !ok || err != nil {
		t.Fatalf("cancel running: %v %v", ok, err)
	}
	if ids, _ := s.CancelRequested(ctx, "w"); len(ids) != 1 || ids[0] != jobs[0] {
		t.Fatalf("cancel requests of w = %v, want [%d]", ids, jobs[0])
	}
	if err := s.FinishJob(ctx, claims[0], queue.Outcome{Error: queue.ErrorCancelled, Cancelled: true, FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.CancelJob(ctx, jobs[0]); ok {
		t.Fatal("cancelling a finished job reported success")
	}

	all, total, err := s.ListJobs(ctx, db.Scope{All: true}, db.JobFilter{}, 10, 0)
	if err != nil || total != 3 || len(all) != 3 || all[0].ID != jobs[2] || all[2].DeviceName != "r1" {
		t.Fatalf("ListJobs all = %+v total %d err %v", all, total, err)
	}
	if all[2].State != queue.JobCancelled || all[1].State != queue.JobCancelled || all[0].State != queue.JobQueued {
		t.Fatalf("states: %s %s %s", all[0].State, all[1].State, all[2].State)
	}
	active, total, _ := s.ListJobs(ctx, db.Scope{All: true}, db.JobFilter{State: "active"}, 10, 0)
	if total != 1 || active[0].DeviceID != d3 {
		t.Fatalf("active jobs = %+v", active)
	}
	scoped, total, _ := s.ListJobs(ctx, db.Scope{GroupIDs: []int64{other.ID}}, db.JobFilter{}, 10, 0)
	if total != 1 || scoped[0].DeviceID != d2 {
		t.Fatalf("jobs in scope of branch = %+v", scoped)
	}
}

// jobIDs lists the ids of rows.
func jobIDs(rows []db.JobRow) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r.ID))
	}
	return strings.Join(out, ",")
}

func TestJobViewsFollowScope(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	access := createGroup(t, s, "Access", &core.ID)
	branch := createGroup(t, s, "Branch", nil)
	r1 := insertDevice(t, s, "r1", &core.ID, nil, nil)
	a1 := insertDevice(t, s, "a1", &access.ID, nil, nil)
	b1 := insertDevice(t, s, "b1", &branch.ID, nil, nil)
	loose := insertDevice(t, s, "loose", nil, nil, nil)

	// b1 fails and loose succeeds (real claims and finishes), then r1,
	// a1 and b1 are queued again and r1 is taken by a worker.
	finished := enqueueNow(t, s, queue.TriggerSchedule, b1, loose)
	claims, err := s.ClaimJobs(ctx, "w", 10, finished)
	if err != nil || len(claims) != 2 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	now := time.Now()
	for _, c := range claims {
		o := queue.Outcome{Success: c.DeviceID == loose, Text: "hostname loose\n", FinishedAt: now}
		if !o.Success {
			o.Error = "timeout"
		}
		if err := s.FinishJob(ctx, c, o); err != nil {
			t.Fatal(err)
		}
	}
	// The second batch is queued in a later millisecond than the first
	// ended: jobs that end within the millisecond a batch is queued count
	// as its own (JobBatchStart), and a fast machine does all of the
	// above within one.
	time.Sleep(2 * time.Millisecond)
	active := enqueueNow(t, s, queue.TriggerManual, a1, r1, b1)
	if _, err := s.ClaimJobs(ctx, "w", 1, active[1:2]); err != nil {
		t.Fatal(err)
	}

	all, coreOnly, none := db.Scope{All: true}, db.Scope{GroupIDs: []int64{core.ID}}, db.Scope{}
	for _, c := range []struct {
		name     string
		scope    db.Scope
		activity db.JobActivity
		active   string // ids, in order
		finished string
		failed   string
		start    int64
		progress db.JobProgress // from finished[0]
	}{
		{"all", all, db.JobActivity{Queued: 2, Running: 1, FinishedLastHour: 2, FinishedLastDay: 2, FailedLastDay: 1},
			fmt.Sprintf("%d,%d,%d", active[1], active[0], active[2]), fmt.Sprintf("%d,%d", finished[1], finished[0]),
			fmt.Sprint(finished[0]), active[0], db.JobProgress{Since: finished[0], Total: 5, Done: 2, Failed: 1}},
		{"core and its subgroup", coreOnly, db.JobActivity{Queued: 1, Running: 1},
			fmt.Sprintf("%d,%d", active[1], active[0]), "", "", active[0], db.JobProgress{Since: finished[0], Total: 2}},
		{"none", none, db.JobActivity{}, "", "", "", 0, db.JobProgress{Since: finished[0]}},
	} {
		got, err := s.JobActivityInScope(ctx, c.scope, now.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got != c.activity {
			t.Errorf("%s: activity %+v, want %+v", c.name, got, c.activity)
		}
		for _, v := range []struct{ view, want string }{
			{db.JobViewActive, c.active}, {db.JobViewFinished, c.finished}, {db.JobViewFailed, c.failed},
		} {
			rows, total, err := s.JobsInView(ctx, c.scope, v.view, 0, 50, 0)
			if err != nil {
				t.Fatal(err)
			}
			if jobIDs(rows) != v.want || total != len(rows) {
				t.Errorf("%s: %s jobs %s (total %d), want %s", c.name, v.view, jobIDs(rows), total, v.want)
			}
		}
		start, ok, err := s.JobBatchStart(ctx, c.scope)
		if err != nil || start != c.start || ok != (c.start != 0) {
			t.Errorf("%s: batch start %d %v %v, want %d", c.name, start, ok, err, c.start)
		}
		p, err := s.JobProgressSince(ctx, c.scope, finished[0])
		if err != nil || p != c.progress {
			t.Errorf("%s: progress %+v %v, want %+v", c.name, p, err, c.progress)
		}
	}

	// The running job carries its device's name; one device's jobs;
	// paging.
	rows, _, err := s.JobsInView(ctx, coreOnly, db.JobViewActive, r1, 50, 0)
	if err != nil || jobIDs(rows) != fmt.Sprint(active[1]) || rows[0].DeviceName != "r1" || rows[0].State != queue.JobRunning || rows[0].StartedAt == nil {
		t.Errorf("r1's active jobs: %+v %v", rows, err)
	}
	rows, total, err := s.JobsInView(ctx, all, db.JobViewActive, 0, 1, 1)
	if err != nil || total != 3 || jobIDs(rows) != fmt.Sprint(active[0]) || rows[0].DeviceName != "a1" {
		t.Errorf("second page of one: %s of %d, %v", jobIDs(rows), total, err)
	}
	if _, _, err := s.JobsInView(ctx, all, "bogus", 0, 1, 0); err == nil {
		t.Error("an unknown view was accepted")
	}
}

func TestFinishedJobCountStopsAtCap(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	d := insertDevice(t, s, "r1", nil, nil, nil)
	if _, err := s.Exec(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO jobs (device_id, trigger, state, not_before, created_at, finished_at)
		SELECT ?, 'schedule', 'succeeded', '2026-01-01T00:00:00.000', '2026-01-01T00:00:00.000', '2026-01-01T00:00:01.000' FROM n`,
		db.JobCountCap+5, d); err != nil {
		t.Fatal(err)
	}
	rows, total, err := s.JobsInView(ctx, db.Scope{All: true}, db.JobViewFinished, 0, 50, 0)
	if err != nil || total != db.JobCountCap || len(rows) != 50 {
		t.Errorf("finished: %d rows of %d, %v; want 50 of %d", len(rows), total, err, db.JobCountCap)
	}
}

// TestJobQueriesUseIndexes keeps the live jobs page bounded with a large
// history: the queue is read through the partial index of active jobs,
// progress through a range of ids (per device for a scoped user), the
// finished list of all groups in id order without sorting the history,
// and a scoped one through each device's jobs.
func TestJobQueriesUseIndexes(t *testing.T) {
	s := openStore(t)
	plan := func(q string) string {
		t.Helper()
		return strings.Join(dbtest.PlanSQLite(t, s, q), "; ")
	}
	const scoped = `d.group_id IN (SELECT g.id FROM device_groups g JOIN device_groups s ON substr(g.path, 1, length(s.path)) = s.path WHERE s.id IN (1))`
	for _, c := range []struct{ query, want, never string }{
		{`SELECT SUM(j.state = 'queued') FROM jobs j WHERE j.state IN ('queued', 'running') AND 1=1`, "jobs_active_device", ""},
		{`SELECT SUM(j.state = 'queued') FROM jobs j JOIN devices d ON d.id = j.device_id WHERE j.state IN ('queued', 'running') AND ` + scoped,
			"jobs_active_device", ""},
		{`SELECT MIN(+j.id) FROM jobs j WHERE j.state IN ('queued', 'running') AND 1=1`, "jobs_active_device", ""},
		{`SELECT COUNT(*) FROM jobs j WHERE j.id >= 5 AND 1=1`, "INTEGER PRIMARY KEY (rowid>?)", ""},
		{`SELECT COUNT(*) FROM jobs j JOIN devices d ON d.id = j.device_id WHERE j.id >= 5 AND ` + scoped, "jobs_device (device_id=? AND id>?)", ""},
		{`SELECT * FROM (SELECT * FROM jobs j WHERE j.state IN ('queued', 'running') ORDER BY CASE j.state WHEN 'running' THEN 0 ELSE 1 END,
			CASE j.state WHEN 'running' THEN j.started_at ELSE j.not_before END, j.id LIMIT 50) j JOIN devices d ON d.id = j.device_id`,
			"jobs_active_device", ""},
		{`SELECT d.name FROM jobs j JOIN devices d ON d.id = j.device_id WHERE j.state IN ('succeeded', 'failed', 'cancelled') AND 1=1` +
			` ORDER BY j.id DESC LIMIT 50`, "SCAN j", "TEMP B-TREE"},
		{`SELECT d.name FROM jobs j JOIN devices d ON d.id = j.device_id WHERE j.state IN ('succeeded', 'failed', 'cancelled') AND ` + scoped +
			` ORDER BY j.id DESC LIMIT 50`, "jobs_device (device_id=?)", ""},
		{`SELECT COUNT(*) FROM jobs j WHERE j.state IN ('succeeded', 'failed', 'cancelled') AND j.finished_at >= '2026'`, "jobs_finished", ""},
	} {
		if s.Postgres() {
			p := dbtest.ExplainPG(t, s, c.query)
			want := pgJobIndexes(c.want)
			if !slices.ContainsFunc(want, p.Uses) || len(p.SeqScans) > 0 || c.never != "" && p.Sorts > 0 {
				t.Errorf("plan of %s\n%s\nwant one of %s, no table read whole%s", c.query, p.Text, want, map[bool]string{true: ", no sort"}[c.never != ""])
			}
			continue
		}
		got := plan(c.query)
		if !strings.Contains(got, c.want) || (c.never != "" && strings.Contains(got, c.never)) {
			t.Errorf("plan of %s\n= %s\nwant %s, never %q", c.query, got, c.want, c.never)
		}
	}
}

// pgJobIndexes are the PostgreSQL indexes that meet an expectation of
// SQLite's plan in TestJobQueriesUseIndexes: the same names, the rowid
// being the primary key and a walk of the whole table in id order its
// index. A scoped finished list may also walk the newest ids first and
// stop at the page: which of the two is cheaper depends on statistics an
// empty test database does not have; neither reads or sorts the history.
func pgJobIndexes(sqlite string) []string {
	switch {
	case strings.HasPrefix(sqlite, "INTEGER PRIMARY KEY"), sqlite == "SCAN j":
		return []string{"jobs_pkey"}
	case sqlite == "jobs_device (device_id=?)":
		return []string{"jobs_device", "jobs_pkey"}
	}
	name, _, _ := strings.Cut(sqlite, " ")
	return []string{name}
}

// BenchmarkJobsPage reads what one refresh of the jobs page reads, over
// 20,000 devices in 100 groups and 100,000 jobs (20,000 of them queued),
// for every group and for one group.
func BenchmarkJobsPage(b *testing.B) {
	s, err := db.Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 100 {
		if _, err := s.CreateGroup(ctx, fmt.Sprint("g", i), nil); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
		INSERT INTO devices (name, host, port, platform, login_method, group_id, created_at, updated_at)
		SELECT 'dev' || i, '192.0.2.1', 22, 'cisco_ios', 'ssh', i % 100 + 1, '2026-01-01T00:00:00', '2026-01-01T00:00:00' FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 80000)
		INSERT INTO jobs (device_id, trigger, state, attempt, not_before, created_at, started_at, finished_at)
		SELECT i % 20000 + 1, 'schedule', CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'succeeded' END, 1, t, t, t, t
		FROM (SELECT i, strftime('%Y-%m-%dT%H:%M:%f', ?1, '-' || ((80000 - i) * 30) || ' seconds') AS t FROM n)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
		INSERT INTO jobs (device_id, trigger, state, not_before, created_at) SELECT i, 'schedule', 'queued', ?1, ?1 FROM n`,
	} {
		if _, err := s.Exec(ctx, q, now.Format(db.BackupTimeFormat)); err != nil {
			b.Fatal(err)
		}
	}
	for _, sc := range []struct {
		name  string
		scope db.Scope
	}{{"all", db.Scope{All: true}}, {"one-group", db.Scope{GroupIDs: []int64{4}}}} {
		for _, view := range []string{db.JobViewActive, db.JobViewFinished} {
			b.Run(sc.name+"/"+view, func(b *testing.B) {
				for b.Loop() {
					if _, err := s.JobActivityInScope(ctx, sc.scope, now); err != nil {
						b.Fatal(err)
					}
					if _, _, err := s.JobsInView(ctx, sc.scope, view, 0, 50, 0); err != nil {
						b.Fatal(err)
					}
					start, _, err := s.JobBatchStart(ctx, sc.scope)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.JobProgressSince(ctx, sc.scope, start); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The progress of the work in hand counts the jobs of a batch that have
// already ended: five queued at once, three done, is "3 of 5", not
// "0 of 2". A batch that ended before it was queued is not in it.
func TestJobBatchStartKeepsTheEndedJobsOfTheBatch(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var devs []int64
	for i := range 6 {
		devs = append(devs, insertDevice(t, s, fmt.Sprintf("r%d", i), nil, nil, nil))
	}
	finish := func(ids []int64) {
		t.Helper()
		claims, err := s.ClaimJobs(ctx, "w", len(ids), ids)
		if err != nil || len(claims) != len(ids) {
			t.Fatalf("claim %v: %d, %v", ids, len(claims), err)
		}
		for _, c := range claims {
			if err := s.FinishJob(ctx, c, queue.Outcome{Success: true, Text: "hostname x\n", FinishedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	earlier := enqueueNow(t, s, queue.TriggerSchedule, devs[5])
	finish(earlier)
	time.Sleep(5 * time.Millisecond) // the batch is queued after the earlier one ended
	batch := enqueueNow(t, s, queue.TriggerManual, devs[:5]...)
	finish(batch[:3])
	start, ok, err := s.JobBatchStart(ctx, db.Scope{All: true})
	if err != nil || !ok || start != batch[0] {
		t.Fatalf("batch start %d %v %v, want the batch's first job %d", start, ok, err, batch[0])
	}
	p, err := s.JobProgressSince(ctx, db.Scope{All: true}, start)
	if err != nil || p.Total != 5 || p.Done != 3 {
		t.Fatalf("progress %+v, %v; want 3 of 5", p, err)
	}
	// Within one millisecond: the batch's first job ended in the
	// millisecond it was queued, and so did the earlier job. The first is
	// the batch's; the earlier one, queued before, is not.
	poke := dbtest.Poke(t, s)
	if _, err := poke.ExecContext(ctx, `UPDATE jobs SET finished_at = created_at WHERE id = ?`, batch[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := poke.ExecContext(ctx, `UPDATE jobs SET finished_at = (SELECT created_at FROM jobs WHERE id = ?) WHERE id = ?`, batch[0], earlier[0]); err != nil {
		t.Fatal(err)
	}
	if start, ok, err := s.JobBatchStart(ctx, db.Scope{All: true}); err != nil || !ok || start != batch[0] {
		t.Fatalf("within one millisecond, batch start %d %v %v, want the batch's first job %d", start, ok, err, batch[0])
	}
}
