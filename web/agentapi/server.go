// Package agentapi serves the remote collectors' protocol
// (agent.PathPrefix): enrolment with a one-time token, long polls that
// lease a zone's jobs with their secrets sealed to the collector, and the
// upload of what each collection captured, which the engine records as it
// records its own backups. It is separate from the public API, which never
// starts or records a backup.
package agentapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"backupd/app/agent"
	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/collect/driver"
	"backupd/app/netguard"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// Options tune a Server; zero values take the defaults.
type Options struct {
	// Lease is how long a leased job stays a collector's without a poll
	// (default 90 s: three polls' worth).
	Lease time.Duration
	// PollEvery is how often a waiting long poll looks for work (default
	// 1 s).
	PollEvery time.Duration
	// MaxInterruptions is the engine's limit on interruptions of one job.
	MaxInterruptions int
	// JobTimeout bounds a collection at the collector (default 5 min).
	JobTimeout time.Duration
}

// Server is the protocol's handlers and the loop that expires leases.
type Server struct {
	store  *db.Store
	sealer *secret.Sealer
	engine *backup.Engine
	log    *slog.Logger
	opts   Options
}

// New returns a server recording through engine.
func New(store *db.Store, sealer *secret.Sealer, engine *backup.Engine, log *slog.Logger, opts Options) *Server {
	if opts.Lease <= 0 {
		opts.Lease = 90 * time.Second
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = time.Second
	}
	if opts.MaxInterruptions <= 0 {
		opts.MaxInterruptions = queue.DefaultMaxInterruptions
	}
	if opts.JobTimeout <= 0 {
		opts.JobTimeout = 5 * time.Minute
	}
	return &Server{store: store, sealer: sealer, engine: engine, log: log, opts: opts}
}

// Mount registers the protocol's routes on mux.
func (s *Server) Mount(mux *http.ServeMux) {
	p := agent.PathPrefix
	mux.HandleFunc("POST "+p+"enrol", s.enrol)
	mux.HandleFunc("POST "+p+"poll", s.authed(s.poll))
	mux.HandleFunc("POST "+p+"jobs/{id}/result", s.authed(s.result))
	mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, agent.CodeBadRequest, "no such collector call")
	})
}

// Run queues again, until ctx ends, the jobs of collectors that stopped
// calling: every lease that ran out, checked a few times per lease.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(max(s.opts.Lease/3, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Bounded: a database that does not answer holds no check longer.
		ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := s.store.ExpireLeases(ectx, time.Now(), s.opts.MaxInterruptions)
		cancel()
		if err != nil && ctx.Err() == nil {
			s.log.Error("expiring collector leases", "err", err)
		}
		if n > 0 {
			s.log.Warn("jobs of collectors that stopped calling are queued again", "count", n)
		}
	}
}

// NewEnrolmentToken makes a one-time enrolment token for the zone, valid
// for ttl, and stores its hash. The token is shown once; id names it
// from then on (to list and revoke it).
func NewEnrolmentToken(ctx context.Context, store *db.Store, zoneID int64, ttl time.Duration) (token string, id int64, err error) {
	token = newToken(agent.EnrolmentTokenScheme)
	id, err = store.CreateEnrolmentToken(ctx, zoneID, hashToken(token), time.Now().Add(ttl))
	if err != nil {
		return "", 0, err
	}
	return token, id, nil
}

func newToken(scheme string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return scheme + base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is the stored form of a token: 256 random bits need no slow
// hash.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, agent.ErrorResponse{Code: code, Message: msg})
}

// decode reads a JSON body of at most limit bytes into v; false when it
// wrote the refusal.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	return decodeLimited(w, r, limit, v, fmt.Sprintf("the body exceeds %d bytes", limit))
}

