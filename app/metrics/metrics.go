// Package metrics counts what a backupd process does and exposes it in the
// Prometheus text format, on the separate address --metrics-listen names
// (off by default). Counters and histograms are updated where things
// happen (HTTP middleware, backup engine); the fleet's state (devices,
// backups, jobs, database size) is read from the database when a scraper
// asks, so that backups done by `backupd backup run` count too.
//
// Every family goes out under its # HELP and # TYPE lines from the table
// in families.go; histograms use Prometheus' cumulative le buckets, so
// histogram_quantile works on them.
package metrics

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"

	"backupd/db"
	"backupd/db/snapstore"
)

// set holds this process's counters and histograms.
var set = vm.NewSet()

// Bucket upper bounds, in seconds: HTTP answers take milliseconds, a
// backup takes from a fraction of a second to the collector's limits.
var (
	httpBuckets   = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	backupBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}
)

// HTTPRequest counts one answered request. route is the pattern that
// served it ("GET /api/v1/devices/{device_id}"), never the raw path, so the
// number of series stays bounded.
func HTTPRequest(route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	set.GetOrCreateCounter(`backupd_http_requests_total{route=` + quote(route) + `,status="` + strconv.Itoa(status) + `"}`).Inc()
	set.GetOrCreatePrometheusHistogramExt(`backupd_http_request_duration_seconds{route=`+quote(route)+`}`, httpBuckets).Update(d.Seconds())
}

// BackupFinished records one finished backup attempt of this process: its
// duration by result, and a failure's reason (connect, auth, timeout, …).
func BackupFinished(d time.Duration, success bool, reason string) {
	result := "success"
	if !success {
		result = "failure"
		if reason == "" {
			reason = "other"
		}
		set.GetOrCreateCounter(`backupd_backup_failures_total{reason=` + quote(reason) + `}`).Inc()
	}
	set.GetOrCreatePrometheusHistogramExt(`backupd_backup_duration_seconds{result="`+result+`"}`, backupBuckets).Update(d.Seconds())
}

// NotificationsSent counts n deliveries of a channel type that ended with
// result (sent, failed, gave_up).
func NotificationsSent(channelType, result string, n int) {
	if n <= 0 {
		return
	}
	set.GetOrCreateCounter(`backupd_notifications_sent_total{channel_type=` + quote(channelType) + `,result=` + quote(result) + `}`).Add(n)
}

// GitPush counts one push of the git mirror (after its retries) and, on
// success, records when.
func GitPush(success bool, at time.Time) {
	result := "success"
	if !success {
		result = "failure"
	}
	set.GetOrCreateCounter(`backupd_git_push_total{result="` + result + `"}`).Inc()
	if success {
		set.GetOrCreateGauge(`backupd_git_last_push_success_timestamp_seconds`, nil).Set(float64(at.Unix()))
	}
}

// GitForeignCommit records whether the git mirror's last push was
// refused because the branch carries a commit backupd did not write.
func GitForeignCommit(refused bool) {
	v := 0.0
	if refused {
		v = 1
	}
	set.GetOrCreateGauge(`backupd_git_foreign_commit`, nil).Set(v)
}

// SignIn counts one finished web sign-in by method (password, ldap,
// oidc) and result (success, failure).
func SignIn(method string, success bool) {
	result := "success"
	if !success {
		result = "failure"
	}
	set.GetOrCreateCounter(`backupd_signins_total{method=` + quote(method) + `,result="` + result + `"}`).Inc()
}

// DirectorySync counts one run of the directory sync by result
// (success, failure) and the users it disabled.
func DirectorySync(success bool, disabled int) {
	result := "success"
	if !success {
		result = "failure"
	}
	set.GetOrCreateCounter(`backupd_directory_sync_total{result="` + result + `"}`).Inc()
	set.GetOrCreateCounter(`backupd_directory_users_disabled_total`).Add(disabled)
}

// restoreResults are the ends of a restore's run, the result label of
// backupd_restores_total.
var restoreResults = []string{db.RestoreSucceeded, db.RestoreRolledBack, db.RestoreRollbackFailed, db.RestoreFailed, db.RestoreInterrupted}

// RestoreEnded counts one restore whose run ended, by method (frr_vtysh,
// …) and result: the restore's end state (succeeded, rolled_back,
// rollback_failed, failed, interrupted).
func RestoreEnded(method, result string) {
	set.GetOrCreateCounter(`backupd_restores_total{method=` + quote(method) + `,result=` + quote(result) + `}`).Inc()
}

