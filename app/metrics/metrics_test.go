package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func scrape(t *testing.T, state func(context.Context) (State, error)) string {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(state).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestBackupsRequestsAndStoreState(t *testing.T) {
	BackupFinished(2*time.Second, true, "")
	BackupFinished(3*time.Second, false, "auth")
	BackupFinished(time.Second, false, "auth")
	BackupFinished(time.Second, false, "")
	HTTPRequest("GET /api/v1/devices/{device_id}", 404, time.Millisecond)
	HTTPRequest("", 404, time.Millisecond)
	HTTPRequest(`GET /odd"route`, 200, time.Millisecond)

	out := scrape(t, func(context.Context) (State, error) {
		return State{JobsQueued: 7, JobsRunning: 2, DevicesByStatus: map[string]int{"reachable": 5, "unreachable": 1}, DatabaseBytes: 4096}, nil
	})
	for _, want := range []string{
		`backupd_backup_failures_total{reason="auth"} 2`,
		`backupd_backup_failures_total{reason="other"} 1`,
		`backupd_backup_duration_seconds_count{result="success"} 1`,
		`backupd_backup_duration_seconds_count{result="failure"} 3`,
		`backupd_http_requests_total{route="GET /api/v1/devices/{device_id}",status="404"} 1`,
		`backupd_http_requests_total{route="unmatched",status="404"} 1`,
		`backupd_http_requests_total{route="GET /odd\"route",status="200"} 1`,
		`backupd_jobs{state="queued"} 7`,
		`backupd_jobs{state="running"} 2`,
		`backupd_devices{status="reachable"} 5`,
		`backupd_devices{status="unknown"} 0`,
		`backupd_database_size_bytes 4096`,
		`backupd_store_up 1`,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	// A store that cannot be read still gives the rest, and says so.
	out = scrape(t, func(context.Context) (State, error) { return State{}, errors.New("database is locked") })
	if !strings.Contains(out, "backupd_store_up 0") || strings.Contains(out, "backupd_jobs{") {
		t.Errorf("a failed state read must show backupd_store_up 0 and no store gauges:\n%s", out)
	}
	if !strings.Contains(out, `backupd_backup_failures_total{reason="auth"} 2`) {
		t.Error("a failed state read dropped the counters")
	}
}
