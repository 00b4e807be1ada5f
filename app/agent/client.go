package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/netguard"
	"backupd/app/platforms"
)

// Config is how a collector runs.
type Config struct {
	// Server is the server's base URL (https://…; http:// only with
	// InsecureHTTP).
	Server string
	// Token is the one-time enrolment token, needed on the first start
	// only (then the identity in DataDir is used).
	Token string
	// DataDir keeps the collector's identity (IdentityFile, mode 0600).
	DataDir string
	// CAFile, when set, is the PEM bundle the server's certificate must
	// chain to instead of the system's roots.
	CAFile string
	// InsecureHTTP allows a plain http:// server (tests and labs).
	InsecureHTTP bool
	// Name names the collector at enrolment (default: the host name).
	Name string
	// Workers is how many devices are collected from at once (default 10).
	Workers int
	// Version is the collector's version, shown on the server.
	Version string
	// ShutdownGrace is how long a shutdown lets running collections
	// finish (default 15 s).
	ShutdownGrace time.Duration
	Log           *slog.Logger
}

// IdentityFile holds an enrolled collector's identity in its data
// directory: its id, bearer token and key pair.
const IdentityFile = "collector.json"

type identity struct {
	Server      string `json:"server"`
	CollectorID int64  `json:"collector_id"`
	Zone        string `json:"zone"`
	Token       string `json:"token"`
	PublicKey   string `json:"public_key"`
	PrivateKey  string `json:"private_key"`
}

// ErrRevoked ends a collector the server no longer accepts.
var ErrRevoked = errors.New("the server refused this collector's token: it was revoked, or the data directory belongs to another server")

// Run enrols the collector if it has no identity yet, then works its
// zone's jobs until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 15 * time.Second
	}
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	base, err := serverURL(cfg.Server, cfg.InsecureHTTP)
	if err != nil {
		return err
	}
	httpc, err := httpClient(cfg.CAFile)
	if err != nil {
		return err
	}
	if cfg.DataDir == "" {
		return errors.New("--data is required: the collector keeps its identity there")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", cfg.DataDir, err)
	}
	c := &client{cfg: cfg, base: base, http: httpc, log: cfg.Log, held: map[int64]*held{}}
	id, err := loadIdentity(cfg.DataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if cfg.Token == "" {
			return errors.New("this collector is not enrolled yet: give the enrolment token (--token) the server created for its zone")
		}
		if id, err = c.enrol(ctx); err != nil {
			return err
		}
	case err != nil:
		return err
	case id.Server != base.String():
		return fmt.Errorf("the data directory %s belongs to a collector enrolled with %s, not %s", cfg.DataDir, id.Server, base)
	}
	c.id = id
	if c.key.Public, err = DecodeKey(id.PublicKey); err == nil {
		c.key.Private, err = DecodeKey(id.PrivateKey)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(cfg.DataDir, IdentityFile), err)
	}
	c.log.Info("collector running", "collector_id", id.CollectorID, "zone", id.Zone, "server", base.String(),
		"workers", cfg.Workers, "version", cfg.Version)
	return c.run(ctx)
}

func serverURL(raw string, insecure bool) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(raw), "/"))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("--server must be the server's address, e.g. https://backupd.example.com")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && insecure:
	case u.Scheme == "http":
		return nil, errors.New("--server is plain http: device credentials travel to the collector, so the server must use https (--insecure-http allows http for tests and labs)")
	default:
		return nil, fmt.Errorf("--server: unsupported scheme %q", u.Scheme)
	}
	return u, nil
}

func httpClient(caFile string) (*http.Client, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", caFile)
		}
		tlsConf.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	tr.Proxy = http.ProxyFromEnvironment
	tr.ResponseHeaderTimeout = (MaxPollWait + 30) * time.Second
	// Each call has its own deadline (see call); this bounds the rest.
	return &http.Client{Transport: tr}, nil
}

func loadIdentity(dir string) (identity, error) {
	var id identity
	raw, err := os.ReadFile(filepath.Join(dir, IdentityFile))
	if err != nil {
		return id, err
	}
	if err := json.Unmarshal(raw, &id); err != nil || id.CollectorID == 0 || id.Token == "" {
		return id, fmt.Errorf("%s is damaged; remove it and enrol the collector again with a new token", filepath.Join(dir, IdentityFile))
	}
	return id, nil
}

func saveIdentity(dir string, id identity) error {
	raw, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".collector-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, IdentityFile))
}