// RestoreMethods publishes backupd_restores_total at 0 for each method
// and result, from the process's start: a series that first appears at
// 1 shows Prometheus no increase, and an alert on the first restore
// left in an unknown state would miss it.
func RestoreMethods(methods ...string) {
	for _, m := range methods {
		for _, r := range restoreResults {
			set.GetOrCreateCounter(`backupd_restores_total{method=` + quote(m) + `,result=` + quote(r) + `}`)
		}
	}
}

// pushResults are the ends of a change set's push to one device, the
// result label of backupd_pushes_total.
var pushResults = []string{db.TargetSucceeded, db.TargetFailed, db.TargetInterrupted}

// PushPlatformCustom is the platform label of a push to a device of an
// administrator's platform: their IDs are the administrator's, so they
// share one series, published at 0 with the built-in ones.
const PushPlatformCustom = "custom"

// PushEnded counts one device of a change set whose push ended, by
// platform (frr, cisco_ios, ..., custom) and result: the target's end
// state (succeeded, failed, interrupted).
func PushEnded(platform, result string) {
	set.GetOrCreateCounter(`backupd_pushes_total{platform=` + quote(platform) + `,result=` + quote(result) + `}`).Inc()
}

// PushPlatforms publishes backupd_pushes_total at 0 for each platform
// that can take a push and each result, from the process's start, as
// RestoreMethods does for restores.
func PushPlatforms(platforms ...string) {
	for _, p := range platforms {
		for _, r := range pushResults {
			set.GetOrCreateCounter(`backupd_pushes_total{platform=` + quote(p) + `,result=` + quote(r) + `}`)
		}
	}
}

// EngineRunning records whether this process's backup engine works the
// queue (serve's engine: it does not while it waits for the database).
func EngineRunning(on bool) {
	v := 0.0
	if on {
		v = 1
	}
	set.GetOrCreateGauge(`backupd_engine_running`, nil).Set(v)
	// Published from the engine's start on, 0 until it first restarts.
	set.GetOrCreateCounter(`backupd_engine_restarts_total`)
}

// EngineRestarted counts a start of the backup engine after it stopped
// on a failure (the database away, its liveness lock lost).
func EngineRestarted() { set.GetOrCreateCounter(`backupd_engine_restarts_total`).Inc() }

// State is what the database holds at scrape time.
type State struct {
	db.FleetHealth
	JobsQueued, JobsRunning int
	// DevicesByStatus counts devices by status (unknown, reachable,
	// unreachable).
	DevicesByStatus map[string]int
	DatabaseBytes   int64
	// Snapshots are the stored configurations' totals.
	Snapshots db.SnapshotFigures
	// NotificationsPending counts unsettled deliveries; OldestNotification
	// is when the oldest of them was recorded (nil: none).
	NotificationsPending int
	OldestNotification   *time.Time
	// ClusterLeader is whether this node leads; ClusterNodes counts the
	// nodes with a fresh heartbeat (db.NodeFresh).
	ClusterLeader bool
	ClusterNodes  int
	// Collectors counts the remote collectors by state: online (heard
	// from within the last lease), offline, revoked.
	Collectors map[string]int
	// RestoresOpen counts the restores not yet ended by state
	// (db.RestoreOpenStates).
	RestoresOpen map[string]int
	// ChangeSetsOpen counts the change sets not yet ended by state
	// (db.ChangeSetOpenStates).
	ChangeSetsOpen map[string]int
	// Inventory counts the inventory sources by state
	// (db.InventorySourceStates) and the overdue ones, and says when the
	// stalest scheduled one last applied a sync.
	Inventory db.InventoryHealth
}

// Collector states of backupd_collectors.
const (
	CollectorOnline  = "online"
	CollectorOffline = "offline"
	CollectorRevoked = "revoked"
)

// Options say what the handler reports besides the state.
type Options struct {
	// Version and Commit label backupd_build_info.
	Version, Commit string
	// DataDir is the directory whose filesystem's space is reported.
	DataDir string
	// Syslog reads the syslog listener's counters; nil when serve runs
	// none, and the backupd_syslog_* families are then left out.
	Syslog func() Syslog
}

