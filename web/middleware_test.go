package web_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"backupd/web"
)

func TestPanicBecomes500EnvelopeWithoutInternals(t *testing.T) {
	var logs bytes.Buffer
	h := web.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("database exploded: SELECT * FROM secrets")
	}), slog.New(slog.NewTextHandler(&logs, nil)))
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/api/v1/anything")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 500 {
		t.Fatalf("status %d", res.StatusCode)
	}
	var raw bytes.Buffer
	raw.ReadFrom(res.Body)
	var env map[string]map[string]any
	if err := json.Unmarshal(raw.Bytes(), &env); err != nil {
		t.Fatalf("not JSON: %s", raw.String())
	}
	if env["error"]["code"] != "INTERNAL_ERROR" {
		t.Errorf("code %v", env["error"]["code"])
	}
	if env["error"]["request_id"] != res.Header.Get("X-Request-ID") || res.Header.Get("X-Request-ID") == "" {
		t.Errorf("request id %v vs header %q", env["error"]["request_id"], res.Header.Get("X-Request-ID"))
	}
	if strings.Contains(raw.String(), "exploded") || strings.Contains(raw.String(), "SELECT") {
		t.Errorf("panic text leaked: %s", raw.String())
	}
	if !strings.Contains(logs.String(), "panic serving request") {
		t.Error("panic not logged")
	}
}

func TestRequestIDHonouredOrGenerated(t *testing.T) {
	h := web.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(web.RequestID(r.Context())))
	}), slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
	for _, c := range []struct {
		sent string
		keep bool
	}{{"abc-123", true}, {strings.Repeat("x", 128), true}, {strings.Repeat("x", 129), false}, {"has space", false}, {"", false}, {"naïve", false}} {
		req := httptest.NewRequest("GET", "/", nil)
		if c.sent != "" {
			req.Header.Set("X-Request-ID", c.sent)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get("X-Request-ID")
		if got != rec.Body.String() || got == "" {
			t.Errorf("%q: header %q, context %q", c.sent, got, rec.Body.String())
		}
		if (got == c.sent) != c.keep {
			t.Errorf("%q: kept=%v, want %v", c.sent, got == c.sent, c.keep)
		}
	}
}
