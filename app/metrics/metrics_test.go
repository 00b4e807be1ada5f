package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"backupd/db"
	"backupd/internal/testkit"
)

func scrape(t *testing.T, o Options, state func(context.Context) (State, error)) string {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(o, state).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestBackupsRequestsAndStoreState(t *testing.T) {
	set = vm.NewSet()
	BackupFinished(2*time.Second, true, "")
	BackupFinished(3*time.Second, false, "auth")
	BackupFinished(time.Second, false, "auth")
	BackupFinished(time.Second, false, "")
	HTTPRequest("GET /api/v1/devices/{device_id}", 404, time.Millisecond)
	HTTPRequest("", 404, time.Millisecond)
	HTTPRequest(`GET /odd"route`, 200, time.Millisecond)
	NotificationsSent("webhook", "sent", 3)
	NotificationsSent("webhook", "sent", 2)
	NotificationsSent("email", "gave_up", 1)
	NotificationsSent("email", "failed", 0)
	GitPush(false, time.Unix(1700000000, 0))
	GitPush(true, time.Unix(1700000060, 0))
	GitForeignCommit(true)
	EngineRunning(false)
	EngineRestarted()
	EngineRunning(true)
	SignIn("ldap", true)
	SignIn("password", false)
	SignIn("password", false)
	DirectorySync(false, 0)
	DirectorySync(true, 2)
	RestoreMethods("frr_vtysh")
	RestoreEnded("frr_vtysh", "succeeded")
	RestoreEnded("frr_vtysh", "succeeded")
	RestoreEnded("frr_vtysh", "interrupted")
	PushPlatforms("frr", PushPlatformCustom)
	PushEnded("frr", "succeeded")
	PushEnded("frr", "failed")
	PushEnded("frr", "succeeded")

	now := time.Now()
	good, queued, pending := now.Add(-36*time.Hour), now.Add(-10*time.Minute), now.Add(-2*time.Hour)
	opts := Options{Version: "1.2.3", Commit: "abc123", DataDir: t.TempDir(), Syslog: func() Syslog {
		return Syslog{Received: 90, Truncated: 1, Matched: 12, UnknownSender: 2, Triggered: 6, Queued: 3,
			Existing: map[string]uint64{"queued": 1, "running": 1},
			Skipped:  map[string]uint64{"disabled": 1, "deleted": 0, "error": 0},
			Dropped:  []SyslogDrop{{"change", "rate", 0}, {"change", "pending_full", 1}, {"other", "rate", 5}, {"unread", "framing", 0}},
			Evicted:  3, PendingDevices: 2, Connections: 1}
	}}
	out := scrape(t, opts, func(context.Context) (State, error) {
		return State{
			FleetHealth: db.FleetHealth{DevicesEnabled: 6, DevicesLastFailed: 2, OldestGood: &good, OldestQueued: &queued,
				BackupsSucceeded: 40, BackupsFailed: 3, ConfigChanges: 5},
			JobsQueued: 7, JobsRunning: 2,
			DevicesByStatus: map[string]int{"reachable": 5, "unreachable": 1}, DatabaseBytes: 4096,
			Snapshots:            db.SnapshotFigures{Snapshots: 30, Deltas: 26, RawBytes: 1800000, StoredBytes: 61000},
			NotificationsPending: 4, OldestNotification: &pending,
			Collectors:     map[string]int{CollectorOnline: 2, CollectorRevoked: 1},
			RestoresOpen:   map[string]int{"pending": 2, "running": 1},
			ChangeSetsOpen: map[string]int{"ready": 3, "running": 1}}, nil
	})
	for _, want := range []string{
		`backupd_build_info{version="1.2.3",commit="abc123",goversion="` + runtime.Version() + `"} 1`,
		`backupd_backup_failures_total{reason="auth"} 2`,
		`backupd_backup_failures_total{reason="other"} 1`,
		`backupd_backup_duration_seconds_count{result="success"} 1`,
		`backupd_backup_duration_seconds_count{result="failure"} 3`,
		`backupd_backup_duration_seconds_bucket{result="failure",le="1"} 2`,
		`backupd_backup_duration_seconds_bucket{result="failure",le="2.5"} 2`,
		`backupd_backup_duration_seconds_bucket{result="failure",le="5"} 3`,
		`backupd_backup_duration_seconds_bucket{result="failure",le="+Inf"} 3`,
		`backupd_http_requests_total{route="GET /api/v1/devices/{device_id}",status="404"} 1`,
		`backupd_http_requests_total{route="unmatched",status="404"} 1`,
		`backupd_http_requests_total{route="GET /odd\"route",status="200"} 1`,
		`backupd_http_request_duration_seconds_bucket{route="unmatched",le="0.005"} 1`,
		`backupd_jobs{state="queued"} 7`,
		`backupd_jobs{state="running"} 2`,
		`backupd_devices{status="reachable"} 5`,
		`backupd_devices{status="unknown"} 0`,
		`backupd_devices_enabled 6`,
		`backupd_devices_last_backup_failed 2`,
		`backupd_backups_total{result="success"} 40`,
		`backupd_backups_total{result="failure"} 3`,
		`backupd_config_changes_total 5`,
		`backupd_database_size_bytes 4096`,
		`backupd_snapshots{form="whole"} 4`,
		`backupd_snapshots{form="delta"} 26`,
		`backupd_snapshot_bytes{kind="raw"} 1800000`,
		`backupd_snapshot_bytes{kind="stored"} 61000`,
		`backupd_snapshot_pack_total{result="failure"} 0`,
		`backupd_store_up 1`,
		`backupd_notifications_sent_total{channel_type="webhook",result="sent"} 5`,
		`backupd_notifications_sent_total{channel_type="email",result="gave_up"} 1`,
		`backupd_notifications_pending 4`,
		`backupd_collectors{state="online"} 2`,
		`backupd_collectors{state="offline"} 0`,
		`backupd_collectors{state="revoked"} 1`,
		"# TYPE backupd_notifications_sent_total counter\n",
		`backupd_git_push_total{result="failure"} 1`,
		`backupd_git_push_total{result="success"} 1`,
		`backupd_git_last_push_success_timestamp_seconds 1700000060`,
		`backupd_git_foreign_commit 1`,
		"# TYPE backupd_git_foreign_commit gauge\n",
		`backupd_engine_running 1`,
		`backupd_engine_restarts_total 1`,
		`backupd_signins_total{method="ldap",result="success"} 1`,
		`backupd_signins_total{method="password",result="failure"} 2`,
		`backupd_directory_sync_total{result="failure"} 1`,
		`backupd_directory_sync_total{result="success"} 1`,
		`backupd_directory_users_disabled_total 2`,
		`backupd_restores_total{method="frr_vtysh",result="succeeded"} 2`,
		`backupd_restores_total{method="frr_vtysh",result="interrupted"} 1`,
		`backupd_restores_total{method="frr_vtysh",result="rollback_failed"} 0`,
		"# TYPE backupd_restores_total counter\n",
		`backupd_restores_open{state="pending"} 2`,
		`backupd_restores_open{state="running"} 1`,
		`backupd_restores_open{state="previewing"} 0`,
		"# TYPE backupd_restores_open gauge\n",
		`backupd_pushes_total{platform="frr",result="succeeded"} 2`,
		`backupd_pushes_total{platform="frr",result="failed"} 1`,
		`backupd_pushes_total{platform="frr",result="interrupted"} 0`,
		`backupd_pushes_total{platform="custom",result="interrupted"} 0`,
		"# TYPE backupd_pushes_total counter\n",
		`backupd_change_sets_open{state="draft"} 0`,
		`backupd_change_sets_open{state="ready"} 3`,
		`backupd_change_sets_open{state="approved"} 0`,
		`backupd_change_sets_open{state="running"} 1`,
		"# TYPE backupd_change_sets_open gauge\n",
		"# TYPE backupd_engine_running gauge\n",
		`backupd_syslog_received_total 90`,
		`backupd_syslog_matched_total 12`,
		`backupd_syslog_unknown_sender_total 2`,
		`backupd_syslog_triggered_total 6`,
		`backupd_syslog_queued_total 3`,
		`backupd_syslog_existing_job_total{state="queued"} 1`,
		`backupd_syslog_existing_job_total{state="running"} 1`,
		`backupd_syslog_skipped_total{reason="disabled"} 1`,
		`backupd_syslog_dropped_total{class="other",reason="rate"} 5`,
		`backupd_syslog_dropped_total{class="change",reason="pending_full"} 1`,
		`backupd_syslog_dropped_total{class="change",reason="rate"} 0`,
		`backupd_syslog_connections_evicted_total 3`,
		`backupd_syslog_pending_devices 2`,
		`backupd_syslog_connections 1`,
		"# TYPE backupd_syslog_received_total counter\n",
		"# TYPE backupd_syslog_pending_devices gauge\n",
		"# TYPE backupd_backup_duration_seconds histogram\n",
		"# TYPE backupd_backups_total counter\n",
		"# TYPE go_gc_duration_seconds summary\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(out, "vmrange") {
		t.Error("a histogram has VictoriaMetrics' vmrange buckets; Prometheus needs le")
	}

	samples, types := testkit.Exposition(t, out)
	value := map[string]float64{}
	for _, s := range samples {
		v, err := strconv.ParseFloat(s.Value, 64)
		if err != nil {
			t.Errorf("%s: value %q", s.Name, s.Value)
		}
		value[s.Name] = v
	}
	// The ages are measured at the scrape, a moment after now.
	if age := value["backupd_devices_oldest_good_backup_age_seconds"]; age < 36*3600 || age > 37*3600 {
		t.Errorf("oldest good backup age %v s, want 36 h", age)
	}
	if age := value["backupd_jobs_oldest_queued_age_seconds"]; age < 600 || age > 3600 {
		t.Errorf("oldest queued job age %v s, want 10 min", age)
	}
	if age := value["backupd_notifications_oldest_pending_age_seconds"]; age < 7200 || age > 7300 {
		t.Errorf("oldest pending notification age %v s, want 2 h", age)
	}
	if strings.Contains(out, `backupd_notifications_sent_total{channel_type="email",result="failed"}`) {
		t.Error("a count of 0 deliveries made a series")
	}
	if runtime.GOOS == "linux" && (value["backupd_data_filesystem_size_bytes"] <= 0 ||
		value["backupd_data_filesystem_avail_bytes"] > value["backupd_data_filesystem_size_bytes"]) {
		t.Errorf("data filesystem: %v bytes free of %v", value["backupd_data_filesystem_avail_bytes"], value["backupd_data_filesystem_size_bytes"])
	}
	// Every family of the table is published (the process figures come
	// from /proc, so only on Linux), with the table's type.
	for name, f := range families {
		if types[name] == "" && (runtime.GOOS == "linux" || strings.HasPrefix(name, "backupd_")) {
			t.Errorf("%s is not published", name)
		} else if types[name] != "" && types[name] != f.typ {
			t.Errorf("%s has TYPE %s, want %s", name, types[name], f.typ)
		}
	}
	checkHistograms(t, samples, types)
	testkit.Promtool(t, out, "check", "metrics")
}

// checkHistograms checks every histogram series: le buckets that grow
// with le and end at +Inf, equal to its _count.
func checkHistograms(t *testing.T, samples []testkit.Sample, types map[string]string) {
	t.Helper()
	type series struct {
		lastLE, lastCount float64
		inf, count        string
	}
	all := map[string]*series{}
	for _, s := range samples {
		if types[s.Family] != histogram {
			continue
		}
		key := s.Family
		for k, v := range s.Labels {
			if k != "le" {
				key += "," + k + "=" + v
			}
		}
		h := all[key]
		if h == nil {
			h = &series{lastLE: -1}
			all[key] = h
		}
		switch s.Name {
		case s.Family + "_bucket":
			le, err := strconv.ParseFloat(s.Labels["le"], 64)
			n, _ := strconv.ParseFloat(s.Value, 64)
			if err != nil || le <= h.lastLE || n < h.lastCount {
				t.Errorf("%s: bucket le=%q %s out of order", key, s.Labels["le"], s.Value)
			}
			h.lastLE, h.lastCount = le, n
			if s.Labels["le"] == "+Inf" {
				h.inf = s.Value
			}
		case s.Family + "_count":
			h.count = s.Value
		}
	}
	if len(all) == 0 {
		t.Error("no histogram published")
	}
	for key, h := range all {
		if h.inf == "" || h.inf != h.count {
			t.Errorf("%s: +Inf bucket %q, count %q", key, h.inf, h.count)
		}
	}
}

func TestUnreadableStore(t *testing.T) {
	set = vm.NewSet()
	BackupFinished(time.Second, false, "auth")
	// A store that cannot be read still gives the rest, and says so.
	out := scrape(t, Options{Version: "dev", Commit: "unknown"}, func(context.Context) (State, error) {
		return State{}, errors.New("database is locked")
	})
	if !strings.Contains(out, "backupd_store_up 0") || strings.Contains(out, "backupd_jobs{") || strings.Contains(out, "\nbackupd_backups_total{") {
		t.Errorf("a failed state read must show backupd_store_up 0 and no database figures:\n%s", out)
	}
	if !strings.Contains(out, `backupd_backup_failures_total{reason="auth"}`) || !strings.Contains(out, "backupd_build_info{") {
		t.Error("a failed state read dropped the counters or the build information")
	}
	if strings.Contains(out, "backupd_data_filesystem") {
		t.Error("no data directory, yet a filesystem was reported")
	}
	testkit.Exposition(t, out)
	testkit.Promtool(t, out, "check", "metrics")
}

func TestNothingUnknownGoesOut(t *testing.T) {
	var b strings.Builder
	expose(&b, []byte("backupd_made_up 1\ngo_info_ext{GOROOT=\"/usr/local/go\"} 1\n"+
		"backupd_jobs{state=\"queued\"} 1\n# HELP backupd_jobs library text\nbackupd_backup_duration_seconds 4\n"))
	want := "# HELP backupd_jobs " + families["backupd_jobs"].help + "\n# TYPE backupd_jobs gauge\nbackupd_jobs{state=\"queued\"} 1\n"
	if b.String() != want {
		t.Errorf("expose:\n%s\nwant:\n%s", b.String(), want)
	}
}