// decodeLimited is decode with the refusal's message for a body over
// limit. A body that says it is over is refused before it is read.
func decodeLimited(w http.ResponseWriter, r *http.Request, limit int64, v any, tooLargeMsg string) bool {
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, agent.CodeTooLarge, tooLargeMsg)
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, agent.CodeTooLarge, tooLargeMsg)
			return false
		}
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest, "the body is not the expected JSON")
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest, "the body is not the expected JSON")
		return false
	}
	return true
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) enrol(w http.ResponseWriter, r *http.Request) {
	var req agent.EnrolRequest
	if !decode(w, r, 64<<10, &req) {
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" || len(req.Name) > 128 || len(req.Version) > 64 {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest, "name (1 to 128 characters) and version (up to 64) are required")
		return
	}
	if _, err := agent.DecodeKey(req.PublicKey); err != nil {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest, err.Error())
		return
	}
	if !strings.HasPrefix(req.Token, agent.EnrolmentTokenScheme) || len(req.Token) > 128 {
		writeError(w, http.StatusForbidden, agent.CodeEnrolment, db.ErrEnrolment.Error())
		return
	}
	bearer := newToken(agent.BearerTokenScheme)
	c, err := s.store.EnrolCollector(r.Context(), hashToken(req.Token),
		db.Collector{Name: req.Name, PublicKey: req.PublicKey, Version: req.Version, LastAddress: remoteHost(r)}, hashToken(bearer))
	if errors.Is(err, db.ErrEnrolment) {
		s.log.Warn("collector enrolment refused", "remote", remoteHost(r))
		writeError(w, http.StatusForbidden, agent.CodeEnrolment, err.Error())
		return
	}
	if err != nil {
		s.internal(w, "enrolling a collector", err)
		return
	}
	s.log.Info("collector enrolled", "collector_id", c.ID, "name", c.Name, "zone", c.ZoneName, "version", c.Version, "remote", remoteHost(r))
	writeJSON(w, http.StatusOK, agent.EnrolResponse{CollectorID: c.ID, Zone: c.ZoneName, Token: bearer})
}

func (s *Server) internal(w http.ResponseWriter, what string, err error) {
	s.log.Error(what, "err", err)
	writeError(w, http.StatusInternalServerError, agent.CodeInternal, "internal error; the server log has details")
}

type authedHandler func(w http.ResponseWriter, r *http.Request, c db.Collector)

func (s *Server) authed(h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !strings.HasPrefix(token, agent.BearerTokenScheme) || len(token) > 128 {
			writeError(w, http.StatusUnauthorized, agent.CodeUnauthorized, "a collector's bearer token is required")
			return
		}
		c, err := s.store.CollectorByToken(r.Context(), hashToken(token))
		if errors.Is(err, db.ErrNotFound) {
			writeError(w, http.StatusUnauthorized, agent.CodeUnauthorized, "unknown or revoked collector")
			return
		}
		if err != nil {
			s.internal(w, "authenticating a collector", err)
			return
		}
		h(w, r, c)
	}
}

