package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"
)

// MountHealth registers the probes a service manager or load balancer
// polls, without authentication: /healthz answers while the process
// serves, /readyz only while ready reports nil (for backupd: the schema is
// current and the database takes writes).
func MountHealth(mux *http.ServeMux, ready func(context.Context) error, log *slog.Logger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeProbe(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := ready(ctx); err != nil {
			log.Warn("not ready", "request_id", RequestID(r.Context()), "err", err)
			writeProbe(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
			return
		}
		writeProbe(w, http.StatusOK, map[string]string{"status": "ready"})
	})
}

func writeProbe(w http.ResponseWriter, status int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