// Syslog are the syslog listener's counters (since the process started)
// and current sizes.
type Syslog struct {
	Received, Truncated, Matched, UnknownSender, Triggered, Queued uint64
	// Existing counts triggers whose device had a backup job already, by
	// its state (queued, running).
	Existing map[string]uint64
	// Skipped counts triggers that queued no backup, by reason
	// (disabled, deleted, error).
	Skipped map[string]uint64
	// Dropped counts dropped messages by class (change, other, unread)
	// and reason (rate, pending_full, framing), in the listener's order.
	Dropped []SyslogDrop
	// Evicted counts TCP connections closed to make room for new ones.
	Evicted                     uint64
	PendingDevices, Connections int
}

// SyslogDrop is one series of backupd_syslog_dropped_total.
type SyslogDrop struct {
	Class, Reason string
	Count         uint64
}

// Handler serves the metrics: build information, the fleet's state from
// state (bounded to 5 s), this process's counters and histograms, and Go
// runtime and process metrics.
func Handler(o Options, state func(context.Context) (State, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		st, err := state(ctx)
		now := time.Now()

		var raw bytes.Buffer
		fmt.Fprintf(&raw, "backupd_build_info{version=%s,commit=%s,goversion=%s} 1\n",
			quote(o.Version), quote(o.Commit), quote(runtime.Version()))
		up := 1
		if err != nil {
			// The rest is still worth scraping; the gauge says the
			// database could not be read.
			up = 0
		} else {
			writeState(&raw, st, now)
		}
		fmt.Fprintf(&raw, "backupd_store_up %d\n", up)
		if avail, size, ok := diskSpace(o.DataDir); ok {
			fmt.Fprintf(&raw, "backupd_data_filesystem_avail_bytes %d\n", avail)
			fmt.Fprintf(&raw, "backupd_data_filesystem_size_bytes %d\n", size)
		}
		if o.Syslog != nil {
			writeSyslog(&raw, o.Syslog())
		}
		pk := snapstore.PackCounts()
		fmt.Fprintf(&raw, "backupd_snapshot_pack_total{result=\"success\"} %d\n", pk.Packed)
		fmt.Fprintf(&raw, "backupd_snapshot_pack_total{result=\"failure\"} %d\n", pk.Failed)
		set.WritePrometheus(&raw)
		vm.WriteProcessMetrics(&raw)
		vm.WriteFDMetrics(&raw)

		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		expose(w, raw.Bytes())
	})
}

func writeState(w io.Writer, st State, now time.Time) {
	fmt.Fprintf(w, "backupd_jobs{state=\"queued\"} %d\n", st.JobsQueued)
	fmt.Fprintf(w, "backupd_jobs{state=\"running\"} %d\n", st.JobsRunning)
	fmt.Fprintf(w, "backupd_jobs_oldest_queued_age_seconds %s\n", ageSince(st.OldestQueued, now))
	for _, status := range []string{db.StatusUnknown, db.StatusReachable, db.StatusUnreachable} {
		fmt.Fprintf(w, "backupd_devices{status=%q} %d\n", status, st.DevicesByStatus[status])
	}
	fmt.Fprintf(w, "backupd_devices_enabled %d\n", st.DevicesEnabled)
	fmt.Fprintf(w, "backupd_devices_last_backup_failed %d\n", st.DevicesLastFailed)
	fmt.Fprintf(w, "backupd_devices_oldest_good_backup_age_seconds %s\n", ageSince(st.OldestGood, now))
	fmt.Fprintf(w, "backupd_backups_total{result=\"success\"} %d\n", st.BackupsSucceeded)
	fmt.Fprintf(w, "backupd_backups_total{result=\"failure\"} %d\n", st.BackupsFailed)
	fmt.Fprintf(w, "backupd_config_changes_total %d\n", st.ConfigChanges)
	fmt.Fprintf(w, "backupd_notifications_pending %d\n", st.NotificationsPending)
	fmt.Fprintf(w, "backupd_notifications_oldest_pending_age_seconds %s\n", ageSince(st.OldestNotification, now))
	fmt.Fprintf(w, "backupd_database_size_bytes %d\n", max(st.DatabaseBytes, 0))
	fmt.Fprintf(w, "backupd_snapshots{form=\"whole\"} %d\n", st.Snapshots.Snapshots-st.Snapshots.Deltas)
	fmt.Fprintf(w, "backupd_snapshots{form=\"delta\"} %d\n", st.Snapshots.Deltas)
	fmt.Fprintf(w, "backupd_snapshot_bytes{kind=\"raw\"} %d\n", st.Snapshots.RawBytes)
	fmt.Fprintf(w, "backupd_snapshot_bytes{kind=\"stored\"} %d\n", st.Snapshots.StoredBytes)
	leader := 0
	if st.ClusterLeader {
		leader = 1
	}
	fmt.Fprintf(w, "backupd_cluster_leader %d\n", leader)
	fmt.Fprintf(w, "backupd_cluster_nodes %d\n", st.ClusterNodes)
	for _, state := range []string{CollectorOnline, CollectorOffline, CollectorRevoked} {
		fmt.Fprintf(w, "backupd_collectors{state=%q} %d\n", state, st.Collectors[state])
	}
	for _, state := range db.RestoreOpenStates {
		fmt.Fprintf(w, "backupd_restores_open{state=%q} %d\n", state, st.RestoresOpen[state])
	}
	for _, state := range db.ChangeSetOpenStates {
		fmt.Fprintf(w, "backupd_change_sets_open{state=%q} %d\n", state, st.ChangeSetsOpen[state])
	}
	for _, state := range db.InventorySourceStates {
		fmt.Fprintf(w, "backupd_inventory_sources{state=%q} %d\n", state, st.Inventory.Sources[state])
	}
	fmt.Fprintf(w, "backupd_inventory_oldest_good_sync_age_seconds %s\n", ageSince(st.Inventory.OldestGood, now))
	fmt.Fprintf(w, "backupd_inventory_sources_overdue %d\n", st.Inventory.Overdue)
}