type client struct {
	cfg  Config
	base *url.URL
	http *http.Client
	log  *slog.Logger
	id   identity
	key  KeyPair

	mu   sync.Mutex
	held map[int64]*held
	// freed is signalled when a job leaves held.
	freed chan struct{}
}

// held is a job in hand: collecting, or uploading what it captured.
type held struct {
	job  Job
	stop context.CancelCauseFunc
}

var (
	errJobCancelled = errors.New("cancelled by an operator")
	errJobLost      = errors.New("the server no longer leases this job to the collector")
)

// encodeBody is in as JSON without HTML escaping: configurations are
// full of <, > and &, and escaped each costs six bytes of an upload the
// server bounds by the capture's size.
func encodeBody(in any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// callError is a refused call.
type callError struct {
	Status int
	Body   ErrorResponse
}

func (e *callError) Error() string {
	return fmt.Sprintf("the server answered %d %s: %s", e.Status, e.Body.Code, e.Body.Message)
}

// call posts in as JSON to path and decodes the answer into out (nil: no
// body expected).
func (c *client) call(ctx context.Context, path, token string, in, out any, timeout time.Duration) error {
	body, err := encodeBody(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+PathPrefix+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "backupd-collector/"+c.cfg.Version)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		e := &callError{Status: resp.StatusCode}
		if json.Unmarshal(raw, &e.Body) != nil {
			e.Body.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the server's answer is not the expected JSON: %w", err)
	}
	return nil
}

func (c *client) enrol(ctx context.Context) (identity, error) {
	key, err := NewKeyPair()
	if err != nil {
		return identity{}, err
	}
	var resp EnrolResponse
	err = c.call(ctx, "enrol", "", EnrolRequest{Token: c.cfg.Token, Name: c.cfg.Name, PublicKey: EncodeKey(key.Public),
		Version: c.cfg.Version}, &resp, 30*time.Second)
	if err != nil {
		return identity{}, fmt.Errorf("enrolment: %w", err)
	}
	id := identity{Server: c.base.String(), CollectorID: resp.CollectorID, Zone: resp.Zone, Token: resp.Token,
		PublicKey: EncodeKey(key.Public), PrivateKey: EncodeKey(key.Private)}
	if err := saveIdentity(c.cfg.DataDir, id); err != nil {
		return identity{}, fmt.Errorf("saving the collector's identity: %w", err)
	}
	c.log.Info("collector enrolled", "collector_id", id.CollectorID, "zone", id.Zone)
	return id, nil
}

func (c *client) heldIDs() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]int64, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (c *client) run(ctx context.Context) error {
	c.freed = make(chan struct{}, 1)
	jobCtx, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()
	var wg sync.WaitGroup
	backoff := time.Second
	var runErr error
	for ctx.Err() == nil {
		ids := c.heldIDs()
		free := c.cfg.Workers - len(ids)
		wait := 0
		if free > 0 {
			wait = MaxPollWait
		}
		var resp PollResponse
		err := c.call(ctx, "poll", c.id.Token, PollRequest{Version: c.cfg.Version, Held: ids, Free: max(free, 0), WaitSeconds: wait},
			&resp, time.Duration(wait+30)*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var ce *callError
			if errors.As(err, &ce) && ce.Status == http.StatusUnauthorized {
				runErr = ErrRevoked
				break
			}
			c.log.Warn("polling the server failed; trying again", "err", err, "retry_in", backoff.String())
			sleep(ctx, backoff)
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = time.Second
		c.stopJobs(resp.Cancel, errJobCancelled)
		c.stopJobs(resp.Lost, errJobLost)
		for _, job := range resp.Jobs {
			ctx, stop := context.WithCancelCause(jobCtx)
			c.mu.Lock()
			c.held[job.ID] = &held{job: job, stop: stop}
			c.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer stop(nil)
				c.work(ctx, job)
			}()
		}
		if len(c.heldIDs()) >= c.cfg.Workers {
			// Full: heartbeat every 10 s, or poll as soon as a slot frees.
			t := time.NewTimer(10 * time.Second)
			select {
			case <-ctx.Done():
			case <-c.freed:
			case <-t.C:
			}
			t.Stop()
		}
	}
	// Shutdown: running collections get the grace period, then stop; the
	// leases of whatever did not finish go back to the queue.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.cfg.ShutdownGrace):
		hardStop()
		<-done
	}
	if runErr == nil {
		final, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.call(final, "poll", c.id.Token, PollRequest{Version: c.cfg.Version, Held: []int64{}}, nil, 5*time.Second)
		cancel()
		c.log.Info("collector stopped")
	}
	return runErr
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (c *client) stopJobs(ids []int64, cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if h := c.held[id]; h != nil {
			h.stop(cause)
		}
	}
}

