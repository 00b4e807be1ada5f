package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"backupd/db"
)

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
	finished := enqueueNow(t, s, db.TriggerSchedule, b1, loose)
	claims, err := s.ClaimJobs(ctx, "w", 10, finished)
	if err != nil || len(claims) != 2 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	now := time.Now()
	for _, c := range claims {
		o := db.Outcome{Success: c.DeviceID == loose, Text: "hostname loose\n", FinishedAt: now}
		if !o.Success {
			o.Error = "timeout"
		}
		if err := s.FinishJob(ctx, c, o); err != nil {
			t.Fatal(err)
		}
	}
	active := enqueueNow(t, s, db.TriggerManual, a1, r1, b1)
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
	if err != nil || jobIDs(rows) != fmt.Sprint(active[1]) || rows[0].DeviceName != "r1" || rows[0].State != db.JobRunning || rows[0].StartedAt == nil {
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
		rows, err := s.Reader().Query("EXPLAIN QUERY PLAN " + q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
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
		got := plan(c.query)
		if !strings.Contains(got, c.want) || (c.never != "" && strings.Contains(got, c.never)) {
			t.Errorf("plan of %s\n= %s\nwant %s, never %q", c.query, got, c.want, c.never)
		}
	}
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