func writeSyslog(w io.Writer, s Syslog) {
	fmt.Fprintf(w, "backupd_syslog_received_total %d\n", s.Received)
	fmt.Fprintf(w, "backupd_syslog_truncated_total %d\n", s.Truncated)
	fmt.Fprintf(w, "backupd_syslog_matched_total %d\n", s.Matched)
	fmt.Fprintf(w, "backupd_syslog_unknown_sender_total %d\n", s.UnknownSender)
	fmt.Fprintf(w, "backupd_syslog_triggered_total %d\n", s.Triggered)
	fmt.Fprintf(w, "backupd_syslog_queued_total %d\n", s.Queued)
	for _, st := range sortedKeys(s.Existing) {
		fmt.Fprintf(w, "backupd_syslog_existing_job_total{state=%s} %d\n", quote(st), s.Existing[st])
	}
	for _, r := range sortedKeys(s.Skipped) {
		fmt.Fprintf(w, "backupd_syslog_skipped_total{reason=%s} %d\n", quote(r), s.Skipped[r])
	}
	for _, d := range s.Dropped {
		fmt.Fprintf(w, "backupd_syslog_dropped_total{class=%s,reason=%s} %d\n", quote(d.Class), quote(d.Reason), d.Count)
	}
	fmt.Fprintf(w, "backupd_syslog_connections_evicted_total %d\n", s.Evicted)
	fmt.Fprintf(w, "backupd_syslog_pending_devices %d\n", s.PendingDevices)
	fmt.Fprintf(w, "backupd_syslog_connections %d\n", s.Connections)
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ageSince is the seconds from t to now, 0 for no time or one still to
// come.
func ageSince(t *time.Time, now time.Time) string {
	if t == nil || !t.Before(now) {
		return "0"
	}
	return strconv.FormatFloat(now.Sub(*t).Seconds(), 'f', 3, 64)
}

// expose writes the sample lines of raw grouped by family, each family
// under its # HELP and # TYPE lines from the families table. A family the
// table does not know is left out: the library's runtime output holds more
// than backupd publishes, and nothing goes out without its help text.
func expose(w io.Writer, raw []byte) {
	var order []string
	lines := map[string][]string{}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name, ok := familyOf(line)
		if !ok {
			continue
		}
		if _, seen := lines[name]; !seen {
			order = append(order, name)
		}
		lines[name] = append(lines[name], line)
	}
	bw := bufio.NewWriter(w)
	for _, name := range order {
		f := families[name]
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", name, f.help, name, f.typ)
		for _, l := range lines[name] {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	}
	_ = bw.Flush()
}

// familyOf names the family a sample line belongs to: its metric name, or
// for a histogram's or summary's _bucket, _sum and _count lines the name
// without the suffix.
func familyOf(line string) (string, bool) {
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return "", false
	}
	name := line[:end]
	if f, ok := families[name]; ok {
		return name, f.typ != histogram
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, cut := strings.CutSuffix(name, suffix); cut {
			if f, ok := families[base]; ok && (f.typ == histogram || f.typ == summary) {
				return base, true
			}
		}
	}
	return "", false
}

// quote writes a label value with the escapes of the text format.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
