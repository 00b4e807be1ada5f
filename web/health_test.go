package web_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"backupd/web"
)

func TestHealthAndReadiness(t *testing.T) {
	mux := http.NewServeMux()
	var notReady error
	web.MountHealth(mux, func(ctx context.Context) error { return notReady }, slog.New(slog.DiscardHandler))
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz = %d %s", code, body)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz on a ready store = %d", code)
	}
	notReady = errors.New("schema is at version 5, this binary expects 6")
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "version 5") {
		t.Errorf("/readyz on a stale store = %d %s", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz must not depend on the store: %d", code)
	}
}
