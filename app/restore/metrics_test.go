package restore_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/app/metrics"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testfrr"
)

// restoresTotal reads backupd_restores_total{method,result} from this
// process's metrics, as a scrape sees it (-1 when there is no series).
func restoresTotal(t *testing.T, method, result string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(metrics.Options{}, func(context.Context) (metrics.State, error) { return metrics.State{}, nil }).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	re := regexp.MustCompile(`(?m)^backupd_restores_total\{method="` + regexp.QuoteMeta(method) + `",result="` + result + `"\} (\d+)$`)
	m := re.FindSubmatch(body)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// pushesTotal reads backupd_pushes_total{platform,result} as a scrape
// sees it (-1 when there is no series).
func pushesTotal(t *testing.T, platform, result string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(metrics.Options{}, func(context.Context) (metrics.State, error) { return metrics.State{}, nil }).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	re := regexp.MustCompile(`(?m)^backupd_pushes_total\{platform="` + regexp.QuoteMeta(platform) + `",result="` + result + `"\} (\d+)$`)
	m := re.FindSubmatch(body)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// The platforms that take a push have their series at 0 from the start,
// the administrator's under "custom", and no platform that cannot push
// has any.
func TestPushSeriesPublished(t *testing.T) {
	for _, p := range []string{"frr", "cisco_ios", "cisco_nxos", metrics.PushPlatformCustom} {
		for _, r := range []string{db.TargetSucceeded, db.TargetFailed, db.TargetInterrupted} {
			if n := pushesTotal(t, p, r); n < 0 {
				t.Errorf("backupd_pushes_total{platform=%q,result=%q} is not published", p, r)
			}
		}
	}
	if n := pushesTotal(t, "juniper_junos", db.TargetSucceeded); n >= 0 {
		t.Error("a platform that cannot push has a push series")
	}
}

// A change set's push to each device is counted where it ends, by the
// device's platform and the target's end: one switch takes the lines, the
// other refuses one.
func TestPushEndCounted(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	_, okID := e.simNamed("cnt-sw-1", "cisco_ios", devsim.Options{})
	_, refuserID := e.simNamed("cnt-sw-2", "cisco_ios", devsim.Options{RejectLines: regexp.MustCompile(`^ntp server 192\.0\.2\.77$`)})
	succeeded, failed := pushesTotal(t, "cisco_ios", db.TargetSucceeded), pushesTotal(t, "cisco_ios", db.TargetFailed)
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "ntp", Concurrency: 2,
		Body: "ntp server 192.0.2.77\n", DeviceIDs: []int64{okID, refuserID}})
	if err != nil || c.State != db.ChangeSetReady {
		t.Fatalf("dry run: %+v, %v", c, err)
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped)
	targets, err := e.store.ChangeSetTargets(ctx, c.ID)
	if err != nil || len(targets) != 2 || targets[0].State != db.TargetSucceeded || targets[1].State != db.TargetFailed {
		t.Fatalf("targets %+v, %v; want succeeded, failed", targets, err)
	}
	if n := pushesTotal(t, "cisco_ios", db.TargetSucceeded); n != succeeded+1 {
		t.Errorf("backupd_pushes_total{cisco_ios,succeeded} %d, want %d", n, succeeded+1)
	}
	if n := pushesTotal(t, "cisco_ios", db.TargetFailed); n != failed+1 {
		t.Errorf("backupd_pushes_total{cisco_ios,failed} %d, want %d", n, failed+1)
	}
}