func (c *client) release(jobID int64) {
	c.mu.Lock()
	delete(c.held, jobID)
	c.mu.Unlock()
	select {
	case c.freed <- struct{}{}:
	default:
	}
}

// work collects from the job's device and uploads what it captured. The
// device's secrets live only in this call.
func (c *client) work(ctx context.Context, job Job) {
	defer c.release(job.ID)
	log := c.log.With("job_id", job.ID, "device_id", job.DeviceID, "device", job.DeviceName)
	began := time.Now()
	var cp backup.Capture
	func() {
		defer func() {
			if r := recover(); r != nil {
				log.Error("collection panicked", "panic_type", fmt.Sprintf("%T", r), "stack", string(debug.Stack()))
				cp = backup.Capture{Reason: collect.ReasonProtocol, Error: "internal error in the collector while backing up this device; its log has details"}
			}
		}()
		cp = c.collect(ctx, job)
	}()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errJobCancelled) && cp.Failed():
		cp = backup.Capture{Reason: backup.CaptureCancelled, Error: "cancelled by an operator"}
	case cause != nil && cp.Failed():
		// Lost, or the collector is stopping: the server queues it again.
		log.Info("collection stopped", "why", cause.Error())
		return
	}
	req := ResultRequest{Attempt: job.Attempt, Text: cp.Text, HostKey: cp.HostKey, Reason: cp.Reason, Error: cp.Error,
		DurationMS: time.Since(began).Milliseconds()}
	// Bounded: a lease outlives a server that is briefly away, not an
	// upload retried forever.
	delay := time.Second
	for try := 1; ; try++ {
		err := c.call(context.WithoutCancel(ctx), "jobs/"+strconv.FormatInt(job.ID, 10)+"/result", c.id.Token, req, nil, 2*time.Minute)
		var ce *callError
		switch {
		case err == nil:
			if cp.Failed() {
				log.Warn("backup failed", "reason", cp.Reason, "error", cp.Error)
			} else {
				log.Info("backup collected", "bytes", len(cp.Text), "duration_ms", req.DurationMS)
			}
			return
		case errors.As(err, &ce) && ce.Status < 500:
			log.Warn("the server refused the result; dropped", "err", err)
			return
		case try >= 8:
			log.Error("uploading the result failed; dropped (the server queues the job again)", "err", err)
			return
		}
		log.Warn("uploading the result failed; trying again", "err", err, "try", try)
		sleep(context.Background(), delay)
		delay = min(delay*2, 15*time.Second)
	}
}

func (c *client) collect(ctx context.Context, job Job) backup.Capture {
	secrets, err := c.key.OpenSecrets(job.Secrets, job.Attempt)
	if err != nil {
		return backup.Capture{Reason: "config", Error: err.Error()}
	}
	t := collect.Target{Platform: job.Platform, Host: job.Host, Port: job.Port, Method: job.Method, Encoding: job.Encoding,
		Commands: job.Commands, PinnedHostKey: job.PinnedHostKey, Username: secrets.Username, Password: secrets.Password,
		EnablePassword: secrets.EnablePassword, PrivateKey: secrets.PrivateKey}
	if len(t.PinnedHostKey) == 0 {
		t.PinnedHostKey = nil
	}
	allow, err := netguard.ParseAllow(job.OutboundAllow)
	if err != nil {
		return backup.Capture{Reason: "config", Error: "the server's outbound allow list: " + err.Error()}
	}
	t.Control = netguard.Policy{Allow: allow}.Control
	t.Timeouts.Job = time.Duration(job.TimeoutSeconds) * time.Second
	if t.Timeouts.Job <= 0 || t.Timeouts.Job > time.Hour {
		t.Timeouts.Job = collect.DefaultJobTimeout
	}
	if job.Definition != "" {
		p, _, err := platforms.Load([]byte(job.Definition))
		if err != nil {
			return backup.Capture{Reason: "config", Error: fmt.Sprintf("the platform %s sent by the server does not load here: %v", job.Platform, err)}
		}
		t.Definition = &p
	}
	ctx, cancel := context.WithTimeout(ctx, t.Timeouts.Job)
	defer cancel()
	return backup.CaptureOf(collect.Collect(ctx, t))
}