func (s *Server) poll(w http.ResponseWriter, r *http.Request, c db.Collector) {
	var req agent.PollRequest
	if !decode(w, r, 64<<10, &req) {
		return
	}
	if len(req.Held) > agent.MaxHeld || req.Free < 0 || req.WaitSeconds < 0 || len(req.Version) > 64 {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest,
			fmt.Sprintf("held (at most %d jobs), free and wait_seconds (not negative) and version (up to 64 characters)", agent.MaxHeld))
		return
	}
	ctx := r.Context()
	if err := s.store.CollectorSeen(ctx, c.ID, req.Version, remoteHost(r)); err != nil {
		s.internal(w, "recording a collector's heartbeat", err)
		return
	}
	rep, err := s.store.ExtendLeases(ctx, c.ID, req.Held, time.Now().Add(s.opts.Lease))
	if err != nil {
		s.internal(w, "extending a collector's leases", err)
		return
	}
	// What it did not report in hand it no longer has (it restarted, or
	// the answer that leased it was lost): queued again at once.
	if n, err := s.store.ReleaseLeases(ctx, c.ID, req.Held, s.opts.MaxInterruptions); err != nil {
		s.internal(w, "releasing a collector's leases", err)
		return
	} else if n > 0 {
		s.log.Warn("jobs a collector no longer holds are queued again", "collector_id", c.ID, "count", n)
	}
	resp := agent.PollResponse{Jobs: []agent.Job{}, Cancel: orEmpty(rep.Cancel), Lost: orEmpty(rep.Lost),
		LeaseSeconds: int(s.opts.Lease / time.Second)}
	free := min(req.Free, agent.MaxJobsPerPoll)
	deadline := time.Now().Add(time.Duration(min(req.WaitSeconds, agent.MaxPollWait)) * time.Second)
	for free > 0 && len(resp.Cancel) == 0 {
		// An idle collector's poll looks with a reader and opens a write
		// transaction only when there is work to take.
		due, err := s.store.ZoneJobsDue(ctx, c.ZoneID, time.Now())
		if err != nil {
			s.internal(w, "looking for a collector's jobs", err)
			return
		}
		var claims []queue.Claim
		if due {
			if claims, err = s.store.LeaseJobs(ctx, c.ID, c.ZoneID, free, time.Now().Add(s.opts.Lease)); err != nil {
				s.internal(w, "leasing jobs to a collector", err)
				return
			}
		}
		for _, cl := range claims {
			job, err := s.job(ctx, c, cl)
			if err != nil {
				// The attempt fails here, as the engine's own does when it
				// cannot gather a device's target.
				s.fail(ctx, cl, err)
				continue
			}
			resp.Jobs = append(resp.Jobs, job)
		}
		if len(resp.Jobs) > 0 || !time.Now().Before(deadline) {
			break
		}
		t := time.NewTimer(min(s.opts.PollEvery, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		// Revoked while it waits: refused now, not at its next poll.
		if now, err := s.store.GetCollector(ctx, c.ID); err == nil && now.RevokedAt != nil {
			writeError(w, http.StatusUnauthorized, agent.CodeUnauthorized, "unknown or revoked collector")
			return
		}
		// A job in its hands cancelled while it waits: told now.
		if cancels, err := s.store.LeaseCancels(ctx, c.ID); err == nil {
			for _, id := range cancels {
				if slices.Contains(req.Held, id) {
					resp.Cancel = append(resp.Cancel, id)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func orEmpty(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// job is a claim as the collector receives it: the device's target with
// its secrets sealed to the collector for this attempt.
func (s *Server) job(ctx context.Context, c db.Collector, cl queue.Claim) (agent.Job, error) {
	pub, err := agent.DecodeKey(c.PublicKey)
	if err != nil {
		return agent.Job{}, fmt.Errorf("the collector's public key: %w", err)
	}
	t, err := backup.DeviceTarget(ctx, s.store, s.sealer, cl.DeviceID)
	if err != nil {
		return agent.Job{}, err
	}
	d, err := s.store.GetDevice(ctx, cl.DeviceID)
	if err != nil {
		return agent.Job{}, fmt.Errorf("loading the device: %w", err)
	}
	sealed, err := agent.SealSecrets(pub, cl.BackupID, agent.Secrets{Username: t.Username, Password: t.Password,
		EnablePassword: t.EnablePassword, PrivateKey: t.PrivateKey})
	if err != nil {
		return agent.Job{}, err
	}
	job := agent.Job{ID: cl.ID, Attempt: cl.BackupID, DeviceID: d.ID, DeviceName: d.Name, Platform: t.Platform,
		Host: t.Host, Port: t.Port, Method: t.Method, Encoding: t.Encoding, Commands: t.Commands,
		PinnedHostKey: t.PinnedHostKey, Secrets: sealed, TimeoutSeconds: int(s.opts.JobTimeout / time.Second)}
	outbound, err := netguard.Load(ctx, s.store)
	if err != nil {
		return agent.Job{}, err
	}
	job.OutboundAllow = netguard.Strings(outbound.Allow)
	if !driver.IsBuiltin(t.Platform) {
		cp, err := s.store.GetCustomPlatform(ctx, t.Platform)
		if err != nil {
			return agent.Job{}, fmt.Errorf("loading the device's platform %s: %w", t.Platform, err)
		}
		job.Definition = collectorDefinition(cp.Definition)
	}
	return job, nil
}

// collectorDefinition is a custom platform's definition as a collector
// gets it: without its restore declaration. Collectors only back up
// (restores run on the server), and one older than restores would refuse
// a definition holding a field it does not know, failing the backups of
// the platform's devices.
func collectorDefinition(doc string) string {
	d, err := platforms.Parse([]byte(doc))
	if err != nil || d.Restore == nil {
		return doc
	}
	d.Restore = nil
	return string(platforms.Marshal(d))
}

// fail ends a leased attempt that cannot be handed out.
func (s *Server) fail(ctx context.Context, cl queue.Claim, cause error) {
	if _, err := s.engine.RecordFailure(ctx, cl, cause.Error(), backup.TargetFailureReason(cause)); err != nil {
		s.log.Error("recording a backup", "device_id", cl.DeviceID, "job_id", cl.ID, "err", err)
	}
}

func (s *Server) result(w http.ResponseWriter, r *http.Request, c db.Collector) {
	jobID, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || jobID <= 0 {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest, "the job id is a positive integer")
		return
	}
	ctx := r.Context()
	commands, err := s.jobCommands(ctx, jobID)
	if err != nil {
		s.internal(w, "reading a leased job's commands", err)
		return
	}
	// Refused whole: nothing is recorded and the lease runs on; the
	// collector drops the result and the job is queued again.
	limit := ResultLimit(commands)
	var req agent.ResultRequest
	if !decodeLimited(w, r, limit, &req, fmt.Sprintf(
		"the result exceeds %d bytes, the most a capture of this job's %d commands can hold", limit, commands)) {
		return
	}
	if req.Attempt == "" || len(req.Attempt) > 64 || len(req.Reason) > 64 || len(req.Error) > 4096 || len(req.HostKey) > 16<<10 ||
		req.DurationMS < 0 || (req.Error == "" && req.Reason == "" && req.Text == "") {
		writeError(w, http.StatusBadRequest, agent.CodeBadRequest,
			"attempt, and either text or a failure's reason and error (up to 4096 characters), are required")
		return
	}
	cl, err := s.store.LeasedClaim(ctx, c.ID, jobID, req.Attempt)
	if errors.Is(err, queue.ErrLeaseLost) {
		// The same upload again (its answer was lost) is done already.
		if done, derr := s.recorded(ctx, jobID, req.Attempt); derr == nil && done {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeError(w, http.StatusConflict, agent.CodeLeaseLost, err.Error())
		return
	}
	if err != nil {
		s.internal(w, "reading a leased job", err)
		return
	}
	cp := backup.Capture{Text: req.Text, HostKey: req.HostKey, Reason: req.Reason, Error: req.Error}
	_, err = s.engine.RecordCapture(context.WithoutCancel(ctx), cl, cp, time.Duration(req.DurationMS)*time.Millisecond)
	if errors.Is(err, queue.ErrJobNotOwned) {
		// The lease ended while the result was on its way.
		writeError(w, http.StatusConflict, agent.CodeLeaseLost, queue.ErrLeaseLost.Error())
		return
	}
	if err != nil {
		s.internal(w, "recording a collector's result", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// A result's upload is bounded by what a capture can hold: each command's
// output is at most collect.DefaultMaxOutput bytes as the device printed
// it; decoded to UTF-8 and escaped in JSON, twice that covers any text of
// printable characters (quotes, backslashes and tabs take two bytes, a
// legacy charset's letters two or three); the envelope (attempt, host key,
// error) needs far less than resultEnvelope.
const (
	resultBytesPerCommand = 2 * collect.DefaultMaxOutput
	resultEnvelope        = 1 << 20
)

// ResultLimit is the largest result upload accepted for a job of the
// given number of commands (at least one).
func ResultLimit(commands int) int64 {
	return int64(max(commands, 1))*resultBytesPerCommand + resultEnvelope
}

// jobCommands is how many commands a collection of the job's device
// runs: its template's, or else its platform's default ones, as collect
// chooses them. A job or device that is gone counts one (the result is
// refused later, as its lease is lost).
func (s *Server) jobCommands(ctx context.Context, jobID int64) (int, error) {
	jobs, err := s.store.GetJobs(ctx, []int64{jobID})
	if err != nil || len(jobs) == 0 {
		return 1, err
	}
	d, err := s.store.GetDevice(ctx, jobs[0].DeviceID)
	if errors.Is(err, db.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	if d.TemplateID != nil {
		tpl, err := s.store.GetTemplate(ctx, *d.TemplateID)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return 0, err
		}
		if n := countLines(tpl.Commands); err == nil && n > 0 {
			return n, nil
		}
	}
	defaults := driver.DefaultCommands(d.Platform)
	if defaults == "" && !driver.IsBuiltin(d.Platform) {
		// Defined on another node since this one loaded its platforms.
		if cp, err := s.store.GetCustomPlatform(ctx, d.Platform); err == nil {
			if p, _, err := platforms.Load([]byte(cp.Definition)); err == nil {
				defaults = p.DefaultCommands
			}
		}
	}
	return max(countLines(defaults), 1), nil
}

// countLines counts the lines of text that are not blank.
func countLines(text string) int {
	n := 0
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// recorded reports whether the attempt's backup has finished.
func (s *Server) recorded(ctx context.Context, jobID int64, attempt string) (bool, error) {
	b, err := s.store.GetBackup(ctx, attempt)
	if errors.Is(err, db.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	jobs, err := s.store.GetJobs(ctx, []int64{jobID})
	if err != nil || len(jobs) != 1 || jobs[0].DeviceID != b.DeviceID {
		return false, err
	}
	return b.FinishedAt != nil && (b.ErrorMessage == nil || *b.ErrorMessage != queue.ErrorInterrupted), nil
}