// A push whose process died while it ran is ended as interrupted by the
// engine that finds it, and counted there under its device's platform:
// the engine tells the push runner, not the restore runner it embeds.
func TestPushInterruptionCounted(t *testing.T) {
	store := dbtest.Open(t)
	ctx := context.Background()
	sealer, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := store.CreateDevice(ctx, db.Device{Name: "gone2", Host: "192.0.2.2", Port: 22, Platform: "frr",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.CreateChangeSet(ctx, db.NewChangeSet{Name: "ntp", Body: "ntp server 192.0.2.77\n", Kind: db.ChangeSetSnippet,
		CreatedByName: "alice", Targets: []db.NewTarget{{DeviceID: dev.ID}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := store.ChangeSetTargets(ctx, c.ID)
	if err != nil || len(targets) != 1 {
		t.Fatalf("targets %+v, %v", targets, err)
	}
	if _, err := store.SetChangeSetRendered(ctx, c.ID, []db.TargetRender{{TargetID: targets[0].ID, Rendered: "ntp server 192.0.2.77\n"}}, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ApproveChangeSet(ctx, c.ID, db.Decision{Name: "bob"}, time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.StartChangeSet(ctx, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.QueueChangeSetTarget(ctx, targets[0].ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// An engine that is no more claimed it and started it.
	claims, err := store.ClaimJobsOfKinds(ctx, "engine-that-died", 1, nil, []string{queue.KindPush})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %v", claims, err)
	}
	if _, err := store.StartChangeSetTarget(ctx, targets[0].ID, claims[0]); err != nil {
		t.Fatal(err)
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner := restore.NewRunner(store, sealer, log)
	eng := backup.New(store, sealer, log, backup.Options{Work: map[string]backup.WorkRunner{
		queue.KindRestore: runner, queue.KindPush: restore.PushRunner{Runner: runner}}})
	runner.Engine = eng
	before := pushesTotal(t, "frr", db.TargetInterrupted)
	if _, err := eng.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := store.ChangeSetTarget(ctx, targets[0].ID); err != nil || got.State != db.TargetInterrupted {
		t.Fatalf("the target is %s (%v), want interrupted", got.State, err)
	}
	if n := pushesTotal(t, "frr", db.TargetInterrupted); n != before+1 {
		t.Errorf("backupd_pushes_total{frr,interrupted} %d, want %d", n, before+1)
	}
}

// A restore whose run ends is counted by method and result, and the
// method's series are there at 0 before any ends.
func TestRestoreEndCounted(t *testing.T) {
	if n := restoresTotal(t, "frr_vtysh", db.RestoreRollbackFailed); n < 0 {
		t.Fatal("the frr_vtysh series are not published before a restore ends")
	}
	e := newEnv(t, testfrr.Options{Hostname: "count1"})
	ctx := context.Background()
	before := restoresTotal(t, "frr_vtysh", db.RestoreSucceeded)
	// The version the router runs: the run backs up, finds it held, ends.
	v := e.backup()
	r, err := e.svc.Request(ctx, e.admin, e.device, v.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
		t.Fatal(err)
	}
	if r = e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed); r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s: %s", r.State, deref(r.Error))
	}
	if n := restoresTotal(t, "frr_vtysh", db.RestoreSucceeded); n != before+1 {
		t.Errorf("backupd_restores_total{succeeded} %d, want %d", n, before+1)
	}
}

// A restore whose process died while it ran is ended as interrupted by
// the engine that finds it, and counted there: the engine tells the
// runner, which reads the restore's method back.
func TestRestoreInterruptionCounted(t *testing.T) {
	store := dbtest.Open(t)
	ctx := context.Background()
	sealer, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := store.CreateDevice(ctx, db.Device{Name: "gone1", Host: "192.0.2.1", Port: 22, Platform: "frr",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	version := func(text string) (string, string) {
		hash, err := store.PutSnapshot(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-time.Hour)
		b := db.Backup{ID: uuid.NewString(), DeviceID: dev.ID, StartedAt: at, FinishedAt: &at,
			Success: true, SnapshotHash: &hash, Trigger: queue.TriggerManual}
		if err := store.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b.ID, hash
	}
	target, _ := version("hostname gone1\n")
	preview, hash := version("hostname gone1-changed\n")
	r, err := store.CreateRestore(ctx, db.NewRestore{DeviceID: dev.ID, TargetBackupID: target, Method: "frr_vtysh", RequestedByName: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetRestorePreview(ctx, r.ID, db.RestorePreview{BackupID: preview, Hash: hash, ExpiresAt: time.Now().Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ApproveRestore(ctx, r.ID, db.Decision{Name: "bob"}, hash, time.Now().Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.QueueRestore(ctx, r.ID, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	// An engine that is no more claimed it and started it.
	claims, err := store.ClaimJobsOfKinds(ctx, "engine-that-died", 1, nil, []string{queue.KindRestore})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %v", claims, err)
	}
	if _, err := store.StartRestore(ctx, r.ID, claims[0], nil); err != nil {
		t.Fatal(err)
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	runner := restore.NewRunner(store, sealer, log)
	eng := backup.New(store, sealer, log, backup.Options{Work: map[string]backup.WorkRunner{queue.KindRestore: runner}})
	runner.Engine = eng
	before := restoresTotal(t, "frr_vtysh", db.RestoreInterrupted)
	if _, err := eng.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Restore(ctx, r.ID); err != nil || got.State != db.RestoreInterrupted {
		t.Fatalf("the restore is %s (%v), want interrupted", got.State, err)
	}
	if n := restoresTotal(t, "frr_vtysh", db.RestoreInterrupted); n != before+1 {
		t.Errorf("backupd_restores_total{interrupted} %d, want %d", n, before+1)
	}
}
