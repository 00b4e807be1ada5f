package web

import (
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"backupd/app/metrics"
)

// Wrap puts the middleware every request passes through around h: request
// id, panic recovery, access log, HSTS.
func Wrap(h http.Handler, log *slog.Logger) http.Handler {
	return requestID(accessLog(recoverer(strictTransport(apiPaths(h)), log), log))
}

// HSTS is the Strict-Transport-Security header sent over HTTPS: browsers
// that reached backupd over HTTPS once never again try plain HTTP for a
// year, so nobody on the way can strip TLS off a later visit. Subdomains
// are left alone: they may be other people's servers.
const HSTS = "max-age=31536000"

// strictTransport sends HSTS on every answer to a request that came over
// HTTPS, here or through a trusted proxy (IsHTTPS). Over plain HTTP
// browsers ignore the header, and it would be a lie, so it is not sent.
func strictTransport(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsHTTPS(r) {
			w.Header().Set("Strict-Transport-Security", HSTS)
		}
		next.ServeHTTP(w, r)
	})
}

// apiPaths answers a request under /api whose path is not in canonical
// form ("//", "/./", "/../") with a JSON 404 in the error envelope. The
// ServeMux would otherwise redirect it to the cleaned path with an HTML
// body, and an API client must get JSON from every /api reply. Serving
// the cleaned path instead would let "/api/v1/x/../y" slip past a proxy
// rule on /api/v1/y.
func apiPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if r.Method != http.MethodConnect && (p == "/api" || strings.HasPrefix(p, "/api/")) {
			if clean := muxCleanPath(p); clean != p {
				WriteError(w, r, NewError(http.StatusNotFound, CodeNotFound,
					"no such resource: the path is not in canonical form; did you mean "+clean+"?"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// muxCleanPath is the path http.ServeMux redirects to: path.Clean, with a
// trailing slash kept.
func muxCleanPath(p string) string {
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

// validRequestID accepts a client's id when it is short printable ASCII.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !validRequestID(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-ID", id)
		next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}

// statusWriter remembers the status and whether anything was written.
type statusWriter struct {
	http.ResponseWriter
	status  int
	written bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.written {
		w.status = code
		w.written = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.status = http.StatusOK
		w.written = true
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func recoverer(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error("panic serving request", "request_id", RequestID(r.Context()),
				"method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !sw.written {
				WriteError(sw, r, NewError(http.StatusInternalServerError, CodeInternal, "internal server error"))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

func accessLog(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.status
		if !sw.written {
			status = http.StatusOK
		}
		took := time.Since(start)
		// The path only: query strings are not logged, and no header or body
		// is ever logged (they carry keys and secrets).
		log.Info("request", "request_id", RequestID(r.Context()), "method", r.Method, "path", r.URL.Path,
			"status", status, "duration_ms", took.Milliseconds(), "remote", r.RemoteAddr)
		// The mux has set the pattern that served the request on r.
		metrics.HTTPRequest(r.Pattern, status, took)
	})
}
