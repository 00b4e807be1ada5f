// Package metrics counts what a backupd process does and exposes it in the
// Prometheus text format, on the separate address --metrics-listen names
// (off by default). Counters and histograms are updated where things
// happen (HTTP middleware, backup engine); the state of the store (jobs,
// devices, database size) is read when a scraper asks.
package metrics

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// set holds this process's counters and histograms.
var set = vm.NewSet()

// HTTPRequest counts one answered request. route is the pattern that
// served it ("GET /api/v1/devices/{device_id}"), never the raw path, so the
// number of series stays bounded.
func HTTPRequest(route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	set.GetOrCreateCounter(`backupd_http_requests_total{route=` + quote(route) + `,status="` + strconv.Itoa(status) + `"}`).Inc()
	set.GetOrCreateHistogram(`backupd_http_request_duration_seconds{route=` + quote(route) + `}`).Update(d.Seconds())
}

// BackupFinished records one finished backup attempt: its duration by
// result, and a failure's reason (connect, auth, timeout, …).
func BackupFinished(d time.Duration, success bool, reason string) {
	result := "success"
	if !success {
		result = "failure"
		if reason == "" {
			reason = "other"
		}
		set.GetOrCreateCounter(`backupd_backup_failures_total{reason=` + quote(reason) + `}`).Inc()
	}
	set.GetOrCreateHistogram(`backupd_backup_duration_seconds{result="` + result + `"}`).Update(d.Seconds())
}

// State is what the store holds at scrape time.
type State struct {
	JobsQueued, JobsRunning int
	// DevicesByStatus counts devices by status (unknown, reachable,
	// unreachable).
	DevicesByStatus map[string]int
	DatabaseBytes   int64
}

// Handler serves the metrics: this process's counters and histograms, the
// store's state from state (bounded to 5 s), and Go runtime and process
// metrics.
func Handler(state func(context.Context) (State, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		st, err := state(ctx)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		up := 1
		if err != nil {
			// The rest is still worth scraping; the gauge says the store
			// could not be read.
			up = 0
		} else {
			writeState(w, st)
		}
		vm.WriteGaugeUint64(w, "backupd_store_up", uint64(up))
		set.WritePrometheus(w)
		vm.WriteProcessMetrics(w)
	})
}

func writeState(w io.Writer, st State) {
	vm.WriteGaugeUint64(w, `backupd_jobs{state="queued"}`, uint64(st.JobsQueued))
	vm.WriteGaugeUint64(w, `backupd_jobs{state="running"}`, uint64(st.JobsRunning))
	for _, status := range []string{"unknown", "reachable", "unreachable"} {
		vm.WriteGaugeUint64(w, `backupd_devices{status="`+status+`"}`, uint64(st.DevicesByStatus[status]))
	}
	vm.WriteGaugeUint64(w, "backupd_database_size_bytes", uint64(max(st.DatabaseBytes, 0)))
}

// quote writes a label value with the escapes of the text format.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
